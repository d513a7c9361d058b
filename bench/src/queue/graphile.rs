//! Graphile Worker (Node): burn-downs run by `graphile.js` itself; for the
//! latency tests Node runs only the worker pool and this process produces. How
//! Node is run is in [`super::node`].

use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use serde::{Deserialize, Serialize};
use sqlx::PgPool;

use super::WARMUP;
use super::bench::Bench;
use super::load::{open_loop, sequential_with};
use super::node::{ServePool, run_graphile};
use super::probe::Probe;
use super::raw::RAW_TRANSPORT;
use super::results::{Burn, LatencyRow, LatencyRun, Mode, burn_timeout};
use super::settings::PLATFORM_POOL;

/// One test for `graphile.js` (its JSON argument).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct GraphileSpec<'a> {
    pub(super) test: &'a str,
    connection_string: &'a str,
    pub(super) schema: &'a str,
    pub(super) jobs: usize,
    pub(super) chunk: usize,
    pub(super) mode: &'a str,
    pub(super) preset: &'a str,
    pub(super) concurrency: usize,
    max_pool_size: usize,
    poll_interval_ms: u64,
    local_queue_size: usize,
    warmup: usize,
    timeout_ms: u64,
    cap_ms: u64,
    /// Node processes running the pool (burn only).
    pub(super) processes: usize,
}

/// What `graphile.js` prints on its last line.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct GraphileResult {
    #[serde(default)]
    pub(super) jobs: usize,
    #[serde(default)]
    pub(super) capped: bool,
    #[serde(default)]
    pub(super) seconds: f64,
    #[serde(default)]
    insert_seconds: f64,
    #[serde(default)]
    pub(super) latencies_ms: Vec<f64>,
    pub(super) graphile_worker: String,
}

/// Graphile Worker's side of the comparison: the Node folder, the bench
/// database's URL and the concurrency.
pub(super) struct GraphileCfg<'a> {
    pub(super) dir: &'a Path,
    pub(super) url: &'a str,
    pub(super) concurrency: usize,
}

impl GraphileCfg<'_> {
    /// A spec of test `test` with Graphile's published perf settings.
    pub(super) fn spec<'s>(
        &'s self,
        test: &'s str,
        preset: &'s str,
        concurrency: usize,
    ) -> GraphileSpec<'s> {
        GraphileSpec {
            test,
            connection_string: self.url,
            schema: "graphile_worker",
            jobs: 0,
            chunk: 1000,
            mode: "processing",
            preset,
            concurrency,
            max_pool_size: concurrency + 1,
            poll_interval_ms: 2000,
            local_queue_size: 500,
            warmup: WARMUP,
            timeout_ms: 600_000,
            cap_ms: 600_000,
            processes: 1,
        }
    }

    /// A burn-down of `n` jobs with `preset` in `processes` Node processes.
    pub(super) async fn burn(
        &self,
        b: &Bench,
        preset: &str,
        processes: usize,
        n: usize,
        mode: Mode,
    ) -> anyhow::Result<Burn> {
        b.checkpoint().await?;
        let mut spec = self.spec("burn", preset, self.concurrency);
        spec.processes = processes;
        spec.jobs = n;
        spec.chunk = b.chunk;
        spec.mode = if mode == Mode::Processing {
            "processing"
        } else {
            "e2e"
        };
        spec.timeout_ms = burn_timeout(n).as_millis() as u64;
        spec.cap_ms = b.cap.as_millis() as u64;
        let r = run_graphile(self.dir, &spec).await?;
        Ok(Burn {
            jobs: r.jobs,
            capped: r.capped,
            secs: r.seconds,
            insert_secs: r.insert_seconds,
            noise: b.noise.take(),
        })
    }

    /// A latency test against Graphile Worker: Node runs the worker pool (`serve`);
    /// this process produces, with the same code and pool size as for Tolk.
    pub(super) async fn latency(
        &self,
        b: &Bench,
        test: &'static str,
        n: usize,
        rate: u32,
        concurrency: usize,
    ) -> anyhow::Result<(LatencyRow, String)> {
        b.checkpoint().await?;
        let mut spec = self.spec("serve", "default", concurrency);
        spec.jobs = n;
        spec.max_pool_size = concurrency + 1;
        let probe = Probe::new(n);
        let mut pool = ServePool::spawn(self.dir, &spec, &probe)?;
        if !pool.wait_ready().await {
            return Err(pool.failed("the worker pool did not get ready").await);
        }
        b.noise.take();
        let api = b.pool(RAW_TRANSPORT, PLATFORM_POOL).await?;
        let produced = produce(b, &api, &probe, test, n, rate).await;
        let noise = b.noise.take();
        api.close().await;
        let result = pool.finish().await;
        let (enq, offered) = produced?;
        let Some(line) = result else {
            return Err(pool.failed("no JSON result").await);
        };
        let r: GraphileResult = serde_json::from_str(&line)
            .with_context(|| format!("reading Graphile's result: {line}"))?;
        let lat: Vec<Option<f64>> = r
            .latencies_ms
            .iter()
            .map(|v| (*v >= 0.0).then_some(*v))
            .collect();
        let run = LatencyRun {
            system: "Graphile".into(),
            test: if test == "openloop" {
                "open loop"
            } else {
                "sequential"
            },
            detail: format!(
                "defaults, concurrency {concurrency}, pool {}",
                spec.max_pool_size
            ),
            enqueue: enq,
            offered,
            noise,
        };
        Ok((run.row(&lat), r.graphile_worker))
    }
}

/// Produces a latency test's jobs with the same code and pool size as for Tolk:
/// open loop at `rate` (then waits at most the cap for them to start), or one at
/// a time. Returns the enqueue call times, ms, and the achieved offered rate
/// (open loop).
async fn produce(
    b: &Bench,
    api: &PgPool,
    probe: &Probe,
    test: &str,
    n: usize,
    rate: u32,
) -> anyhow::Result<(Vec<f64>, Option<f64>)> {
    if test == "openloop" {
        let (enq, offer) = open_loop(n, rate, |i| {
            let api = api.clone();
            async move { graphile_add(&api, i).await }
        })
        .await?;
        probe.wait_done_capped(n, b.cap).await;
        Ok((enq, Some(n as f64 / offer)))
    } else {
        let enq = sequential_with(probe, n, |i| graphile_add(api, i)).await?;
        Ok((enq, None))
    }
}

/// Wall clock, µs since the Unix epoch (shared with the Node process).
fn wall_us() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as f64)
        .unwrap_or(0.0)
}

/// Adds one Graphile job as its `addJob` does: one `add_job` call (autocommit).
async fn graphile_add(pool: &PgPool, i: i64) -> anyhow::Result<f64> {
    let t = Instant::now();
    let payload = serde_json::json!({ "i": i, "t": wall_us() });
    sqlx::query("SELECT graphile_worker.add_job('lat', $1::json)")
        .bind(sqlx::types::Json(payload))
        .execute(pool)
        .await
        .context("graphile_worker.add_job")?;
    Ok(t.elapsed().as_secs_f64() * 1000.0)
}
