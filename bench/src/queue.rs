//! `tolk-bench queue`: Tolk's job queue (apalis-postgres, configured as the worker
//! configures it in `worker/src/run.rs`) against Graphile Worker 0.17.3 and a
//! hand-written `FOR UPDATE SKIP LOCKED` loop, side by side, in one run, on the local
//! PostgreSQL.
//!
//! Method (see also `shared/design/queue-notes.md` §5–6):
//! - A throwaway database per run (`tolk_bench_<pid>_<unix>`), migrated with the
//!   platform's own migrator (`tolk_storage::db::migrate`: apalis schema + ours),
//!   dropped at the end. Graphile Worker gets its own schema in the same database,
//!   the raw loop its own table.
//! - Burn-down: N no-op jobs, inserted in chunks (`--chunk`, one INSERT per chunk).
//!   "processing" inserts everything first, then starts the workers and times until
//!   every job is done; "end to end" starts the workers, then inserts, and times from
//!   the first insert until every job is done. "Done" means every handler ran *and*
//!   the database says so (no apalis row left that is not `Done`; Graphile's jobs
//!   table empty; every raw row completed). Each run starts from an emptied table and a
//!   `CHECKPOINT`.
//! - Latency: jobs enqueued one per transaction, as the API does
//!   (`tolk_storage::queue::enqueue`), at a fixed offered rate without waiting for
//!   earlier enqueues (open loop), with the enqueue moment in the payload; the handler
//!   records now − enqueue moment. Then Graphile's `perfTest/latencyTest.js` method:
//!   one job at a time, each enqueued only after the previous one started.
//!
//! Figures only: a target that is missed is printed as MISS; the command fails only on
//! errors.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context as TaskCx, Poll};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, anyhow, bail};
use apalis::prelude::*;
use apalis_postgres::{Config, PostgresStorage};
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use serde::{Deserialize, Serialize};
use sqlx::postgres::{PgConnectOptions, PgListener, PgNotification, PgPoolOptions};
use sqlx::{Connection, PgConnection, PgPool};
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;
use tolk_storage::queue as tq;

/// The platform's queue: the bench runs the document queue's name and payload shape.
const QUEUE: &str = tq::TRANSLATE_DOCUMENT;
/// The channel apalis-postgres' insert trigger notifies.
const APALIS_CHANNEL: &str = "apalis::job::insert";

// The platform's worker settings (worker/src/run.rs `WorkerConfig::default()`, the CLI
// defaults in src/cli.rs and the scheduler's in scheduler/src/lib.rs). Copied, not
// imported: tolk-worker pulls in the engines. Keep in step with those files.
/// `--concurrency` default (`TOLK_WORKER_CONCURRENCY`); run.rs sets batch_size to it.
const PLATFORM_CONCURRENCY: usize = 2;
/// `WorkerConfig::heartbeat` / `--heartbeat-secs`.
const PLATFORM_HEARTBEAT: Duration = Duration::from_secs(5);
/// `WorkerConfig::missed_heartbeats`.
const PLATFORM_MISSED_HEARTBEATS: usize = 3;
/// `WorkerConfig::poll_interval` (besides LISTEN/NOTIFY).
const PLATFORM_POLL: Duration = Duration::from_secs(1);
/// `--db-connections` (`TOLK_DB_CONNECTIONS`): pool size per process.
const PLATFORM_POOL: u32 = 10;
/// `SchedulerConfig::keep_finished_jobs`: finished rows are pruned after an hour, so
/// nothing is pruned during a burn-down.
const PLATFORM_KEEP_FINISHED: Duration = Duration::from_secs(3600);
/// `SchedulerConfig::tick`.
const PLATFORM_SCHEDULER_TICK: Duration = Duration::from_secs(5);

/// Jobs fetched and locked per raw SKIP LOCKED claim.
const RAW_BATCH: i64 = 100;
/// Warm-up jobs before a latency test.
const WARMUP: usize = 100;

/// Arguments of `tolk-bench queue`.
#[derive(Debug, clap::Args)]
pub struct QueueArgs {
    /// Admin URL of the local PostgreSQL (a database to connect to for CREATE and DROP
    /// DATABASE). The bench database gets the same host, user and options.
    #[arg(
        long,
        env = "TOLK_BENCH_DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/postgres"
    )]
    database_url: String,
    /// No-op jobs per burn-down (default 100,000; 20,000 with --quick).
    #[arg(long)]
    jobs: Option<usize>,
    /// Smaller run: 20k jobs, fewer settings, shorter latency tests (about 1.5 minutes).
    #[arg(long)]
    quick: bool,
    /// Jobs per INSERT in the burn-downs (all three systems).
    #[arg(long, default_value_t = 1000)]
    chunk: usize,
    /// Jobs in the open-loop latency test (default 5,000; 2,000 with --quick).
    #[arg(long)]
    latency_jobs: Option<usize>,
    /// Offered rate of the open-loop latency test, jobs per second.
    #[arg(long, default_value_t = 1000)]
    rate: u32,
    /// Samples of the sequential (Graphile latencyTest) test (default 1,000; 300 with --quick).
    #[arg(long)]
    sequential: Option<usize>,
    /// Graphile Worker concurrency in the burn-downs (its published perf setting is 24).
    #[arg(long, default_value_t = 24)]
    graphile_concurrency: usize,
    /// Consumers of the raw SKIP LOCKED loop.
    #[arg(long, default_value_t = 2)]
    raw_consumers: usize,
    /// Only these Tolk settings (comma-separated keys, e.g. `platform,rec`); all by default.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Skip Graphile Worker (no Node needed).
    #[arg(long)]
    skip_graphile: bool,
    /// Skip the latency tests.
    #[arg(long)]
    skip_latency: bool,
    /// Keep the throwaway database (its name is printed) instead of dropping it.
    #[arg(long)]
    keep_db: bool,
    /// Folder of the Node side (package.json, graphile.js).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/node"))]
    node_dir: PathBuf,
}

// ---------------------------------------------------------------------------
// Tolk settings
// ---------------------------------------------------------------------------

/// How an idle worker learns about new jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wake {
    /// `.with_pubsub().poll_with_interval(poll)`, as the platform does.
    ApalisPubsub,
    /// Our own LISTEN stream that drains every buffered notification per wake-up,
    /// plus the same interval poll (see [`DrainedNotify`]).
    Drained,
    /// Interval poll only, no LISTEN.
    Interval,
}

/// One configuration of Tolk's queue.
#[derive(Debug, Clone)]
struct TolkSetting {
    key: &'static str,
    /// Workers (apalis `WorkerBuilder`s, unique names) in the one process.
    workers: usize,
    /// In-flight jobs per worker (`.concurrency`).
    concurrency: usize,
    /// apalis `Config::batch_size`.
    batch: usize,
    /// `sslmode=disable` on the bench's connections (otherwise the URL's own sslmode,
    /// which defaults to `prefer`: TLS when the server has ssl on).
    no_tls: bool,
    /// Scheduler pruning of finished rows: `None` = the platform's (1 h retention,
    /// nothing pruned during a run); `Some(tick)` = `prune_finished(0 s)` every tick.
    prune_every: Option<Duration>,
    wake: Wake,
    /// Pool size of the worker process.
    pool: u32,
}

impl TolkSetting {
    fn platform() -> Self {
        Self {
            key: "platform",
            workers: 1,
            concurrency: PLATFORM_CONCURRENCY,
            batch: PLATFORM_CONCURRENCY,
            no_tls: false,
            prune_every: None,
            wake: Wake::ApalisPubsub,
            pool: PLATFORM_POOL,
        }
    }

    fn is_platform(&self) -> bool {
        self.key == "platform"
    }

    fn describe(&self) -> String {
        let mut s = format!(
            "{} worker{} × concurrency {}, batch_size {}, {}, {}, {}",
            self.workers,
            if self.workers == 1 { "" } else { "s" },
            self.concurrency,
            self.batch,
            if self.no_tls { "sslmode=disable" } else { "sslmode as in the URL (TLS)" },
            match self.wake {
                Wake::ApalisPubsub => "with_pubsub + 1 s interval",
                Wake::Drained => "drained LISTEN + 1 s interval",
                Wake::Interval => "1 s interval only (no LISTEN)",
            },
            match self.prune_every {
                None => format!(
                    "scheduler prune: keep {} min, tick {} s (nothing pruned during a run)",
                    PLATFORM_KEEP_FINISHED.as_secs() / 60,
                    PLATFORM_SCHEDULER_TICK.as_secs()
                ),
                Some(d) => format!("Done rows pruned every {} ms", d.as_millis()),
            }
        );
        if self.pool != PLATFORM_POOL {
            let _ = write!(s, ", pool {}", self.pool);
        }
        s
    }
}

/// The settings tried, in order. The first is the platform's configuration; `rec` is
/// the recommendation (settings the platform can adopt as they are).
fn tolk_settings(quick: bool) -> Vec<TolkSetting> {
    let p = TolkSetting::platform();
    let rec = TolkSetting {
        key: "rec",
        workers: 2,
        concurrency: 100,
        batch: 100,
        no_tls: true,
        prune_every: Some(Duration::from_secs(1)),
        wake: Wake::Drained,
        pool: PLATFORM_POOL,
    };
    if quick {
        return vec![p, rec];
    }
    vec![
        p.clone(),
        TolkSetting { key: "notls", no_tls: true, ..p.clone() },
        TolkSetting { key: "b10", concurrency: 10, batch: 10, no_tls: true, ..p.clone() },
        TolkSetting { key: "b100", concurrency: 100, batch: 100, no_tls: true, ..p.clone() },
        TolkSetting {
            key: "b100p",
            concurrency: 100,
            batch: 100,
            no_tls: true,
            prune_every: Some(Duration::from_secs(1)),
            ..p.clone()
        },
        TolkSetting {
            key: "w2",
            workers: 2,
            concurrency: 100,
            batch: 100,
            no_tls: true,
            prune_every: Some(Duration::from_secs(1)),
            ..p.clone()
        },
        rec,
    ]
}

// ---------------------------------------------------------------------------
// Shared plumbing
// ---------------------------------------------------------------------------

/// Microseconds since the bench started (one clock for producer and handlers).
fn now_us() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    u64::try_from(EPOCH.get_or_init(Instant::now).elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// The bench's job payload: the document job's fields plus what the bench measures.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct BenchJob {
    document_id: String,
    trace_id: String,
    /// Sample index; negative for warm-up and burn-down jobs.
    seq: i64,
    /// [`now_us`] when the enqueue started.
    enqueued_us: u64,
}

impl BenchJob {
    fn new(seq: i64) -> Self {
        Self {
            document_id: ulid::Ulid::generate().to_string(),
            trace_id: format!("{:032x}", ulid::Ulid::generate().0),
            seq,
            enqueued_us: now_us(),
        }
    }
}

/// What the handlers report to the bench.
struct Probe {
    /// Handlers run (all jobs, warm-up included).
    done: AtomicUsize,
    /// Enqueue-to-start latency by sample, µs + 1 (0: not started yet).
    latency: Vec<AtomicU64>,
    /// Signalled when a sample starts (sequential test).
    started: Notify,
}

impl Probe {
    fn new(samples: usize) -> Arc<Self> {
        Arc::new(Self {
            done: AtomicUsize::new(0),
            latency: (0..samples).map(|_| AtomicU64::new(0)).collect(),
            started: Notify::new(),
        })
    }

    fn record(&self, job: &BenchJob) {
        if let Ok(i) = usize::try_from(job.seq)
            && let Some(slot) = self.latency.get(i)
        {
            slot.store(now_us().saturating_sub(job.enqueued_us) + 1, Ordering::Relaxed);
            self.started.notify_one();
        }
        self.done.fetch_add(1, Ordering::Release);
    }

    fn latencies_ms(&self) -> Vec<f64> {
        self.latency
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .filter(|&v| v > 0)
            .map(|v| (v - 1) as f64 / 1000.0)
            .collect()
    }

    async fn wait_done(&self, target: usize, timeout: Duration, what: &str) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        while self.done.load(Ordering::Acquire) < target {
            if Instant::now() > deadline {
                bail!(
                    "{what}: only {} of {target} handlers ran within {} s",
                    self.done.load(Ordering::Acquire),
                    timeout.as_secs()
                );
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        Ok(())
    }
}

/// The no-op handler: records its start and returns.
async fn noop(job: BenchJob, probe: Data<Arc<Probe>>) -> Result<(), BoxDynError> {
    probe.record(&job);
    Ok(())
}

/// A worker name unique to this process start, as `tolk_worker::run::unique_name` makes.
fn unique_name(index: usize) -> String {
    format!("{QUEUE}-bench-{}-{index}-{}", std::process::id(), ulid::Ulid::generate())
}

/// A LISTEN stream for apalis' insert channel that, unlike apalis' `Pubsub`, drains
/// every notification already received each time it is polled and yields once.
///
/// apalis' `Pubsub` yields one notification per poll, and the worker polls its wake
/// stream once per fetch attempt. When notifications arrive faster than that (a bulk
/// insert notifies once per row, to every listener), the excess piles up in the
/// listener's buffer; while the buffer is non-empty the stream never returns
/// `Pending`, so it never registers a waker, and a new job no longer wakes an idle
/// worker: it waits for the interval poll.
struct DrainedNotify {
    inner: Mutex<BoxStream<'static, Result<PgNotification, sqlx::Error>>>,
    queue: String,
}

impl DrainedNotify {
    fn new(pool: PgPool, queue: &str) -> Self {
        let stream = futures::stream::once(async move {
            let mut listener = PgListener::connect_with(&pool).await?;
            listener.listen(APALIS_CHANNEL).await?;
            Ok::<_, sqlx::Error>(listener.into_stream())
        })
        .map(|r| match r {
            Ok(s) => s.left_stream(),
            Err(e) => futures::stream::iter([Err(e)]).right_stream(),
        })
        .flatten()
        .fuse()
        .boxed();
        Self { inner: Mutex::new(stream), queue: queue.to_owned() }
    }
}

#[derive(Deserialize)]
struct InsertEvent {
    job_type: String,
}

impl Stream for DrainedNotify {
    type Item = ();

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskCx<'_>) -> Poll<Option<()>> {
        let this = self.get_mut();
        let inner = this.inner.get_mut().unwrap_or_else(PoisonError::into_inner);
        let mut wake = false;
        loop {
            match inner.poll_next_unpin(cx) {
                Poll::Ready(Some(Ok(n))) => {
                    if serde_json::from_str::<InsertEvent>(n.payload())
                        .is_ok_and(|e| e.job_type == this.queue)
                    {
                        wake = true;
                    }
                }
                Poll::Ready(Some(Err(e))) => {
                    eprintln!("  warning: LISTEN stream error: {e}");
                    wake = true;
                }
                Poll::Ready(None) => return Poll::Ready(wake.then_some(())),
                Poll::Pending => break,
            }
        }
        if wake { Poll::Ready(Some(())) } else { Poll::Pending }
    }
}

/// A running set of Tolk workers (one apalis `Monitor`, as the worker process has).
struct Workers {
    stop: Option<oneshot::Sender<()>>,
    handle: JoinHandle<Result<(), MonitorError>>,
}

macro_rules! register_worker {
    ($monitor:expr, $name:expr, $probe:expr, $conc:expr, $backend:expr) => {{
        let name = $name;
        let probe = $probe;
        let conc = $conc;
        $monitor.register(move |_restarts| {
            WorkerBuilder::new(name.clone())
                .backend($backend)
                .data(probe.clone())
                .catch_panic()
                .concurrency(conc)
                .build(noop)
        })
    }};
}

impl Workers {
    /// Starts the workers of `s` on `pool`, configured as `worker/src/run.rs` does.
    fn start(s: &TolkSetting, pool: &PgPool, probe: &Arc<Probe>) -> Self {
        let cfg = Config::default()
            .queue(QUEUE)
            .batch_size(s.batch.max(1))
            .heartbeat_interval(PLATFORM_HEARTBEAT)
            .missed_heartbeats(PLATFORM_MISSED_HEARTBEATS);
        let mut monitor = Monitor::new();
        for i in 0..s.workers {
            let pool = pool.clone();
            let cfg = cfg.clone();
            monitor = match s.wake {
                Wake::ApalisPubsub => register_worker!(
                    monitor,
                    unique_name(i),
                    probe.clone(),
                    s.concurrency,
                    PostgresStorage::<BenchJob>::new(&pool)
                        .with_config(cfg.clone())
                        .with_pubsub()
                        .poll_with_interval(PLATFORM_POLL)
                ),
                Wake::Drained => register_worker!(
                    monitor,
                    unique_name(i),
                    probe.clone(),
                    s.concurrency,
                    PostgresStorage::<BenchJob>::new(&pool)
                        .with_config(cfg.clone())
                        .poll_with_stream(DrainedNotify::new(pool.clone(), QUEUE))
                        .poll_with_interval(PLATFORM_POLL)
                ),
                Wake::Interval => register_worker!(
                    monitor,
                    unique_name(i),
                    probe.clone(),
                    s.concurrency,
                    PostgresStorage::<BenchJob>::new(&pool)
                        .with_config(cfg.clone())
                        .poll_with_interval(PLATFORM_POLL)
                ),
            };
        }
        let (tx, rx) = oneshot::channel::<()>();
        let handle = tokio::spawn(monitor.shutdown_timeout(Duration::from_secs(30)).run_with_signal(
            async move {
                let _ = rx.await;
                Ok(())
            },
        ));
        Self { stop: Some(tx), handle }
    }

    async fn stop(mut self) -> anyhow::Result<()> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        match tokio::time::timeout(Duration::from_secs(40), &mut self.handle).await {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(e))) => Err(anyhow!("apalis monitor: {e}")),
            Ok(Err(e)) => Err(anyhow!("apalis monitor task: {e}")),
            Err(_) => {
                self.handle.abort();
                Err(anyhow!("apalis monitor did not stop within 40 s"))
            }
        }
    }
}

/// Emulates the scheduler's `prune_finished` round at a given tick (retention 0 s).
fn start_pruner(pool: PgPool, every: Duration) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if let Err(e) = tq::prune_finished(&pool, Duration::ZERO).await {
                eprintln!("  warning: prune_finished failed: {e}");
            }
        }
    })
}

/// Counts client sessions of *other* databases that are active, sampled every 250 ms,
/// to flag runs disturbed by someone else's load on the same server.
struct NoiseSampler {
    max: Arc<AtomicI64>,
    handle: JoinHandle<()>,
}

impl NoiseSampler {
    async fn start(admin: &PgConnectOptions, bench_db: &str) -> anyhow::Result<Self> {
        let mut conn = PgConnection::connect_with(admin)
            .await
            .context("connecting the activity sampler")?;
        let max = Arc::new(AtomicI64::new(0));
        let m = max.clone();
        let db = bench_db.to_owned();
        let handle = tokio::spawn(async move {
            loop {
                let n: Result<i64, _> = sqlx::query_scalar(
                    "SELECT count(*) FROM pg_stat_activity
                     WHERE state = 'active' AND backend_type = 'client backend'
                       AND pid <> pg_backend_pid() AND datname IS DISTINCT FROM $1",
                )
                .bind(&db)
                .fetch_one(&mut conn)
                .await;
                if let Ok(n) = n {
                    m.fetch_max(n, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        });
        Ok(Self { max, handle })
    }

    fn take(&self) -> i64 {
        self.max.swap(0, Ordering::Relaxed)
    }
}

impl Drop for NoiseSampler {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

/// The bench database and how to reach it.
struct Bench {
    db_name: String,
    /// The bench database, sslmode as in the admin URL.
    url_default: String,
    /// The bench database, `sslmode=disable`.
    url_no_tls: String,
    /// Observer connection (`sslmode=disable`): resets, checkpoints, completion checks.
    obs: PgPool,
    noise: NoiseSampler,
    chunk: usize,
}

impl Bench {
    fn url(&self, no_tls: bool) -> &str {
        if no_tls { &self.url_no_tls } else { &self.url_default }
    }

    async fn pool(&self, no_tls: bool, size: u32) -> anyhow::Result<PgPool> {
        let opts: PgConnectOptions = self.url(no_tls).parse().context("parsing the bench URL")?;
        tolk_storage::db::connect(opts, size)
            .await
            .context("connecting to the bench database")
    }

    /// Empties the queue tables and checkpoints, so every run starts alike.
    async fn reset_tolk(&self) -> anyhow::Result<()> {
        sqlx::query("TRUNCATE apalis.jobs, apalis.workers")
            .execute(&self.obs)
            .await
            .context("truncating apalis.jobs")?;
        self.checkpoint().await
    }

    async fn checkpoint(&self) -> anyhow::Result<()> {
        sqlx::query("CHECKPOINT").execute(&self.obs).await.context("CHECKPOINT")?;
        // Let the checkpoint's writes and the sampler settle.
        tokio::time::sleep(Duration::from_millis(200)).await;
        self.noise.take();
        Ok(())
    }

    async fn wait_tolk_rows_done(&self, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let left: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM apalis.jobs WHERE job_type = $1 AND status <> 'Done'",
            )
            .bind(QUEUE)
            .fetch_one(&self.obs)
            .await
            .context("counting unfinished apalis rows")?;
            if left == 0 {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("{left} apalis rows still not Done after {} s", timeout.as_secs());
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

// ---------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Processing,
    EndToEnd,
}

impl Mode {
    fn label(self) -> &'static str {
        match self {
            Mode::Processing => "processing",
            Mode::EndToEnd => "end to end",
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Burn {
    jobs: usize,
    secs: f64,
    insert_secs: f64,
    /// Max active sessions of other databases seen during the run.
    others: i64,
}

impl Burn {
    fn rate(&self) -> f64 {
        self.jobs as f64 / self.secs
    }
}

struct ThroughputRow {
    system: String,
    key: String,
    detail: String,
    processing: Option<Burn>,
    e2e: Option<Burn>,
}

#[derive(Debug, Clone)]
struct LatencyStats {
    n: usize,
    p50: f64,
    p95: f64,
    p99: f64,
    max: f64,
    mean: f64,
}

impl LatencyStats {
    fn of(mut v: Vec<f64>) -> Option<Self> {
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let pct = |p: f64| {
            let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
            v[rank.clamp(1, v.len()) - 1]
        };
        Some(Self {
            n: v.len(),
            p50: pct(50.0),
            p95: pct(95.0),
            p99: pct(99.0),
            max: v[v.len() - 1],
            mean: v.iter().sum::<f64>() / v.len() as f64,
        })
    }
}

struct LatencyRow {
    system: String,
    test: &'static str,
    detail: String,
    start: Option<LatencyStats>,
    enqueue: Option<LatencyStats>,
    /// Achieved offered rate (open loop), jobs/s.
    offered: Option<f64>,
    others: i64,
}

// ---------------------------------------------------------------------------
// Tolk runs
// ---------------------------------------------------------------------------

/// Inserts `n` jobs in chunks through apalis-postgres' own bulk insert (the SQL of
/// `push_bulk`), with ids and max_attempts as `tolk_storage::queue::enqueue` sets them.
async fn insert_tolk(pool: &PgPool, n: usize, chunk: usize) -> anyhow::Result<f64> {
    let t = Instant::now();
    let mut conn = pool.acquire().await.context("acquiring an insert connection")?;
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
                    .build(),
            );
        }
        apalis_postgres::queries::push_tasks(&mut *conn, QUEUE, tasks)
            .await
            .context("bulk insert into apalis.jobs")?;
        left -= k;
    }
    Ok(t.elapsed().as_secs_f64())
}

fn burn_timeout(n: usize) -> Duration {
    Duration::from_secs(120 + (n / 200) as u64)
}

async fn tolk_burn(b: &Bench, s: &TolkSetting, n: usize, mode: Mode) -> anyhow::Result<Burn> {
    b.reset_tolk().await?;
    let pool = b.pool(s.no_tls, s.pool).await?;
    let producer = b.pool(s.no_tls, 2).await?;
    let pruner_pool = b.pool(s.no_tls, 1).await?;
    let probe = Probe::new(0);
    let timeout = burn_timeout(n);

    let (t0, insert_secs, workers, pruner);
    match mode {
        Mode::Processing => {
            insert_secs = insert_tolk(&producer, n, b.chunk).await?;
            b.checkpoint().await?;
            t0 = Instant::now();
            pruner = s.prune_every.map(|d| start_pruner(pruner_pool.clone(), d));
            workers = Workers::start(s, &pool, &probe);
        }
        Mode::EndToEnd => {
            pruner = s.prune_every.map(|d| start_pruner(pruner_pool.clone(), d));
            workers = Workers::start(s, &pool, &probe);
            // Let the workers register and LISTEN before the clock starts.
            tokio::time::sleep(Duration::from_millis(300)).await;
            t0 = Instant::now();
            insert_secs = insert_tolk(&producer, n, b.chunk).await?;
        }
    }
    let waited = async {
        probe.wait_done(n, timeout, "Tolk burn-down").await?;
        b.wait_tolk_rows_done(timeout).await
    }
    .await;
    let secs = t0.elapsed().as_secs_f64();
    if let Some(p) = pruner {
        p.abort();
    }
    let stopped = workers.stop().await;
    waited?;
    stopped?;
    let others = b.noise.take();
    pool.close().await;
    producer.close().await;
    pruner_pool.close().await;
    Ok(Burn { jobs: n, secs, insert_secs, others })
}

/// Enqueues one job as the API does: its own transaction, `tolk_storage::queue::enqueue`.
async fn enqueue_one(pool: &PgPool, seq: i64) -> anyhow::Result<f64> {
    let job = BenchJob::new(seq);
    let started = job.enqueued_us;
    let mut tx = pool.begin().await.context("BEGIN")?;
    tq::enqueue(&mut tx, QUEUE, &tq::new_job_id(), &job, tq::TRANSLATE_DOCUMENT_MAX_ATTEMPTS)
        .await
        .context("enqueue")?;
    tx.commit().await.context("COMMIT")?;
    Ok((now_us() - started) as f64 / 1000.0)
}

async fn warm_up(pool: &PgPool, probe: &Probe) -> anyhow::Result<()> {
    for _ in 0..WARMUP {
        enqueue_one(pool, -1).await?;
    }
    probe.wait_done(WARMUP, Duration::from_secs(60), "warm-up").await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    Ok(())
}

async fn tolk_openloop(b: &Bench, s: &TolkSetting, n: usize, rate: u32) -> anyhow::Result<LatencyRow> {
    b.reset_tolk().await?;
    let pool = b.pool(s.no_tls, s.pool).await?;
    // The API process has its own pool of the platform's size.
    let api = b.pool(s.no_tls, PLATFORM_POOL).await?;
    let probe = Probe::new(n);
    let workers = Workers::start(s, &pool, &probe);
    let result = async {
        warm_up(&api, &probe).await?;
        b.noise.take();
        let spacing = Duration::from_secs_f64(1.0 / f64::from(rate.max(1)));
        let t0 = tokio::time::Instant::now();
        let mut tasks = Vec::with_capacity(n);
        for i in 0..n {
            tokio::time::sleep_until(t0 + spacing * i as u32).await;
            let api = api.clone();
            tasks.push(tokio::spawn(async move { enqueue_one(&api, i as i64).await }));
        }
        let offer_secs = t0.elapsed().as_secs_f64();
        let mut enq = Vec::with_capacity(n);
        for t in tasks {
            enq.push(t.await.context("enqueue task")??);
        }
        probe.wait_done(WARMUP + n, Duration::from_secs(120), "open-loop latency").await?;
        Ok::<_, anyhow::Error>(LatencyRow {
            system: "Tolk".into(),
            test: "open loop",
            detail: format!("{} ({})", s.key, s.describe()),
            start: LatencyStats::of(probe.latencies_ms()),
            enqueue: LatencyStats::of(enq),
            offered: Some(n as f64 / offer_secs),
            others: b.noise.take(),
        })
    }
    .await;
    let stopped = workers.stop().await;
    let row = result?;
    stopped?;
    pool.close().await;
    api.close().await;
    Ok(row)
}

async fn tolk_sequential(b: &Bench, s: &TolkSetting, n: usize) -> anyhow::Result<LatencyRow> {
    b.reset_tolk().await?;
    let pool = b.pool(s.no_tls, s.pool).await?;
    let api = b.pool(s.no_tls, PLATFORM_POOL).await?;
    let probe = Probe::new(n);
    let workers = Workers::start(s, &pool, &probe);
    let result = async {
        warm_up(&api, &probe).await?;
        b.noise.take();
        let mut enq = Vec::with_capacity(n);
        for i in 0..n {
            enq.push(enqueue_one(&api, i as i64).await?);
            let deadline = Instant::now() + Duration::from_secs(30);
            while probe.latency[i].load(Ordering::Relaxed) == 0 {
                if Instant::now() > deadline {
                    bail!("sequential latency: sample {i} did not start within 30 s");
                }
                let _ = tokio::time::timeout(Duration::from_millis(50), probe.started.notified()).await;
            }
        }
        Ok::<_, anyhow::Error>(LatencyRow {
            system: "Tolk".into(),
            test: "sequential",
            detail: format!("{} ({})", s.key, s.describe()),
            start: LatencyStats::of(probe.latencies_ms()),
            enqueue: LatencyStats::of(enq),
            offered: None,
            others: b.noise.take(),
        })
    }
    .await;
    let stopped = workers.stop().await;
    let row = result?;
    stopped?;
    pool.close().await;
    api.close().await;
    Ok(row)
}

// ---------------------------------------------------------------------------
// Raw SKIP LOCKED
// ---------------------------------------------------------------------------

const RAW_SCHEMA: &str = "
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

const RAW_CLAIM: &str = "
UPDATE raw_jobs SET status = 'running', locked_by = $2, locked_at = now()
WHERE id IN (
    SELECT id FROM raw_jobs
    WHERE status = 'pending' AND queue = $1 AND run_at <= now()
    ORDER BY run_at, id
    LIMIT $3
    FOR UPDATE SKIP LOCKED)
RETURNING id, payload";

const RAW_COMPLETE: &str = "UPDATE raw_jobs SET status = 'done', done_at = now() WHERE id = ANY($1)";

async fn raw_insert(pool: &PgPool, n: usize, chunk: usize) -> anyhow::Result<f64> {
    let t = Instant::now();
    let mut left = n;
    while left > 0 {
        let k = left.min(chunk.max(1));
        let payloads = (0..k)
            .map(|_| serde_json::to_value(BenchJob::new(-1)))
            .collect::<Result<Vec<_>, _>>()?;
        sqlx::query("INSERT INTO raw_jobs (queue, payload) SELECT 'raw', p FROM unnest($1::jsonb[]) p")
            .bind(&payloads)
            .execute(pool)
            .await
            .context("raw insert")?;
        left -= k;
    }
    Ok(t.elapsed().as_secs_f64())
}

async fn raw_consumer(pool: PgPool, name: String, n: usize, done: Arc<AtomicUsize>) -> anyhow::Result<()> {
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
        sqlx::query(RAW_COMPLETE).bind(&ids).execute(&pool).await.context("raw complete")?;
        done.fetch_add(ids.len(), Ordering::AcqRel);
    }
}

async fn raw_burn(b: &Bench, consumers: usize, n: usize, mode: Mode) -> anyhow::Result<Burn> {
    sqlx::query("TRUNCATE raw_jobs RESTART IDENTITY")
        .execute(&b.obs)
        .await
        .context("truncating raw_jobs")?;
    b.checkpoint().await?;
    let pool = b.pool(true, consumers as u32 + 1).await?;
    let done = Arc::new(AtomicUsize::new(0));
    let spawn = |pool: &PgPool| {
        (0..consumers.max(1))
            .map(|i| tokio::spawn(raw_consumer(pool.clone(), format!("raw-{i}"), n, done.clone())))
            .collect::<Vec<_>>()
    };
    let (t0, insert_secs, handles);
    match mode {
        Mode::Processing => {
            insert_secs = raw_insert(&pool, n, b.chunk).await?;
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
    Ok(Burn { jobs: n, secs, insert_secs, others: b.noise.take() })
}

// ---------------------------------------------------------------------------
// Graphile Worker (Node)
// ---------------------------------------------------------------------------

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct GraphileSpec<'a> {
    test: &'a str,
    connection_string: &'a str,
    schema: &'a str,
    jobs: usize,
    chunk: usize,
    mode: &'a str,
    preset: &'a str,
    concurrency: usize,
    max_pool_size: usize,
    poll_interval_ms: u64,
    local_queue_size: usize,
    rate_per_sec: u32,
    warmup: usize,
    timeout_ms: u64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GraphileResult {
    #[serde(default)]
    seconds: f64,
    #[serde(default)]
    insert_seconds: f64,
    #[serde(default)]
    offer_seconds: f64,
    #[serde(default)]
    latencies_ms: Vec<f64>,
    #[serde(default)]
    enqueue_ms: Vec<f64>,
    graphile_worker: String,
}

/// Makes sure `node` runs and graphile-worker is installed in `dir`.
async fn prepare_node(dir: &Path) -> anyhow::Result<()> {
    if !dir.join("package.json").is_file() {
        bail!("{} has no package.json (pass --node-dir, or --skip-graphile)", dir.display());
    }
    let node = tokio::process::Command::new("node").arg("--version").output().await;
    match node {
        Ok(o) if o.status.success() => {}
        _ => bail!("`node` is not available: Graphile Worker needs Node (>= 14); install it or pass --skip-graphile"),
    }
    if dir.join("node_modules/graphile-worker/package.json").is_file() {
        return Ok(());
    }
    println!("Installing Graphile Worker (npm install in {}) ...", dir.display());
    let out = tokio::process::Command::new("npm")
        .args(["install", "--no-audit", "--no-fund"])
        .current_dir(dir)
        .output()
        .await;
    match out {
        Err(e) => bail!(
            "`npm` is not available ({e}): install npm or run `npm install` in {} yourself, or pass --skip-graphile",
            dir.display()
        ),
        Ok(o) if !o.status.success() => bail!(
            "`npm install` failed in {}:\n{}{}",
            dir.display(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        Ok(_) => Ok(()),
    }
}

async fn run_graphile(dir: &Path, spec: &GraphileSpec<'_>) -> anyhow::Result<GraphileResult> {
    let json = serde_json::to_string(spec)?;
    let out = tokio::process::Command::new("node")
        .arg("graphile.js")
        .arg(&json)
        .current_dir(dir)
        .env("NO_LOG_SUCCESS", "1")
        .output()
        .await
        .context("spawning node graphile.js")?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!("node graphile.js ({} test) failed ({}):\n{stderr}", spec.test, out.status);
    }
    for line in stderr.lines().filter(|l| !l.trim().is_empty()) {
        eprintln!("  node: {line}");
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .ok_or_else(|| anyhow!("node graphile.js printed no JSON result:\n{stdout}"))?;
    serde_json::from_str(last).with_context(|| format!("reading Graphile's result: {last}"))
}

struct GraphileCfg<'a> {
    dir: &'a Path,
    url: &'a str,
    concurrency: usize,
}

impl GraphileCfg<'_> {
    fn spec<'s>(&'s self, test: &'s str, preset: &'s str, concurrency: usize) -> GraphileSpec<'s> {
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
            rate_per_sec: 1000,
            warmup: WARMUP,
            timeout_ms: 600_000,
        }
    }

    async fn burn(&self, b: &Bench, preset: &str, n: usize, mode: Mode) -> anyhow::Result<Burn> {
        b.checkpoint().await?;
        let mut spec = self.spec("burn", preset, self.concurrency);
        spec.jobs = n;
        spec.chunk = b.chunk;
        spec.mode = if mode == Mode::Processing { "processing" } else { "e2e" };
        spec.timeout_ms = burn_timeout(n).as_millis() as u64;
        let r = run_graphile(self.dir, &spec).await?;
        Ok(Burn { jobs: n, secs: r.seconds, insert_secs: r.insert_seconds, others: b.noise.take() })
    }

    async fn latency(
        &self,
        b: &Bench,
        test: &'static str,
        n: usize,
        rate: u32,
        concurrency: usize,
    ) -> anyhow::Result<(LatencyRow, String)> {
        b.checkpoint().await?;
        let mut spec = self.spec(test, "default", concurrency);
        spec.jobs = n;
        spec.rate_per_sec = rate;
        // The producer's pool, like the API's.
        spec.max_pool_size = (concurrency + 1).max(PLATFORM_POOL as usize);
        let r = run_graphile(self.dir, &spec).await?;
        let row = LatencyRow {
            system: "Graphile".into(),
            test: if test == "openloop" { "open loop" } else { "sequential" },
            detail: format!("defaults, concurrency {concurrency}, pool {}", spec.max_pool_size),
            start: LatencyStats::of(r.latencies_ms.into_iter().filter(|v| *v >= 0.0).collect()),
            enqueue: LatencyStats::of(r.enqueue_ms),
            offered: (test == "openloop" && r.offer_seconds > 0.0).then(|| n as f64 / r.offer_seconds),
            others: b.noise.take(),
        };
        Ok((row, r.graphile_worker))
    }
}

// ---------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------

/// Replaces the database of `url` and sets or clears `sslmode`.
fn bench_url(admin: &str, db: &str, sslmode: Option<&str>) -> anyhow::Result<String> {
    let mut u = url::Url::parse(admin).with_context(|| format!("parsing --database-url {admin}"))?;
    u.set_path(&format!("/{db}"));
    let pairs: Vec<(String, String)> = u
        .query_pairs()
        .filter(|(k, _)| sslmode.is_none() || k != "sslmode")
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    {
        let mut q = u.query_pairs_mut();
        q.clear();
        for (k, v) in &pairs {
            q.append_pair(k, v);
        }
        if let Some(m) = sslmode {
            q.append_pair("sslmode", m);
        }
    }
    if u.query() == Some("") {
        u.set_query(None);
    }
    Ok(u.to_string())
}

fn fmt_int(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn fmt_rate(b: Option<Burn>) -> String {
    match b {
        Some(b) => fmt_int(b.rate().round() as usize),
        None => "-".into(),
    }
}

/// Runs `tolk-bench queue`.
pub async fn run(args: QueueArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    now_us();
    let n = args.jobs.unwrap_or(if args.quick { 20_000 } else { 100_000 });
    let lat_n = args.latency_jobs.unwrap_or(if args.quick { 2_000 } else { 5_000 });
    let seq_n = args.sequential.unwrap_or(if args.quick { 300 } else { 1_000 });
    let mut settings = tolk_settings(args.quick);
    if !args.only.is_empty() {
        settings.retain(|s| args.only.iter().any(|k| k == s.key));
        if settings.is_empty() {
            bail!("--only matched no Tolk setting");
        }
    }
    if !args.skip_graphile {
        prepare_node(&args.node_dir).await?;
    }

    let admin: PgConnectOptions = args
        .database_url
        .parse()
        .with_context(|| format!("parsing --database-url {}", args.database_url))?;
    let mut admin_conn = PgConnection::connect_with(&admin)
        .await
        .with_context(|| format!("connecting to {}", args.database_url))?;
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let db_name = format!("tolk_bench_{}_{secs}", std::process::id());
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{db_name}\"")))
        .execute(&mut admin_conn)
        .await
        .with_context(|| format!("creating database {db_name}"))?;

    let result = run_in(&args, &admin, &db_name, &settings, n, lat_n, seq_n).await;

    if args.keep_db {
        println!("\nKept database {db_name} (--keep-db).");
    } else if let Err(e) = sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS \"{db_name}\" WITH (FORCE)"
    )))
        .execute(&mut admin_conn)
        .await
    {
        eprintln!("warning: could not drop database {db_name}: {e}");
    }
    let _ = admin_conn.close().await;
    result?;
    println!("\nTotal time: {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn run_in(
    args: &QueueArgs,
    admin: &PgConnectOptions,
    db_name: &str,
    settings: &[TolkSetting],
    n: usize,
    lat_n: usize,
    seq_n: usize,
) -> anyhow::Result<()> {
    let url_default = bench_url(&args.database_url, db_name, None)?;
    let url_no_tls = bench_url(&args.database_url, db_name, Some("disable"))?;
    let obs_opts: PgConnectOptions = url_no_tls.parse().context("parsing the bench URL")?;
    let obs = PgPoolOptions::new()
        .max_connections(1)
        .connect_with(obs_opts)
        .await
        .context("connecting to the bench database")?;
    tolk_storage::db::migrate(&obs).await.context("migrating the bench database")?;
    sqlx::raw_sql(RAW_SCHEMA).execute(&obs).await.context("creating raw_jobs")?;
    let b = Bench {
        db_name: db_name.to_owned(),
        url_default: url_default.clone(),
        url_no_tls: url_no_tls.clone(),
        obs,
        noise: NoiseSampler::start(admin, db_name).await?,
        chunk: args.chunk.max(1),
    };

    // Header: the machine and the server.
    let version: String = sqlx::query_scalar("SHOW server_version").fetch_one(&b.obs).await?;
    let sync: String = sqlx::query_scalar("SHOW synchronous_commit").fetch_one(&b.obs).await?;
    let ssl: String = sqlx::query_scalar("SHOW ssl").fetch_one(&b.obs).await?;
    let tls_default = {
        let p = b.pool(false, 1).await?;
        let on: Option<bool> =
            sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
                .fetch_optional(&p)
                .await?;
        p.close().await;
        on.unwrap_or(false)
    };
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    println!("tolk-bench queue — Tolk's queue (apalis-postgres 1.0) vs Graphile Worker vs raw SKIP LOCKED");
    println!(
        "PostgreSQL {version} (ssl={ssl}, synchronous_commit={sync}), database {}, {cpus} CPUs, load average {}",
        b.db_name,
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    println!(
        "Connections: URL as given → TLS {}; tuned settings use sslmode=disable. Queue `{QUEUE}`, payload = the document job's fields + seq + timestamp.",
        if tls_default { "on" } else { "off" }
    );
    println!(
        "Burn-down: {} no-op jobs, {} per INSERT; latency: {} jobs open loop at {}/s, {} sequential samples.\n",
        fmt_int(n),
        fmt_int(b.chunk),
        fmt_int(lat_n),
        args.rate,
        fmt_int(seq_n)
    );
    println!("Tolk settings (apalis-postgres as worker/src/run.rs builds it: queue name, unique worker names, heartbeat 5 s × 3):");
    for s in settings {
        println!(
            "  {:<9}{}{}",
            s.key,
            s.describe(),
            if s.is_platform() { "   ← the platform's defaults" } else { "" }
        );
    }
    println!();

    let mut rows: Vec<ThroughputRow> = Vec::new();
    let mut lat_rows: Vec<LatencyRow> = Vec::new();
    let mut graphile_version = String::from("?");

    println!("== 1. Throughput (burn-down) ==");
    // Raw ceiling first.
    {
        let p = raw_burn(&b, args.raw_consumers, n, Mode::Processing).await?;
        print_burn("raw", "SKIP LOCKED", Mode::Processing, &p);
        let e = raw_burn(&b, args.raw_consumers, n, Mode::EndToEnd).await?;
        print_burn("raw", "SKIP LOCKED", Mode::EndToEnd, &e);
        rows.push(ThroughputRow {
            system: "raw".into(),
            key: "raw".into(),
            detail: format!(
                "claim {RAW_BATCH} FOR UPDATE SKIP LOCKED + complete batch, {} consumers, sslmode=disable",
                args.raw_consumers
            ),
            processing: Some(p),
            e2e: Some(e),
        });
    }
    for s in settings {
        let p = tolk_burn(&b, s, n, Mode::Processing).await?;
        print_burn("Tolk", s.key, Mode::Processing, &p);
        let e = tolk_burn(&b, s, n, Mode::EndToEnd).await?;
        print_burn("Tolk", s.key, Mode::EndToEnd, &e);
        rows.push(ThroughputRow {
            system: "Tolk".into(),
            key: s.key.into(),
            detail: s.describe(),
            processing: Some(p),
            e2e: Some(e),
        });
    }
    let graphile = GraphileCfg { dir: &args.node_dir, url: &url_no_tls, concurrency: args.graphile_concurrency };
    if !args.skip_graphile {
        for (preset, detail) in [
            ("default", "defaults (no local queue, no batched completion)"),
            ("batched", "batching preset: localQueue.size 500, complete/failJobBatchDelay 0"),
        ] {
            let p = graphile.burn(&b, preset, n, Mode::Processing).await?;
            print_burn("Graphile", preset, Mode::Processing, &p);
            let e = graphile.burn(&b, preset, n, Mode::EndToEnd).await?;
            print_burn("Graphile", preset, Mode::EndToEnd, &e);
            rows.push(ThroughputRow {
                system: "Graphile".into(),
                key: preset.into(),
                detail: format!(
                    "{detail}; concurrency {}, pool {}, 1 Node process",
                    args.graphile_concurrency,
                    args.graphile_concurrency + 1
                ),
                processing: Some(p),
                e2e: Some(e),
            });
        }
    }

    if !args.skip_latency {
        println!("\n== 2. Latency (enqueue → handler start) ==");
        let lat_settings: Vec<&TolkSetting> =
            settings.iter().filter(|s| s.is_platform() || s.key == "rec").collect();
        for s in &lat_settings {
            let r = tolk_openloop(&b, s, lat_n, args.rate).await?;
            print_latency(&r);
            lat_rows.push(r);
        }
        if !args.skip_graphile {
            let (r, v) = graphile.latency(&b, "openloop", lat_n, args.rate, PLATFORM_CONCURRENCY).await?;
            graphile_version = v;
            print_latency(&r);
            lat_rows.push(r);
        }
        for s in &lat_settings {
            let r = tolk_sequential(&b, s, seq_n).await?;
            print_latency(&r);
            lat_rows.push(r);
        }
        if !args.skip_graphile {
            let (r, _) = graphile.latency(&b, "sequential", seq_n, args.rate, PLATFORM_CONCURRENCY).await?;
            print_latency(&r);
            lat_rows.push(r);
        }
    }

    print_report(&rows, &lat_rows, n, &graphile_version);
    Ok(())
}

fn print_burn(system: &str, key: &str, mode: Mode, b: &Burn) {
    println!(
        "  {system:<9}{key:<10}{:<11} {:>8} jobs in {:>6.2} s = {:>7} jobs/s   (inserts {:>6.2} s = {:>7}/s){}",
        mode.label(),
        fmt_int(b.jobs),
        b.secs,
        fmt_rate(Some(*b)),
        b.insert_secs,
        fmt_int((b.jobs as f64 / b.insert_secs.max(1e-9)).round() as usize),
        if b.others > 0 {
            format!("   ⚠ {} active session(s) of other databases seen", b.others)
        } else {
            String::new()
        }
    );
}

fn print_latency(r: &LatencyRow) {
    let s = |x: &Option<LatencyStats>| match x {
        Some(l) => format!(
            "p50 {:>6.2}  p95 {:>6.2}  p99 {:>7.2}  max {:>7.2}  mean {:>6.2} ms (n={})",
            l.p50, l.p95, l.p99, l.max, l.mean, l.n
        ),
        None => "-".into(),
    };
    println!(
        "  {:<9}{:<11} start: {}{}",
        r.system,
        r.test,
        s(&r.start),
        if r.others > 0 { format!("   ⚠ {} other active session(s)", r.others) } else { String::new() }
    );
    println!(
        "  {:<20} enqueue call: {}{}",
        "",
        s(&r.enqueue),
        r.offered.map(|o| format!(", offered {o:.0}/s")).unwrap_or_default()
    );
}

fn verdict(ok: bool) -> &'static str {
    if ok { "PASS" } else { "MISS" }
}

fn print_report(rows: &[ThroughputRow], lat: &[LatencyRow], n: usize, graphile_version: &str) {
    println!("\n== Throughput, jobs/s ({} no-op jobs) ==", fmt_int(n));
    println!("  {:<9}{:<10}{:>12}{:>12}  setting", "system", "key", "processing", "end to end");
    for r in rows {
        println!(
            "  {:<9}{:<10}{:>12}{:>12}  {}",
            r.system,
            r.key,
            fmt_rate(r.processing),
            fmt_rate(r.e2e),
            r.detail
        );
    }
    let find = |sys: &str, key: &str| rows.iter().find(|r| r.system == sys && r.key == key);
    let best = |sys: &str, f: fn(&ThroughputRow) -> Option<Burn>| {
        rows.iter()
            .filter(|r| r.system == sys)
            .filter_map(|r| f(r).map(|b| (r.key.clone(), b.rate())))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    };
    let raw = find("raw", "raw");
    let g_best_p = best("Graphile", |r| r.processing);
    let g_best_e = best("Graphile", |r| r.e2e);
    let tolk_rows: Vec<&ThroughputRow> = rows.iter().filter(|r| r.system == "Tolk").collect();

    println!("\n  Ratios (processing / end to end):");
    for t in &tolk_rows {
        let ratio = |a: Option<Burn>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a.rate() / b),
            _ => "-".into(),
        };
        println!(
            "    Tolk {:<9} / Graphile best: {:>6} / {:<6}   Tolk {:<9} / raw: {:>6} / {:<6}",
            t.key,
            ratio(t.processing, g_best_p.as_ref().map(|g| g.1)),
            ratio(t.e2e, g_best_e.as_ref().map(|g| g.1)),
            t.key,
            ratio(t.processing, raw.and_then(|r| r.processing).map(|b| b.rate())),
            ratio(t.e2e, raw.and_then(|r| r.e2e).map(|b| b.rate())),
        );
    }

    if !lat.is_empty() {
        println!("\n== Latency, enqueue → handler start, ms ==");
        println!(
            "  {:<9}{:<11}{:>8}{:>8}{:>8}{:>9}{:>8}  {:>9}  setting",
            "system", "test", "p50", "p95", "p99", "max", "mean", "enqueue p50"
        );
        for r in lat {
            if let Some(s) = &r.start {
                println!(
                    "  {:<9}{:<11}{:>8.2}{:>8.2}{:>8.2}{:>9.2}{:>8.2}  {:>9.2}    {}",
                    r.system,
                    r.test,
                    s.p50,
                    s.p95,
                    s.p99,
                    s.max,
                    s.mean,
                    r.enqueue.as_ref().map(|e| e.p50).unwrap_or(f64::NAN),
                    r.detail
                );
            }
        }
    }

    println!("\n== Summary (targets; figures, not assertions) ==");
    println!("  {:<58}{:>12}{:>14}  result", "line", "figure", "target");
    let line = |name: String, fig: String, target: String, ok: Option<bool>| {
        println!(
            "  {:<58}{:>12}{:>14}  {}",
            name,
            fig,
            target,
            ok.map(verdict).unwrap_or("n/a")
        );
    };
    for t in &tolk_rows {
        let tag = if t.key == "platform" { "platform defaults" } else { t.key.as_str() };
        if let Some(e) = t.e2e {
            line(
                format!("Tolk {tag}: burn-down end to end"),
                format!("{:.0}/s", e.rate()),
                "≥ 10,000/s".into(),
                Some(e.rate() >= 10_000.0),
            );
            if let Some((gk, g)) = &g_best_e {
                line(
                    format!("Tolk {tag}: end to end vs Graphile ({gk})"),
                    format!("{:.2}×", e.rate() / g),
                    "≥ 1.00×".into(),
                    Some(e.rate() >= *g),
                );
            }
        }
        if let (Some(p), Some((gk, g))) = (t.processing, &g_best_p) {
            line(
                format!("Tolk {tag}: processing vs Graphile ({gk})"),
                format!("{:.2}×", p.rate() / g),
                "≥ 1.00×".into(),
                Some(p.rate() >= *g),
            );
        }
        if let (Some(p), Some(r)) = (t.processing, raw.and_then(|r| r.processing)) {
            line(
                format!("Tolk {tag}: processing vs raw SKIP LOCKED"),
                format!("{:.0} %", 100.0 * p.rate() / r.rate()),
                "≥ 25 %".into(),
                Some(p.rate() >= 0.25 * r.rate()),
            );
        }
    }
    for r in lat.iter().filter(|r| r.system == "Tolk") {
        if let Some(s) = &r.start {
            let key = r.detail.split_whitespace().next().unwrap_or("");
            let tag = if key == "platform" { "platform defaults" } else { key };
            let (p99_target, p99_lim) = if r.test == "open loop" { ("≤ 25 ms", 25.0) } else { ("≤ 20 ms", 20.0) };
            line(
                format!("Tolk {tag}: latency {} p50", r.test),
                format!("{:.2} ms", s.p50),
                "≤ 5 ms".into(),
                Some(s.p50 <= 5.0),
            );
            line(
                format!("Tolk {tag}: latency {} p99", r.test),
                format!("{:.2} ms", s.p99),
                p99_target.into(),
                Some(s.p99 <= p99_lim),
            );
        }
    }
    if lat.iter().any(|r| r.system == "Graphile") {
        println!("  (Graphile Worker {graphile_version}; its latency rows above are the reference, no target.)");
    }
}
