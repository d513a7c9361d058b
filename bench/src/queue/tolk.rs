//! Tolk's queue under test: burn-downs and the latency tests, with the workers
//! configured as the worker process configures them.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use apalis::prelude::*;
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;
use tolk_storage::queue as tq;

use super::bench::Bench;
use super::enqueue::{AfterCommit, enqueue_one, warm_up};
use super::load::{in_own_process, open_loop, sequential_with};
use super::probe::{BenchJob, Probe};
use super::results::{Burn, LatencyRow, LatencyRun, Mode, burn_timeout};
use super::settings::{PLATFORM_POOL, TolkSetting};
use super::workers::{WorkerPools, Workers, start_pruner};
use super::{QUEUE, WARMUP};

/// Inserts `n` jobs in chunks through apalis-postgres' own bulk insert (the SQL of
/// `push_bulk`), with ids and max_attempts as `tolk_storage::queue::enqueue` sets them.
async fn insert_tolk(pool: &PgPool, n: usize, chunk: usize, notify: AfterCommit) -> Result<f64> {
    let t = Instant::now();
    let mut conn = pool
        .acquire()
        .await
        .context("acquiring an insert connection")?;
    let mut left = n;
    while left > 0 {
        let k = left.min(chunk.max(1));
        let mut tasks = Vec::with_capacity(k);
        for _ in 0..k {
            let job = BenchJob::new(-1);
            tasks.push(
                TaskBuilder::new(serde_json::to_vec(&job)?)
                    .task_id(TaskId::from_ulid(ulid::Ulid::generate()))
                    .max_attempts(tq::TRANSLATE_DOCUMENT_MAX_ATTEMPTS as usize)
                    .idempotency_key(format!("document:{}", job.document_id))
                    .build(),
            );
        }
        apalis_postgres::queries::push_tasks(&mut *conn, QUEUE, tasks)
            .await
            .context("bulk insert into apalis.jobs")?;
        notify.send(pool).await?;
        left -= k;
    }
    Ok(t.elapsed().as_secs_f64())
}

/// A burn-down of `n` jobs through Tolk's queue with setting `s`.
pub(super) async fn tolk_burn(b: &Bench, s: &TolkSetting, n: usize, mode: Mode) -> Result<Burn> {
    b.reset_tolk(s).await?;
    let pools = WorkerPools::open(b, s).await?;
    let producer = b.pool_of(s, 2).await?;
    let pruner_pool = b.pool_of(s, 1).await?;
    let probe = Probe::new(0);
    let timeout = burn_timeout(n);

    let (t0, insert_secs, workers, pruner);
    match mode {
        Mode::Processing => {
            insert_secs = insert_tolk(&producer, n, b.chunk, AfterCommit::of(s)).await?;
            b.analyze("apalis.jobs").await?;
            b.checkpoint().await?;
            t0 = Instant::now();
            pruner = start_pruner(&pruner_pool, s.prune);
            workers = Workers::start(s, &pools, &probe);
        }
        Mode::EndToEnd => {
            pruner = start_pruner(&pruner_pool, s.prune);
            workers = Workers::start(s, &pools, &probe);
            // Let the workers register and LISTEN before the clock starts.
            tokio::time::sleep(Duration::from_millis(300)).await;
            t0 = Instant::now();
            insert_secs = insert_tolk(&producer, n, b.chunk, AfterCommit::of(s)).await?;
        }
    }
    let (waited, capped) = if probe.wait_done_capped(n, b.cap).await {
        (b.wait_tolk_rows_done(timeout).await, false)
    } else {
        (Ok(()), true)
    };
    let secs = t0.elapsed().as_secs_f64();
    let jobs = if capped {
        probe.done.load(Ordering::Acquire)
    } else {
        n
    };
    if let Some(p) = pruner {
        p.abort();
    }
    let stopped = workers.stop().await;
    waited?;
    stopped?;
    let noise = b.noise.take();
    pools.close().await;
    producer.close().await;
    pruner_pool.close().await;
    Ok(Burn {
        jobs,
        capped,
        secs,
        insert_secs,
        noise,
    })
}

/// The open-loop latency test: `n` jobs offered at `rate` per second by the API,
/// a process of its own.
pub(super) async fn tolk_openloop(
    b: &Bench,
    s: &TolkSetting,
    n: usize,
    rate: u32,
) -> Result<LatencyRow> {
    b.reset_tolk(s).await?;
    let pools = WorkerPools::open(b, s).await?;
    let probe = Probe::new(n);
    let workers = Workers::start(s, &pools, &probe);
    // The API is a process of its own: its own runtime on its own thread and its
    // own pool of the platform's size, so its enqueues are not polled behind the
    // workers' tasks on the bench's runtime.
    let api_options = b.connect_options(s.transport)?;
    let ping_always = s.ping_always;
    let setting = s.clone();
    let api_probe = probe.clone();
    b.noise.take();
    let result = in_own_process(move || async move {
        let api = if ping_always {
            PgPoolOptions::new()
                .max_connections(PLATFORM_POOL)
                .connect_with(api_options)
                .await?
        } else {
            tolk_storage::db::connect(api_options, PLATFORM_POOL).await?
        };
        let notify = AfterCommit::for_api(&setting, &api);
        warm_up(&api, &api_probe, &notify).await?;
        let r = open_loop(n, rate, |i| {
            let api = api.clone();
            let notify = notify.clone();
            async move { enqueue_one(&api, i, &notify).await }
        })
        .await;
        api.close().await;
        r
    })
    .await;
    let result = match result {
        Ok((enq, offer_secs)) => {
            // A setting slower than the offered rate falls behind: wait at most the cap.
            probe.wait_done_capped(WARMUP + n, b.cap).await;
            Ok(LatencyRun {
                system: "Tolk".into(),
                test: "open loop",
                detail: format!("{} ({})", s.key, s.describe()),
                enqueue: enq,
                offered: Some(n as f64 / offer_secs),
                noise: b.noise.take(),
            }
            .row(&probe.latencies_ms()))
        }
        Err(e) => Err(e),
    };
    let stopped = workers.stop().await;
    let row = result?;
    stopped?;
    pools.close().await;
    Ok(row)
}

/// The sequential test (Graphile's latencyTest method).
pub(super) async fn tolk_sequential(b: &Bench, s: &TolkSetting, n: usize) -> Result<LatencyRow> {
    b.reset_tolk(s).await?;
    let pools = WorkerPools::open(b, s).await?;
    let api = b.pool_of(s, PLATFORM_POOL).await?;
    let probe = Probe::new(n);
    let workers = Workers::start(s, &pools, &probe);
    let result = async {
        let notify = AfterCommit::for_api(s, &api);
        warm_up(&api, &probe, &notify).await?;
        b.noise.take();
        let enq = sequential_with(&probe, n, |i| enqueue_one(&api, i, &notify)).await?;
        let run = LatencyRun {
            system: "Tolk".into(),
            test: "sequential",
            detail: format!("{} ({})", s.key, s.describe()),
            enqueue: enq,
            offered: None,
            noise: b.noise.take(),
        };
        Ok::<_, anyhow::Error>(run.row(&probe.latencies_ms()))
    }
    .await;
    let stopped = workers.stop().await;
    let row = result?;
    stopped?;
    pools.close().await;
    api.close().await;
    Ok(row)
}
