//! Voice-service authentication: `X-Api-Key` + `X-Client-Key` (or `X-Client-ID`),
//! or `Authorization: Bearer` with an access token of the `voice` scope.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use tolk_storage::keys::{self, ApiKey};

use crate::{ApiError, AppState};

/// The message of every voice authentication failure.
pub const FAILED: &str = "Authentication failed: send a valid key in X-Api-Key and its client key (the part before the dot) in X-Client-Key.";

/// An active key, authenticated by the voice headers.
#[derive(Debug, Clone)]
pub struct VoiceAuth(pub ApiKey);

impl FromRequestParts<AppState> for VoiceAuth {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let header = |name: &str| {
            parts
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::trim)
                .filter(|v| !v.is_empty())
        };
        // An access token of the auth service with the `voice` scope stands
        // for the key (docs/auth.md), as on the other routes.
        let bearer =
            header("authorization").is_some_and(|a| crate::auth::bearer_token(a).is_some());
        if header("x-api-key").is_none() && bearer {
            let crate::auth::AuthKey(key) =
                crate::auth::AuthKey::from_request_parts(parts, state).await?;
            return Ok(Self(key));
        }
        let api_key = header("x-api-key").ok_or_else(|| ApiError::Forbidden(FAILED.to_owned()))?;
        let client_key = header("x-client-key")
            .or_else(|| header("x-client-id"))
            .ok_or_else(|| ApiError::Forbidden(FAILED.to_owned()))?;
        match authenticate(state, client_key, api_key).await? {
            Some(key) => {
                tracing::Span::current().record("key_id", key.key_id.as_str());
                Ok(Self(key))
            }
            None => Err(ApiError::Forbidden(FAILED.to_owned())),
        }
    }
}

/// Checks a (client key, API key) pair: the API key must be an active key and
/// the client key its key id.
pub async fn authenticate(
    state: &AppState,
    client_key: &str,
    api_key: &str,
) -> Result<Option<ApiKey>, ApiError> {
    let Some(key) = keys::authenticate(&state.db, api_key).await? else {
        return Ok(None);
    };
    if key.key_id != client_key.trim() {
        return Ok(None);
    }
    Ok(Some(key))
}
