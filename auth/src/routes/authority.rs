//! `GET /auth/authority`: the authority serving this host, with whether the
//! request carries a live session (not ended by a logout) and a valid token
//! (Bearer or API key). With a
//! `health` query parameter it is a probe that touches nothing.

use axum::Json;
use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::{Params, bearer};
use crate::{AuthState, api_keys, context};

/// The handler.
pub async fn authority(
    State(state): State<AuthState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let q = query.as_deref().unwrap_or("");
    let params = Params::parse(q).unwrap_or_default();
    if params.0.iter().any(|(k, _)| k == "health") {
        return Json(json!({ "healthy": true })).into_response();
    }
    let a = match context::authority(&state, &headers).await {
        Ok(a) => a,
        Err(res) => return res,
    };
    let session = match crate::sessions::signed_in(&state, &headers, a.id).await {
        Ok(s) => s.is_some(),
        Err(res) => return res,
    };
    let mut token_valid = false;
    if let Some(t) = bearer(&headers)
        && let Ok(c) = state.verifier().verify(t)
        && c.aud.of_authority(&a.domain)
    {
        let jti = uuid::Uuid::parse_str(&c.jti).ok();
        token_valid =
            tolk_storage::auth::tokens::access_token_live(state.db(), jti, Some(&c.sub), c.iat)
                .await
                .unwrap_or(false);
    }
    if !token_valid && let Some(key) = api_keys::presented(&headers, Some(q)) {
        match state.api_keys().authenticate(state.db(), &key).await {
            Ok(found) => token_valid = found.is_some(),
            Err(e) => return e.into_response(),
        }
    }
    Json(json!({
        "id": a.id,
        "name": a.name,
        "description": a.description,
        "domain": a.domain,
        "login_url": a.login_url,
        "logout_url": a.logout_url,
        "config": a.config,
        "updated_at": a.updated_at.timestamp(),
        "version": env!("CARGO_PKG_VERSION"),
        "production": state.config().production,
        "session": session,
        "token_valid": token_valid,
    }))
    .into_response()
}
