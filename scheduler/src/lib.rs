//! Tolk's scheduler: periodic maintenance, run by one leader at a time.
//!
//! Any number of scheduler processes may run: each tries to take a session-level
//! PostgreSQL advisory lock on a dedicated connection; the holder runs the tasks,
//! the others wait and take over when the leader's connection goes away.

#![deny(missing_docs)]

pub mod leader;
pub mod tasks;

use std::future::Future;
use std::time::{Duration, Instant};

use sqlx::PgPool;
use tolk_storage::objects::Objects;

/// Settings of the scheduler.
#[derive(Debug, Clone)]
pub struct SchedulerConfig {
    /// Period of the maintenance round.
    pub tick: Duration,
    /// A worker not seen for this long is dead; its jobs go back to the queue.
    pub dead_worker_after: Duration,
    /// Period of the queue pruning (more often than `tick`: a busy queue finishes
    /// thousands of jobs a second, and apalis' fetch and ack slow down as finished
    /// rows pile up).
    pub prune_tick: Duration,
    /// Queue rows of jobs that succeeded are deleted after this long (the
    /// platform's own tables keep the durable state).
    pub keep_done_jobs: Duration,
    /// Queue rows of jobs that failed for good (killed, or out of attempts) are kept
    /// this long, for operators and for the lost-job check.
    pub keep_failed_jobs: Duration,
    /// Downloaded results are deleted after this long.
    pub keep_downloaded: Duration,
    /// Documents (and their files) are deleted this long after upload.
    pub keep_documents: Duration,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            tick: Duration::from_secs(5),
            dead_worker_after: Duration::from_secs(30),
            prune_tick: Duration::from_secs(1),
            keep_done_jobs: Duration::from_secs(10),
            keep_failed_jobs: Duration::from_secs(7 * 24 * 3600),
            keep_downloaded: Duration::from_secs(60),
            keep_documents: Duration::from_secs(7 * 24 * 3600),
        }
    }
}

/// Runs until `shutdown` resolves.
pub async fn run(
    config: SchedulerConfig,
    db: PgPool,
    objects: Objects,
    shutdown: impl Future<Output = ()> + Send,
) {
    tokio::pin!(shutdown);
    let mut leader = leader::Leader::new(db.clone());
    let mut tick = tokio::time::interval(config.tick);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut prune_tick = tokio::time::interval(config.prune_tick);
    prune_tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Live workers cannot heartbeat while the database is away: after this
    // process starts or sees the database fail, the dead-worker sweep waits one
    // `dead_worker_after` so that they are seen again before it judges them.
    let mut sweep_from = Instant::now() + config.dead_worker_after;
    loop {
        let full_round = tokio::select! {
            _ = &mut shutdown => break,
            _ = tick.tick() => true,
            _ = prune_tick.tick() => false,
        };
        match leader.ensure().await {
            Ok(true) if full_round => {
                let sweep = Instant::now() >= sweep_from;
                if !tasks::round(&config, &db, &objects, sweep).await {
                    sweep_from = Instant::now() + config.dead_worker_after;
                }
            }
            Ok(true) => {
                if let Err(e) = tasks::prune(&config, &db).await {
                    tracing::warn!(error = %e, "pruning finished jobs failed");
                }
            }
            Ok(false) => tracing::trace!("not the leader"),
            Err(e) => {
                sweep_from = Instant::now() + config.dead_worker_after;
                tracing::warn!(error = %e, "leader election failed");
            }
        }
    }
    leader.release().await;
    tracing::info!("scheduler stopped");
}
