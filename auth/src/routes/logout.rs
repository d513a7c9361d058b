//! `GET /auth/logout`: ends the session, revokes a presented Bearer token,
//! stamps the user's `logged_out_at` (every earlier token is refused from then
//! on), then 303 to `continue` or the authority's logout URL.

use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use tolk_storage::auth::{tokens, users};

use super::signin::see_other;
use super::{Params, bearer};
use crate::sessions::cookie::clear_cookies;
use crate::{AuthState, context, redirect};

/// The handler.
pub async fn logout(
    State(state): State<AuthState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let params = Params::parse(query.as_deref().unwrap_or("")).unwrap_or_default();
    let mut user_ids: Vec<String> = Vec::new();
    if let Some(s) = state.sessions().read(&headers) {
        user_ids.push(s.uid);
    }
    if let Some(t) = bearer(&headers)
        && let Ok(claims) = state.verifier().verify_ignoring_expiry(t)
    {
        if let Ok(jti) = uuid::Uuid::parse_str(&claims.jti)
            && let Err(e) = tokens::revoke_jti(state.db(), jti).await
        {
            tracing::warn!(error = %e, "revoking the bearer token at logout");
        }
        if !user_ids.contains(&claims.sub) {
            user_ids.push(claims.sub);
        }
    }
    for id in &user_ids {
        if let Err(e) = users::stamp_logged_out(state.db(), id).await {
            return crate::AuthError::from(e).into_response();
        }
        tracing::info!(user_id = %id, "signed out");
    }
    let host = context::host(&headers);
    let target = params
        .get("continue")
        .and_then(|c| redirect::sanitize_continue(c, &host));
    let target = match target {
        Some(t) => t,
        None => match context::authority(&state, &headers).await {
            Ok(a) if !a.logout_url.is_empty() => a.logout_url,
            _ => "/auth/login".to_owned(),
        },
    };
    let mut res = see_other(&target);
    for c in clear_cookies(state.config().production) {
        if let Ok(v) = HeaderValue::from_str(&c) {
            res.headers_mut().append(header::SET_COOKIE, v);
        }
    }
    res
}
