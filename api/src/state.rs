//! Shared state of the API handlers.

use std::sync::Arc;

use sqlx::PgPool;
use tolk_engine::Translator;
use tolk_storage::objects::Objects;

use tolk_storage::rate_limit::RateLimiter;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    /// PostgreSQL.
    pub db: PgPool,
    /// Uploads and results.
    pub objects: Objects,
    /// The configured engines (for language validation; the API does not translate documents).
    pub translator: Arc<Translator>,
    /// Hunspell dictionaries for `/v2/write/correct`.
    pub speller: Arc<tolk_write::Speller>,
    /// Largest accepted upload, in bytes.
    pub max_upload_bytes: usize,
    /// The voice service's engines and limits.
    pub voice: crate::routes::voice::VoiceSettings,
    /// Per-key rate limits (shared through Redis when configured).
    pub rate_limiter: RateLimiter,
    /// Items per page of `GET /v2/admin/analytics/custom-tags`.
    pub analytics_page_size: u32,
    /// Whether billable requests append ledger entries. Always true in the
    /// product; only the metering benchmark turns it off, to measure its cost.
    pub record_usage: bool,
    /// How the ledger entries of keys without a limit are written
    /// (`TOLK_LEDGER_WRITES`; default [`LedgerWrites::Batched`]).
    pub ledger_writes: LedgerWrites,
    /// The batching appender ([`LedgerWrites::Batched`]); also flushed before
    /// usage and analytics reads, and when the server stops.
    pub usage_appender: tolk_storage::usage_appender::UsageAppender,
    /// Glossary terms of recent `/v2/translate` requests, checked against the
    /// glossaries' versions per request (`TOLK_GLOSSARY_CACHE_MB`).
    pub glossary_cache: Arc<tolk_pipeline::GlossaryCache>,
    /// Enqueue transactions, the wake-up NOTIFYs and the wait for durability
    /// (`tolk_storage::enqueuer`).
    pub enqueuer: tolk_storage::enqueuer::Enqueuer,
    /// Verifies `Authorization: Bearer` tokens of the auth service (`None`: only
    /// API keys are accepted).
    pub bearer: Option<tolk_auth::tokens::Verifier>,
    /// The workers' heartbeat period (`TOLK_WORKER_HEARTBEAT_SECS`): a worker
    /// loop seen within 3 of them counts as live in `/metrics`.
    pub worker_heartbeat: std::time::Duration,
    /// Where the dashboard's operators sign in with an account (`None`:
    /// admin keys only).
    pub dashboard_sign_in: Option<crate::routes::admin_ui::DashboardSignIn>,
}

/// Largest document upload by default, in bytes (`TOLK_MAX_UPLOAD_BYTES`).
pub const DEFAULT_MAX_UPLOAD_BYTES: usize = 30 * 1024 * 1024;

impl AppState {
    /// A state over `db`, `objects` and `translator` with the platform's
    /// defaults, except that no rate limit applies (`tolk api` sets the
    /// configured one); in-process users (benches, router tests) change
    /// fields from here.
    pub fn new(db: PgPool, objects: Objects, translator: Arc<Translator>) -> Self {
        let usage_appender =
            tolk_storage::usage_appender::UsageAppender::start(db.clone(), Default::default());
        Self {
            enqueuer: tolk_storage::enqueuer::Enqueuer::start(&db),
            db,
            objects,
            translator,
            speller: Arc::new(tolk_write::Speller::new(tolk_write::DEFAULT_DIR)),
            max_upload_bytes: DEFAULT_MAX_UPLOAD_BYTES,
            voice: Default::default(),
            rate_limiter: RateLimiter::local(tolk_storage::rate_limit::RateLimit {
                per_second: 0.0,
                burst: 1,
            }),
            analytics_page_size: 100,
            record_usage: true,
            ledger_writes: LedgerWrites::default(),
            usage_appender,
            glossary_cache: Arc::default(),
            bearer: None,
            worker_heartbeat: std::time::Duration::from_secs(5),
            dashboard_sign_in: None,
        }
    }

    /// The translation pipeline over this state's database, engines and
    /// glossary cache.
    pub fn pipeline(&self) -> tolk_pipeline::Pipeline<'_> {
        tolk_pipeline::Pipeline {
            db: &self.db,
            translator: &self.translator,
            glossary_cache: Some(&self.glossary_cache),
        }
    }
}

/// How a request's ledger entry reaches the ledger, for keys without a limit
/// (a key with a limit always turns its reservation into the entry in one
/// durable transaction, after the work).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LedgerWrites {
    /// After the work, through the process's batching appender
    /// (`tolk_storage::usage_appender`): no wait on the request path; a
    /// process killed without a graceful stop loses its last ~10 ms of entries.
    #[default]
    Batched,
    /// Appended beside the work, its commit waiting for the WAL flush, before
    /// the answer; a failed request gets a reversal entry.
    Durable,
    /// Like `Durable`, without waiting for the WAL flush (a crash of
    /// PostgreSQL itself can lose the last ~0.6 s of entries).
    AsyncCommit,
}
