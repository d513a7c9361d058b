//! Authentication: `Authorization: DeepL-Auth-Key {key_id}.{secret}`.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use tolk_storage::keys::{self, ApiKey};

use crate::{ApiError, AppState};

const SCHEME: &str = "DeepL-Auth-Key ";

/// The message of every authentication failure (the DeepL wording).
pub const FAILED: &str =
    "Authorization failed. Please supply a valid `DeepL-Auth-Key` via the `Authorization` header.";

/// An authenticated, active key.
#[derive(Debug, Clone)]
pub struct AuthKey(pub ApiKey);

impl FromRequestParts<AppState> for AuthKey {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let presented = parts
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix(SCHEME))
            .ok_or_else(|| ApiError::Forbidden(FAILED.to_owned()))?;
        match keys::authenticate(&state.db, presented).await? {
            Some(key) => {
                tracing::Span::current().record("key_id", key.key_id.as_str());
                Ok(Self(key))
            }
            None => Err(ApiError::Forbidden(FAILED.to_owned())),
        }
    }
}
