//! Signing in to the dashboard with an account of the auth service: the
//! dashboard is an OAuth client of it (authorization code with PKCE, a
//! public client registered by the operator and named by
//! `TOLK_DASHBOARD_CLIENT_ID`), as Grafana or River UI sign in through an
//! identity provider.
//!
//! `/admin/ui/sign-in` sends the browser to the auth service's
//! `/auth/authorize` (which signs the user in, or finds its session); its
//! answer comes back to `/admin/ui/callback`, whose code is redeemed at
//! `/auth/token`. The access token, verified as the API verifies Bearer
//! tokens, must belong to a user with the system-administrator permission;
//! it is then kept in an HTTP-only cookie for `/admin/ui` until it expires
//! (or `/admin/ui/sign-out`). The flow's state and PKCE verifier wait in a
//! cookie of their own for ten minutes.

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use maud::html;
use tolk_auth::context::cookie;
use tolk_auth::pkce::challenge_s256;
use tolk_auth::routes::signin::with_cookies;

use super::{Operator, Refused};
use crate::AppState;

/// The cookie holding a signed-in operator's access token.
pub(super) const SESSION_COOKIE: &str = "tolk_dashboard";
/// The cookie holding a sign-in's state and PKCE verifier.
const FLOW_COOKIE: &str = "tolk_dashboard_flow";
/// How long a sign-in may take at the auth service.
const FLOW_SECONDS: u32 = 600;
/// Longest wait for the auth service's token endpoint.
const TOKEN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Where the dashboard's operators sign in: the client the operator
/// registered for the dashboard, and the auth service's address.
#[derive(Debug, Clone)]
pub struct DashboardSignIn {
    /// The `client_id` of a public application whose redirect URI is this
    /// API's `/admin/ui/callback` (`TOLK_DASHBOARD_CLIENT_ID`).
    pub client_id: String,
    /// The auth service's base URL as browsers and this API reach it
    /// (`TOLK_DASHBOARD_AUTH_URL`; default: the API's own public URL, as
    /// under `tolk up`).
    pub auth_url: Option<String>,
}

/// The access token of the session cookie among `headers`' cookies.
pub(super) fn session_token(headers: &HeaderMap) -> Option<String> {
    cookie(headers, SESSION_COOKIE).filter(|v| !v.is_empty())
}

/// A `Set-Cookie` value for `/admin/ui`, HTTP-only and same-site.
fn set_cookie(name: &str, value: &str, max_age: i64, secure: bool) -> String {
    format!(
        "{name}={value}; Path=/admin/ui; HttpOnly; SameSite=Lax; Max-Age={}{}",
        max_age.max(0),
        if secure { "; Secure" } else { "" }
    )
}

/// The sign-in settings, or the page saying there are none.
fn settings(state: &AppState) -> Result<&DashboardSignIn, Refused> {
    match (&state.dashboard_sign_in, &state.bearer) {
        (Some(s), Some(_)) => Ok(s),
        _ => Err(Refused::NoAccounts),
    }
}

/// The auth service's base URL for this request.
fn auth_base(state: &AppState, sign_in: &DashboardSignIn, headers: &HeaderMap) -> String {
    match &sign_in.auth_url {
        Some(url) => url.trim_end_matches('/').to_owned(),
        None => crate::requests::public_base_url(state, headers),
    }
}

/// This API's callback URL for this request.
fn callback_url(state: &AppState, headers: &HeaderMap) -> String {
    format!(
        "{}/admin/ui/callback",
        crate::requests::public_base_url(state, headers)
    )
}

/// `GET /admin/ui/sign-in`: to the auth service's authorization endpoint.
pub(super) async fn start(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, Refused> {
    let sign_in = settings(&state)?;
    let flow_state = uuid::Uuid::new_v4().simple().to_string();
    let verifier = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let query = serde_urlencoded::to_string([
        ("response_type", "code"),
        ("client_id", sign_in.client_id.as_str()),
        ("redirect_uri", callback_url(&state, &headers).as_str()),
        ("scope", "openid"),
        ("state", flow_state.as_str()),
        ("code_challenge", challenge_s256(&verifier).as_str()),
        ("code_challenge_method", "S256"),
    ])
    .unwrap_or_default();
    let to = format!(
        "{}/auth/authorize?{query}",
        auth_base(&state, sign_in, &headers)
    );
    let secure = secure(&state, &headers);
    let flow = set_cookie(
        FLOW_COOKIE,
        &format!("{flow_state}.{verifier}"),
        FLOW_SECONDS.into(),
        secure,
    );
    Ok(with_cookies(Redirect::to(&to).into_response(), &[flow]))
}

/// What the auth service sends back to the callback.
#[derive(serde::Deserialize)]
pub(super) struct Answer {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

/// `GET /admin/ui/callback`: the code redeemed, the operator checked, the
/// session cookie set.
pub(super) async fn callback(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(answer): Query<Answer>,
) -> Result<Response, Refused> {
    let sign_in = settings(&state)?;
    let flow = cookie(&headers, FLOW_COOKIE).unwrap_or_default();
    let (expected, verifier) = flow.split_once('.').unwrap_or_default();
    if let Some(error) = answer.error {
        return Err(Refused::SignInFailed(format!(
            "The auth service answered {error}."
        )));
    }
    let (Some(code), Some(got)) = (answer.code, answer.state) else {
        return Err(Refused::SignInFailed("No code came back.".to_owned()));
    };
    if expected.is_empty() || got != expected {
        return Err(Refused::SignInFailed(
            "This sign-in was not started by this browser, or took too long; start again."
                .to_owned(),
        ));
    }
    let token = redeem(&state, sign_in, &headers, &code, verifier).await?;
    let operator = Operator::of_session(&state, &headers, &token).await?;
    let secure = secure(&state, &headers);
    let max_age = operator.expires_in.unwrap_or(0);
    tracing::info!(operator = %operator.key_id, "dashboard sign-in");
    let cookies = [
        set_cookie(SESSION_COOKIE, &token, max_age, secure),
        set_cookie(FLOW_COOKIE, "", 0, secure),
    ];
    Ok(with_cookies(
        Redirect::to("/admin/ui").into_response(),
        &cookies,
    ))
}

/// The access token the auth service gives for `code`.
async fn redeem(
    state: &AppState,
    sign_in: &DashboardSignIn,
    headers: &HeaderMap,
    code: &str,
    verifier: &str,
) -> Result<String, Refused> {
    let failed = |why: String| {
        tracing::warn!(error = %why, "dashboard sign-in: the code was not redeemed");
        Refused::SignInFailed("The auth service did not give a token for this sign-in.".to_owned())
    };
    let url = format!("{}/auth/token", auth_base(state, sign_in, headers));
    let redirect_uri = callback_url(state, headers);
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", redirect_uri.as_str()),
        ("client_id", sign_in.client_id.as_str()),
        ("code_verifier", verifier),
    ];
    let client = reqwest::Client::builder()
        .timeout(TOKEN_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| failed(e.to_string()))?;
    let res = client
        .post(&url)
        .form(&form)
        .send()
        .await
        .map_err(|e| failed(format!("{url}: {e}")))?;
    let status = res.status();
    let body: serde_json::Value = res
        .json()
        .await
        .map_err(|e| failed(format!("{url}: {status}: {e}")))?;
    body["access_token"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| failed(format!("{url}: {status}: {body}")))
}

/// `POST /admin/ui/sign-out`: the session cookie cleared (the page's token
/// required, as for every action).
pub(super) async fn sign_out(
    State(state): State<AppState>,
    operator: Operator,
    headers: HeaderMap,
    axum::Form(form): axum::Form<std::collections::HashMap<String, String>>,
) -> Result<Response, Refused> {
    if form.get("token") != Some(&operator.token) || !super::jobs::same_origin(&headers) {
        return Err(Refused::Forged);
    }
    let cleared = set_cookie(SESSION_COOKIE, "", 0, secure(&state, &headers));
    let page = html! {
        (maud::DOCTYPE)
        html lang="en" {
            head { meta charset="utf-8"; title { "Tolk: signed out" } }
            body { h1 { "Signed out" } p { a href="/admin/ui/sign-in" { "Sign in again" } } }
        }
    };
    Ok(with_cookies(
        (StatusCode::OK, axum::response::Html(page.into_string())).into_response(),
        &[cleared],
    ))
}

/// Whether cookies are marked `Secure` (the API's public URL is HTTPS).
fn secure(state: &AppState, headers: &HeaderMap) -> bool {
    crate::requests::public_base_url(state, headers).starts_with("https://")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_cookie_is_read_among_others() {
        use axum::http::{HeaderValue, header};
        let mut h = HeaderMap::new();
        h.append(
            header::COOKIE,
            HeaderValue::from_static("a=1; tolk_dashboard=tok.en"),
        );
        h.append(
            header::COOKIE,
            HeaderValue::from_static("tolk_dashboard_flow=s.v"),
        );
        assert_eq!(session_token(&h).as_deref(), Some("tok.en"));
        assert_eq!(cookie(&h, FLOW_COOKIE).as_deref(), Some("s.v"));
        h.insert(header::COOKIE, HeaderValue::from_static("tolk_dashboard="));
        assert_eq!(session_token(&h), None);
    }

    #[test]
    fn cookies_stay_on_the_dashboard_and_out_of_scripts() {
        let c = set_cookie(SESSION_COOKIE, "t", 60, true);
        assert_eq!(
            c,
            "tolk_dashboard=t; Path=/admin/ui; HttpOnly; SameSite=Lax; Max-Age=60; Secure"
        );
        assert!(set_cookie(FLOW_COOKIE, "", -5, false).ends_with("Max-Age=0"));
    }
}
