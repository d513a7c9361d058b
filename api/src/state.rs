//! Shared state of the API handlers.

use std::sync::Arc;

use sqlx::PgPool;
use tolk_engine::Translator;
use tolk_storage::objects::Objects;

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
}
