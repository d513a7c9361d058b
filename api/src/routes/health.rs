//! Probes: `GET /healthz` (liveness: the process serves HTTP; it touches
//! nothing else, so a database outage never gets live processes restarted) and
//! `GET /readyz` (readiness: PostgreSQL answers within [`READY_WITHIN`]).

use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

use crate::AppState;

/// Longest a readiness probe waits for the database; past it the answer is 503
/// (a probe must not wait for the pool's acquire timeout).
pub const READY_WITHIN: Duration = Duration::from_millis(1500);

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
}

async fn healthz() -> Response {
    Json(json!({"status": "ok"})).into_response()
}

async fn readyz(State(state): State<AppState>) -> Response {
    let probe = sqlx::query_scalar!("SELECT 1 AS \"one!\"").fetch_one(&state.db);
    let why = match tokio::time::timeout(READY_WITHIN, probe).await {
        Ok(Ok(_)) => return Json(json!({"status": "ok"})).into_response(),
        Ok(Err(e)) => format!("database: {e}"),
        Err(_) => format!("database: no answer within {} ms", READY_WITHIN.as_millis()),
    };
    let mut res = (
        StatusCode::SERVICE_UNAVAILABLE,
        Json(json!({"status": "unavailable", "message": why})),
    )
        .into_response();
    res.headers_mut().insert(
        axum::http::header::RETRY_AFTER,
        axum::http::HeaderValue::from_static("5"),
    );
    res
}
