//! `POST /auth/signin`: email and password (JSON or form, optional `continue`).
//! 202 (or 303 to `continue`) with the session cookie; 401 on a wrong password
//! (or 303 back to the sign-in page when the form came from it).

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Extensions, HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tolk_storage::auth::authorities::Authority;
use tolk_storage::auth::users::{self, User};

use super::body_params;
use crate::error::message;
use crate::sessions::Session;
use crate::sessions::cookie::clear_cookies;
use crate::throttle::{Attempt, retry_after};
use crate::{AuthState, context, passwords, redirect};

/// Provider name of the password sign-in in login events.
pub const INTERNAL: &str = "internal";

/// Session age for this authority, in seconds.
pub fn session_seconds(state: &AuthState, authority: &Authority) -> i64 {
    let minutes = authority
        .session_timeout_minutes()
        .unwrap_or(state.config().session_timeout_minutes)
        .max(1);
    i64::try_from(minutes.saturating_mul(60)).unwrap_or(i64::MAX / 2)
}

/// Ends a successful login, whatever the method: a new session (a new id: no
/// fixation), the legacy Path=/ cookie expired, the login event published.
/// Returns the `Set-Cookie` values.
pub fn complete_login(
    state: &AuthState,
    authority: &Authority,
    user: &User,
    provider: &str,
) -> Vec<String> {
    let max_age = session_seconds(state, authority);
    let session = Session::new(&user.id, provider, max_age);
    let secure = state.config().production;
    let legacy = clear_cookies(secure)[1].clone();
    let ours = state.sessions().set_cookie(&session, max_age, secure);
    state.events().login(&user.id, provider);
    tracing::info!(user_id = %user.id, provider, "signed in");
    // The legacy cookie's removal first: a browser applies them in order.
    vec![legacy, ours]
}

/// `res` with `Set-Cookie` headers of `cookies`, in order.
pub fn with_cookies(mut res: Response, cookies: &[String]) -> Response {
    for c in cookies {
        if let Ok(v) = HeaderValue::from_str(c) {
            res.headers_mut().append(header::SET_COOKIE, v);
        }
    }
    res
}

/// 303 to `location`.
pub fn see_other(location: &str) -> Response {
    let mut res = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    res
}

/// The handler.
pub async fn signin(
    State(state): State<AuthState>,
    headers: HeaderMap,
    extensions: Extensions,
    body: Bytes,
) -> Response {
    if let Some(refusal) = login_csrf(&headers) {
        return refusal;
    }
    let Some(params) = body_params(&headers, &body) else {
        return message(
            StatusCode::BAD_REQUEST,
            "The body must be JSON or a form with email and password.",
        );
    };
    let authority = match context::authority(&state, &headers).await {
        Ok(a) => a,
        Err(res) => return res,
    };
    let host = context::host(&headers);
    let continue_raw = params.get("continue").map(str::to_owned);
    let continue_to = continue_raw
        .as_deref()
        .and_then(|c| redirect::sanitize_continue(c, &host));
    let (Some(email), Some(password)) = (params.get("email"), params.get("password")) else {
        return message(StatusCode::BAD_REQUEST, "email and password are required.");
    };
    let (tenant, account) = (authority.id.to_string(), email.trim().to_lowercase());
    let attempt = Attempt::SignIn {
        authority: &tenant,
        account: &account,
        address: super::peer_address(&extensions),
    };
    if let Some(wait) = state.throttle().wait(attempt).await {
        tracing::warn!(authority = %authority.domain, "sign-in throttled");
        let mut res = message(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many failed sign-ins; wait before trying again.",
        );
        if let Ok(v) = HeaderValue::from_str(&retry_after(wait)) {
            res.headers_mut().insert(header::RETRY_AFTER, v);
        }
        return res;
    }
    let user = match users::by_email(state.db(), authority.id, email.trim()).await {
        Ok(u) => u.filter(|u| u.deleted_at.is_none()),
        Err(e) => return crate::AuthError::from(e).into_response(),
    };
    let digest = user.as_ref().map(|u| u.password_digest.clone());
    let ok = passwords::verify(password.to_owned(), digest).await;
    match (ok, user) {
        (true, Some(user)) => {
            let cookies = complete_login(&state, &authority, &user, INTERNAL);
            let res = match continue_to {
                Some(c) => see_other(&c),
                None => StatusCode::ACCEPTED.into_response(),
            };
            with_cookies(res, &cookies)
        }
        _ => {
            tracing::info!(authority = %authority.domain, "sign-in refused");
            state.throttle().failed(attempt).await;
            match continue_raw {
                Some(_) => {
                    let mut q = url::form_urlencoded::Serializer::new(String::new());
                    q.append_pair("failed", "1");
                    if let Some(c) = &continue_to {
                        q.append_pair("continue", c);
                    }
                    see_other(&format!("/auth/login?{}", q.finish()))
                }
                None => message(
                    StatusCode::UNAUTHORIZED,
                    "The email or password is not correct.",
                ),
            }
        }
    }
}

/// Login CSRF: a sign-in posted by another site's page (its `Origin` names
/// another host, or `Sec-Fetch-Site` says `cross-site`) is refused with 403, and a body that is neither a
/// form nor JSON (`text/plain`, which a page may post anywhere without a
/// preflight) with 415.
fn login_csrf(headers: &HeaderMap) -> Option<Response> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let content_type = header("content-type")
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if content_type != "application/x-www-form-urlencoded" && !content_type.ends_with("json") {
        return Some(message(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Sign in with a form (application/x-www-form-urlencoded) or JSON body.",
        ));
    }
    let host = header("host").unwrap_or("").to_ascii_lowercase();
    // The sign-in page sends no referrer, so a browser posts its form with
    // `Origin: null`; `Sec-Fetch-Site` tells those apart (every current
    // browser sends it).
    let cross_origin = header("origin")
        .filter(|o| *o != "null")
        .is_some_and(|origin| {
            let authority = origin
                .split_once("://")
                .map_or("", |(_, rest)| rest)
                .trim_end_matches('/')
                .to_ascii_lowercase();
            authority != host
        });
    let cross_site = header("sec-fetch-site") == Some("cross-site");
    (cross_origin || cross_site).then(|| {
        tracing::warn!("a cross-site sign-in was refused");
        message(
            StatusCode::FORBIDDEN,
            "Sign-in requests must come from this service's own pages.",
        )
    })
}
