//! `POST /auth/revoke` (RFC 7009): revokes an access token (a JWT of ours) or a
//! refresh token (with its whole family). Always 200 for an authenticated
//! client, whether or not the token was known.

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tolk_storage::auth::tokens;

use super::body_params;
use super::token::authenticate_client;
use crate::{AuthState, OAuthError, context};

/// The handler.
pub async fn revoke(
    State(state): State<AuthState>,
    headers: HeaderMap,
    extensions: axum::http::Extensions,
    body: Bytes,
) -> Response {
    let address = super::peer_address(&extensions);
    match handle(&state, &headers, address, &body).await {
        Ok(()) => Json(json!({})).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn handle(
    state: &AuthState,
    headers: &HeaderMap,
    address: Option<std::net::IpAddr>,
    body: &[u8],
) -> Result<(), OAuthError> {
    let params = body_params(headers, body)
        .ok_or_else(|| OAuthError::invalid_request("The body must be a form."))?;
    let authority = context::authority(state, headers)
        .await
        .map_err(|_| OAuthError::invalid_request("No authority serves this host."))?;
    let app = authenticate_client(state, headers, address, &params, &authority).await?;
    let token = params
        .get("token")
        .ok_or_else(|| OAuthError::invalid_request("token is missing."))?;
    if token.matches('.').count() == 2 {
        if let Ok(claims) = state.verifier().verify_ignoring_expiry(token)
            && let Ok(jti) = uuid::Uuid::parse_str(&claims.jti)
            && let Some(row) = tokens::by_jti(state.db(), jti).await?
            && row.application_id == app.id
        {
            tokens::revoke_jti(state.db(), jti).await?;
            tracing::info!(client_id = %app.uid, %jti, "access token revoked");
        }
        return Ok(());
    }
    let digest = tolk_storage::auth::digest(token);
    if let Some(row) = tokens::by_refresh(state.db(), &digest).await?
        && row.application_id == app.id
    {
        let n = tokens::revoke_family(state.db(), row.family_id).await?;
        tracing::info!(client_id = %app.uid, revoked = n, "refresh token revoked with its family");
    }
    Ok(())
}
