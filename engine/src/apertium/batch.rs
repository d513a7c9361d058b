//! Continuous batching: the texts of concurrent requests for one pair share
//! blocks.
//!
//! Requests hand their units to the pair's batcher and wait. The batcher
//! keeps at most [`DEPTH`] blocks per pipeline in flight; while all are
//! taken, new units wait in its (bounded) queue, and as soon as a block
//! finishes, everything waiting (up to [`MAX_BLOCK`](super::MAX_BLOCK)
//! bytes) goes into the next block with a single flush. At low load a lone
//! request goes out at once; under load each flush carries the texts of
//! many requests, so the cost of a flush through every stage of the
//! pipeline is shared.

use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc, oneshot};

use super::ApertiumEngine;
use super::pipeline::Pool;
use super::stream::Unit;
use crate::EngineError;

/// Blocks in flight per pipeline: one in the stages' hands, one queued so
/// that no stage waits while the next block is put together.
pub(crate) const DEPTH: usize = 2;

/// Units of one request (or one part of a large request) and where their
/// translations go.
pub(crate) struct Pending {
    pub units: Vec<Unit>,
    /// Approximate stream bytes of the units.
    pub bytes: usize,
    pub reply: oneshot::Sender<Result<Vec<String>, EngineError>>,
}

/// The batcher of one pair.
pub(crate) struct Batcher {
    tx: mpsc::Sender<Pending>,
}

impl Batcher {
    /// Starts the batching task of `pool` (inside a Tokio runtime); at most
    /// `queue` parts wait.
    pub fn start(pool: Arc<Pool>, queue: usize, max_block: usize) -> Self {
        let (tx, rx) = mpsc::channel(queue.max(1));
        let slots = Arc::new(Semaphore::new(pool.size() * DEPTH));
        tokio::spawn(run(pool, rx, slots, max_block));
        Self { tx }
    }

    /// Queues `pending`; [`EngineError::Overloaded`] when the queue is full.
    pub fn submit(&self, pending: Pending, mode: &str) -> Result<(), EngineError> {
        self.tx.try_send(pending).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => {
                EngineError::Overloaded(format!("the {mode} queue is full"))
            }
            mpsc::error::TrySendError::Closed(_) => {
                EngineError::Unavailable(format!("the {mode} batcher stopped"))
            }
        })
    }
}

async fn run(
    pool: Arc<Pool>,
    mut rx: mpsc::Receiver<Pending>,
    slots: Arc<Semaphore>,
    max_block: usize,
) {
    let mut carry: Option<Pending> = None;
    loop {
        let first = match carry.take() {
            Some(p) => p,
            None => match rx.recv().await {
                Some(p) => p,
                None => break,
            },
        };
        // Wait for a free slot: meanwhile more requests queue up.
        let Ok(permit) = slots.clone().acquire_owned().await else {
            break;
        };
        let mut size = first.bytes;
        let mut batch = vec![first];
        while size < max_block {
            match rx.try_recv() {
                Ok(p) if size + p.bytes > max_block => {
                    carry = Some(p);
                    break;
                }
                Ok(p) => {
                    size += p.bytes;
                    batch.push(p);
                }
                Err(_) => break,
            }
        }
        let pool = pool.clone();
        tokio::spawn(async move {
            let _permit = permit;
            run_batch(&pool, batch).await;
        });
    }
}

/// Translates the units of all parts in one block and answers each part.
async fn run_batch(pool: &Pool, batch: Vec<Pending>) {
    // Parts whose requester is gone are skipped.
    let batch: Vec<Pending> = batch.into_iter().filter(|p| !p.reply.is_closed()).collect();
    if batch.is_empty() {
        return;
    }
    let units: Vec<&Unit> = batch.iter().flat_map(|p| p.units.iter()).collect();
    match ApertiumEngine::run_block(pool, &units).await {
        Ok(outputs) => {
            let mut outputs = outputs.into_iter();
            for p in batch {
                let mine: Vec<String> = outputs.by_ref().take(p.units.len()).collect();
                let _ = p.reply.send(Ok(mine));
            }
        }
        Err(e) => {
            for p in batch {
                let _ = p.reply.send(Err(e.clone()));
            }
        }
    }
}
