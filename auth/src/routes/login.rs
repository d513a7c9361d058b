//! `GET /auth/login`: the sign-in page (or, with `provider`, the dispatcher to a
//! federated strategy's kickoff; signed-in users go straight to `continue`).

use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::Params;
use super::signin::see_other;
use crate::{AuthState, context, pages, redirect};

/// The handler.
pub async fn login(
    State(state): State<AuthState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let params = Params::parse(query.as_deref().unwrap_or("")).unwrap_or_default();
    let host = context::host(&headers);
    let continue_to = match params.get("continue") {
        Some(c) => match redirect::sanitize_continue(c, &host) {
            Some(c) => Some(c),
            None => {
                return pages::error(
                    StatusCode::BAD_REQUEST,
                    "Cannot continue",
                    "The page to return to after signing in is not on this site.",
                );
            }
        },
        None => None,
    };
    if let (Some(provider), Some(id)) = (params.get("provider"), params.get("id"))
        && provider
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        let mut q = url::form_urlencoded::Serializer::new(String::new());
        q.append_pair("id", id);
        if let Some(c) = &continue_to {
            q.append_pair("continue", c);
        }
        return see_other(&format!("/auth/{provider}?{}", q.finish()));
    }
    // Signed-in users go on, unless the request asks them to sign in again.
    if let (Some(c), Some(_)) = (&continue_to, state.sessions().read(&headers))
        && params.get("failed").is_none()
        && params.get("prompt") != Some("login")
    {
        return see_other(c);
    }
    pages::login(continue_to.as_deref(), params.get("failed").is_some(), "")
}
