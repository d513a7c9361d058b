//! Tolk's queue settings: the platform's configuration, the chain of changes
//! from it that the bench compares, and `--try KEY=SPEC`.

use std::fmt::Write as _;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};

/// `--db-connections` (`TOLK_DB_CONNECTIONS`, src/cli.rs): pool size per process.
pub(super) const PLATFORM_POOL: u32 = 10;

/// The platform's worker settings (`--concurrency`, heartbeat, poll interval), from
/// tolk-worker itself; run.rs sets `batch_size` to the concurrency.
pub(super) fn platform_worker() -> tolk_worker::WorkerConfig {
    tolk_worker::WorkerConfig::default()
}

/// The platform's scheduler settings (retention of finished rows, tick).
pub(super) fn platform_scheduler() -> tolk_scheduler::SchedulerConfig {
    tolk_scheduler::SchedulerConfig::default()
}

/// Pruning of finished queue rows during a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Prune {
    /// Nothing pruned.
    Off,
    /// The scheduler's `prune` every `tick`, Done rows kept `keep_done`.
    Every { tick: Duration, keep_done: Duration },
}

/// How an idle worker learns about new jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wake {
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
pub(super) enum Transport {
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
    pub(super) fn label(self) -> &'static str {
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
pub(super) struct TolkSetting {
    pub(super) key: String,
    /// Workers (apalis `WorkerBuilder`s, unique names) in the one process.
    pub(super) workers: usize,
    /// In-flight jobs per worker (`.concurrency`).
    pub(super) concurrency: usize,
    /// apalis `Config::batch_size`.
    pub(super) batch: usize,
    pub(super) transport: Transport,
    /// Scheduler pruning of finished queue rows during the run.
    pub(super) prune: Prune,
    pub(super) wake: Wake,
    /// Pool size of the worker process.
    pub(super) pool: u32,
    /// Planner settings on `apalis.get_jobs` ([`super::schema::FETCH_FIX`]).
    pub(super) fetch_fix: bool,
    /// apalis' own per-row NOTIFY trigger inside the enqueueing transaction, instead
    /// of the platform's `notify_enqueued` after the commit.
    pub(super) apalis_trigger: bool,
    /// apalis' two redundant indexes (`lidx`, `unique_job_id`), which the platform's
    /// migration 20261121000004 drops.
    pub(super) apalis_dup_indexes: bool,
    /// apalis' `lock_tasks` (a `Running` update when a handler starts); the
    /// platform's `WorkerConfig::lock_tasks`.
    pub(super) lock_tasks: bool,
    /// sqlx's default pool: a ping round trip on every checkout, where the
    /// platform's pool (`tolk_storage::db::connect`) pings only connections idle
    /// for `PING_IF_IDLE_FOR`.
    pub(super) ping_always: bool,
    /// The workers' queue connections commit without waiting for the WAL flush
    /// (`synchronous_commit = off`): fetches, acks and heartbeats.
    pub(super) queue_async_commit: bool,
    /// The API sends its NOTIFYs from a task of its own
    /// (`tolk_storage::notifier::Notifier`, the platform's) instead of awaiting
    /// `queue::notify_enqueued` on a pooled connection in the request.
    pub(super) notifier: bool,
    /// The API's enqueue commits without waiting for the WAL flush and waits for
    /// it afterwards (`Enqueuer::begin` / `committed`, the platform's), instead
    /// of committing with the flush.
    pub(super) visible_first: bool,
    /// All workers on one pool of `pool` connections, instead of a pool each (what
    /// separate `tolk worker` processes have).
    pub(super) shared_pool: bool,
    /// apalis' foreign key from `jobs.lock_by` to `workers.id` (its trigger locks
    /// the worker row for every job a fetch takes).
    pub(super) lock_fk: bool,
    /// apalis' own `apalis.jobs` text columns (the database's collation) and
    /// idempotency index over every row, instead of the platform's bytewise
    /// columns and index over unfinished rows (migration 20261125100001).
    pub(super) apalis_rows: bool,
    /// The workers' queue connections keep PostgreSQL's default plan cache
    /// (generic plans after five runs of a prepared statement) instead of the
    /// platform's `plan_cache_mode = force_custom_plan`
    /// (`tolk_storage::db::queue_options`).
    pub(super) generic_plans: bool,
}

impl TolkSetting {
    pub(super) fn platform() -> Self {
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

    pub(super) fn is_platform(&self) -> bool {
        self.key == "platform"
    }

    /// Parses `--try KEY=SPEC` (see [`super::QueueArgs::tries`]), starting from the platform's.
    pub(super) fn parse(arg: &str) -> anyhow::Result<Self> {
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

    pub(super) fn describe(&self) -> String {
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
pub(super) const TUNED: &str = "tuned";

/// The settings tried, in order. The first is the platform's configuration; the last
/// ([`TUNED`]) has every change that helped.
pub(super) fn tolk_settings(quick: bool) -> Vec<TolkSetting> {
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
