//! `GET /auth/healthz`: liveness.

use axum::Json;
use serde_json::{Value, json};

/// Always 200 while the process serves.
pub async fn healthz() -> Json<Value> {
    Json(json!({ "healthy": true }))
}
