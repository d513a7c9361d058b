//! Worker process set-up: queues, concurrency, polling, heartbeats, shutdown.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use apalis::prelude::*;
use apalis_postgres::{Config, PostgresStorage};
use sqlx::PgPool;
use tolk_engine::Translator;
use tolk_storage::objects::Objects;
use tolk_storage::queue::{self, EvaluateQuality, TmxJob, TranslateDocument, VoiceTranslate};

use tokio::sync::watch;

use crate::pools::{Kind, Pools};
use crate::supervise::Supervisor;
use crate::wake::{LaneWake, WakeHub};

/// Settings of a worker process.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Jobs run at once by each lane (per queue), for every kind of job when
    /// `pools` is `None`.
    pub concurrency: usize,
    /// The kinds of job this process runs and the concurrency of each
    /// (`--queues`, `--concurrency documents=4,voice=1`); `None`: every kind
    /// at `concurrency`.
    pub pools: Option<Pools>,
    /// apalis workers per queue in this process ("lanes"), sharing its pools and
    /// its LISTEN connection. apalis runs a worker's fetch, acks and heartbeat
    /// one after another; lanes overlap those round trips, as more processes
    /// would, without their connections and heartbeats (`tolk-bench queue`
    /// compares lanes with processes; docs/benchmarks.md).
    pub lanes: usize,
    /// Jobs fetched (and locked to this worker) per fetch; `None` = `concurrency`.
    /// Keep it at the concurrency for long jobs: fetched jobs wait in this worker's
    /// buffer, where no other worker can take them.
    pub batch_size: Option<usize>,
    /// Heartbeat period; a worker is dead after `missed_heartbeats` of them.
    pub heartbeat: Duration,
    /// Missed heartbeats before a worker's jobs are re-enqueued.
    pub missed_heartbeats: usize,
    /// Interval poll besides LISTEN/NOTIFY (catches delayed jobs and retries).
    pub poll_interval: Duration,
    /// How long a shutdown waits for running jobs.
    pub shutdown_timeout: Duration,
    /// apalis' `lock_tasks`: an extra UPDATE per job (`Queued` → `Running`) when
    /// its handler starts. Off by default: the fetch already locks the row to this
    /// worker (`Queued`, `lock_by`), which is all that recovery reads (apalis'
    /// orphan re-enqueue, the scheduler's dead-worker sweep and shutdown's
    /// release all take `Queued` and `Running` alike), so the update only costs a
    /// row version and its index entries. `tolk-bench queue` (toggle `lock`)
    /// measured the difference within its noise for no-op jobs, whose Running
    /// update often folds into the ack's batch anyway.
    pub lock_tasks: bool,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            concurrency: 2,
            pools: None,
            lanes: 1,
            batch_size: None,
            heartbeat: Duration::from_secs(5),
            missed_heartbeats: 3,
            poll_interval: Duration::from_secs(1),
            shutdown_timeout: Duration::from_secs(30),
            lock_tasks: false,
        }
    }
}

impl WorkerConfig {
    /// In-flight jobs per worker, at least 1.
    pub fn concurrency(&self) -> usize {
        self.concurrency.max(1)
    }

    /// The pools this process runs ([`WorkerConfig::pools`]).
    pub fn pools(&self) -> Pools {
        self.pools
            .clone()
            .unwrap_or_else(|| Pools::all(self.concurrency()))
    }

    /// These settings for the workers of `kind`: its pool's concurrency;
    /// `None` when this process does not run that kind.
    pub fn for_kind(&self, kind: Kind) -> Option<Self> {
        let pools = self.pools();
        pools.runs(kind).then(|| Self {
            concurrency: pools.concurrency(kind),
            ..self.clone()
        })
    }

    /// apalis' `Config` for `queue` with these settings.
    pub fn apalis_config(&self, queue: &str) -> Config {
        Config::default()
            .queue(queue)
            .batch_size(self.batch_size.unwrap_or(self.concurrency).max(1))
            .heartbeat_interval(self.heartbeat)
            .missed_heartbeats(self.missed_heartbeats)
            .lock_tasks(self.lock_tasks)
    }
}

/// The queue backend every Tolk worker runs: apalis-postgres, woken by its
/// process's [`WakeHub`] when it is this worker's turn for a new job, and by an
/// interval poll (delayed jobs, retries).
pub type QueueBackend<T> =
    PollWith<PollWith<PostgresStorage<T>, StreamStrategy<LaneWake>>, IntervalStrategy>;

/// Builds the backend of the worker named `name` on `queue` for jobs of type `T`.
pub fn backend<T>(
    pool: &PgPool,
    config: &WorkerConfig,
    hub: &WakeHub,
    queue: &str,
    name: &str,
) -> QueueBackend<T> {
    PostgresStorage::<T>::new(pool)
        .with_config(config.apalis_config(queue))
        .poll_with_stream(hub.lane(queue, name))
        .poll_with_interval(config.poll_interval)
}

impl WorkerConfig {
    /// How recently a worker must have sent a heartbeat to count as alive.
    pub fn live_within(&self) -> Duration {
        self.heartbeat
            .saturating_mul(u32::try_from(self.missed_heartbeats).unwrap_or(u32::MAX))
    }

    /// The wake hub of a process running workers with these settings on `pool`.
    pub fn wake_hub(&self, pool: &PgPool) -> WakeHub {
        WakeHub::start(pool.clone(), self.live_within())
    }
}

/// What the handlers reach.
#[derive(Clone)]
pub struct WorkerState {
    /// PostgreSQL.
    pub db: PgPool,
    /// Uploads and results.
    pub objects: Objects,
    /// The engines.
    pub translator: Arc<Translator>,
    /// Text to speech (voice jobs).
    pub espeak: tolk_voice::tts::Espeak,
    /// Speech recognition (voice jobs).
    pub recognizer: tolk_voice::asr::Recognizer,
    /// LibreOffice, for documents delivered in another format.
    pub office: crate::Office,
    /// The fonts translated PDFs and images are set in.
    pub fonts: crate::PdfFonts,
    /// Text recognition, for images.
    pub ocr: crate::Tesseract,
}

impl WorkerState {
    /// The translation pipeline over this state's database and engines.
    pub fn pipeline(&self) -> tolk_pipeline::Pipeline<'_> {
        tolk_pipeline::Pipeline {
            db: &self.db,
            translator: &self.translator,
            glossary_cache: None,
        }
    }
}

/// The machine's name (`/etc/hostname`, `host` when it has none).
fn host() -> String {
    std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".to_owned())
}

/// Records the worker loop `name` of `queue` (host, process, concurrency) for
/// the dashboard and `/metrics`, trying again every few seconds while the
/// database does not answer.
async fn record_loop(db: PgPool, name: String, queue: &'static str, concurrency: usize) {
    let host = host();
    loop {
        match queue::register_loop(&db, &name, queue, &host, concurrency).await {
            Ok(()) => return,
            Err(e) => {
                tracing::debug!(queue, error = %e, "recording a worker loop failed; will retry");
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
        }
    }
}

/// A worker name unique to this process start.
pub fn unique_name(queue: &str) -> String {
    format!(
        "{queue}-{}-{}-{}",
        host(),
        std::process::id(),
        ulid::Ulid::generate()
    )
}

/// One supervised loop per lane of every `$kind, $job, $queue, $handler`
/// whose kind this process runs (with that kind's concurrency): each loop
/// runs one apalis worker (in a `Monitor` of its own, for its graceful stop)
/// under a name unique to that start, woken by `$hub`, its queue bookkeeping on
/// `$queue_db`, its handler given `$state`; [`Supervisor`] starts it again
/// whenever it ends before `$stop`.
macro_rules! workers {
    ($config:expr, $state:expr, $hub:expr, $queue_db:expr, $stop:expr; $($kind:expr, $job:ty, $queue:expr, $handler:path;)+) => {{
        let mut loops: Vec<futures::future::BoxFuture<'static, ()>> = Vec::new();
        $(
            let kind_config = $config.for_kind($kind);
            for kind_config in kind_config.iter().flat_map(|c| std::iter::repeat_n(c, c.lanes.max(1))) {
                let (config, state, hub, queue_db) =
                    (kind_config.clone(), $state.clone(), $hub.clone(), $queue_db.clone());
                let supervisor = Supervisor::new($queue, queue_db.clone(), $stop.clone());
                let stopped = supervisor.clone();
                loops.push(Box::pin(supervisor.run(move |name: String| {
                    let (config, state, hub, queue_db) =
                        (config.clone(), state.clone(), hub.clone(), queue_db.clone());
                    let stop = stopped.stopped();
                    async move {
                        // Beside the loop, never holding it up (the database may be down).
                        let recording = tokio::spawn(record_loop(
                            queue_db.clone(),
                            name.clone(),
                            $queue,
                            config.concurrency(),
                        ));
                        let timeout = config.shutdown_timeout;
                        let ended = Monitor::new()
                            .register(move |_restarts| {
                                WorkerBuilder::new(name.clone())
                                    .backend(backend::<$job>(&queue_db, &config, &hub, $queue, &name))
                                    .layer(hub.busy_layer(&name, config.concurrency()))
                                    .data(state.clone())
                                    .catch_panic()
                                    .concurrency(config.concurrency())
                                    .build($handler)
                            })
                            .shutdown_timeout(timeout)
                            .run_with_signal(async move {
                                stop.await;
                                Ok(())
                            })
                            .await;
                        recording.abort();
                        if let Err(e) = ended {
                            tracing::warn!(queue = $queue, error = %e, "worker loop stopped with an error");
                        }
                    }
                })));
            }
        )+
        loops
    }};
}

/// Runs the workers of every queue until `shutdown` resolves; running jobs then
/// finish (up to `shutdown_timeout`), fetched but unstarted ones go back to the
/// queue. A loop that ends before (a lost database, a failed fetch) is started
/// again ([`crate::supervise`]), so this returns only after `shutdown`.
pub async fn run(
    config: WorkerConfig,
    state: WorkerState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    // apalis' bookkeeping commits without waiting for the WAL flush; the
    // handlers' own writes (`state.db`) stay durable.
    let queue_db = tolk_storage::db::relaxed_pool(&state.db);
    let hub = config.wake_hub(&queue_db);
    let (stop_tx, stop) = watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });
    tracing::info!(
        pools = %config.pools().describe(),
        lanes = config.lanes.max(1),
        batch = ?config.batch_size,
        "worker starting"
    );
    let loops = workers!(config, state, hub, queue_db, stop;
        Kind::Documents, TranslateDocument, queue::TRANSLATE_DOCUMENT, crate::documents::translate_document;
        Kind::Quality, EvaluateQuality, queue::EVALUATE_QUALITY, crate::quality::evaluate_quality;
        Kind::Voice, VoiceTranslate, queue::VOICE_TRANSLATE, crate::voice::translate_voice;
        Kind::Tmx, TmxJob, queue::IMPORT_TMX, crate::tmx_import::import_tmx;
        Kind::Tmx, TmxJob, queue::EXPORT_TMX, crate::tmx_export::export_tmx;
    );
    futures::future::join_all(loops).await;
    tracing::info!("worker stopped");
}
