//! The baseline: a hand-written `FOR UPDATE SKIP LOCKED` loop on a table of its
//! own.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use sqlx::PgPool;

use super::bench::Bench;
use super::probe::{BenchJob, Probe};
use super::results::{Burn, Mode, burn_timeout};
use super::settings::Transport;

/// Jobs fetched and locked per raw SKIP LOCKED claim.
pub(super) const RAW_BATCH: i64 = 100;
/// The raw loop's and Graphile's connections (the transport of the recommendation).
pub(super) const RAW_TRANSPORT: Transport = Transport::Unix;

/// The raw loop's table: a minimal job queue.
pub(super) const RAW_SCHEMA: &str = "
CREATE TABLE raw_jobs (
    id         bigserial PRIMARY KEY,
    queue      text NOT NULL,
    status     text NOT NULL DEFAULT 'pending',
    run_at     timestamptz NOT NULL DEFAULT now(),
    payload    jsonb NOT NULL,
    locked_by  text,
    locked_at  timestamptz,
    done_at    timestamptz
);
CREATE INDEX raw_jobs_fetch ON raw_jobs (queue, run_at, id) WHERE status = 'pending';
";

/// Claims up to `$3` due jobs of queue `$1` for consumer `$2`.
const RAW_CLAIM: &str = "
UPDATE raw_jobs SET status = 'running', locked_by = $2, locked_at = now()
WHERE id IN (
    SELECT id FROM raw_jobs
    WHERE status = 'pending' AND queue = $1 AND run_at <= now()
    ORDER BY run_at, id
    LIMIT $3
    FOR UPDATE SKIP LOCKED)
RETURNING id, payload";

/// Marks the claimed jobs `$1` done.
const RAW_COMPLETE: &str =
    "UPDATE raw_jobs SET status = 'done', done_at = now() WHERE id = ANY($1)";

/// Inserts `n` jobs, `chunk` per INSERT; returns the seconds it took.
async fn raw_insert(pool: &PgPool, n: usize, chunk: usize) -> anyhow::Result<f64> {
    let t = Instant::now();
    let mut left = n;
    while left > 0 {
        let k = left.min(chunk.max(1));
        let payloads = (0..k)
            .map(|_| serde_json::to_value(BenchJob::new(-1)))
            .collect::<Result<Vec<_>, _>>()?;
        sqlx::query(
            "INSERT INTO raw_jobs (queue, payload) SELECT 'raw', p FROM unnest($1::jsonb[]) p",
        )
        .bind(&payloads)
        .execute(pool)
        .await
        .context("raw insert")?;
        left -= k;
    }
    Ok(t.elapsed().as_secs_f64())
}

/// One consumer: claims a batch, runs the handlers, completes the batch, until
/// `n` jobs are done.
async fn raw_consumer(
    pool: PgPool,
    name: String,
    n: usize,
    done: Arc<AtomicUsize>,
) -> anyhow::Result<()> {
    let probe = Probe::new(0);
    loop {
        let rows: Vec<(i64, serde_json::Value)> = sqlx::query_as(RAW_CLAIM)
            .bind("raw")
            .bind(&name)
            .bind(RAW_BATCH)
            .fetch_all(&pool)
            .await
            .context("raw claim")?;
        if rows.is_empty() {
            if done.load(Ordering::Acquire) >= n {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
            continue;
        }
        let mut ids = Vec::with_capacity(rows.len());
        for (id, payload) in rows {
            let job: BenchJob = serde_json::from_value(payload).context("raw payload")?;
            probe.record(&job);
            ids.push(id);
        }
        sqlx::query(RAW_COMPLETE)
            .bind(&ids)
            .execute(&pool)
            .await
            .context("raw complete")?;
        done.fetch_add(ids.len(), Ordering::AcqRel);
    }
}

/// A burn-down of `n` jobs through the raw loop with `consumers` consumers.
pub(super) async fn raw_burn(
    b: &Bench,
    consumers: usize,
    n: usize,
    mode: Mode,
) -> anyhow::Result<Burn> {
    sqlx::query("TRUNCATE raw_jobs RESTART IDENTITY")
        .execute(&b.obs)
        .await
        .context("truncating raw_jobs")?;
    b.checkpoint().await?;
    let pool = b.pool(RAW_TRANSPORT, consumers as u32 + 1).await?;
    let done = Arc::new(AtomicUsize::new(0));
    let spawn = |pool: &PgPool| {
        (0..consumers.max(1))
            .map(|i| {
                tokio::spawn(raw_consumer(
                    pool.clone(),
                    format!("raw-{i}"),
                    n,
                    done.clone(),
                ))
            })
            .collect::<Vec<_>>()
    };
    let (t0, insert_secs, handles);
    match mode {
        Mode::Processing => {
            insert_secs = raw_insert(&pool, n, b.chunk).await?;
            b.analyze("raw_jobs").await?;
            b.checkpoint().await?;
            t0 = Instant::now();
            handles = spawn(&pool);
        }
        Mode::EndToEnd => {
            handles = spawn(&pool);
            t0 = Instant::now();
            insert_secs = raw_insert(&pool, n, b.chunk).await?;
        }
    }
    for h in handles {
        tokio::time::timeout(burn_timeout(n), h)
            .await
            .context("raw burn-down timed out")?
            .context("raw consumer task")??;
    }
    let secs = t0.elapsed().as_secs_f64();
    pool.close().await;
    Ok(Burn {
        jobs: n,
        capped: false,
        secs,
        insert_secs,
        noise: b.noise.take(),
    })
}
