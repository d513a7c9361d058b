//! One module per area of the API.

pub mod admin_keys;
pub mod admin_ui;
pub mod analytics;
pub mod documents;
pub mod glossaries;
pub mod health;
pub mod languages;
pub mod metrics;
pub mod quality;
pub mod spoken_terms;
pub mod style_rules;
pub mod translate;
pub mod translation_memories;
pub mod usage;
pub mod voice;
pub mod write;

use axum::http::StatusCode;
use axum::response::Response;

/// Any unknown path: 404 with a JSON message.
pub async fn not_found() -> Response {
    crate::error::message(StatusCode::NOT_FOUND, "Not found.")
}
