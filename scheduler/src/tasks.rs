//! The maintenance of one scheduler round: one small service per concern,
//! run in the order of [`SERVICES`], each logged the same way.
//!
//! Job kinds are not wired here one by one: the lost-job and retention
//! services go through every kind of [`JOB_KINDS`], which each table's module
//! declares with its own lifecycle.

use async_trait::async_trait;
use sqlx::PgPool;
use tolk_storage::StorageError;
use tolk_storage::lifecycle::{JOB_KINDS, Retention};
use tolk_storage::objects::Objects;
use tolk_storage::{limits, queue, rollup};

use crate::SchedulerConfig;

/// What a service sees of the round.
pub struct Round<'a> {
    /// The scheduler's settings.
    pub config: &'a SchedulerConfig,
    /// The database.
    pub db: &'a PgPool,
    /// The object store, where expired records' files are deleted.
    pub objects: &'a Objects,
    /// Whether the dead-worker sweep may judge workers this round (live
    /// workers had time to heartbeat since the database last failed).
    pub sweep_dead_workers: bool,
}

/// One maintenance concern.
#[async_trait]
pub trait Service: Sync {
    /// What it does, in logs ("usage rollup").
    fn name(&self) -> &'static str;

    /// Runs it once; how many rows or records it handled.
    async fn run(&self, round: &Round<'_>) -> Result<u64, StorageError>;
}

/// The services of a round, in order: the usage rollup first (its answer
/// tells whether the database is there).
pub static SERVICES: &[&dyn Service] = &[
    &UsageRollup,
    &ExpiredHolds,
    &DeadWorkers,
    &LostJobs,
    &QueueRetention,
    &OauthPruning,
    &RecordRetention,
];

/// Rolls the usage ledger up into per-day and per-month rows.
struct UsageRollup;

#[async_trait]
impl Service for UsageRollup {
    fn name(&self) -> &'static str {
        "usage rollup"
    }

    async fn run(&self, round: &Round<'_>) -> Result<u64, StorageError> {
        Ok(u64::try_from(rollup::roll_up(round.db).await?.entries).unwrap_or_default())
    }
}

/// Drops usage holds of requests that never settled.
struct ExpiredHolds;

#[async_trait]
impl Service for ExpiredHolds {
    fn name(&self) -> &'static str {
        "expired usage holds"
    }

    async fn run(&self, round: &Round<'_>) -> Result<u64, StorageError> {
        limits::purge_expired_holds(round.db).await
    }
}

/// Puts the jobs of workers not seen for `dead_worker_after` back in the
/// queue, and forgets workers dead for longer than failed jobs are kept.
struct DeadWorkers;

#[async_trait]
impl Service for DeadWorkers {
    fn name(&self) -> &'static str {
        "jobs of dead workers re-enqueued"
    }

    async fn run(&self, round: &Round<'_>) -> Result<u64, StorageError> {
        let config = round.config;
        let released = match round.sweep_dead_workers {
            true => queue::release_dead_workers(round.db, config.dead_worker_after).await?,
            false => 0,
        };
        if released > 0 {
            tracing::info!(jobs = released, "re-enqueued jobs of dead workers");
        }
        queue::forget_dead_workers(round.db, config.keep_failed_jobs).await?;
        Ok(released)
    }
}

/// Ends the records of every job kind whose queue job is over.
struct LostJobs;

#[async_trait]
impl Service for LostJobs {
    fn name(&self) -> &'static str {
        "records whose job ended without finishing them"
    }

    async fn run(&self, round: &Round<'_>) -> Result<u64, StorageError> {
        let mut total = 0;
        for kind in JOB_KINDS {
            let lost = kind.fail_lost(round.db).await?;
            if lost > 0 {
                tracing::warn!(
                    kind = kind.name(),
                    records = lost,
                    "jobs lost, ended failed"
                );
            }
            total += lost;
        }
        Ok(total)
    }
}

/// Deletes finished queue rows past their retention.
struct QueueRetention;

#[async_trait]
impl Service for QueueRetention {
    fn name(&self) -> &'static str {
        "finished queue rows pruned"
    }

    async fn run(&self, round: &Round<'_>) -> Result<u64, StorageError> {
        prune(round.config, round.db).await
    }
}

/// Deletes the auth service's expired authorization codes, tokens and
/// answered consent forms, then the clients of metadata documents that
/// expired with nothing alive of theirs.
struct OauthPruning;

#[async_trait]
impl Service for OauthPruning {
    fn name(&self) -> &'static str {
        "expired OAuth codes, tokens, consents and metadata clients pruned"
    }

    async fn run(&self, round: &Round<'_>) -> Result<u64, StorageError> {
        use tolk_storage::auth::{applications, codes, consents, tokens};
        Ok(codes::prune(round.db).await?
            + tokens::prune(round.db).await?
            + consents::prune(round.db).await?
            + applications::prune_metadata_clients(round.db).await?)
    }
}

/// Deletes the records of every job kind past their retention, and their
/// files.
struct RecordRetention;

#[async_trait]
impl Service for RecordRetention {
    fn name(&self) -> &'static str {
        "expired records deleted"
    }

    async fn run(&self, round: &Round<'_>) -> Result<u64, StorageError> {
        let retention = Retention {
            downloaded: round.config.keep_downloaded,
            finished: round.config.keep_documents,
        };
        let mut total = 0;
        for kind in JOB_KINDS {
            let objects = kind.expire(round.db, &retention).await?;
            for key in &objects {
                // A missing object is no failure: `delete` ignores not found.
                if let Err(e) = round.objects.delete(key).await {
                    tracing::warn!(kind = kind.name(), object = %key, error = %e, "object delete failed");
                }
            }
            total += objects.len() as u64;
        }
        Ok(total)
    }
}

/// Deletes finished queue rows past their retention (also run on its own,
/// every `prune_tick`).
pub async fn prune(config: &SchedulerConfig, db: &PgPool) -> Result<u64, StorageError> {
    queue::prune_finished(db, config.keep_done_jobs, config.keep_failed_jobs).await
}

/// Runs every service once; a failure is logged and the service tried again
/// next round. Returns false when the database did not answer the round's
/// first service (the caller then holds the dead-worker sweep back until live
/// workers had time to heartbeat again).
pub async fn round(
    config: &SchedulerConfig,
    db: &PgPool,
    objects: &Objects,
    sweep_dead_workers: bool,
) -> bool {
    let mut round = Round {
        config,
        db,
        objects,
        sweep_dead_workers,
    };
    let mut answered = true;
    for (index, service) in SERVICES.iter().enumerate() {
        match service.run(&round).await {
            Ok(0) => {}
            Ok(count) => tracing::debug!(service = service.name(), count, "maintenance"),
            Err(e) => {
                tracing::warn!(service = service.name(), error = %e, "maintenance failed");
                if index == 0 {
                    // No database: no worker could heartbeat either.
                    answered = false;
                    round.sweep_dead_workers = false;
                }
            }
        }
    }
    answered
}
