//! Tolk's HTTP API (DeepL-compatible wire format).
//!
//! The API authenticates, validates, stores uploads in the object store and
//! enqueues jobs in the same transaction that records their public state. It
//! never runs a job: workers do.

#![deny(missing_docs)]

pub mod auth;
pub mod body;
pub mod drain;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod limits;
pub mod params;
pub mod requests;
pub mod routes;
pub mod state;
pub mod trace_id;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use tower_http::trace::TraceLayer;

pub use error::ApiError;
pub use state::{AppState, LedgerWrites};

/// Longest request URI (path and query) accepted, in bytes; longer → 414.
pub const MAX_URI_BYTES: usize = 8 * 1024;

/// Answers 414 with a JSON message when the request URI is too long.
async fn limit_uri(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let len = req.uri().path_and_query().map_or(0, |pq| pq.as_str().len());
    if len > MAX_URI_BYTES {
        return ApiError::UriTooLong(format!(
            "Request URI too long: at most {MAX_URI_BYTES} bytes are accepted; send parameters in the body."
        ))
        .into_response();
    }
    next.run(req).await
}

/// The whole HTTP application.
pub fn router(state: AppState) -> Router {
    let upload_limit = state.max_upload_bytes;
    let voice_upload_limit = state.voice.max_upload_bytes;
    Router::new()
        .merge(routes::documents::router())
        .merge(routes::translate::router())
        .merge(routes::glossaries::router())
        .merge(routes::spoken_terms::router())
        .merge(routes::style_rules::router())
        .merge(routes::translation_memories::router())
        .merge(routes::quality::router())
        .merge(routes::write::router())
        .merge(routes::languages::router())
        .merge(routes::usage::router())
        .merge(routes::admin_keys::router())
        .merge(routes::admin_ui::router())
        .merge(routes::analytics::router())
        .merge(routes::health::router())
        .merge(routes::metrics::router())
        .merge(routes::voice::router(voice_upload_limit))
        .fallback(routes::not_found)
        .layer(axum::middleware::map_response(error::json_errors))
        .layer(DefaultBodyLimit::max(upload_limit))
        .layer(axum::middleware::from_fn(drain::drain_refused_uploads))
        .layer(axum::middleware::from_fn(limit_uri))
        .layer(TraceLayer::new_for_http().make_span_with(trace_id::make_span))
        .layer(axum::middleware::from_fn(trace_id::trace_id))
        .with_state(state)
}

/// Serves `router(state)` on `listener` until `shutdown` resolves; in-flight
/// requests are finished first.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, state, None, shutdown).await
}

/// Like [`serve`], with more routes beside the API's (the auth service's
/// `/auth/*` and `/.well-known/*` in `tolk up`).
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    state: AppState,
    extra: Option<Router>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let appender = state.usage_appender.clone();
    let app = match extra {
        Some(extra) => router(state).merge(extra),
        None => router(state),
    };
    // The peer address reaches handlers (the auth routes' throttles).
    let app = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await;
    // The last requests' ledger entries, before the process ends.
    match tokio::time::timeout(SHUTDOWN_FLUSH, appender.flush()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::error!(error = %e, "flushing the usage appender failed"),
        Err(_) => tracing::error!(
            seconds = SHUTDOWN_FLUSH.as_secs(),
            "usage entries still unwritten at shutdown (is PostgreSQL reachable?)"
        ),
    }
    served
}

/// How long a stopping server waits for its last ledger entries to be written.
const SHUTDOWN_FLUSH: std::time::Duration = std::time::Duration::from_secs(10);
