//! A bounded queue in front of an engine: at most `concurrency` requests
//! run at once and at most `queue` wait; beyond that a request is refused
//! at once with [`EngineError::Overloaded`] (answered 529), so memory never
//! grows without bound under load.

use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{Semaphore, SemaphorePermit};

use crate::EngineError;

/// Admission control of one engine.
#[derive(Debug)]
pub struct Gate {
    name: String,
    permits: Semaphore,
    waiting: AtomicUsize,
    queue: usize,
}

impl Gate {
    /// `concurrency` running (at least 1) plus `queue` waiting requests.
    pub fn new(name: impl Into<String>, concurrency: usize, queue: usize) -> Self {
        Self {
            name: name.into(),
            permits: Semaphore::new(concurrency.max(1)),
            waiting: AtomicUsize::new(0),
            queue,
        }
    }

    /// Waits for a turn, or fails at once when the queue is full.
    pub async fn enter(&self) -> Result<SemaphorePermit<'_>, EngineError> {
        if let Ok(p) = self.permits.try_acquire() {
            return Ok(p);
        }
        struct Waiting<'a>(&'a AtomicUsize);
        impl Drop for Waiting<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::AcqRel);
            }
        }
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.queue {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(EngineError::Overloaded(format!(
                "the {} queue is full ({} waiting)",
                self.name, self.queue
            )));
        }
        let _waiting = Waiting(&self.waiting);
        self.permits
            .acquire()
            .await
            .map_err(|_| EngineError::Unavailable(format!("the {} engine is closed", self.name)))
    }

    /// Requests waiting now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn refuses_beyond_the_queue() {
        let gate = std::sync::Arc::new(Gate::new("t", 1, 1));
        let first = gate.enter().await.unwrap();
        let g = gate.clone();
        let waiter = tokio::spawn(async move { g.enter().await.map(|_| ()) });
        while gate.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        assert!(matches!(
            gate.enter().await,
            Err(EngineError::Overloaded(_))
        ));
        drop(first);
        assert!(waiter.await.unwrap().is_ok());
    }
}
