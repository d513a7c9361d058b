//! Worker process set-up: queues, concurrency, polling, heartbeats, shutdown.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use apalis::prelude::*;
use apalis_postgres::{Config, PostgresStorage};
use sqlx::PgPool;
use tolk_engine::Translator;
use tolk_storage::objects::Objects;
use tolk_storage::queue::{self, TranslateDocument, VoiceTranslate};

/// Settings of a worker process.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Jobs run at once by this process (per queue).
    pub concurrency: usize,
    /// Heartbeat period; a worker is dead after `missed_heartbeats` of them.
    pub heartbeat: Duration,
    /// Missed heartbeats before a worker's jobs are re-enqueued.
    pub missed_heartbeats: usize,
    /// Interval poll besides LISTEN/NOTIFY (catches delayed jobs and retries).
    pub poll_interval: Duration,
    /// How long a shutdown waits for running jobs.
    pub shutdown_timeout: Duration,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            concurrency: 2,
            heartbeat: Duration::from_secs(5),
            missed_heartbeats: 3,
            poll_interval: Duration::from_secs(1),
            shutdown_timeout: Duration::from_secs(30),
        }
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
    let pg = Config::default()
        .queue(queue::TRANSLATE_DOCUMENT)
        .batch_size(config.concurrency.max(1))
        .heartbeat_interval(config.heartbeat)
        .missed_heartbeats(config.missed_heartbeats);
    let voice_pg = Config::default()
        .queue(queue::VOICE_TRANSLATE)
        .batch_size(config.concurrency.max(1))
        .heartbeat_interval(config.heartbeat)
        .missed_heartbeats(config.missed_heartbeats);
    let pool = state.db.clone();
    let voice_pool = state.db.clone();
    let voice_state = state.clone();
    let voice_name = unique_name(queue::VOICE_TRANSLATE);
    let name = unique_name(queue::TRANSLATE_DOCUMENT);
    tracing::info!(worker = %name, concurrency = config.concurrency, "worker starting");
    let concurrency = config.concurrency.max(1);
    let poll = config.poll_interval;
    Monitor::new()
        .register(move |_restarts| {
            let backend = PostgresStorage::<TranslateDocument>::new(&pool)
                .with_config(pg.clone())
                .with_pubsub()
                .poll_with_interval(poll);
            WorkerBuilder::new(name.clone())
                .backend(backend)
                .data(state.clone())
                .catch_panic()
                .concurrency(concurrency)
                .build(crate::documents::translate_document)
        })
        .register(move |_restarts| {
            let backend = PostgresStorage::<VoiceTranslate>::new(&voice_pool)
                .with_config(voice_pg.clone())
                .with_pubsub()
                .poll_with_interval(poll);
            WorkerBuilder::new(voice_name.clone())
                .backend(backend)
                .data(voice_state.clone())
                .catch_panic()
                .concurrency(concurrency)
                .build(crate::voice::translate_voice)
        })
        .shutdown_timeout(config.shutdown_timeout)
        .run_with_signal(async move {
            shutdown.await;
            Ok(())
        })
        .await
}
