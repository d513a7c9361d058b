//! `tolk-bench queue`: Tolk's job queue (apalis-postgres, configured as the worker
//! configures it in `worker/src/run.rs`) against Graphile Worker 0.17.3 and a
//! hand-written `FOR UPDATE SKIP LOCKED` loop, side by side, in one run, on the local
//! PostgreSQL.
//!
//! Method (docs/benchmarks.md gives the figures and how to reproduce them):
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
//!   (see [`settings::tolk_settings`]); `--try KEY=SPEC` adds more.
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
//!
//! `--kinds` runs only the comparison of worker pools by job kind ([`kinds`]; where
//! its parts run: [`placement`], [`irq`]).
//!
//! One concern per file: [`settings`] (Tolk's configurations), [`schema`] (their
//! schema variants), [`bench`] (the throwaway database and its connections),
//! [`probe`] (the job and what handlers report), [`workers`], [`enqueue`] (as the
//! API enqueues), [`load`] (open loop and sequential producers), the compared
//! systems ([`tolk`], [`raw`], [`graphile`], run through [`node`]), [`noise`]
//! (outside disturbance), [`phases`] (the comparisons), [`results`], [`report`]
//! (as the runs go) and [`summary`] (the tables and targets).

mod bench;
mod enqueue;
mod graphile;
mod irq;
mod kinds;
mod load;
mod node;
mod noise;
mod phases;
mod placement;
mod probe;
mod raw;
mod report;
mod results;
mod schema;
mod settings;
mod summary;
mod tolk;
mod workers;

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use sqlx::postgres::PgConnectOptions;
use tolk_storage::queue as tq;

use bench::Bench;
use settings::{TolkSetting, tolk_settings};
use tolk_storage::throwaway::ThrowawayDb;

/// The platform's queue: the bench runs the document queue's name and payload shape.
const QUEUE: &str = tq::TRANSLATE_DOCUMENT;

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
    /// Smaller run: 20k jobs, fewer settings, shorter latency tests.
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
    /// Only the worker pools comparison: documents, evaluations and voice jobs
    /// on one all-queues worker vs a documents pool and a voice pool
    /// (`kinds.rs`); needs two CPUs, no Node.
    #[arg(long)]
    kinds: bool,
    /// Seconds of offered load of each `--kinds` run.
    #[arg(long, default_value_t = 20)]
    kinds_secs: u64,
    /// Rounds of the four `--kinds` runs (the verdict takes the median).
    #[arg(long, default_value_t = 3)]
    kinds_rounds: usize,
    /// Adds a fifth `--kinds` run: the two pools with voice jobs that wait
    /// instead of working, the voice CPU kept busy outside the queue,
    /// separating what the voice pool's queue traffic costs the documents
    /// from its CPU work.
    #[arg(long)]
    kinds_queue_only: bool,
    /// The voice pool's CPU in `--kinds` (0 or 1; the documents pool gets the
    /// other). Default: the CPU that does not serve the storage's interrupts.
    #[arg(long)]
    kinds_voice_cpu: Option<usize>,
    /// Leaves the platform (this process, the bench database's PostgreSQL
    /// backends) free to run on both CPUs in `--kinds`, instead of on the
    /// documents pool's CPU (`placement.rs`).
    #[arg(long)]
    kinds_platform_anywhere: bool,
    /// Folder of the Node side (package.json, graphile.js).
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/node"))]
    node_dir: PathBuf,
}

/// One run of `tolk-bench queue`: the arguments, with their defaults resolved.
struct Plan {
    args: QueueArgs,
    /// Tolk's settings to compare: the chain, then `--try`, kept by `--only`.
    settings: Vec<TolkSetting>,
    /// No-op jobs per burn-down.
    jobs: usize,
    /// Jobs of the open-loop latency test.
    latency_jobs: usize,
    /// Samples of the sequential latency test.
    sequential: usize,
    /// Time cap of one burn-down (and of the wait after an open-loop test).
    cap: Duration,
}

impl Plan {
    fn new(args: QueueArgs) -> anyhow::Result<Self> {
        let quick = args.quick;
        let mut settings = tolk_settings(quick);
        for t in &args.tries {
            settings.push(TolkSetting::parse(t)?);
        }
        if !args.only.is_empty() {
            settings.retain(|s| args.only.contains(&s.key));
            if settings.is_empty() {
                bail!("--only matched no Tolk setting");
            }
        }
        Ok(Self {
            jobs: args.jobs.unwrap_or(if quick { 20_000 } else { 100_000 }),
            latency_jobs: args
                .latency_jobs
                .unwrap_or(if quick { 2_000 } else { 5_000 }),
            sequential: args.sequential.unwrap_or(if quick { 300 } else { 1_000 }),
            cap: Duration::from_secs(args.cap_secs.unwrap_or(10)),
            settings,
            args,
        })
    }
}

/// Runs `tolk-bench queue`.
pub async fn run(args: QueueArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    // Starts the one clock of producers and handlers.
    probe::now_us();
    let plan = Plan::new(args)?;
    let args = &plan.args;
    if !args.skip_graphile && !args.kinds {
        node::prepare_node(&args.node_dir).await?;
    }
    let admin: PgConnectOptions = args
        .database_url
        .parse()
        .with_context(|| format!("parsing --database-url {}", args.database_url))?;
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let db_name = format!("tolk_bench_{}_{secs}", std::process::id());
    let db = ThrowawayDb::create(&args.database_url, &db_name).await?;

    let result = run_on(&plan, &admin, &db).await;

    if args.keep_db {
        println!("\nKept database {db_name} (--keep-db).");
    } else if let Err(e) = db.drop_database().await {
        eprintln!("warning: could not drop database {db_name}: {e}");
    }
    result?;
    println!("\nTotal time: {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The run on the migrated bench database: the comparisons, then the report.
async fn run_on(plan: &Plan, admin: &PgConnectOptions, db: &ThrowawayDb) -> anyhow::Result<()> {
    if let Some(ms) = plan.args.log_statements_ms {
        bench::log_statements(admin, db, ms).await?;
    }
    let b = Bench::open(plan, admin, db).await?;
    if plan.args.kinds {
        let options = kinds::KindsOptions {
            secs: plan.args.kinds_secs.max(1),
            rounds: plan.args.kinds_rounds,
            queue_only: plan.args.kinds_queue_only,
            voice_cpu: plan.args.kinds_voice_cpu,
            platform_anywhere: plan.args.kinds_platform_anywhere,
        };
        return kinds::run(&b, &options).await;
    }
    report::print_header(&b, plan).await?;
    let rows = phases::throughput(&b, plan).await?;
    let (lat_rows, graphile_version) = if plan.args.skip_latency {
        (Vec::new(), String::from("?"))
    } else {
        phases::latency(&b, plan).await?
    };
    summary::print_report(&rows, &lat_rows, plan.jobs, &graphile_version);
    Ok(())
}
