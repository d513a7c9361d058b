//! Voice translation jobs (`/v1/jobs/voice/translate`): placeholder until the queue part lands.

use axum::Router;

use crate::AppState;

/// Routes of this module.
pub fn router(_upload_limit: usize) -> Router<AppState> {
    Router::new()
}
