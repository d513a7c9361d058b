//! The maintenance tasks of one scheduler round.

use sqlx::PgPool;
use tolk_storage::objects::Objects;
use tolk_storage::{documents, limits, quality, queue, rollup};

use crate::SchedulerConfig;

/// Deletes finished queue rows past their retention (run every `prune_tick`).
pub async fn prune_queue(config: &SchedulerConfig, db: &PgPool) {
    if let Err(e) = queue::prune_finished(db, config.keep_done_jobs, config.keep_failed_jobs).await
    {
        tracing::warn!(error = %e, "pruning finished jobs failed");
    }
}

/// Deletes the auth service's authorization codes and token rows that expired
/// more than a day ago (both tables are indexed on their expiry).
pub async fn prune_oauth(db: &PgPool) {
    match tolk_storage::auth::codes::prune(db).await {
        Ok(0) => {}
        Ok(n) => tracing::info!(codes = n, "pruned expired authorization codes"),
        Err(e) => tracing::warn!(error = %e, "pruning authorization codes failed"),
    }
    match tolk_storage::auth::tokens::prune(db).await {
        Ok(0) => {}
        Ok(n) => tracing::info!(tokens = n, "pruned expired OAuth tokens"),
        Err(e) => tracing::warn!(error = %e, "pruning OAuth tokens failed"),
    }
    match tolk_storage::auth::consents::prune(db).await {
        Ok(0) => {}
        Ok(n) => tracing::info!(consents = n, "pruned answered consent forms"),
        Err(e) => tracing::warn!(error = %e, "pruning consent answers failed"),
    }
}

/// Runs every task once; failures are logged and retried next round. The
/// dead-worker sweep runs only when `sweep_dead_workers`. Returns false when
/// the database did not answer the round's first task (the caller then holds
/// the sweep back until live workers had time to heartbeat again).
pub async fn round(
    config: &SchedulerConfig,
    db: &PgPool,
    objects: &Objects,
    sweep_dead_workers: bool,
) -> bool {
    let mut answered = true;
    match rollup::roll_up(db).await {
        Ok(r) if r.entries > 0 => {
            tracing::debug!(
                entries = r.entries,
                watermark = r.watermark,
                "usage rolled up"
            );
        }
        Ok(_) => {}
        Err(e) => {
            answered = false;
            tracing::warn!(error = %e, "usage rollup failed");
        }
    }
    if let Err(e) = limits::purge_expired_holds(db).await {
        tracing::warn!(error = %e, "purging expired usage holds failed");
    }
    if sweep_dead_workers && answered {
        match queue::release_dead_workers(db, config.dead_worker_after).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(jobs = n, "re-enqueued jobs of dead workers"),
            Err(e) => tracing::warn!(error = %e, "sweeping dead workers failed"),
        }
    }
    match documents::fail_lost_jobs(db).await {
        Ok(0) => {}
        Ok(n) => tracing::warn!(
            documents = n,
            "documents whose job ended without finishing them"
        ),
        Err(e) => tracing::warn!(error = %e, "checking lost jobs failed"),
    }
    match quality::fail_lost_jobs(db).await {
        Ok(0) => {}
        Ok(n) => tracing::warn!(
            evaluations = n,
            "quality evaluations whose job ended without finishing them"
        ),
        Err(e) => tracing::warn!(error = %e, "checking lost evaluation jobs failed"),
    }
    prune_queue(config, db).await;
    prune_oauth(db).await;
    if let Err(e) = queue::forget_dead_workers(db, config.keep_failed_jobs).await {
        tracing::warn!(error = %e, "forgetting dead workers failed");
    }
    match documents::expire(
        db,
        config.keep_downloaded.as_secs_f64(),
        config.keep_documents.as_secs_f64(),
    )
    .await
    {
        Ok(expired) => {
            for (id, keys) in expired {
                for key in keys {
                    if let Err(e) = objects.delete(&key).await {
                        tracing::warn!(document_id = %id, object = %key, error = %e, "object delete failed");
                    }
                }
            }
        }
        Err(e) => tracing::warn!(error = %e, "expiring documents failed"),
    }
    match quality::expire(db, quality::RETENTION).await {
        Ok(expired) => {
            for (id, report) in expired {
                let keys = report
                    .into_iter()
                    .chain(std::iter::once(quality::segments_object(id)));
                for key in keys {
                    // A text job has no segments object: `delete` ignores not found.
                    if let Err(e) = objects.delete(&key).await {
                        tracing::warn!(object = %key, error = %e, "object delete failed");
                    }
                }
            }
        }
        Err(e) => tracing::warn!(error = %e, "expiring quality evaluations failed"),
    }
    answered
}
