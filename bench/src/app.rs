//! The API state the benches serve: the platform's defaults
//! ([`AppState::new`], rate limiting off: a bench hammers one key on purpose).

use std::sync::Arc;

use tolk_api::AppState;
use tolk_engine::Translator;
use tolk_storage::objects::Objects;

/// [`AppState::new`] with `max_upload_bytes` as given.
pub fn api_state(
    db: sqlx::PgPool,
    objects: Objects,
    translator: Arc<Translator>,
    max_upload_bytes: usize,
) -> AppState {
    AppState {
        max_upload_bytes,
        ..AppState::new(db, objects, translator)
    }
}
