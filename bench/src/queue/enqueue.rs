//! Enqueueing as the API does: one job per transaction, then the wake-up of
//! the workers that the setting uses.

use std::time::Duration;

use anyhow::Context;
use sqlx::PgPool;
use tolk_storage::enqueuer::Enqueuer;
use tolk_storage::queue as tq;

use super::probe::{BenchJob, Probe, now_us};
use super::settings::{TolkSetting, Wake};
use super::{QUEUE, WARMUP};

/// Enqueues one job as the API does: its own transaction, `tolk_storage::queue::enqueue`.
/// Then wakes the workers as `notify` says.
pub(super) async fn enqueue_one(
    pool: &PgPool,
    seq: i64,
    notify: &AfterCommit,
) -> anyhow::Result<f64> {
    let job = BenchJob::new(seq);
    let started = job.enqueued_us;
    let mut tx = match notify {
        AfterCommit::Api {
            enqueuer,
            visible_first: true,
        } => enqueuer.begin().await,
        _ => pool.begin().await.map_err(Into::into),
    }
    .context("BEGIN")?;
    tq::enqueue(
        &mut tx,
        QUEUE,
        &tq::new_job_id(),
        &job,
        tq::TRANSLATE_DOCUMENT_MAX_ATTEMPTS,
        &format!("document:{}", job.document_id),
    )
    .await
    .context("enqueue")?;
    tx.commit().await.context("COMMIT")?;
    notify.send(pool).await?;
    Ok((now_us() - started) as f64 / 1000.0)
}

/// What an enqueuer sends after its commit.
#[derive(Clone)]
pub(super) enum AfterCommit {
    /// The platform's: the API process's `Enqueuer` (NOTIFY task, and with
    /// `visible_first` the commit without the flush, then the wait for it).
    Api {
        enqueuer: Enqueuer,
        visible_first: bool,
    },
    /// Nothing: apalis' trigger notified inside the transaction.
    Nothing,
    /// The platform's `notify_enqueued` (one worker's turn).
    Turn,
    /// A notification without `k`: every worker wakes ([`Wake::Herd`]).
    Everyone,
}

impl AfterCommit {
    pub(super) fn of(s: &TolkSetting) -> Self {
        if s.apalis_trigger {
            Self::Nothing
        } else if s.wake == Wake::Herd {
            Self::Everyone
        } else {
            Self::Turn
        }
    }

    /// [`AfterCommit::of`], with the API process's `Notifier` on `pool` where
    /// the setting uses one (call it on the API's runtime).
    pub(super) fn for_api(s: &TolkSetting, pool: &PgPool) -> Self {
        match Self::of(s) {
            Self::Turn if s.notifier => Self::Api {
                enqueuer: Enqueuer::start(pool),
                visible_first: s.visible_first,
            },
            other => other,
        }
    }

    pub(super) async fn send(&self, pool: &PgPool) -> anyhow::Result<()> {
        match self {
            Self::Nothing => {}
            Self::Api {
                enqueuer,
                visible_first: true,
            } => enqueuer.committed(QUEUE).await,
            Self::Api { enqueuer, .. } => enqueuer.notifier().wake(QUEUE),
            Self::Turn => tq::notify_enqueued(pool, QUEUE)
                .await
                .context("notify_enqueued")?,
            Self::Everyone => {
                sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                    "BEGIN; SET LOCAL synchronous_commit = off; \
                     SELECT pg_notify('{}', '{{\"job_type\":\"{QUEUE}\"}}'); COMMIT;",
                    tq::INSERT_CHANNEL
                )))
                .execute(pool)
                .await
                .context("NOTIFY")?;
            }
        }
        Ok(())
    }
}

pub(super) async fn warm_up(
    pool: &PgPool,
    probe: &Probe,
    notify: &AfterCommit,
) -> anyhow::Result<()> {
    for _ in 0..WARMUP {
        enqueue_one(pool, -1, notify).await?;
    }
    probe
        .wait_done(WARMUP, Duration::from_secs(60), "warm-up")
        .await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    Ok(())
}
