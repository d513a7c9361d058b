//! Keeps every queue loop of a worker process running.
//!
//! An apalis worker ends when its backend fails once (a fetch, an ack or a
//! heartbeat that meets a lost database connection), and its running handlers
//! are dropped with it. A [`Supervisor`] starts such a loop again, for ever,
//! until the process is told to stop:
//!
//! - under a new name (apalis refuses to register a name whose advisory lock is
//!   still held by an old connection, and a new name never inherits a stale
//!   heartbeat);
//! - after a backoff that starts at [`FIRST_BACKOFF`] and doubles up to
//!   [`MAX_BACKOFF`] while the loop keeps failing at once;
//! - after putting the jobs its previous incarnation held back to `Pending`,
//!   without counting an attempt (their handlers were dropped, they did not
//!   fail), retried on every round until the database answers;
//! - counting the restart in `worker_loop_restarts` (`/metrics`), kept in the
//!   process until the database takes it.

use std::future::Future;
use std::time::{Duration, Instant};

use sqlx::PgPool;
use tokio::sync::watch;
use tolk_storage::queue;

use crate::run::unique_name;

/// Wait before the first restart of a loop that failed.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// Longest wait between two restarts: a loop is back within this of the
/// database coming back.
pub const MAX_BACKOFF: Duration = Duration::from_secs(4);
/// A loop that ran this long before failing starts again from [`FIRST_BACKOFF`].
const HEALTHY_RUN: Duration = Duration::from_secs(60);

/// Supervises the loops of one queue in one process (one per lane).
#[derive(Clone)]
pub struct Supervisor {
    queue: &'static str,
    db: PgPool,
    stop: watch::Receiver<bool>,
}

/// Backoff before restart number `failures` (1-based) of a loop that keeps failing.
pub fn backoff(failures: u32) -> Duration {
    let factor = 2u32.saturating_pow(failures.saturating_sub(1).min(16));
    FIRST_BACKOFF.saturating_mul(factor).min(MAX_BACKOFF)
}

impl Supervisor {
    /// A supervisor of `queue`'s loops, its bookkeeping on `db`, stopping when
    /// `stop` turns true.
    pub fn new(queue: &'static str, db: PgPool, stop: watch::Receiver<bool>) -> Self {
        Self { queue, db, stop }
    }

    fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// Resolves when the process is told to stop.
    pub fn stopped(&self) -> impl Future<Output = ()> + Send + use<> {
        let mut stop = self.stop.clone();
        async move {
            let _ = stop.wait_for(|s| *s).await;
        }
    }

    /// Runs `start(name)` (one worker loop under `name`, ending on a failure or
    /// once [`Supervisor::stopped`] resolves) again and again until the process
    /// stops.
    pub async fn run<F, Fut>(mut self, mut start: F)
    where
        F: FnMut(String) -> Fut,
        Fut: Future<Output = ()>,
    {
        let mut failures = 0u32;
        // Names of ended loops whose jobs are not released yet.
        let mut ended: Vec<String> = Vec::new();
        // Restarts not yet counted in the database.
        let mut uncounted = 0u64;
        loop {
            let name = unique_name(self.queue);
            let began = Instant::now();
            start(name.clone()).await;
            if self.stopping() {
                return;
            }
            if began.elapsed() >= HEALTHY_RUN {
                failures = 0;
            }
            failures = failures.saturating_add(1);
            uncounted += 1;
            ended.push(name.clone());
            let delay = backoff(failures);
            tracing::warn!(
                queue = self.queue,
                worker = %name,
                failures,
                restart_in_ms = delay.as_millis() as u64,
                "worker loop ended; starting it again"
            );
            self.settle(&mut ended, &mut uncounted).await;
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                _ = self.stop.wait_for(|s| *s) => return,
            }
            // Whatever the first try left, before the new loop fetches.
            self.settle(&mut ended, &mut uncounted).await;
        }
    }

    /// Releases the jobs of ended loops and records their restarts; what the
    /// database refuses now is kept for the next round.
    async fn settle(&self, ended: &mut Vec<String>, uncounted: &mut u64) {
        let mut kept = Vec::new();
        for name in ended.drain(..) {
            match queue::release_stopped_worker(&self.db, &name).await {
                Ok(0) => {}
                Ok(jobs) => {
                    tracing::info!(queue = self.queue, worker = %name, jobs, "jobs of an ended worker loop back to pending")
                }
                Err(e) => {
                    tracing::debug!(queue = self.queue, worker = %name, error = %e, "releasing an ended loop's jobs failed; will retry");
                    kept.push(name);
                }
            }
        }
        *ended = kept;
        if *uncounted > 0 {
            match queue::record_loop_restarts(&self.db, self.queue, *uncounted).await {
                Ok(()) => *uncounted = 0,
                Err(e) => {
                    tracing::debug!(queue = self.queue, error = %e, "recording loop restarts failed; will retry");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        assert_eq!(backoff(1), FIRST_BACKOFF);
        assert_eq!(backoff(2), FIRST_BACKOFF * 2);
        assert_eq!(backoff(3), FIRST_BACKOFF * 4);
        assert_eq!(backoff(5), MAX_BACKOFF);
        assert_eq!(backoff(u32::MAX), MAX_BACKOFF);
    }
}
