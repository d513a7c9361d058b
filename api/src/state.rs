//! Shared state of the API handlers.

use std::sync::Arc;

use sqlx::PgPool;
use tolk_engine::Translator;
use tolk_storage::objects::Objects;

use crate::rate_limit::RateLimiter;

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
    /// Commit request ledger entries without waiting for the WAL flush
    /// (`TOLK_LEDGER_ASYNC_COMMIT`; default false: durable). Faster metering, but a
    /// crash of PostgreSQL itself can lose the last ~0.6 s of billing entries.
    pub async_ledger_commit: bool,
    /// Glossary terms of recent `/v2/translate` requests, checked against the
    /// glossaries' versions per request (`TOLK_GLOSSARY_CACHE_MB`).
    pub glossary_cache: Arc<crate::glossary_cache::GlossaryCache>,
    /// Enqueue transactions, the wake-up NOTIFYs and the wait for durability
    /// (`tolk_storage::enqueuer`).
    pub enqueuer: tolk_storage::enqueuer::Enqueuer,
    /// Verifies `Authorization: Bearer` tokens of the auth service (`None`: only
    /// API keys are accepted).
    pub bearer: Option<tolk_auth::tokens::Verifier>,
}
