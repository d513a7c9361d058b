//! Authentication: `Authorization: DeepL-Auth-Key {key_id}.{secret}`.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use tolk_storage::keys::{self, ApiKey};

use crate::rate_limit::Decision;
use crate::{ApiError, AppState};

const SCHEME: &str = "DeepL-Auth-Key ";

/// The message of every authentication failure (the DeepL wording).
pub const FAILED: &str =
    "Authorization failed. Please supply a valid `DeepL-Auth-Key` via the `Authorization` header.";

/// The 403 message of a developer key on an admin operation.
pub const ADMIN_REQUIRED: &str = "This operation requires an admin API key.";

/// An authenticated, active key, within its rate limit (else 429).
#[derive(Debug, Clone)]
pub struct AuthKey(pub ApiKey);

/// An authenticated, active admin key (a developer key → 403).
#[derive(Debug, Clone)]
pub struct AdminKey(pub ApiKey);

impl FromRequestParts<AppState> for AdminKey {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let AuthKey(key) = AuthKey::from_request_parts(parts, state).await?;
        if !key.is_admin {
            return Err(ApiError::Forbidden(ADMIN_REQUIRED.to_owned()));
        }
        Ok(Self(key))
    }
}

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
                if let Decision::Deny(wait) = state.rate_limiter.check(&key.key_id).await {
                    return Err(ApiError::TooManyRequests {
                        retry_after_secs: wait.as_secs() + u64::from(wait.subsec_nanos() > 0),
                    });
                }
                Ok(Self(key))
            }
            None => Err(ApiError::Forbidden(FAILED.to_owned())),
        }
    }
}
