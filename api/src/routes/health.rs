//! Probes: `GET /healthz` (liveness: the process serves HTTP; it touches
//! nothing else, so a database outage never gets live processes restarted) and
//! `GET /readyz` (readiness: PostgreSQL answers within [`READY_WITHIN`]; the
//! answer also names the queues whose due jobs no live worker runs).

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

/// Longest the readiness answer spends finding unserved queues; past it the
/// answer leaves them out (readiness is the database's, not the workers').
pub const DETAIL_WITHIN: Duration = Duration::from_millis(250);

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
}

async fn healthz() -> Response {
    Json(json!({"status": "ok"})).into_response()
}

/// The queues with a due job and no worker loop that heartbeated within 3
/// heartbeat periods (their jobs wait until a worker of that kind starts).
async fn unserved(state: &AppState) -> Result<Vec<String>, tolk_storage::StorageError> {
    let waiting = tolk_storage::queue_stats::oldest_waiting(&state.db).await?;
    let loops =
        tolk_storage::queue::loop_liveness(&state.db, state.worker_heartbeat.saturating_mul(3))
            .await?;
    Ok(waiting
        .into_iter()
        .filter(|(q, _)| !loops.iter().any(|l| &l.queue == q && l.live > 0))
        .map(|(q, _)| q)
        .collect())
}

async fn readyz(State(state): State<AppState>) -> Response {
    let probe = sqlx::query_scalar!("SELECT 1 AS \"one!\"").fetch_one(&state.db);
    let why = match tokio::time::timeout(READY_WITHIN, probe).await {
        Ok(Ok(_)) => {
            let mut body = json!({"status": "ok"});
            if let Ok(Ok(unserved)) = tokio::time::timeout(DETAIL_WITHIN, unserved(&state)).await {
                body["unserved_queues"] = json!(unserved);
            }
            return Json(body).into_response();
        }
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
