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
//!   "processing" inserts everything first, runs `ANALYZE` on the table (autovacuum
//!   does within a minute of such an insert, and apalis' fetch plan depends on it),
//!   then starts the workers and times until every job is done; "end to end" starts
//!   the workers, then inserts, and times from the first insert until every job is
//!   done. "Done" means every handler ran *and* the database says so (no apalis row
//!   left that is not `Done`; Graphile's jobs table empty; every raw row completed).
//!   Each run starts from an emptied table and a `CHECKPOINT`; a run still going at
//!   `--cap-secs` is stopped and reported as jobs started / time (marked `*`).
//! - Tolk's settings form a chain from the platform's defaults, one change per step
//!   (see [`tolk_settings`]); `--try KEY=SPEC` adds more.
//! - Latency: jobs enqueued one per transaction, as the API does
//!   (`tolk_storage::queue::enqueue`), at a fixed offered rate without waiting for
//!   earlier enqueues (open loop), with the enqueue moment in the payload; the handler
//!   records now − enqueue moment. Then Graphile's `perfTest/latencyTest.js` method:
//!   one job at a time, each enqueued only after the previous one started. For
//!   Graphile, Node only runs the worker pool; this process produces with the same
//!   code and pool size (`select graphile_worker.add_job(..)`, what its `addJob`
//!   runs), stamping the wall clock into the payload.
//! - Every run reports disturbance from outside (other databases' active sessions,
//!   other processes' CPU) next to its figure.
//!
//! Figures only: a target that is missed is printed as MISS; the command fails only on
//! errors.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, anyhow, bail};
use apalis::prelude::*;
use apalis_postgres::PostgresStorage;
use serde::{Deserialize, Serialize};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Connection, PgConnection, PgPool};
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;
use tolk_storage::enqueuer::Enqueuer;
use tolk_storage::queue as tq;

/// The platform's queue: the bench runs the document queue's name and payload shape.
const QUEUE: &str = tq::TRANSLATE_DOCUMENT;

/// `--db-connections` (`TOLK_DB_CONNECTIONS`, src/cli.rs): pool size per process.
const PLATFORM_POOL: u32 = 10;

/// The platform's worker settings (`--concurrency`, heartbeat, poll interval), from
/// tolk-worker itself; run.rs sets `batch_size` to the concurrency.
fn platform_worker() -> tolk_worker::WorkerConfig {
    tolk_worker::WorkerConfig::default()
}

/// The platform's scheduler settings (retention of finished rows, tick).
fn platform_scheduler() -> tolk_scheduler::SchedulerConfig {
    tolk_scheduler::SchedulerConfig::default()
}

/// Planner settings on apalis' fetch function. `apalis.get_jobs` is a `LANGUAGE sql`
/// function, planned with its `LIMIT` as an unknown parameter (estimated at 10 % of
/// the rows): once the table has statistics and a backlog, its outer UPDATE becomes a
/// hash join over a sequential scan of the whole of `apalis.jobs` (60–80 ms per fetch
/// at 100k rows here). Forbidding hash and merge joins inside that one function gives
/// the nested loop over the primary key (4–7 ms per fetch of 100). A migration of the
/// platform can run the same two statements; they survive until apalis replaces the
/// function.
const FETCH_FIX: &str =
    "ALTER FUNCTION apalis.get_jobs(text, text, integer) SET enable_hashjoin = off;
ALTER FUNCTION apalis.get_jobs(text, text, integer) SET enable_mergejoin = off;";
/// Back to apalis' own function.
const FETCH_UNFIX: &str = "ALTER FUNCTION apalis.get_jobs(text, text, integer) RESET ALL;";

/// apalis' own per-row NOTIFY trigger (as its migrations create it; the platform's
/// migration 20261121000003 drops it).
const APALIS_TRIGGER_ON: &str = "DROP TRIGGER IF EXISTS notify_workers ON apalis.jobs;
CREATE TRIGGER notify_workers AFTER INSERT ON apalis.jobs
FOR EACH ROW EXECUTE FUNCTION apalis.notify_new_jobs();";
/// The platform's: no trigger, `notify_enqueued` after the commit.
const APALIS_TRIGGER_OFF: &str = "DROP TRIGGER IF EXISTS notify_workers ON apalis.jobs;";

/// apalis' own `apalis.jobs` text columns and idempotency index (before the
/// platform's migration 20261125100001). Run on the emptied table.
const APALIS_ROWS: &str = r#"ALTER TABLE apalis.jobs
    ALTER COLUMN id TYPE text COLLATE "default", ALTER COLUMN job_type TYPE text COLLATE "default",
    ALTER COLUMN status TYPE text COLLATE "default", ALTER COLUMN lock_by TYPE text COLLATE "default",
    ALTER COLUMN idempotency_key TYPE text COLLATE "default";
DROP INDEX IF EXISTS apalis.idx_jobs_idempotency_key;
CREATE UNIQUE INDEX idx_jobs_idempotency_key ON apalis.jobs (job_type, idempotency_key);"#;
/// The platform's: migration 20261125100001 itself (bytewise text columns, the
/// idempotency index over unfinished rows), run again on the emptied table.
const PLATFORM_ROWS: &str = include_str!(
    "../../migrations/20261125100001_apalis_jobs_c_collation_idempotency_unfinished.sql"
);

/// Jobs fetched and locked per raw SKIP LOCKED claim.
const RAW_BATCH: i64 = 100;
/// The raw loop's and Graphile's connections (the transport of the recommendation).
const RAW_TRANSPORT: Transport = Transport::Unix;
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
    /// Time cap of one burn-down run (and of the wait after an open-loop test),
    /// seconds: a slow setting is stopped there and its rate is jobs started / time.
    #[arg(long)]
    cap_secs: Option<u64>,
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
    /// Graphile Worker concurrency (burn-downs and latency; its published perf setting).
    #[arg(long, default_value_t = 24)]
    graphile_concurrency: usize,
    /// Also run Graphile's batching preset in this many Node processes at once
    /// (each with the full concurrency and pool), e.g. `--graphile-processes 2,4`.
    #[arg(long, value_delimiter = ',')]
    graphile_processes: Vec<usize>,
    /// Consumers of the raw SKIP LOCKED loop.
    #[arg(long, default_value_t = 2)]
    raw_consumers: usize,
    /// Extra Tolk settings to try, e.g. `--try x4=w4,c100,b100,unix,fix,prune1000,herd`
    /// (w = workers, c = concurrency, b = batch_size; url | tcp | unix; pruneMS |
    /// keepS | noprune; fix | nofix; pubsub | turn | herd | interval; poolN; shared
    /// (the workers are lanes of one process) | ownpools; apalisrows | crows;
    /// generic | custom; lock; ping; sync; directnotify; durablefirst; lockfk; dupidx;
    /// trigger). Repeatable.
    #[arg(long = "try", value_name = "KEY=SPEC")]
    tries: Vec<String>,
    /// Only these Tolk settings (comma-separated keys, e.g. `platform,tuned`); all by
    /// default. The latency tests run the platform's, `tuned` and these.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Skip Graphile Worker (no Node needed).
    #[arg(long)]
    skip_graphile: bool,
    /// Skip the latency tests.
    #[arg(long)]
    skip_latency: bool,
    /// Skip the raw SKIP LOCKED loop.
    #[arg(long)]
    skip_raw: bool,
    /// Experiments: SQL run once on the bench database after the platform's
    /// migrations (a schema or function variant to measure before it becomes a
    /// migration).
    #[arg(long, value_name = "FILE")]
    setup_sql: Option<PathBuf>,
    /// Keep the throwaway database (its name is printed) instead of dropping it.
    #[arg(long)]
    keep_db: bool,
    /// Debugging: log every statement of the bench database slower than this many ms
    /// to the server log (`ALTER DATABASE … SET log_min_duration_statement`; 0 = all).
    #[arg(long)]
    log_statements_ms: Option<u32>,
    /// Folder of the server's Unix socket (for the "Unix socket" settings).
    #[arg(long, default_value = "/var/run/postgresql")]
    socket_dir: PathBuf,
    /// Folder of the Node side (package.json, graphile.js).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/node"))]
    node_dir: PathBuf,
}

// ---------------------------------------------------------------------------
// Tolk settings
// ---------------------------------------------------------------------------

/// Pruning of finished queue rows during a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prune {
    /// Nothing pruned.
    Off,
    /// The scheduler's `prune_queue` every `tick`, Done rows kept `keep_done`.
    Every { tick: Duration, keep_done: Duration },
}

/// How an idle worker learns about new jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wake {
    /// apalis' `.with_pubsub()` plus the interval poll (loses wake-ups; see
    /// `tolk_worker::wake`).
    ApalisPubsub,
    /// The platform's: `tolk_worker::run::backend` (a `WakeHub` per process that
    /// wakes one worker per job, in turn, + interval poll).
    Turn,
    /// The same hubs, but every notification wakes every worker (no `k` in the
    /// payload), as the platform did before the hub: the thundering herd.
    Herd,
    /// Interval poll only, no LISTEN.
    Interval,
}

/// How the worker process reaches PostgreSQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    /// The URL as the platform reads it (`DatabaseSettings::connect_options`): with
    /// no `sslmode` on a loopback host, no TLS.
    Url,
    /// TCP with `sslmode=require` (TLS on loopback, what sqlx's default `prefer` gives
    /// when the server has `ssl = on`, Debian's default).
    Tls,
    /// TCP with `sslmode=disable`.
    NoTls,
    /// The Unix socket (`host=/var/run/postgresql`), no TLS.
    Unix,
}

impl Transport {
    fn label(self) -> &'static str {
        match self {
            Transport::Url => "TCP, the platform's URL handling (loopback: no TLS)",
            Transport::Tls => "TCP sslmode=require (TLS)",
            Transport::NoTls => "TCP sslmode=disable",
            Transport::Unix => "Unix socket",
        }
    }
}

/// One configuration of Tolk's queue.
#[derive(Debug, Clone)]
struct TolkSetting {
    key: String,
    /// Workers (apalis `WorkerBuilder`s, unique names) in the one process.
    workers: usize,
    /// In-flight jobs per worker (`.concurrency`).
    concurrency: usize,
    /// apalis `Config::batch_size`.
    batch: usize,
    transport: Transport,
    /// Scheduler pruning of finished queue rows during the run.
    prune: Prune,
    wake: Wake,
    /// Pool size of the worker process.
    pool: u32,
    /// Planner settings on `apalis.get_jobs` ([`FETCH_FIX`]).
    fetch_fix: bool,
    /// apalis' own per-row NOTIFY trigger inside the enqueueing transaction, instead
    /// of the platform's `notify_enqueued` after the commit.
    apalis_trigger: bool,
    /// apalis' two redundant indexes (`lidx`, `unique_job_id`), which the platform's
    /// migration 20261121000004 drops.
    apalis_dup_indexes: bool,
    /// apalis' `lock_tasks` (a `Running` update when a handler starts); the
    /// platform's `WorkerConfig::lock_tasks`.
    lock_tasks: bool,
    /// sqlx's default pool: a ping round trip on every checkout, where the
    /// platform's pool (`tolk_storage::db::connect`) pings only connections idle
    /// for `PING_IF_IDLE_FOR`.
    ping_always: bool,
    /// The workers' queue connections commit without waiting for the WAL flush
    /// (`synchronous_commit = off`): fetches, acks and heartbeats.
    queue_async_commit: bool,
    /// The API sends its NOTIFYs from a task of its own
    /// (`tolk_storage::notifier::Notifier`, the platform's) instead of awaiting
    /// `queue::notify_enqueued` on a pooled connection in the request.
    notifier: bool,
    /// The API's enqueue commits without waiting for the WAL flush and waits for
    /// it afterwards (`Enqueuer::begin` / `committed`, the platform's), instead
    /// of committing with the flush.
    visible_first: bool,
    /// All workers on one pool of `pool` connections, instead of a pool each (what
    /// separate `tolk worker` processes have).
    shared_pool: bool,
    /// apalis' foreign key from `jobs.lock_by` to `workers.id` (its trigger locks
    /// the worker row for every job a fetch takes).
    lock_fk: bool,
    /// apalis' own `apalis.jobs` text columns (the database's collation) and
    /// idempotency index over every row, instead of the platform's bytewise
    /// columns and index over unfinished rows (migration 20261125100001).
    apalis_rows: bool,
    /// The workers' queue connections keep PostgreSQL's default plan cache
    /// (generic plans after five runs of a prepared statement) instead of the
    /// platform's `plan_cache_mode = force_custom_plan`
    /// (`tolk_storage::db::queue_options`).
    generic_plans: bool,
}

impl TolkSetting {
    fn platform() -> Self {
        Self {
            key: "platform".into(),
            workers: 1,
            concurrency: platform_worker().concurrency,
            batch: platform_worker().concurrency,
            transport: Transport::Url,
            prune: Prune::Every {
                tick: platform_scheduler().prune_tick,
                keep_done: platform_scheduler().keep_done_jobs,
            },
            wake: Wake::Turn,
            pool: PLATFORM_POOL,
            // The platform's migration 20261121000002 sets it.
            fetch_fix: true,
            // Migration 20261121000003 drops it.
            apalis_trigger: false,
            // Migration 20261121000004 drops them.
            apalis_dup_indexes: false,
            lock_tasks: platform_worker().lock_tasks,
            ping_always: false,
            // The platform's worker queue pool (`WorkerConfig::queue_pool`).
            queue_async_commit: true,
            notifier: true,
            visible_first: true,
            shared_pool: false,
            // Migration 20261123000002 drops it.
            lock_fk: false,
            // Migration 20261125100001 changes them.
            apalis_rows: false,
            generic_plans: false,
        }
    }

    fn is_platform(&self) -> bool {
        self.key == "platform"
    }

    /// Parses `--try KEY=SPEC` (see [`QueueArgs::tries`]), starting from the platform's.
    fn parse(arg: &str) -> anyhow::Result<Self> {
        let (key, spec) = arg
            .split_once('=')
            .ok_or_else(|| anyhow!("--try {arg}: expected KEY=SPEC"))?;
        let mut s = Self {
            key: key.to_owned(),
            ..Self::platform()
        };
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let num = |prefix: &str| -> anyhow::Result<u64> {
                part[prefix.len()..]
                    .parse()
                    .with_context(|| format!("--try {arg}: bad number in {part}"))
            };
            match part {
                "url" => s.transport = Transport::Url,
                "tls" => s.transport = Transport::Tls,
                "tcp" => s.transport = Transport::NoTls,
                "unix" => s.transport = Transport::Unix,
                "pubsub" => s.wake = Wake::ApalisPubsub,
                "turn" => s.wake = Wake::Turn,
                "herd" => s.wake = Wake::Herd,
                "interval" => s.wake = Wake::Interval,
                "noprune" => s.prune = Prune::Off,
                "fix" => s.fetch_fix = true,
                "nofix" => s.fetch_fix = false,
                "trigger" => s.apalis_trigger = true,
                "notrigger" => s.apalis_trigger = false,
                "dupidx" => s.apalis_dup_indexes = true,
                "lock" => s.lock_tasks = true,
                "nolock" => s.lock_tasks = false,
                "ping" => s.ping_always = true,
                "noping" => s.ping_always = false,
                "async" => s.queue_async_commit = true,
                "notifier" => s.notifier = true,
                "directnotify" => s.notifier = false,
                "visiblefirst" => s.visible_first = true,
                "durablefirst" => s.visible_first = false,
                "sync" => s.queue_async_commit = false,
                "shared" => s.shared_pool = true,
                "ownpools" => s.shared_pool = false,
                "lockfk" => s.lock_fk = true,
                "nolockfk" => s.lock_fk = false,
                "apalisrows" => s.apalis_rows = true,
                "crows" => s.apalis_rows = false,
                "generic" => s.generic_plans = true,
                "custom" => s.generic_plans = false,
                p if p.starts_with("prune") => {
                    s.prune = Prune::Every {
                        tick: Duration::from_millis(num("prune")?),
                        keep_done: match s.prune {
                            Prune::Every { keep_done, .. } => keep_done,
                            Prune::Off => platform_scheduler().keep_done_jobs,
                        },
                    }
                }
                p if p.starts_with("keep") => {
                    let keep_done = Duration::from_secs(num("keep")?);
                    s.prune = match s.prune {
                        Prune::Every { tick, .. } => Prune::Every { tick, keep_done },
                        Prune::Off => Prune::Every {
                            tick: platform_scheduler().prune_tick,
                            keep_done,
                        },
                    }
                }
                p if p.starts_with("pool") => s.pool = num("pool")? as u32,
                p if p.starts_with('w') => s.workers = num("w")? as usize,
                p if p.starts_with('c') => s.concurrency = num("c")? as usize,
                p if p.starts_with('b') => s.batch = num("b")? as usize,
                _ => bail!("--try {arg}: unknown part {part}"),
            }
        }
        if s.workers == 0 || s.concurrency == 0 || s.batch == 0 {
            bail!("--try {arg}: workers, concurrency and batch must be > 0");
        }
        Ok(s)
    }

    fn describe(&self) -> String {
        let mut s = format!(
            "{} worker{} × concurrency {}, batch_size {}, {}, {}, {}",
            self.workers,
            if self.workers == 1 { "" } else { "s" },
            self.concurrency,
            self.batch,
            self.transport.label(),
            match self.wake {
                Wake::ApalisPubsub => "with_pubsub + 1 s poll",
                Wake::Turn =>
                    "one LISTEN per process, one worker woken per job in turn + 1 s poll (platform)",
                Wake::Herd => "one LISTEN per process, every worker woken per job + 1 s poll",
                Wake::Interval => "1 s poll only (no LISTEN)",
            },
            match self.prune {
                Prune::Off => "Done rows never pruned".to_owned(),
                Prune::Every { tick, keep_done } => format!(
                    "Done rows older than {} s pruned every {} s",
                    keep_done.as_secs_f64(),
                    tick.as_secs_f64()
                ),
            }
        );
        if !self.fetch_fix {
            s.push_str(", WITHOUT the get_jobs plan fix");
        }
        if self.apalis_trigger {
            s.push_str(", apalis' NOTIFY trigger inside the enqueue");
        }
        if self.apalis_dup_indexes {
            s.push_str(", apalis' 2 redundant indexes");
        }
        if self.lock_tasks {
            s.push_str(", lock_tasks (a Running update per job)");
        }
        if !self.notifier {
            s.push_str(", NOTIFY awaited in the enqueue call");
        }
        if !self.queue_async_commit {
            s.push_str(", workers' queue commits wait for the WAL flush");
        }
        if !self.visible_first {
            s.push_str(", enqueue commits wait for the WAL flush");
        }
        if self.ping_always {
            s.push_str(", a ping on every pool checkout (sqlx default)");
        }
        if self.pool != PLATFORM_POOL {
            let _ = write!(s, ", pool {}", self.pool);
        }
        if !self.lock_fk {
            s.push_str(", no foreign key jobs.lock_by → workers");
        }
        if self.shared_pool && self.workers > 1 {
            s.push_str(", one process (lanes: one pool, one LISTEN)");
        }
        if self.apalis_rows {
            s.push_str(", apalis' own text collation and idempotency index");
        }
        if self.generic_plans {
            s.push_str(", generic plans for the queue's prepared statements");
        }
        s
    }
}

/// Key of the last setting of the chain: every change that helped.
const TUNED: &str = "tuned";

/// The settings tried, in order. The first is the platform's configuration; the last
/// ([`TUNED`]) has every change that helped.
fn tolk_settings(quick: bool) -> Vec<TolkSetting> {
    // A chain: each setting changes one thing of the one before it, and each is
    // reachable through the platform's configuration alone.
    let platform = TolkSetting::platform();
    let step = |prev: &TolkSetting, key: &str, f: &dyn Fn(&mut TolkSetting)| {
        let mut s = prev.clone();
        s.key = key.to_owned();
        f(&mut s);
        s
    };
    // TOLK_WORKER_CONCURRENCY=1000 (the batch follows the concurrency): no-op
    // jobs, so a lane fetches and acks 1,000 rows per round trip.
    let c1000 = step(&platform, "c1000", &|s| {
        s.concurrency = 1000;
        s.batch = 1000;
    });
    // TOLK_WORKER_LANES=4: four apalis workers in the one process, on its one
    // pool and LISTEN connection. apalis runs a worker's fetch, its acks and its
    // heartbeat one after another, so each lane is one serial pipeline of round
    // trips; more lanes keep PostgreSQL busy in between.
    let lanes = step(&c1000, "+lanes4", &|s| {
        s.workers = 4;
        s.shared_pool = true;
    });
    // DATABASE_URL over the Unix socket (no TCP, no TLS).
    let tuned = step(&lanes, TUNED, &|s| s.transport = Transport::Unix);
    if quick {
        vec![platform, tuned]
    } else {
        vec![platform, c1000, lanes, tuned]
    }
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
            slot.store(
                now_us().saturating_sub(job.enqueued_us) + 1,
                Ordering::Relaxed,
            );
            self.started.notify_one();
        }
        self.done.fetch_add(1, Ordering::Release);
    }

    /// Start latency by sample, ms (`None`: not started).
    fn latencies_ms(&self) -> Vec<Option<f64>> {
        self.latency
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .map(|v| (v > 0).then(|| (v - 1) as f64 / 1000.0))
            .collect()
    }

    fn row(
        &self,
        system: &str,
        test: &'static str,
        detail: String,
        enq: Vec<f64>,
        offered: Option<f64>,
        noise: Noise,
    ) -> LatencyRow {
        let lat = self.latencies_ms();
        LatencyRow {
            system: system.into(),
            test,
            detail,
            start: LatencyStats::of(lat.iter().flatten().copied().collect()),
            after_commit: LatencyStats::of(after_commit(&lat, &enq)),
            enqueue: LatencyStats::of(enq),
            started: lat.iter().flatten().count(),
            total: lat.len(),
            offered,
            noise,
        }
    }

    /// Waits until `target` handlers ran or `cap` passed; true if the target was reached.
    async fn wait_done_capped(&self, target: usize, cap: Duration) -> bool {
        let deadline = Instant::now() + cap;
        while self.done.load(Ordering::Acquire) < target {
            if Instant::now() > deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        true
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

/// A running set of Tolk workers (one apalis `Monitor`, as the worker process has).
struct Workers {
    stop: Option<oneshot::Sender<()>>,
    handle: JoinHandle<Result<(), MonitorError>>,
    /// One per pool, as each `tolk worker` process has one.
    hubs: Vec<tolk_worker::wake::WakeHub>,
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
    /// Starts the workers of `s` on `pool`, configured as `worker/src/run.rs` does
    /// (each worker stands for one `tolk worker` process).
    fn start(s: &TolkSetting, pools: &WorkerPools, probe: &Arc<Probe>) -> Self {
        let wcfg = tolk_worker::WorkerConfig {
            concurrency: s.concurrency,
            batch_size: Some(s.batch),
            lock_tasks: s.lock_tasks,
            ..platform_worker()
        };
        let cfg = wcfg.apalis_config(QUEUE);
        let poll = wcfg.poll_interval;
        let hubs: Vec<_> = pools.0.iter().map(|p| wcfg.wake_hub(p)).collect();
        let mut monitor = Monitor::new();
        for i in 0..s.workers {
            let pool = pools.of(i).clone();
            let hub = hubs[i % hubs.len()].clone();
            let cfg = cfg.clone();
            let wcfg = wcfg.clone();
            let name = tolk_worker::run::unique_name(QUEUE);
            monitor = match s.wake {
                Wake::ApalisPubsub => register_worker!(
                    monitor,
                    name,
                    probe.clone(),
                    s.concurrency,
                    PostgresStorage::<BenchJob>::new(&pool)
                        .with_config(cfg.clone())
                        .with_pubsub()
                        .poll_with_interval(poll)
                ),
                Wake::Turn | Wake::Herd => register_worker!(
                    monitor,
                    name.clone(),
                    probe.clone(),
                    s.concurrency,
                    tolk_worker::run::backend::<BenchJob>(&pool, &wcfg, &hub, QUEUE, &name)
                ),
                Wake::Interval => register_worker!(
                    monitor,
                    name,
                    probe.clone(),
                    s.concurrency,
                    PostgresStorage::<BenchJob>::new(&pool)
                        .with_config(cfg.clone())
                        .poll_with_interval(poll)
                ),
            };
        }
        let (tx, rx) = oneshot::channel::<()>();
        let handle = tokio::spawn(
            monitor
                .shutdown_timeout(Duration::from_secs(30))
                .run_with_signal(async move {
                    let _ = rx.await;
                    Ok(())
                }),
        );
        Self {
            stop: Some(tx),
            handle,
            hubs,
        }
    }

    async fn stop(mut self) -> anyhow::Result<()> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        // Their LISTEN connections go back to the pools once the lanes are gone too.
        self.hubs.clear();
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

/// The connection pools of a setting's workers: one each (as separate `tolk
/// worker` processes have), or one for all ([`TolkSetting::shared_pool`]).
struct WorkerPools(Vec<PgPool>);

impl WorkerPools {
    async fn open(b: &Bench, s: &TolkSetting) -> anyhow::Result<Self> {
        let n = if s.shared_pool { 1 } else { s.workers };
        let mut pools = Vec::with_capacity(n);
        for _ in 0..n {
            let options = b.connect_options(s.transport)?;
            let options = match (s.queue_async_commit, s.generic_plans) {
                // The platform's (`tolk_storage::db::relaxed_pool`).
                (true, false) => tolk_storage::db::queue_options(options),
                (true, true) => options.options([("synchronous_commit", "off")]),
                (false, false) => options.options([("plan_cache_mode", "force_custom_plan")]),
                (false, true) => options,
            };
            pools.push(b.pool_with(s, options, s.pool).await?);
        }
        Ok(Self(pools))
    }

    /// The pool of worker `i`.
    fn of(&self, i: usize) -> &PgPool {
        &self.0[i % self.0.len()]
    }

    async fn close(self) {
        for pool in self.0 {
            pool.close().await;
        }
    }
}

/// The scheduler's queue pruning (`tolk_scheduler::tasks::prune_queue`) at `tick`,
/// with Done rows kept `keep_done`.
fn start_pruner(pool: PgPool, tick: Duration, keep_done: Duration) -> JoinHandle<()> {
    let config = tolk_scheduler::SchedulerConfig {
        prune_tick: tick,
        keep_done_jobs: keep_done,
        ..platform_scheduler()
    };
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(config.prune_tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            tolk_scheduler::tasks::prune_queue(&config, &pool).await;
        }
    })
}

/// Disturbance from outside the bench during a run: active sessions of *other*
/// databases on the server (sampled every 250 ms) and CPU used by processes other than
/// this one (with its children) and PostgreSQL's.
#[derive(Debug, Clone, Copy, Default)]
struct Noise {
    sessions: i64,
    /// Average CPU cores used by foreign processes.
    foreign_cores: f64,
}

impl Noise {
    fn warning(&self) -> String {
        let mut w = Vec::new();
        if self.sessions > 0 {
            w.push(format!(
                "{} active session(s) of other databases",
                self.sessions
            ));
        }
        if self.foreign_cores >= 0.2 {
            w.push(format!(
                "other processes used {:.1} cores",
                self.foreign_cores
            ));
        }
        if w.is_empty() {
            String::new()
        } else {
            format!("   ⚠ {}", w.join(", "))
        }
    }
}

/// CPU ticks: the whole machine (busy, total) and ours (this process, its children —
/// node — and every `postgres` process, each with its reaped children).
#[derive(Debug, Clone, Copy, Default)]
struct CpuTicks {
    busy: u64,
    total: u64,
    ours: u64,
}

fn proc_ticks(stat: &str) -> Option<(String, String, u64)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?.to_owned();
    let f: Vec<&str> = stat.get(close + 2..)?.split_whitespace().collect();
    // f[0] is field 3 (state), f[1] field 4 (ppid); fields 14–17 are utime, stime,
    // cutime, cstime.
    let ppid = f.get(1)?.to_string();
    let t = (11..=14)
        .map(|i| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0))
        .sum();
    Some((comm, ppid, t))
}

fn cpu_ticks() -> CpuTicks {
    let mut c = CpuTicks::default();
    if let Ok(stat) = std::fs::read_to_string("/proc/stat")
        && let Some(line) = stat.lines().next()
    {
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .take(8)
            .filter_map(|x| x.parse().ok())
            .collect();
        c.total = v.iter().sum();
        let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
        c.busy = c.total.saturating_sub(idle);
    }
    let me = std::process::id().to_string();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if !name.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            if let Some((comm, ppid, t)) = proc_ticks(&stat)
                && (comm == "postgres" || name == me.as_str() || ppid == me)
            {
                c.ours += t;
            }
        }
    }
    c
}

struct NoiseSampler {
    max: Arc<AtomicI64>,
    cpu: Mutex<CpuTicks>,
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
        Ok(Self {
            max,
            cpu: Mutex::new(cpu_ticks()),
            handle,
        })
    }

    /// The disturbance since the last call.
    fn take(&self) -> Noise {
        let now = cpu_ticks();
        let mut last = self.cpu.lock().unwrap_or_else(PoisonError::into_inner);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let total = now.total.saturating_sub(last.total) as f64;
        let foreign = now
            .busy
            .saturating_sub(last.busy)
            .saturating_sub(now.ours.saturating_sub(last.ours)) as f64;
        *last = now;
        Noise {
            sessions: self.max.swap(0, Ordering::Relaxed),
            foreign_cores: if total > 0.0 {
                foreign / total * cpus
            } else {
                0.0
            },
        }
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
    /// The bench database, `sslmode=require`.
    url_tls: String,
    /// The bench database, `sslmode=disable`.
    url_no_tls: String,
    /// The bench database over the Unix socket.
    url_unix: String,
    /// Observer connection (`sslmode=disable`): resets, checkpoints, completion checks.
    obs: PgPool,
    noise: NoiseSampler,
    /// Time cap of one burn-down.
    cap: Duration,
    chunk: usize,
}

impl Bench {
    fn url(&self, t: Transport) -> &str {
        match t {
            Transport::Url => &self.url_default,
            Transport::Tls => &self.url_tls,
            Transport::NoTls => &self.url_no_tls,
            Transport::Unix => &self.url_unix,
        }
    }

    /// A pool of setting `s`: the platform's, or sqlx's default (`ping_always`).
    async fn pool_of(&self, s: &TolkSetting, size: u32) -> anyhow::Result<PgPool> {
        self.pool_with(s, self.connect_options(s.transport)?, size)
            .await
    }

    /// A pool of `size` on `options`: the platform's (`tolk_storage::db::connect`),
    /// or sqlx's default one for the toggle `ping`.
    async fn pool_with(
        &self,
        s: &TolkSetting,
        options: PgConnectOptions,
        size: u32,
    ) -> anyhow::Result<PgPool> {
        if !s.ping_always {
            return tolk_storage::db::connect(options, size)
                .await
                .context("connecting to the bench database");
        }
        PgPoolOptions::new()
            .max_connections(size)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options)
            .await
            .context("connecting to the bench database")
    }

    /// The options of transport `t`, as the platform reads DATABASE_URL.
    fn connect_options(&self, t: Transport) -> anyhow::Result<PgConnectOptions> {
        tolk_storage::db::DatabaseSettings {
            database_url: Some(self.url(t).to_owned()),
            ..Default::default()
        }
        .connect_options()
        .context("parsing the bench URL")
    }

    async fn pool(&self, t: Transport, size: u32) -> anyhow::Result<PgPool> {
        tolk_storage::db::connect(self.connect_options(t)?, size)
            .await
            .context("connecting to the bench database")
    }

    /// Empties the queue tables, sets the schema variant of `s` (the fetch
    /// function's planner settings, triggers, indexes, foreign key, collation), and
    /// checkpoints, so every run starts alike.
    async fn reset_tolk(&self, s: &TolkSetting) -> anyhow::Result<()> {
        sqlx::query("TRUNCATE apalis.jobs, apalis.workers")
            .execute(&self.obs)
            .await
            .context("truncating apalis.jobs")?;
        let steps = [
            (
                if s.fetch_fix { FETCH_FIX } else { FETCH_UNFIX },
                "setting apalis.get_jobs' planner settings",
            ),
            (
                if s.apalis_trigger {
                    APALIS_TRIGGER_ON
                } else {
                    APALIS_TRIGGER_OFF
                },
                "setting apalis' NOTIFY trigger",
            ),
            (
                if s.apalis_dup_indexes {
                    "CREATE INDEX IF NOT EXISTS lidx ON apalis.jobs (lock_by);
                     CREATE UNIQUE INDEX IF NOT EXISTS unique_job_id ON apalis.jobs (id);"
                } else {
                    "DROP INDEX IF EXISTS apalis.lidx; DROP INDEX IF EXISTS apalis.unique_job_id;"
                },
                "setting apalis' redundant indexes",
            ),
            (
                if s.lock_fk {
                    "DO $$ BEGIN
                         IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'fk_worker_lock_by') THEN
                             ALTER TABLE apalis.jobs ADD CONSTRAINT fk_worker_lock_by
                                 FOREIGN KEY (lock_by) REFERENCES apalis.workers (id);
                         END IF;
                     END $$;"
                } else {
                    "ALTER TABLE apalis.jobs DROP CONSTRAINT IF EXISTS fk_worker_lock_by;"
                },
                "setting apalis' lock_by foreign key",
            ),
            (
                if s.apalis_rows {
                    APALIS_ROWS
                } else {
                    PLATFORM_ROWS
                },
                "setting apalis.jobs' collation and idempotency index",
            ),
        ];
        for (sql, what) in steps {
            sqlx::raw_sql(sql).execute(&self.obs).await.context(what)?;
        }
        self.checkpoint().await
    }

    /// `ANALYZE` a table, as autovacuum does within a minute of a large insert.
    async fn analyze(&self, table: &str) -> anyhow::Result<()> {
        sqlx::query(sqlx::AssertSqlSafe(format!("ANALYZE {table}")))
            .execute(&self.obs)
            .await
            .with_context(|| format!("ANALYZE {table}"))?;
        Ok(())
    }

    async fn checkpoint(&self) -> anyhow::Result<()> {
        sqlx::query("CHECKPOINT")
            .execute(&self.obs)
            .await
            .context("CHECKPOINT")?;
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
                bail!(
                    "{left} apalis rows still not Done after {} s",
                    timeout.as_secs()
                );
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
    /// Jobs done (all of them, unless the run hit the time cap).
    jobs: usize,
    /// The run stopped at the time cap (`--cap-secs`) before every job was done; the
    /// rate is then jobs started / time.
    capped: bool,
    secs: f64,
    insert_secs: f64,
    noise: Noise,
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
            p50: pct(50.0),
            p95: pct(95.0),
            p99: pct(99.0),
            max: v[v.len() - 1],
            mean: v.iter().sum::<f64>() / v.len() as f64,
        })
    }
}

/// Commit → start per sample: start latency minus the enqueue call's duration.
fn after_commit(start: &[Option<f64>], enqueue: &[f64]) -> Vec<f64> {
    start
        .iter()
        .zip(enqueue)
        .filter_map(|(s, e)| s.map(|s| (s - e).max(0.0)))
        .collect()
}

struct LatencyRow {
    system: String,
    test: &'static str,
    detail: String,
    /// Enqueue call start → handler start.
    start: Option<LatencyStats>,
    /// Enqueue call end (commit acknowledged) → handler start.
    after_commit: Option<LatencyStats>,
    /// The enqueue call (BEGIN, INSERT, COMMIT).
    enqueue: Option<LatencyStats>,
    /// Samples started / samples enqueued (open loop: the rest had not started when
    /// the wait hit the time cap, so the figures are a lower bound).
    started: usize,
    total: usize,
    /// Achieved offered rate (open loop), jobs/s.
    offered: Option<f64>,
    noise: Noise,
}

// ---------------------------------------------------------------------------
// Tolk runs
// ---------------------------------------------------------------------------

/// Inserts `n` jobs in chunks through apalis-postgres' own bulk insert (the SQL of
/// `push_bulk`), with ids and max_attempts as `tolk_storage::queue::enqueue` sets them.
async fn insert_tolk(
    pool: &PgPool,
    n: usize,
    chunk: usize,
    notify: AfterCommit,
) -> anyhow::Result<f64> {
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

fn burn_timeout(n: usize) -> Duration {
    Duration::from_secs(120 + (n / 200) as u64)
}

async fn tolk_burn(b: &Bench, s: &TolkSetting, n: usize, mode: Mode) -> anyhow::Result<Burn> {
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
            pruner = match s.prune {
                Prune::Off => None,
                Prune::Every { tick, keep_done } => {
                    Some(start_pruner(pruner_pool.clone(), tick, keep_done))
                }
            };
            workers = Workers::start(s, &pools, &probe);
        }
        Mode::EndToEnd => {
            pruner = match s.prune {
                Prune::Off => None,
                Prune::Every { tick, keep_done } => {
                    Some(start_pruner(pruner_pool.clone(), tick, keep_done))
                }
            };
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

/// Enqueues one job as the API does: its own transaction, `tolk_storage::queue::enqueue`.
/// Then wakes the workers as `notify` says.
async fn enqueue_one(pool: &PgPool, seq: i64, notify: &AfterCommit) -> anyhow::Result<f64> {
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
enum AfterCommit {
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
    fn of(s: &TolkSetting) -> Self {
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
    fn for_api(s: &TolkSetting, pool: &PgPool) -> Self {
        match Self::of(s) {
            Self::Turn if s.notifier => Self::Api {
                enqueuer: Enqueuer::start(pool),
                visible_first: s.visible_first,
            },
            other => other,
        }
    }

    async fn send(&self, pool: &PgPool) -> anyhow::Result<()> {
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

async fn warm_up(pool: &PgPool, probe: &Probe, notify: &AfterCommit) -> anyhow::Result<()> {
    for _ in 0..WARMUP {
        enqueue_one(pool, -1, notify).await?;
    }
    probe
        .wait_done(WARMUP, Duration::from_secs(60), "warm-up")
        .await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    Ok(())
}

async fn tolk_openloop(
    b: &Bench,
    s: &TolkSetting,
    n: usize,
    rate: u32,
) -> anyhow::Result<LatencyRow> {
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
            Ok(probe.row(
                "Tolk",
                "open loop",
                format!("{} ({})", s.key, s.describe()),
                enq,
                Some(n as f64 / offer_secs),
                b.noise.take(),
            ))
        }
        Err(e) => Err(e),
    };
    let stopped = workers.stop().await;
    let row = result?;
    stopped?;
    pools.close().await;
    Ok(row)
}

/// Runs `f` on a thread of its own with a single-threaded runtime of its own,
/// as a separate process would (the API beside the worker processes).
async fn in_own_process<T, F, Fut>(f: F) -> anyhow::Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = anyhow::Result<T>>,
{
    let (tx, rx) = oneshot::channel();
    std::thread::Builder::new()
        .name("bench-api".into())
        .spawn(move || {
            let r = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("API runtime")
                .and_then(|rt| rt.block_on(f()));
            let _ = tx.send(r);
        })
        .context("API thread")?;
    rx.await.context("API thread ended")?
}

/// Enqueues `n` jobs at `rate` per second, each as its own task, without waiting for
/// earlier ones (open loop). Returns the enqueue call times (ms) and the offering time.
async fn open_loop<F, Fut>(n: usize, rate: u32, enqueue: F) -> anyhow::Result<(Vec<f64>, f64)>
where
    F: Fn(i64) -> Fut,
    Fut: Future<Output = anyhow::Result<f64>> + Send + 'static,
{
    let spacing = Duration::from_secs_f64(1.0 / f64::from(rate.max(1)));
    let t0 = tokio::time::Instant::now();
    let mut tasks = Vec::with_capacity(n);
    for i in 0..n {
        tokio::time::sleep_until(t0 + spacing * i as u32).await;
        tasks.push(tokio::spawn(enqueue(i as i64)));
    }
    let offer_secs = t0.elapsed().as_secs_f64();
    let mut enq = Vec::with_capacity(n);
    for t in tasks {
        enq.push(t.await.context("enqueue task")??);
    }
    Ok((enq, offer_secs))
}

/// Graphile's latencyTest loop: enqueue sample i, wait until it started, go on.
/// Returns the enqueue call times, ms.
async fn sequential_with<F, Fut>(probe: &Probe, n: usize, enqueue: F) -> anyhow::Result<Vec<f64>>
where
    F: Fn(i64) -> Fut,
    Fut: Future<Output = anyhow::Result<f64>>,
{
    let mut enq = Vec::with_capacity(n);
    for i in 0..n {
        enq.push(enqueue(i as i64).await?);
        let deadline = Instant::now() + Duration::from_secs(30);
        while probe.latency[i].load(Ordering::Relaxed) == 0 {
            if Instant::now() > deadline {
                bail!("sequential latency: sample {i} did not start within 30 s");
            }
            let _ = tokio::time::timeout(Duration::from_millis(50), probe.started.notified()).await;
        }
    }
    Ok(enq)
}

/// The sequential test (Graphile's latencyTest method).
async fn tolk_sequential(b: &Bench, s: &TolkSetting, n: usize) -> anyhow::Result<LatencyRow> {
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
        Ok::<_, anyhow::Error>(probe.row(
            "Tolk",
            "sequential",
            format!("{} ({})", s.key, s.describe()),
            enq,
            None,
            b.noise.take(),
        ))
    }
    .await;
    let stopped = workers.stop().await;
    let row = result?;
    stopped?;
    pools.close().await;
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

const RAW_COMPLETE: &str =
    "UPDATE raw_jobs SET status = 'done', done_at = now() WHERE id = ANY($1)";

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

async fn raw_burn(b: &Bench, consumers: usize, n: usize, mode: Mode) -> anyhow::Result<Burn> {
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
    warmup: usize,
    timeout_ms: u64,
    cap_ms: u64,
    /// Node processes running the pool (burn only).
    processes: usize,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GraphileResult {
    #[serde(default)]
    jobs: usize,
    #[serde(default)]
    capped: bool,
    #[serde(default)]
    seconds: f64,
    #[serde(default)]
    insert_seconds: f64,
    #[serde(default)]
    latencies_ms: Vec<f64>,
    graphile_worker: String,
}

/// Makes sure `node` runs and graphile-worker is installed in `dir`.
async fn prepare_node(dir: &Path) -> anyhow::Result<()> {
    if !dir.join("package.json").is_file() {
        bail!(
            "{} has no package.json (pass --node-dir, or --skip-graphile)",
            dir.display()
        );
    }
    let node = tokio::process::Command::new("node")
        .arg("--version")
        .output()
        .await;
    match node {
        Ok(o) if o.status.success() => {}
        _ => bail!(
            "`node` is not available: Graphile Worker needs Node (>= 14); install it or pass --skip-graphile"
        ),
    }
    if dir
        .join("node_modules/graphile-worker/package.json")
        .is_file()
    {
        return Ok(());
    }
    println!(
        "Installing Graphile Worker (npm install in {}) ...",
        dir.display()
    );
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
        bail!(
            "node graphile.js ({} test) failed ({}):\n{stderr}",
            spec.test,
            out.status
        );
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
            warmup: WARMUP,
            timeout_ms: 600_000,
            cap_ms: 600_000,
            processes: 1,
        }
    }

    async fn burn(
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
    async fn latency(
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
        let json = serde_json::to_string(&spec)?;
        let mut child = tokio::process::Command::new("node")
            .arg("graphile.js")
            .arg(&json)
            .current_dir(self.dir)
            .env("NO_LOG_SUCCESS", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .context("spawning node graphile.js")?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().context("node stdout")?;
        let mut stderr = child.stderr.take().context("node stderr")?;
        let err_task = tokio::spawn(async move {
            let mut e = String::new();
            let _ = stderr.read_to_string(&mut e).await;
            e
        });
        // Node prints "ready", then "s <i>" when sample i starts, then its JSON result.
        let probe = Probe::new(n);
        let (ready_tx, ready_rx) = oneshot::channel::<()>();
        let reader = {
            let probe = probe.clone();
            tokio::spawn(async move {
                let mut lines = BufReader::new(stdout).lines();
                let mut ready = Some(ready_tx);
                let mut result = None;
                while let Ok(Some(line)) = lines.next_line().await {
                    if line == "ready" {
                        if let Some(tx) = ready.take() {
                            let _ = tx.send(());
                        }
                    } else if let Some(i) = line.strip_prefix("s ") {
                        if let Ok(i) = i.trim().parse::<usize>()
                            && let Some(slot) = probe.latency.get(i)
                        {
                            slot.store(1, Ordering::Relaxed);
                            probe.started.notify_one();
                            probe.done.fetch_add(1, Ordering::Release);
                        }
                    } else if line.trim_start().starts_with('{') {
                        result = Some(line);
                    }
                }
                result
            })
        };
        let failed = |what: String| async move {
            let e = err_task.await.unwrap_or_default();
            anyhow!("node graphile.js (latency): {what}\n{e}")
        };
        if tokio::time::timeout(Duration::from_secs(120), ready_rx)
            .await
            .map(|r| r.is_err())
            .unwrap_or(true)
        {
            return Err(failed("the worker pool did not get ready".into()).await);
        }
        b.noise.take();
        let api = b.pool(RAW_TRANSPORT, PLATFORM_POOL).await?;
        let produced = async {
            if test == "openloop" {
                let (enq, offer) = open_loop(n, rate, |i| {
                    let api = api.clone();
                    async move { graphile_add(&api, i).await }
                })
                .await?;
                probe.wait_done_capped(n, b.cap).await;
                Ok::<_, anyhow::Error>((enq, Some(n as f64 / offer)))
            } else {
                let enq = sequential_with(&probe, n, |i| graphile_add(&api, i)).await?;
                Ok((enq, None))
            }
        }
        .await;
        let noise = b.noise.take();
        api.close().await;
        drop(stdin);
        let result = tokio::time::timeout(Duration::from_secs(60), reader).await;
        let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
        let (enq, offered) = produced?;
        let line = match result {
            Ok(Ok(Some(line))) => line,
            _ => return Err(failed("no JSON result".into()).await),
        };
        let r: GraphileResult = serde_json::from_str(&line)
            .with_context(|| format!("reading Graphile's result: {line}"))?;
        let lat: Vec<Option<f64>> = r
            .latencies_ms
            .iter()
            .map(|v| (*v >= 0.0).then_some(*v))
            .collect();
        let row = LatencyRow {
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
            start: LatencyStats::of(lat.iter().flatten().copied().collect()),
            after_commit: LatencyStats::of(after_commit(&lat, &enq)),
            enqueue: LatencyStats::of(enq),
            started: lat.iter().flatten().count(),
            total: lat.len(),
            offered,
            noise,
        };
        Ok((row, r.graphile_worker))
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

// ---------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------

/// The admin URL with another database and the given query parameters set (replacing
/// any of the same name).
fn bench_url(admin: &str, db: &str, set: &[(&str, &str)]) -> anyhow::Result<String> {
    let mut u =
        url::Url::parse(admin).with_context(|| format!("parsing --database-url {admin}"))?;
    u.set_path(&format!("/{db}"));
    let pairs: Vec<(String, String)> = u
        .query_pairs()
        .filter(|(k, _)| !set.iter().any(|(s, _)| s == k))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    {
        let mut q = u.query_pairs_mut();
        q.clear();
        for (k, v) in &pairs {
            q.append_pair(k, v);
        }
        for (k, v) in set {
            q.append_pair(k, v);
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
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn fmt_rate(b: Option<Burn>) -> String {
    match b {
        Some(b) if b.capped => format!("{}*", fmt_int(b.rate().round() as usize)),
        Some(b) => fmt_int(b.rate().round() as usize),
        None => "-".into(),
    }
}

/// Runs `tolk-bench queue`.
pub async fn run(args: QueueArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    now_us();
    let n = args
        .jobs
        .unwrap_or(if args.quick { 20_000 } else { 100_000 });
    let lat_n = args
        .latency_jobs
        .unwrap_or(if args.quick { 2_000 } else { 5_000 });
    let seq_n = args
        .sequential
        .unwrap_or(if args.quick { 300 } else { 1_000 });
    let cap_secs = args.cap_secs.unwrap_or(10);
    let mut settings = tolk_settings(args.quick);
    for t in &args.tries {
        settings.push(TolkSetting::parse(t)?);
    }
    if !args.only.is_empty() {
        settings.retain(|s| args.only.contains(&s.key));
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
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let db_name = format!("tolk_bench_{}_{secs}", std::process::id());
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "CREATE DATABASE \"{db_name}\""
    )))
    .execute(&mut admin_conn)
    .await
    .with_context(|| format!("creating database {db_name}"))?;

    if let Some(ms) = args.log_statements_ms {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "ALTER DATABASE \"{db_name}\" SET log_min_duration_statement = {ms}"
        )))
        .execute(&mut admin_conn)
        .await
        .context("setting log_min_duration_statement")?;
        let log: Option<String> = sqlx::query_scalar("SELECT pg_current_logfile()")
            .fetch_one(&mut admin_conn)
            .await
            .unwrap_or(None);
        println!(
            "Logging statements of {db_name} slower than {ms} ms to the server log{}.",
            log.map(|l| format!(" ({l})")).unwrap_or_default()
        );
    }

    let result = run_in(
        &args, &admin, &db_name, &settings, n, lat_n, seq_n, cap_secs,
    )
    .await;

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
    cap_secs: u64,
) -> anyhow::Result<()> {
    let url_default = bench_url(&args.database_url, db_name, &[])?;
    let url_no_tls = bench_url(&args.database_url, db_name, &[("sslmode", "disable")])?;
    let url_tls = bench_url(&args.database_url, db_name, &[("sslmode", "require")])?;
    let port = admin.get_port();
    let socket = args.socket_dir.join(format!(".s.PGSQL.{port}"));
    let url_unix = if socket.exists() {
        let dir = args.socket_dir.to_string_lossy();
        bench_url(
            &args.database_url,
            db_name,
            &[("sslmode", "disable"), ("host", &dir)],
        )?
    } else {
        println!(
            "warning: no PostgreSQL socket at {}: the \"Unix socket\" settings use TCP sslmode=disable",
            socket.display()
        );
        url_no_tls.clone()
    };
    let obs_opts: PgConnectOptions = url_no_tls.parse().context("parsing the bench URL")?;
    let obs = PgPoolOptions::new()
        .max_connections(1)
        .connect_with(obs_opts)
        .await
        .context("connecting to the bench database")?;
    tolk_storage::db::migrate(&obs)
        .await
        .context("migrating the bench database")?;
    sqlx::raw_sql(RAW_SCHEMA)
        .execute(&obs)
        .await
        .context("creating raw_jobs")?;
    if let Some(path) = &args.setup_sql {
        let sql = std::fs::read_to_string(path)
            .with_context(|| format!("reading --setup-sql {}", path.display()))?;
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(&obs)
            .await
            .with_context(|| format!("running --setup-sql {}", path.display()))?;
        println!(
            "Ran {} on the bench database (--setup-sql).",
            path.display()
        );
    }
    let b = Bench {
        db_name: db_name.to_owned(),
        url_default: url_default.clone(),
        url_tls: url_tls.clone(),
        url_no_tls: url_no_tls.clone(),
        url_unix: url_unix.clone(),
        obs,
        noise: NoiseSampler::start(admin, db_name).await?,
        chunk: args.chunk.max(1),
        cap: Duration::from_secs(cap_secs),
    };

    // Header: the machine and the server.
    let version: String = sqlx::query_scalar("SHOW server_version")
        .fetch_one(&b.obs)
        .await?;
    let sync: String = sqlx::query_scalar("SHOW synchronous_commit")
        .fetch_one(&b.obs)
        .await?;
    let ssl: String = sqlx::query_scalar("SHOW ssl").fetch_one(&b.obs).await?;
    let tls_default = {
        let p = b.pool(Transport::Url, 1).await?;
        let on: Option<bool> =
            sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
                .fetch_optional(&p)
                .await?;
        p.close().await;
        on.unwrap_or(false)
    };
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    println!(
        "tolk-bench queue — Tolk's queue (apalis-postgres 1.0) vs Graphile Worker vs raw SKIP LOCKED"
    );
    println!(
        "PostgreSQL {version} (ssl={ssl}, synchronous_commit={sync}), database {}, {cpus} CPUs, load average {}",
        b.db_name,
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "Connections: the platform's handling of this URL gives TLS {}; raw loop and Graphile use the {}. Queue `{QUEUE}`; payload = the document job's fields + seq + timestamp.",
        if tls_default { "on" } else { "off" },
        RAW_TRANSPORT.label()
    );
    println!(
        "Burn-down: {} no-op jobs, {} per INSERT; latency: {} jobs open loop at {}/s, {} sequential samples.\n",
        fmt_int(n),
        fmt_int(b.chunk),
        fmt_int(lat_n),
        args.rate,
        fmt_int(seq_n)
    );
    println!(
        "Tolk settings (apalis-postgres as worker/src/run.rs builds it: queue name, unique worker names, heartbeat 5 s × 3):"
    );
    for s in settings {
        println!(
            "  {:<9}{}{}",
            s.key,
            s.describe(),
            if s.is_platform() {
                "   ← the platform's defaults"
            } else {
                ""
            }
        );
    }
    println!();

    let mut rows: Vec<ThroughputRow> = Vec::new();
    let mut lat_rows: Vec<LatencyRow> = Vec::new();
    let mut graphile_version = String::from("?");

    println!("== 1. Throughput (burn-down) ==");
    // Raw ceiling first.
    if !args.skip_raw {
        let p = raw_burn(&b, args.raw_consumers, n, Mode::Processing).await?;
        print_burn("raw", "raw", Mode::Processing, n, &p);
        let e = raw_burn(&b, args.raw_consumers, n, Mode::EndToEnd).await?;
        print_burn("raw", "raw", Mode::EndToEnd, n, &e);
        rows.push(ThroughputRow {
            system: "raw".into(),
            key: "raw".into(),
            detail: format!(
                "claim {RAW_BATCH} FOR UPDATE SKIP LOCKED + complete batch, {} consumers, {}",
                args.raw_consumers,
                RAW_TRANSPORT.label()
            ),
            processing: Some(p),
            e2e: Some(e),
        });
    }
    for s in settings {
        let p = tolk_burn(&b, s, n, Mode::Processing).await?;
        print_burn("Tolk", &s.key, Mode::Processing, n, &p);
        let e = tolk_burn(&b, s, n, Mode::EndToEnd).await?;
        print_burn("Tolk", &s.key, Mode::EndToEnd, n, &e);
        rows.push(ThroughputRow {
            system: "Tolk".into(),
            key: s.key.clone(),
            detail: s.describe(),
            processing: Some(p),
            e2e: Some(e),
        });
    }
    let graphile = GraphileCfg {
        dir: &args.node_dir,
        url: b.url(RAW_TRANSPORT),
        concurrency: args.graphile_concurrency,
    };
    if !args.skip_graphile {
        let mut runs = vec![
            (
                "default".to_owned(),
                "default",
                1,
                "defaults (no local queue, no batched completion)",
            ),
            (
                "batched".to_owned(),
                "batched",
                1,
                "batching preset: localQueue.size 500, complete/failJobBatchDelay 0",
            ),
        ];
        for &p in args.graphile_processes.iter().filter(|&&p| p > 1) {
            runs.push((
                format!("batched×{p}"),
                "batched",
                p,
                "batching preset: localQueue.size 500, complete/failJobBatchDelay 0",
            ));
        }
        for (key, preset, processes, detail) in runs {
            let p = graphile
                .burn(&b, preset, processes, n, Mode::Processing)
                .await?;
            print_burn("Graphile", &key, Mode::Processing, n, &p);
            let e = graphile
                .burn(&b, preset, processes, n, Mode::EndToEnd)
                .await?;
            print_burn("Graphile", &key, Mode::EndToEnd, n, &e);
            rows.push(ThroughputRow {
                system: "Graphile".into(),
                key,
                detail: format!(
                    "{detail}; concurrency {}, pool {}, {processes} Node process{}",
                    args.graphile_concurrency,
                    args.graphile_concurrency + 1,
                    if processes == 1 { "" } else { "es" }
                ),
                processing: Some(p),
                e2e: Some(e),
            });
        }
    }

    if !args.skip_latency {
        println!("\n== 2. Latency (enqueue → handler start) ==");
        let lat_settings: Vec<&TolkSetting> = settings
            .iter()
            .filter(|s| s.is_platform() || s.key == TUNED || args.only.contains(&s.key))
            .collect();
        for s in &lat_settings {
            let r = tolk_openloop(&b, s, lat_n, args.rate).await?;
            print_latency(&r);
            lat_rows.push(r);
        }
        if !args.skip_graphile {
            let (r, v) = graphile
                .latency(&b, "openloop", lat_n, args.rate, args.graphile_concurrency)
                .await?;
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
            let (r, _) = graphile
                .latency(
                    &b,
                    "sequential",
                    seq_n,
                    args.rate,
                    args.graphile_concurrency,
                )
                .await?;
            print_latency(&r);
            lat_rows.push(r);
        }
    }

    print_report(&rows, &lat_rows, n, &graphile_version);
    Ok(())
}

fn print_burn(system: &str, key: &str, mode: Mode, n: usize, b: &Burn) {
    println!(
        "  {system:<9}{key:<11}{:<11} {:>8} jobs in {:>6.2} s = {:>8} jobs/s{}  (inserts {:>5.2} s = {:>7}/s){}",
        mode.label(),
        fmt_int(b.jobs),
        b.secs,
        fmt_rate(Some(*b)),
        if b.capped { " (time cap)" } else { "" },
        b.insert_secs,
        fmt_int((n as f64 / b.insert_secs.max(1e-9)).round() as usize),
        b.noise.warning()
    );
}

fn fmt_stats(x: &Option<LatencyStats>) -> String {
    match x {
        Some(l) => format!(
            "p50 {:>7.2}  p95 {:>7.2}  p99 {:>7.2}  max {:>7.2}  mean {:>7.2} ms",
            l.p50, l.p95, l.p99, l.max, l.mean
        ),
        None => "-".into(),
    }
}

fn print_latency(r: &LatencyRow) {
    let started = if r.started < r.total {
        format!(
            "   only {} of {} started within the cap (lower bound)",
            fmt_int(r.started),
            fmt_int(r.total)
        )
    } else {
        String::new()
    };
    println!(
        "  {:<9}{:<11} enqueue → start: {}{}{}",
        r.system,
        r.test,
        fmt_stats(&r.start),
        started,
        r.noise.warning()
    );
    println!(
        "  {:<20}  commit → start: {}",
        "",
        fmt_stats(&r.after_commit)
    );
    println!(
        "  {:<20}    enqueue call: {}{}",
        "",
        fmt_stats(&r.enqueue),
        r.offered
            .map(|o| format!("   (offered {o:.0}/s)"))
            .unwrap_or_default()
    );
}

fn verdict(ok: bool) -> &'static str {
    if ok { "PASS" } else { "MISS" }
}

fn ratio(a: Option<Burn>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a.rate() / b),
        _ => "-".into(),
    }
}

fn print_report(rows: &[ThroughputRow], lat: &[LatencyRow], n: usize, graphile_version: &str) {
    let best = |sys: &str, f: fn(&ThroughputRow) -> Option<Burn>| {
        rows.iter()
            .filter(|r| r.system == sys)
            .filter_map(|r| f(r).map(|b| (r.key.clone(), b.rate())))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    };
    let raw = rows.iter().find(|r| r.system == "raw");
    let raw_p = raw.and_then(|r| r.processing).map(|b| b.rate());
    let raw_e = raw.and_then(|r| r.e2e).map(|b| b.rate());
    let g_p = best("Graphile", |r| r.processing);
    let g_e = best("Graphile", |r| r.e2e);

    println!(
        "\n== Throughput, jobs/s, {} no-op jobs (* = stopped at the time cap: jobs started / time) ==",
        fmt_int(n)
    );
    println!(
        "  {:<9}{:<10}{:>11}{:>11}  {:>11}  {:>11}  setting",
        "system", "key", "processing", "end to end", "/Graphile", "/raw"
    );
    for r in rows {
        let (vs_g, vs_raw) = if r.system == "Tolk" {
            (
                format!(
                    "{} / {}",
                    ratio(r.processing, g_p.as_ref().map(|g| g.1)),
                    ratio(r.e2e, g_e.as_ref().map(|g| g.1))
                ),
                format!("{} / {}", ratio(r.processing, raw_p), ratio(r.e2e, raw_e)),
            )
        } else {
            (String::new(), String::new())
        };
        println!(
            "  {:<9}{:<10}{:>11}{:>11}  {:>11}  {:>11}  {}",
            r.system,
            r.key,
            fmt_rate(r.processing),
            fmt_rate(r.e2e),
            vs_g,
            vs_raw,
            r.detail
        );
    }
    println!(
        "  (/Graphile and /raw: Tolk's rate over Graphile's best preset and over the raw loop, processing / end to end.)"
    );

    if !lat.is_empty() {
        println!(
            "\n== Latency, ms: enqueue → handler start (commit → start = minus the enqueue call) =="
        );
        println!(
            "  {:<9}{:<12}{:<10}{:>10}{:>10}{:>10}{:>10}  {:>12}{:>10}  {:>12}{:>10}",
            "system",
            "test",
            "key",
            "p50",
            "p95",
            "p99",
            "max",
            "commit→ p50",
            "p99",
            "enqueue p50",
            "p99"
        );
        for r in lat {
            let key = r.detail.split_whitespace().next().unwrap_or("");
            let g = |x: &Option<LatencyStats>, f: fn(&LatencyStats) -> f64| {
                x.as_ref()
                    .map_or("-".to_owned(), |l| format!("{:.2}", f(l)))
            };
            println!(
                "  {:<9}{:<12}{:<10}{:>10}{:>10}{:>10}{:>10}  {:>12}{:>10}  {:>12}{:>10}{}",
                r.system,
                r.test,
                if r.system == "Tolk" { key } else { "defaults" },
                g(&r.start, |l| l.p50),
                g(&r.start, |l| l.p95),
                g(&r.start, |l| l.p99),
                g(&r.start, |l| l.max),
                g(&r.after_commit, |l| l.p50),
                g(&r.after_commit, |l| l.p99),
                g(&r.enqueue, |l| l.p50),
                g(&r.enqueue, |l| l.p99),
                if r.started < r.total {
                    format!("   ({} of {} started)", r.started, r.total)
                } else {
                    String::new()
                }
            );
        }
    }

    println!("\n== Summary: targets (figures, not assertions) ==");
    println!("  {:<72}{:>12}{:>12}  result", "line", "figure", "target");
    let line = |name: String, fig: String, target: &str, ok: bool| {
        println!("  {:<72}{:>12}{:>12}  {}", name, fig, target, verdict(ok));
    };
    for t in rows
        .iter()
        .filter(|r| r.system == "Tolk" && (r.key == "platform" || r.key == TUNED))
    {
        let tag = if t.key == "platform" {
            "platform defaults"
        } else {
            "tuned"
        };
        let star = |b: Burn| if b.capped { "*" } else { "" };
        if let Some(e) = t.e2e {
            line(
                format!("Tolk {tag}: burn-down end to end"),
                format!("{}{}/s", fmt_int(e.rate().round() as usize), star(e)),
                "≥ 10,000/s",
                e.rate() >= 10_000.0 && !e.capped,
            );
            if let Some((gk, g)) = &g_e {
                line(
                    format!("Tolk {tag}: end to end / Graphile {gk}"),
                    format!("{:.2}×", e.rate() / g),
                    "≥ 1.00×",
                    e.rate() >= *g,
                );
            }
        }
        if let Some(p) = t.processing {
            if let Some((gk, g)) = &g_p {
                line(
                    format!("Tolk {tag}: processing / Graphile {gk}"),
                    format!("{:.2}×", p.rate() / g),
                    "≥ 1.00×",
                    p.rate() >= *g,
                );
            }
            if let Some(r) = raw_p {
                line(
                    format!("Tolk {tag}: processing / raw SKIP LOCKED"),
                    format!("{:.0} %", 100.0 * p.rate() / r),
                    "≥ 25 %",
                    p.rate() >= 0.25 * r,
                );
            }
        }
    }
    for r in lat.iter().filter(|r| r.system == "Tolk") {
        let key = r.detail.split_whitespace().next().unwrap_or("");
        let tag = if key == "platform" {
            "platform defaults"
        } else {
            key
        };
        let all = r.started == r.total;
        let suffix = if all { "" } else { " (not all started)" };
        let p99_limit = if r.test == "open loop" { 25.0 } else { 20.0 };
        if let Some(s) = &r.start {
            line(
                format!("Tolk {tag}: {} enqueue → start p50{suffix}", r.test),
                format!("{:.2} ms", s.p50),
                "≤ 5 ms",
                all && s.p50 <= 5.0,
            );
            line(
                format!("Tolk {tag}: {} enqueue → start p99{suffix}", r.test),
                format!("{:.2} ms", s.p99),
                if r.test == "open loop" {
                    "≤ 25 ms"
                } else {
                    "≤ 20 ms"
                },
                all && s.p99 <= p99_limit,
            );
        }
        if r.test == "open loop"
            && let Some(c) = &r.after_commit
        {
            line(
                format!("Tolk {tag}: open loop commit → start p50{suffix}"),
                format!("{:.2} ms", c.p50),
                "≤ 5 ms",
                all && c.p50 <= 5.0,
            );
            line(
                format!("Tolk {tag}: open loop commit → start p99{suffix}"),
                format!("{:.2} ms", c.p99),
                "≤ 25 ms",
                all && c.p99 <= 25.0,
            );
        }
    }
    if lat.iter().any(|r| r.system == "Graphile") {
        println!(
            "  (Graphile Worker {graphile_version}: its latency rows above are the reference; no target.)"
        );
    }
}
