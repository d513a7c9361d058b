//! `tolk-bench queue --kinds`: worker pools by job kind under a mixed load.
//!
//! Each "process" is a thread pinned to its CPUs (`sched_setaffinity`, as a
//! container's CPU set pins a pod) running its own runtime, connection pool,
//! wake hub and apalis workers, built as `tolk worker` builds them
//! (`tolk_worker::run::backend`, the platform's `WorkerConfig`), in an idle
//! cgroup, so that the bench's PostgreSQL and producer (other machines in a
//! deployment) are served first on the CPU they share with the documents
//! pool. Handlers burn a fixed amount of CPU work per kind on a blocking
//! thread (documents light and frequent, evaluations light, voice heavy),
//! competing with their process's runtime as a real worker's engines do, and
//! record the wait of each document job, from the start of its enqueue to the
//! start of its handler, and its turnaround, to the end of its work.
//!
//! The voice pool gets a CPU of its own; the documents pool shares the other
//! with the platform (the bench database's PostgreSQL backends and the
//! producer), in every run alike: [`placement`](super::placement) says why
//! and how (`--kinds-voice-cpu`, `--kinds-platform-anywhere`).
//!
//! Four runs of the same document and evaluation load, offered at a fixed
//! rate (open loop) for `--kinds-secs`:
//! - **documents only** (the baseline of the verdict): the documents pool
//!   (documents and evaluations) on its CPU, no voice jobs, the voice CPU idle;
//! - **documents only, voice CPU busy**: the same, with the voice CPU kept
//!   busy by a [`Spinner`] per voice lane outside the queue, as busy as the
//!   voice pool keeps it: what the machine itself adds;
//! - **one worker, all queues**: one process on both CPUs running every kind
//!   at the pools' concurrencies, while a backlog of voice jobs keeps its
//!   voice lanes busy;
//! - **two pools**: the documents pool and a voice pool on their CPUs (the
//!   same total concurrency and CPUs), the same voice backlog.
//!
//! `--kinds-queue-only` adds a fifth run, **two pools, voice queue traffic
//! only**: the two pools and the voice backlog, but voice jobs that wait
//! instead of working, with the voice CPU kept busy as in the second run: what
//! the voice pool's fetches, acks and LISTEN connection cost the documents,
//! apart from its CPU work.
//!
//! Each document's wait is also split into its enqueue (as the producer saw
//! it) and the pick-up after it.
//!
//! Target: with pools, the document wait (p50 and p99) stays within 1.2 × the
//! documents-only run's.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use apalis::prelude::*;
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use sqlx::postgres::PgConnectOptions;
use tokio::sync::oneshot;
use tolk_storage::queue as tq;

use super::bench::Bench;
use super::load::open_loop;
use super::placement::{IdleGroup, Layout, Place, Platform, pin, yield_to_the_platform};
use super::probe::now_us;
use super::settings::{TolkSetting, Transport, platform_worker};

/// Documents offered per second.
const DOCUMENT_RATE: u32 = 30;
/// CPU work of a document job, in milliseconds of one idle core.
const DOCUMENT_WORK_MS: f64 = 10.0;
/// Evaluations offered per second.
const QUALITY_RATE: u32 = 10;
/// CPU work of an evaluation.
const QUALITY_WORK_MS: f64 = 20.0;
/// CPU work of a voice job.
const VOICE_WORK_MS: f64 = 500.0;
/// Jobs each pool runs at once, per kind.
const DOCUMENT_LANES: usize = 2;
const QUALITY_LANES: usize = 1;
const VOICE_LANES: usize = 2;

/// A job of the bench: its kind, its work and the start of its enqueue.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct KindJob {
    kind: Kind,
    /// Iterations of [`burn`].
    work: Work,
    /// [`now_us`] when its enqueue started.
    enqueued_us: u64,
    /// Its place among the jobs of its kind offered in the run.
    seq: usize,
}

/// What a job of the bench does.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
enum Work {
    /// Iterations of [`burn`] on a blocking thread.
    Burn(u64),
    /// A wait of this many milliseconds, without CPU work
    /// (`--kinds-queue-only`'s voice jobs).
    Wait(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Kind {
    Document,
    Quality,
    Voice,
}

impl Kind {
    fn queue(self) -> &'static str {
        match self {
            Kind::Document => tq::TRANSLATE_DOCUMENT,
            Kind::Quality => tq::EVALUATE_QUALITY,
            Kind::Voice => tq::VOICE_TRANSLATE,
        }
    }
}

/// What the handlers report: the waits of document jobs (µs) and the jobs
/// of each kind finished.
#[derive(Default)]
struct KindProbe {
    /// Each document's place ([`KindJob::seq`]) and wait (µs).
    document_waits: std::sync::Mutex<Vec<(usize, u64)>>,
    /// Time each document's work took (µs): longer when its CPU is shared.
    document_runs: std::sync::Mutex<Vec<u64>>,
    /// Each document's turnaround (µs): from the start of its enqueue to
    /// the end of its work, what the client waits for.
    document_turnarounds: std::sync::Mutex<Vec<u64>>,
    documents: AtomicUsize,
    qualities: AtomicUsize,
    voices: AtomicUsize,
}

/// `n` iterations of a small hash: CPU work that takes longer when the
/// thread gets less of a core.
fn burn(n: u64) -> u64 {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..n {
        x = x.rotate_left(5) ^ i.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    }
    std::hint::black_box(x)
}

/// Iterations of [`burn`] per millisecond of this (idle) core.
fn calibrate() -> f64 {
    let n = 2_000_000;
    let t = Instant::now();
    burn(n);
    n as f64 / (t.elapsed().as_secs_f64() * 1000.0).max(1e-3)
}

async fn handle(job: KindJob, probe: Data<Arc<KindProbe>>) -> Result<(), BoxDynError> {
    if job.kind == Kind::Document {
        let waited = now_us().saturating_sub(job.enqueued_us);
        if let Ok(mut w) = probe.document_waits.lock() {
            w.push((job.seq, waited));
        }
    }
    match job.work {
        Work::Wait(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
        Work::Burn(n) => {
            let ran = tokio::task::spawn_blocking(move || {
                let t = Instant::now();
                burn(n);
                t.elapsed()
            })
            .await?;
            if job.kind == Kind::Document
                && let Ok(mut r) = probe.document_runs.lock()
            {
                r.push(u64::try_from(ran.as_micros()).unwrap_or(u64::MAX));
            }
        }
    }
    if job.kind == Kind::Document
        && let Ok(mut t) = probe.document_turnarounds.lock()
    {
        t.push(now_us().saturating_sub(job.enqueued_us));
    }
    let finished = match job.kind {
        Kind::Document => &probe.documents,
        Kind::Quality => &probe.qualities,
        Kind::Voice => &probe.voices,
    };
    finished.fetch_add(1, Ordering::Release);
    Ok(())
}

/// One `tolk worker` process of a run: where it runs and the lanes of each kind.
struct Process {
    place: Place,
    lanes: &'static [(Kind, usize)],
}

/// A running process: its stop signal and its thread.
struct Running {
    stop: oneshot::Sender<()>,
    thread: std::thread::JoinHandle<Result<()>>,
}

impl Process {
    /// Starts the process on its own thread.
    fn start(
        &'static self,
        cpus: Vec<usize>,
        options: PgConnectOptions,
        probe: Arc<KindProbe>,
    ) -> Result<Running> {
        let (stop, stopped) = oneshot::channel::<()>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<()>>();
        let thread = std::thread::Builder::new()
            .name("bench-worker".into())
            .spawn(move || -> Result<()> {
                pin(&cpus)?;
                yield_to_the_platform();
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(cpus.len())
                    .enable_all()
                    .build()
                    .context("worker runtime")?;
                rt.block_on(self.run(options, probe, stopped, ready_tx))
            })
            .context("worker thread")?;
        ready_rx
            .recv_timeout(Duration::from_secs(30))
            .context("the worker did not start")??;
        Ok(Running { stop, thread })
    }

    async fn run(
        &self,
        options: PgConnectOptions,
        probe: Arc<KindProbe>,
        stopped: oneshot::Receiver<()>,
        ready: std::sync::mpsc::Sender<Result<()>>,
    ) -> Result<()> {
        let pool =
            match tolk_storage::db::connect(tolk_storage::db::queue_options(options), 10).await {
                Ok(p) => p,
                Err(e) => {
                    let _ = ready.send(Err(anyhow::anyhow!("worker pool: {e}")));
                    return Ok(());
                }
            };
        let config = platform_worker();
        let hub = config.wake_hub(&pool);
        let mut monitor = Monitor::new();
        for &(kind, lanes) in self.lanes {
            let (pool, config, hub, probe) =
                (pool.clone(), config.clone(), hub.clone(), probe.clone());
            monitor = monitor.register(move |_restarts| {
                let name = tolk_worker::run::unique_name(kind.queue());
                WorkerBuilder::new(name.clone())
                    .backend(tolk_worker::run::backend::<KindJob>(
                        &pool,
                        &config,
                        &hub,
                        kind.queue(),
                        &name,
                    ))
                    .layer(hub.busy_layer(&name, lanes))
                    .data(probe.clone())
                    .catch_panic()
                    .concurrency(lanes)
                    .build(handle)
            });
        }
        let _ = ready.send(Ok(()));
        monitor
            .shutdown_timeout(Duration::from_secs(30))
            .run_with_signal(async move {
                let _ = stopped.await;
                Ok(())
            })
            .await
            .map_err(|e| anyhow::anyhow!("apalis monitor: {e}"))?;
        drop(hub);
        pool.close().await;
        Ok(())
    }
}

impl Running {
    fn stop(self) -> Result<()> {
        let _ = self.stop.send(());
        self.thread
            .join()
            .map_err(|_| anyhow::anyhow!("a worker thread panicked"))?
    }
}

/// The documents pool: documents and evaluations.
static DOCUMENTS_POOL: Process = Process {
    place: Place::Documents,
    lanes: &[
        (Kind::Document, DOCUMENT_LANES),
        (Kind::Quality, QUALITY_LANES),
    ],
};
/// The voice pool.
static VOICE_POOL: Process = Process {
    place: Place::Voice,
    lanes: &[(Kind::Voice, VOICE_LANES)],
};
/// One worker running every kind at the pools' concurrencies, on both CPUs.
static ALL_QUEUES: Process = Process {
    place: Place::Both,
    lanes: &[
        (Kind::Document, DOCUMENT_LANES),
        (Kind::Quality, QUALITY_LANES),
        (Kind::Voice, VOICE_LANES),
    ],
};

/// One run's figures.
struct Figures {
    name: &'static str,
    /// Median and p99 of the documents' waits.
    wait_ms: (f64, f64),
    /// p99 of the documents' enqueues (the API's transaction and wake-up).
    enqueue_p99_ms: f64,
    /// p99 of the part of each wait after its enqueue returned.
    pickup_p99_ms: f64,
    /// Median time a document's work took.
    run_ms: f64,
    /// Median and p99 of the documents' turnarounds.
    turnaround_ms: (f64, f64),
    documents: usize,
    voices: usize,
}

/// Enqueues one job of `kind` as the API does (its own transaction, then the
/// workers' wake-up).
async fn enqueue(pool: &PgPool, kind: Kind, work: Work, seq: usize) -> Result<f64> {
    let job = KindJob {
        kind,
        work,
        enqueued_us: now_us(),
        seq,
    };
    let mut tx = pool.begin().await.context("BEGIN")?;
    let id = tq::new_job_id();
    tq::enqueue(&mut tx, kind.queue(), &id, &job, 3, &format!("bench:{id}"))
        .await
        .context("enqueue")?;
    tx.commit().await.context("COMMIT")?;
    tq::notify_enqueued(pool, kind.queue())
        .await
        .context("notify")?;
    Ok((now_us() - job.enqueued_us) as f64 / 1000.0)
}

/// One run of the comparison.
#[derive(Clone, Copy)]
struct Run {
    name: &'static str,
    processes: &'static [&'static Process],
    /// A backlog of voice jobs keeps the voice lanes busy.
    voice: bool,
    /// The voice CPU kept busy outside the queue (a [`Spinner`] per voice
    /// lane) through the run.
    spin: bool,
    /// The voice jobs wait instead of working.
    voice_waits: bool,
}

/// CPU work outside the queue: a thread pinned to one CPU burning in the
/// idle group (or class), as the voice pool's work does, until dropped.
/// It takes the CPU from nothing on the queue, so a run with it differs from
/// one without only in how busy that CPU is.
struct Spinner {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Spinner {
    fn start(cpu: usize) -> Result<Self> {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("bench-spinner".into())
            .spawn(move || {
                if pin(&[cpu]).is_err() {
                    return;
                }
                yield_to_the_platform();
                while !flag.load(Ordering::Relaxed) {
                    burn(100_000);
                }
            })
            .context("spinner thread")?;
        Ok(Self {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One run: its processes started (and its spinners), the voice backlog
/// (when `voice`), the documents and evaluations offered for `secs`, then
/// every document waited for.
async fn run_once(
    b: &Bench,
    platform: &TolkSetting,
    layout: Layout,
    run: Run,
    secs: u64,
    per_ms: f64,
) -> Result<Figures> {
    let Run {
        name,
        processes,
        voice,
        spin,
        voice_waits,
    } = run;
    b.reset_tolk(platform).await?;
    // As many busy threads as the voice pool has lanes: one thread per lane
    // keeps the CPU busy as the voice pool does (on this machine one thread
    // fewer gave the documents a shorter p99 than the voice pool's own).
    let _spinners = if spin {
        (0..VOICE_LANES)
            .map(|_| Spinner::start(layout.voice))
            .collect::<Result<Vec<_>>>()?
    } else {
        Vec::new()
    };
    let options = b.connect_options(Transport::Url)?;
    let api = tolk_storage::db::connect(options.clone(), 10).await?;
    let probe = Arc::new(KindProbe::default());
    let mut running = Vec::new();
    for p in processes {
        running.push(p.start(layout.cpus(p.place), options.clone(), probe.clone())?);
    }
    // Let the lanes register and listen.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let work = |ms: f64| Work::Burn((ms * per_ms) as u64);
    if voice {
        // Enough voice jobs to keep the voice lanes busy through the run.
        let backlog = (secs as f64 * 1000.0 / VOICE_WORK_MS) as usize * VOICE_LANES * 2;
        let voice_work = if voice_waits {
            Work::Wait(VOICE_WORK_MS as u64)
        } else {
            work(VOICE_WORK_MS)
        };
        for seq in 0..backlog {
            enqueue(&api, Kind::Voice, voice_work, seq).await?;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let documents = DOCUMENT_RATE as usize * secs as usize;
    let qualities = QUALITY_RATE as usize * secs as usize;
    let (doc_work, quality_work) = (work(DOCUMENT_WORK_MS), work(QUALITY_WORK_MS));
    let offer_documents = open_loop(documents, DOCUMENT_RATE, |i| {
        let api = api.clone();
        async move { enqueue(&api, Kind::Document, doc_work, i as usize).await }
    });
    let offer_qualities = open_loop(qualities, QUALITY_RATE, |i| {
        let api = api.clone();
        async move { enqueue(&api, Kind::Quality, quality_work, i as usize).await }
    });
    let (d, q) = tokio::join!(offer_documents, offer_qualities);
    let (enqueues, _) = d?;
    q?;
    let deadline = Instant::now() + Duration::from_secs(secs * 3 + 30);
    while probe.documents.load(Ordering::Acquire) < documents {
        if Instant::now() > deadline {
            bail!(
                "{name}: {} of {documents} documents done in time",
                probe.documents.load(Ordering::Acquire)
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let voices = probe.voices.load(Ordering::Acquire);
    for r in running {
        r.stop()?;
    }
    api.close().await;
    let at = |v: &mut Vec<u64>, q: f64| {
        v.sort_unstable();
        let i = ((v.len() as f64 - 1.0) * q).round() as usize;
        v.get(i).copied().unwrap_or(0) as f64 / 1000.0
    };
    let seq_waits = snapshot(&probe.document_waits)?;
    let mut waits: Vec<u64> = seq_waits.iter().map(|&(_, w)| w).collect();
    // Each document's enqueue (µs), by its place.
    let mut enqueue_us: Vec<u64> = enqueues.iter().map(|ms| (ms * 1000.0) as u64).collect();
    // The part of each wait after its enqueue returned (the worker's pick-up).
    let mut pickups: Vec<u64> = seq_waits
        .iter()
        .map(|&(seq, w)| w.saturating_sub(enqueue_us.get(seq).copied().unwrap_or(0)))
        .collect();
    let mut runs = snapshot(&probe.document_runs)?;
    let mut turnarounds = snapshot(&probe.document_turnarounds)?;
    Ok(Figures {
        name,
        wait_ms: (at(&mut waits, 0.50), at(&mut waits, 0.99)),
        enqueue_p99_ms: at(&mut enqueue_us, 0.99),
        pickup_p99_ms: at(&mut pickups, 0.99),
        run_ms: at(&mut runs, 0.50),
        turnaround_ms: (at(&mut turnarounds, 0.50), at(&mut turnarounds, 0.99)),
        documents,
        voices,
    })
}

/// The runs of a round, in order: the two baselines first.
const RUNS: [Run; 4] = [
    Run {
        name: "documents only (baseline)",
        processes: &[&DOCUMENTS_POOL],
        voice: false,
        spin: false,
        voice_waits: false,
    },
    Run {
        name: "documents only, voice CPU busy outside the queue",
        processes: &[&DOCUMENTS_POOL],
        voice: false,
        spin: true,
        voice_waits: false,
    },
    Run {
        name: "one worker, all queues (both CPUs)",
        processes: &[&ALL_QUEUES],
        voice: true,
        spin: false,
        voice_waits: false,
    },
    Run {
        name: "two pools (a CPU each)",
        processes: &[&DOCUMENTS_POOL, &VOICE_POOL],
        voice: true,
        spin: false,
        voice_waits: false,
    },
];

/// `--kinds-queue-only`'s run, after the four.
const QUEUE_ONLY: Run = Run {
    name: "two pools, voice queue traffic only (voice jobs wait, voice CPU busy outside the queue)",
    processes: &[&DOCUMENTS_POOL, &VOICE_POOL],
    voice: true,
    spin: true,
    voice_waits: true,
};

/// `(p50, p99)` of a run over those of its baseline.
fn ratios(run: (f64, f64), base: (f64, f64)) -> (f64, f64) {
    (run.0 / base.0.max(1e-3), run.1 / base.1.max(1e-3))
}

/// A copy of the samples a probe collected.
fn snapshot<T: Clone>(samples: &std::sync::Mutex<Vec<T>>) -> Result<Vec<T>> {
    Ok(samples
        .lock()
        .map_err(|_| anyhow::anyhow!("samples lock"))?
        .clone())
}

/// What `--kinds` runs.
pub(super) struct KindsOptions {
    /// Seconds of offered load per run.
    pub(super) secs: u64,
    /// Rounds of the runs (the verdict takes the median of their ratios).
    pub(super) rounds: usize,
    /// Adds the fifth run ([`QUEUE_ONLY`]).
    pub(super) queue_only: bool,
    /// The voice pool's CPU (0 or 1); `None`: off the storage's.
    pub(super) voice_cpu: Option<usize>,
    /// Leaves the platform (backends, producer) unplaced, on both CPUs.
    pub(super) platform_anywhere: bool,
}

/// Runs the rounds, prints each run's figures and the verdict on the median
/// of the rounds' ratios (a slow moment of the machine does not decide it
/// alone).
pub(super) async fn run(b: &Bench, o: &KindsOptions) -> Result<()> {
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    if cpus < 2 {
        bail!("--kinds needs two CPUs (one per pool); this machine has {cpus}");
    }
    let platform = TolkSetting::platform();
    let per_ms = tokio::task::spawn_blocking(|| {
        pin(&[0])?;
        Ok::<_, anyhow::Error>(calibrate())
    })
    .await??;
    let (secs, rounds) = (o.secs, o.rounds.max(1));
    println!();
    println!(
        "## Worker pools by kind: documents {DOCUMENT_RATE}/s × {DOCUMENT_WORK_MS} ms of CPU, \
         evaluations {QUALITY_RATE}/s × {QUALITY_WORK_MS} ms, voice backlog × {VOICE_WORK_MS} ms, \
         {secs} s offered, {rounds} round(s)"
    );
    println!();
    let layout = {
        let pool = tolk_storage::db::connect(b.connect_options(Transport::Url)?, 1).await?;
        let layout = Layout::choose(&pool, o.voice_cpu).await;
        pool.close().await;
        layout?
    };
    let idle = match IdleGroup::create() {
        Ok(group) => {
            println!(
                "the worker processes in cgroup {} (cpu.idle = 1)",
                group.path().display()
            );
            Some(group)
        }
        Err(why) => {
            println!(
                "warning: the worker processes in the idle class only ({why}): where the kernel groups \
                 tasks by session, they compete with PostgreSQL as equals"
            );
            None
        }
    };
    let placed = if o.platform_anywhere {
        println!("the platform on both CPUs (--kinds-platform-anywhere)");
        None
    } else {
        let cpu = layout.documents;
        println!(
            "the platform (this process, the bench database's PostgreSQL backends) on CPU {cpu}"
        );
        Some(Platform::confine(b.connect_options(Transport::Url)?, &b.db_name, cpu).await?)
    };
    let verdict = rounds_and_verdict(b, &platform, layout, o, per_ms).await;
    if let Some(placed) = placed {
        let n = placed.release().await?;
        println!("({n} PostgreSQL backends placed on the documents CPU)");
    }
    drop(idle);
    verdict
}

/// The rounds of runs, their figures and the verdict.
async fn rounds_and_verdict(
    b: &Bench,
    platform: &TolkSetting,
    layout: Layout,
    o: &KindsOptions,
    per_ms: f64,
) -> Result<()> {
    let (secs, rounds) = (o.secs, o.rounds.max(1));
    println!();
    println!(
        "| round | run | documents | voice jobs done | document wait p50 | p99 | ÷ documents only (p50, p99) | ÷ documents only, voice CPU busy | enqueue p99 | pick-up p99 | document work p50 | turnaround p50, p99 (÷ documents only) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let (mut shared, mut pools, mut pools_busy) = (Vec::new(), Vec::new(), Vec::new());
    let (mut shared_done, mut pools_done) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        let mut figures = Vec::new();
        let extra = o.queue_only.then_some(QUEUE_ONLY);
        for run in RUNS.into_iter().chain(extra) {
            figures.push(run_once(b, platform, layout, run, secs, per_ms).await?);
        }
        let ratio = |f: &Figures, base: &Figures| ratios(f.wait_ms, base.wait_ms);
        let done_ratio = |f: &Figures, base: &Figures| ratios(f.turnaround_ms, base.turnaround_ms);
        let (alone, busy) = (&figures[0], &figures[1]);
        for f in &figures {
            let ((a50, a99), (b50, b99)) = (ratio(f, alone), ratio(f, busy));
            let (d50, d99) = done_ratio(f, alone);
            println!(
                "| {round} | {} | {} | {} | {:.1} ms | {:.1} ms | {a50:.2} ×, {a99:.2} × | {b50:.2} ×, {b99:.2} × | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms, {:.1} ms ({d50:.2} ×, {d99:.2} ×) |",
                f.name,
                f.documents,
                f.voices,
                f.wait_ms.0,
                f.wait_ms.1,
                f.enqueue_p99_ms,
                f.pickup_p99_ms,
                f.run_ms,
                f.turnaround_ms.0,
                f.turnaround_ms.1,
            );
        }
        shared_done.push(done_ratio(&figures[2], alone));
        pools_done.push(done_ratio(&figures[3], alone));
        shared.push(ratio(&figures[2], alone));
        pools.push(ratio(&figures[3], alone));
        pools_busy.push(ratio(&figures[3], busy));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let medians = |ratios: &[(f64, f64)]| {
        (
            median(&mut ratios.iter().map(|r| r.0).collect()),
            median(&mut ratios.iter().map(|r| r.1).collect()),
        )
    };
    let (shared50, shared99) = medians(&shared);
    let (pools50, pools99) = medians(&pools);
    let (busy50, busy99) = medians(&pools_busy);
    let (shared_done50, shared_done99) = medians(&shared_done);
    let (pools_done50, pools_done99) = medians(&pools_done);
    println!();
    println!(
        "median of the rounds, of the documents-only wait: one worker, all queues \
         {shared50:.2} × (p50) / {shared99:.2} × (p99); two pools {pools50:.2} × / {pools99:.2} × \
         (of the documents-only wait with the voice CPU busy outside the queue: {busy50:.2} × / {busy99:.2} ×)"
    );
    println!(
        "median of the rounds, of the documents-only turnaround (enqueue → work done): one worker, \
         all queues {shared_done50:.2} × (p50) / {shared_done99:.2} × (p99); two pools \
         {pools_done50:.2} × / {pools_done99:.2} ×"
    );
    let worst = pools50.max(pools99);
    println!(
        "target: with pools, the document wait ≤ 1.2 × the documents-only run's (p50 and p99): \
         {worst:.2} × → {}",
        if worst <= 1.2 { "PASS" } else { "MISS" }
    );
    Ok(())
}
