//! `GET /healthz`: the process is up and PostgreSQL answers.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;

use crate::AppState;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new().route("/healthz", get(healthz))
}

async fn healthz(State(state): State<AppState>) -> Response {
    match sqlx::query_scalar!("SELECT 1 AS \"one!\"")
        .fetch_one(&state.db)
        .await
    {
        Ok(_) => Json(json!({"status": "ok"})).into_response(),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "unavailable", "message": format!("database: {e}")})),
        )
            .into_response(),
    }
}
