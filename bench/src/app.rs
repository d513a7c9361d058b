//! The API state the benches serve: the platform's defaults, with rate limiting off
//! (a bench hammers one key on purpose).

use std::sync::Arc;

use tolk_api::AppState;
use tolk_api::rate_limit::{RateLimit, RateLimiter};
use tolk_engine::Translator;
use tolk_storage::objects::Objects;

/// `AppState` as `tolk api` builds it, except: no rate limit, `max_upload_bytes` as
/// given.
pub fn api_state(
    db: sqlx::PgPool,
    objects: Objects,
    translator: Arc<Translator>,
    max_upload_bytes: usize,
) -> AppState {
    let usage_appender =
        tolk_storage::usage_appender::UsageAppender::start(db.clone(), Default::default());
    AppState {
        enqueuer: tolk_storage::enqueuer::Enqueuer::start(&db),
        db,
        objects,
        translator,
        speller: Arc::new(tolk_write::Speller::new(tolk_write::DEFAULT_DIR)),
        max_upload_bytes,
        voice: Default::default(),
        rate_limiter: RateLimiter::local(RateLimit {
            per_second: 0.0,
            burst: 1,
        }),
        analytics_page_size: 100,
        record_usage: true,
        // The platform's default: batched ledger writes.
        ledger_writes: tolk_api::LedgerWrites::default(),
        usage_appender,
        glossary_cache: Arc::default(),
        bearer: None,
        worker_heartbeat: std::time::Duration::from_secs(5),
    }
}
