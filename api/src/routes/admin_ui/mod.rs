//! The operator dashboard, `/admin/ui`: server-rendered HTML pages (no
//! script, readable in any browser) for admin keys.
//!
//! - `/admin/ui`: the queues — jobs by state, age of the oldest waiting job,
//!   finished jobs and their mean run time, live worker loops and how many
//!   jobs they run at once;
//! - `/admin/ui/workers`: the worker loops — queue, host, process,
//!   concurrency, last heartbeat, jobs in flight;
//! - `/admin/ui/jobs?status=Failed&q=…`: jobs by state, or one job found by its
//!   id or its document's id, with the last error;
//! - `/admin/ui/usage?days=30`: the organization's usage per key and per day,
//!   with a bar per day;
//! - `/admin/ui/engines`: the translation engines, each checked on the spot,
//!   and their language pairs.
//!
//! A browser signs in with an account of the auth service whose user has the
//! system-administrator permission (`/admin/ui/sign-in`, [`session`]), or
//! with HTTP Basic authentication, the admin key as the password (any user
//! name); `Authorization: DeepL-Auth-Key …` works too. Neither → 401 with a
//! `Basic` challenge and a link to sign in; a developer key or a user
//! without the permission → 403.
//!
//! Two actions, each recorded in `operator_actions`: cancelling a job that
//! waits (`POST /admin/ui/jobs/{id}/cancel`) and running again one that
//! ended in failure (`…/retry`). A browser sends Basic credentials and
//! cookies by itself, so an action needs the page's token too (derived from
//! the credentials: another site cannot read it) and, when the browser names
//! an `Origin`, this host's.

mod chart;
mod engines;
mod jobs;
mod queues;
mod session;
mod usage;
mod workers;

use axum::Router;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use base64::Engine as _;
use chrono::{DateTime, Utc};
use maud::{DOCTYPE, Markup, html};
use tolk_storage::keys;

use crate::AppState;

pub use session::DashboardSignIn;

/// Routes of the dashboard.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/ui", get(queues::show))
        .route("/admin/ui/workers", get(workers::show))
        .route("/admin/ui/jobs", get(jobs::show))
        .route("/admin/ui/usage", get(usage::show))
        .route("/admin/ui/engines", get(engines::show))
        .route(
            "/admin/ui/jobs/{id}/{action}",
            axum::routing::post(jobs::act),
        )
        .route("/admin/ui/sign-in", get(session::start))
        .route("/admin/ui/callback", get(session::callback))
        .route("/admin/ui/sign-out", axum::routing::post(session::sign_out))
}

/// An admin signed in to the dashboard.
pub(super) struct Operator {
    /// The admin key's id.
    pub key_id: String,
    /// Its organization (whose usage the dashboard shows).
    pub organization_id: uuid::Uuid,
    /// The token its actions carry: another site can make a browser send
    /// its credentials, not read this.
    pub token: String,
    /// Seconds its session has left, when it signed in with an account
    /// (`None` for a key).
    pub expires_in: Option<i64>,
}

/// Why a dashboard request is refused, or failed.
pub(super) enum Refused {
    /// No key, or not a valid one: 401 with a Basic challenge.
    SignIn,
    /// A developer key: 403.
    NotAdmin,
    /// An action without the page's token, or from another site: 403.
    Forged,
    /// No such page or action: 404.
    NotFound,
    /// Signing in with an account is not configured: 404.
    NoAccounts,
    /// A sign-in with an account did not finish: 400, and why.
    SignInFailed(String),
    /// The database failed: 503.
    Unavailable(tolk_storage::StorageError),
}

impl From<tolk_storage::StorageError> for Refused {
    fn from(e: tolk_storage::StorageError) -> Self {
        Self::Unavailable(e)
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let (status, title, text) = match &self {
            Refused::SignIn => (
                StatusCode::UNAUTHORIZED,
                "Sign in",
                "Sign in with an admin API key as the password.".to_owned(),
            ),
            Refused::NotAdmin => (
                StatusCode::FORBIDDEN,
                "Admins only",
                "The dashboard needs an admin API key, or an account with the \
                 system-administrator permission."
                    .to_owned(),
            ),
            Refused::NoAccounts => (
                StatusCode::NOT_FOUND,
                "No accounts",
                "Signing in with an account is not configured here \
                 (TOLK_DASHBOARD_CLIENT_ID); sign in with an admin API key."
                    .to_owned(),
            ),
            Refused::SignInFailed(why) => (StatusCode::BAD_REQUEST, "Sign-in failed", why.clone()),
            Refused::Forged => (
                StatusCode::FORBIDDEN,
                "Refused",
                "Actions are taken from the dashboard's own pages.".to_owned(),
            ),
            Refused::NotFound => (
                StatusCode::NOT_FOUND,
                "Not found",
                "No such page or action.".to_owned(),
            ),
            Refused::Unavailable(e) => {
                tracing::warn!(error = %e, "dashboard page failed");
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "Unavailable",
                    "The database did not answer; try again.".to_owned(),
                )
            }
        };
        let body = html! {
            (DOCTYPE)
            html lang="en" {
                head { meta charset="utf-8"; title { "Tolk: " (title) } }
                body {
                    h1 { (title) }
                    p { (text) }
                    @if matches!(self, Refused::SignIn | Refused::SignInFailed(_)) {
                        p { a href="/admin/ui/sign-in" { "Sign in with your account" } }
                    }
                }
            }
        };
        let mut res = (status, Html(body.into_string())).into_response();
        if matches!(self, Refused::SignIn) {
            res.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"Tolk operations\", charset=\"UTF-8\""),
            );
        }
        res
    }
}

impl FromRequestParts<AppState> for Operator {
    type Rejection = Refused;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let header = crate::auth::authorization(parts);
        let presented = match (
            header.strip_prefix("Basic "),
            header.strip_prefix(crate::auth::SCHEME),
        ) {
            (Some(basic), _) => basic_password(basic).ok_or(Refused::SignIn)?,
            (None, Some(key)) => key.trim().to_owned(),
            _ => match session::session_token(&parts.headers) {
                Some(token) => return Operator::of_session(state, &parts.headers, &token).await,
                None => return Err(Refused::SignIn),
            },
        };
        match keys::authenticate(&state.db, &presented).await? {
            Some(key) if key.is_admin => Ok(Operator {
                key_id: key.key_id,
                organization_id: key.organization_id,
                token: token(&presented),
                expires_in: None,
            }),
            Some(_) => Err(Refused::NotAdmin),
            None => Err(Refused::SignIn),
        }
    }
}

impl Operator {
    /// The operator signed in with the auth service's access token
    /// `access`: valid, live, of this host's authority, and of a user with
    /// the system-administrator permission (a user without it → 403). Its
    /// usage is that of the authority's organization.
    async fn of_session(
        state: &AppState,
        headers: &axum::http::HeaderMap,
        access: &str,
    ) -> Result<Operator, Refused> {
        let Some(verifier) = &state.bearer else {
            return Err(Refused::SignIn);
        };
        let host = tolk_auth::context::host(headers);
        let mut not_admin = false;
        let found = crate::auth::bearer_identity(state, verifier, access, &host, |claims| {
            not_admin = claims.u.p & tolk_storage::auth::users::SYS_ADMIN == 0;
            !not_admin
        })
        .await?;
        match found {
            Some((claims, key)) => Ok(Operator {
                key_id: key.key_id,
                organization_id: key.organization_id,
                token: token(access),
                expires_in: Some(claims.exp - Utc::now().timestamp()),
            }),
            None if not_admin => Err(Refused::NotAdmin),
            None => Err(Refused::SignIn),
        }
    }
}

/// The action token of credentials `presented`.
fn token(presented: &str) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(format!(
        "tolk-dashboard-action:{presented}"
    )))
}

/// The password of HTTP Basic credentials (`user:password` in base64).
fn basic_password(credentials: &str) -> Option<String> {
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(credentials.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    text.split_once(':')
        .map(|(_, password)| password.to_owned())
}

/// apalis' states of a queue row, in the order a job goes through them.
pub(super) const STATES: [&str; 6] = ["Pending", "Queued", "Running", "Done", "Failed", "Killed"];

/// The dashboard's pages: which one a page is, for the navigation.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Tab {
    Queues,
    Workers,
    Jobs,
    Usage,
    Engines,
}

/// A dashboard page: the navigation, `title` and `content`, with the styles
/// inline (nothing to fetch).
pub(super) fn page(operator: &Operator, tab: Tab, title: &str, content: Markup) -> Html<String> {
    let link = |target: Tab, href: &str, label: &str| {
        html! {
            @if target == tab {
                a href=(href) aria-current="page" { (label) }
            } @else {
                a href=(href) { (label) }
            }
        }
    };
    let body = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "Tolk operations: " (title) }
                style { (maud::PreEscaped(STYLE)) }
            }
            body {
                header {
                    nav aria-label="Dashboard" {
                        strong { "Tolk operations" }
                        (link(Tab::Queues, "/admin/ui", "Queues"))
                        (link(Tab::Workers, "/admin/ui/workers", "Workers"))
                        (link(Tab::Jobs, "/admin/ui/jobs", "Jobs"))
                        (link(Tab::Usage, "/admin/ui/usage", "Usage"))
                        (link(Tab::Engines, "/admin/ui/engines", "Engines"))
                        @if operator.expires_in.is_some() {
                            form.sign-out method="post" action="/admin/ui/sign-out" {
                                input type="hidden" name="token" value=(operator.token);
                                button type="submit" { "Sign out" }
                            }
                        }
                    }
                }
                main {
                    h1 { (title) }
                    (content)
                }
            }
        }
    };
    Html(body.into_string())
}

/// Styles: system fonts, dark text on white (contrast above 7:1), tables
/// with borders, the current page underlined.
const STYLE: &str = "body{font-family:system-ui,sans-serif;color:#111;background:#fff;margin:0}\
header{background:#1d3557;padding:.6rem 1rem}nav a,nav strong{color:#fff;margin-right:1.2rem}\
nav a[aria-current]{text-decoration:underline;font-weight:bold}main{padding:1rem}\
table{border-collapse:collapse;margin:.5rem 0 1.5rem}caption{text-align:left;font-weight:bold;padding:.3rem 0}\
th,td{border:1px solid #888;padding:.25rem .6rem;text-align:left;vertical-align:top}\
td.n{text-align:right;font-variant-numeric:tabular-nums}.bad{color:#9b0000;font-weight:bold}\
form{margin:.5rem 0 1rem}label{margin-right:.4rem}input,select,button{font:inherit;margin-right:.8rem}\
pre{white-space:pre-wrap;max-width:60rem;margin:0}form.sign-out{display:inline;margin:0}";

/// A time as `2026-11-27 19:05:03 UTC`.
pub(super) fn time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

/// Seconds since `t`, as `12 s`, `4 min`, `3 h`.
pub(super) fn ago(t: DateTime<Utc>) -> String {
    let s = (Utc::now() - t).num_seconds().max(0);
    match s {
        0..120 => format!("{s} s ago"),
        120..7200 => format!("{} min ago", s / 60),
        _ => format!("{} h ago", s / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_give_their_password() {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        assert_eq!(
            basic_password(&b64("ops:abc.def")).as_deref(),
            Some("abc.def")
        );
        assert_eq!(basic_password(&b64(":abc.def")).as_deref(), Some("abc.def"));
        assert_eq!(basic_password(&b64("no colon")), None);
        assert_eq!(basic_password("%%%"), None);
    }

    #[test]
    fn pages_mark_the_current_tab_and_escape_text() {
        let operator = Operator {
            key_id: "k".into(),
            organization_id: uuid::Uuid::nil(),
            token: "t".into(),
            expires_in: None,
        };
        let Html(text) = page(&operator, Tab::Workers, "W <&>", html! { p { "x" } });
        assert!(!text.contains("Sign out"));
        assert!(text.contains(r#"<a href="/admin/ui/workers" aria-current="page">Workers</a>"#));
        assert!(text.contains(r#"<a href="/admin/ui">Queues</a>"#));
        assert!(text.contains("<h1>W &lt;&amp;&gt;</h1>"));
        let signed_in = Operator {
            expires_in: Some(60),
            ..operator
        };
        let Html(text) = page(&signed_in, Tab::Queues, "Q", html! {});
        assert!(text.contains(r#"<input type="hidden" name="token" value="t">"#));
        assert!(text.contains("Sign out"));
    }
}
