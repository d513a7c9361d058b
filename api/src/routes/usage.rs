//! `GET /v2/usage`: the calling key's character usage and limit.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;
use tolk_storage::usage;

use crate::auth::AuthKey;
use crate::{ApiError, AppState};

/// `character_limit` reported for a key without a limit: what DeepL reports for
/// accounts without cost control (clients compare `count >= limit`, so the
/// limit must be present and large rather than 0 or absent).
pub const UNLIMITED: i64 = 1_000_000_000_000;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new().route("/v2/usage", get(get_usage))
}

/// Body of `GET /v2/usage`.
#[derive(Debug, Serialize)]
struct UsageResponse {
    character_count: i64,
    character_limit: i64,
}

/// Characters billed to the calling key in the current usage period (the UTC
/// calendar month: text translation, document translation, text improvement) and
/// the key's character limit.
async fn get_usage(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
) -> Result<Json<UsageResponse>, ApiError> {
    let figures = key_characters(&state, &key.key_id).await?;
    Ok(Json(UsageResponse {
        character_count: figures.count,
        character_limit: figures.limit.unwrap_or(UNLIMITED),
    }))
}

/// The key's usage figures.
pub(crate) async fn key_characters(
    state: &AppState,
    key_id: &str,
) -> Result<usage::KeyCharacters, ApiError> {
    // This process's batched entries first (other processes' arrive within
    // their batch delay).
    state.usage_appender.flush().await?;
    let mut conn = state.db.acquire().await?;
    usage::key_characters(&mut conn, key_id)
        .await?
        .ok_or_else(|| ApiError::Internal(format!("authenticated key {key_id} vanished")))
}
