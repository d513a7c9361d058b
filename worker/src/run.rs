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

use crate::wake::DrainedNotify;

/// Settings of a worker process.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Jobs run at once by this process (per queue).
    pub concurrency: usize,
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

/// The queue backend every Tolk worker runs: apalis-postgres, woken by
/// [`DrainedNotify`] on inserts and by an interval poll (delayed jobs, retries).
pub type QueueBackend<T> =
    PollWith<PollWith<PostgresStorage<T>, StreamStrategy<DrainedNotify>>, IntervalStrategy>;

/// Builds the backend of `queue` for jobs of type `T`.
pub fn backend<T>(pool: &PgPool, config: &WorkerConfig, queue: &str) -> QueueBackend<T> {
    PostgresStorage::<T>::new(pool)
        .with_config(config.apalis_config(queue))
        .poll_with_stream(DrainedNotify::new(pool.clone(), queue))
        .poll_with_interval(config.poll_interval)
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
}

/// A worker name unique to this process start.
pub fn unique_name(queue: &str) -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".to_owned());
    format!(
        "{queue}-{host}-{}-{}",
        std::process::id(),
        ulid::Ulid::generate()
    )
}

/// Runs the workers of every queue until `shutdown` resolves; running jobs then
/// finish (up to `shutdown_timeout`), fetched but unstarted ones go back to the queue.
pub async fn run(
    config: WorkerConfig,
    state: WorkerState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), MonitorError> {
    let pool = state.db.clone();
    let voice_pool = state.db.clone();
    let voice_state = state.clone();
    let voice_config = config.clone();
    let voice_name = unique_name(queue::VOICE_TRANSLATE);
    let name = unique_name(queue::TRANSLATE_DOCUMENT);
    let quality_name = unique_name(queue::EVALUATE_QUALITY);
    let quality_pool = pool.clone();
    let quality_config = config.clone();
    let quality_state = state.clone();
    let import_name = unique_name(queue::IMPORT_TMX);
    let import_pool = pool.clone();
    let import_config = config.clone();
    let import_state = state.clone();
    let export_name = unique_name(queue::EXPORT_TMX);
    let export_pool = pool.clone();
    let export_config = config.clone();
    let export_state = state.clone();
    let concurrency = config.concurrency();
    tracing::info!(worker = %name, concurrency, batch = ?config.batch_size, "worker starting");
    let shutdown_timeout = config.shutdown_timeout;
    Monitor::new()
        .register(move |_restarts| {
            WorkerBuilder::new(name.clone())
                .backend(backend::<TranslateDocument>(
                    &pool,
                    &config,
                    queue::TRANSLATE_DOCUMENT,
                ))
                .data(state.clone())
                .catch_panic()
                .concurrency(concurrency)
                .build(crate::documents::translate_document)
        })
        .register(move |_restarts| {
            WorkerBuilder::new(quality_name.clone())
                .backend(backend::<EvaluateQuality>(
                    &quality_pool,
                    &quality_config,
                    queue::EVALUATE_QUALITY,
                ))
                .data(quality_state.clone())
                .catch_panic()
                .concurrency(concurrency)
                .build(crate::quality::evaluate_quality)
        })
        .register(move |_restarts| {
            WorkerBuilder::new(voice_name.clone())
                .backend(backend::<VoiceTranslate>(
                    &voice_pool,
                    &voice_config,
                    queue::VOICE_TRANSLATE,
                ))
                .data(voice_state.clone())
                .catch_panic()
                .concurrency(concurrency)
                .build(crate::voice::translate_voice)
        })
        .register(move |_restarts| {
            WorkerBuilder::new(import_name.clone())
                .backend(backend::<TmxJob>(
                    &import_pool,
                    &import_config,
                    queue::IMPORT_TMX,
                ))
                .data(import_state.clone())
                .catch_panic()
                .concurrency(concurrency)
                .build(crate::tmx_import::import_tmx)
        })
        .register(move |_restarts| {
            WorkerBuilder::new(export_name.clone())
                .backend(backend::<TmxJob>(
                    &export_pool,
                    &export_config,
                    queue::EXPORT_TMX,
                ))
                .data(export_state.clone())
                .catch_panic()
                .concurrency(concurrency)
                .build(crate::tmx_export::export_tmx)
        })
        .shutdown_timeout(shutdown_timeout)
        .run_with_signal(async move {
            shutdown.await;
            Ok(())
        })
        .await
}
