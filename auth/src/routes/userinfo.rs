//! `GET|POST /auth/userinfo`: OpenID Connect userinfo; a Bearer access token of
//! this authority is required.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tolk_storage::auth::{tokens, users};

use super::bearer;
use crate::{AuthState, OAuthError, context};

/// The handler.
pub async fn userinfo(State(state): State<AuthState>, headers: HeaderMap) -> Response {
    match handle(&state, &headers).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn handle(state: &AuthState, headers: &HeaderMap) -> Result<Response, OAuthError> {
    let token =
        bearer(headers).ok_or_else(|| OAuthError::invalid_token("A Bearer token is required."))?;
    let claims = state
        .verifier()
        .verify(token)
        .map_err(|e| OAuthError::invalid_token(e.to_string()))?;
    let authority = context::authority(state, headers)
        .await
        .map_err(|_| OAuthError::invalid_token("No authority serves this host."))?;
    if !claims.aud.of_authority(&authority.domain) {
        return Err(OAuthError::invalid_token(
            "The token was issued for another authority.",
        ));
    }
    let jti = uuid::Uuid::parse_str(&claims.jti).ok();
    if !tokens::access_token_live(state.db(), jti, Some(&claims.sub), claims.iat).await? {
        return Err(OAuthError::invalid_token("The token has been revoked."));
    }
    let user = users::by_id(state.db(), &claims.sub)
        .await?
        .filter(|u| u.deleted_at.is_none())
        .ok_or_else(|| OAuthError::invalid_token("The token has no user."))?;
    Ok(Json(json!({
        "sub": user.id,
        "name": user.name,
        "email": user.email.to_lowercase(),
        "preferred_username": user.email.to_lowercase(),
        "permissions": user.permissions,
        "roles": user.groups,
        "scope": claims.scope,
    }))
    .into_response())
}
