//! `GET|POST /auth/authorize`: the authorization code flow.
//!
//! Until the client and its redirect URI are validated, every error is an error
//! page (never a redirect). After that, errors go back to the client's redirect
//! URI with `error`, `state` and `iss` (RFC 9207). Without a session the browser
//! is sent to sign in and comes back. Applications without skip_authorization
//! get a consent page whose form carries a token bound to the session and the
//! exact request; only a POST with that token approves.

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rand::RngCore;
use tolk_storage::auth::applications::Application;
use tolk_storage::auth::codes::{self, Code};
use tolk_storage::auth::consents;
use tolk_storage::auth::digest;
use tolk_storage::auth::users::User;
use url::Url;

use super::{Params, foreign_resource, resources, split_scopes};
use crate::clients::{self, Client, metadata};
use crate::consent::ConsentSigner;
use crate::sessions::Session;
use crate::tokens::CODE_SECONDS;
use crate::{AuthState, context, pages, pkce, redirect};

/// The parameters the consent token binds, in this order.
const BOUND: [&str; 9] = [
    "client_id",
    "redirect_uri",
    "response_type",
    "scope",
    "state",
    "code_challenge",
    "code_challenge_method",
    "resource",
    "nonce",
];

fn error_page(text: &str) -> Response {
    pages::error(
        StatusCode::BAD_REQUEST,
        "Authorization request refused",
        text,
    )
}

fn found(location: &str) -> Response {
    let mut res = StatusCode::FOUND.into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// The validated request, from which the client's redirect URI may be used.
struct Request<'a> {
    params: &'a Params,
    /// The RFC 8707 resources asked for, space-separated (one consent field).
    resources: String,
    app: Application,
    redirect_uri: String,
    issuer: String,
}

impl Request<'_> {
    fn redirect(&self, pairs: &[(&str, &str)]) -> Response {
        let mut url = match Url::parse(&self.redirect_uri) {
            Ok(u) => u,
            Err(_) => return error_page("The redirect URI is not a URL."),
        };
        {
            let mut q = url.query_pairs_mut();
            for (k, v) in pairs {
                q.append_pair(k, v);
            }
            if let Some(s) = self.params.get("state") {
                q.append_pair("state", s);
            }
            q.append_pair("iss", &self.issuer);
        }
        found(url.as_str())
    }

    fn error(&self, error: &str, description: &str) -> Response {
        self.redirect(&[("error", error), ("error_description", description)])
    }

    fn bound(&self) -> Vec<(&'static str, &str)> {
        BOUND
            .iter()
            .map(|k| {
                let v = match *k {
                    "redirect_uri" => self.redirect_uri.as_str(),
                    "resource" => self.resources.as_str(),
                    _ => self.params.get(k).unwrap_or(""),
                };
                (*k, v)
            })
            .collect()
    }
}

/// The handler (GET and POST).
pub async fn authorize(
    State(state): State<AuthState>,
    method: Method,
    headers: HeaderMap,
    extensions: axum::http::Extensions,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Response {
    let params = super::request_params(&method, &headers, query.as_deref(), &body);
    let Some(params) = params else {
        return error_page("The request's parameters could not be read.");
    };
    if let Some(d) = params.duplicate() {
        return error_page(&format!("The parameter {d} was given more than once."));
    }
    let Some(client_id) = params.get("client_id") else {
        return error_page("client_id is missing.");
    };
    let authority = match context::authority(&state, &headers).await {
        Ok(a) => a,
        Err(res) => return res,
    };
    let address = super::peer_address(&extensions);
    let app = match clients::find(&state, &authority, client_id, address).await {
        Ok(Client::Found(a)) => a,
        Ok(Client::Unknown) => return error_page("This application is not known here."),
        Ok(Client::Refused(why)) => {
            return error_page(&format!(
                "The application's metadata document cannot be used: {why}."
            ));
        }
        Err(e) => return e.into_response(),
    };
    let redirect_uri = match params.get("redirect_uri") {
        Some(r) if redirect::matches(&app.redirect_uris, r) => r.to_owned(),
        Some(_) => {
            return error_page("The redirect URI is not registered for this application.");
        }
        None if app.redirect_uris.len() == 1 => app.redirect_uris[0].clone(),
        None => return error_page("redirect_uri is missing."),
    };
    let req = Request {
        params: &params,
        resources: resources(&params).join(" "),
        app,
        redirect_uri,
        issuer: context::base_url(&headers, state.config().production),
    };

    let scopes = match checked_scopes(&req, &authority.domain) {
        Ok(scopes) => scopes,
        Err(res) => return *res,
    };

    // Who is signed in.
    let signed_in = match crate::sessions::signed_in(&state, &headers, authority.id).await {
        Ok(u) => u,
        Err(res) => return res,
    };
    let prompts: Vec<&str> = params
        .get("prompt")
        .map(|p| p.split_whitespace().collect())
        .unwrap_or_default();
    let Some((session, user)) = signed_in else {
        if prompts.contains(&"none") {
            return req.error("login_required", "The user is not signed in.");
        }
        return to_login(&params, false);
    };
    if let Some(res) = renewal(&req, &prompts, &session) {
        return res;
    }
    if req.app.skip_authorization && !prompts.contains(&"consent") {
        return issue_code(&state, &req, &user, &session, scopes).await;
    }
    let signed = SignedIn {
        user: &user,
        session: &session,
    };
    consent(&state, &method, &req, signed, scopes, &prompts).await
}

/// Who is signed in, for the consent step.
struct SignedIn<'a> {
    user: &'a User,
    session: &'a Session,
}

/// The request's checks that are answered at the redirect URI: the response
/// type, the scopes the application may ask, PKCE and the resource; the
/// scopes granted (`public` when none are asked).
fn checked_scopes(req: &Request<'_>, authority_domain: &str) -> Result<Vec<String>, Box<Response>> {
    let params = req.params;
    if params.get("response_type") != Some("code") {
        return Err(Box::new(req.error(
            "unsupported_response_type",
            "Only response_type=code is supported.",
        )));
    }
    let requested = split_scopes(params.get("scope"));
    let scopes = if requested.is_empty() {
        vec!["public".to_owned()]
    } else {
        requested
    };
    if let Some(s) = scopes.iter().find(|s| !req.app.scopes.contains(s)) {
        return Err(Box::new(req.error(
            "invalid_scope",
            &format!("The scope {s} is not allowed for this application."),
        )));
    }
    let challenge = params.get("code_challenge");
    match (challenge, params.get("code_challenge_method")) {
        (_, Some(m)) if m != "S256" => {
            return Err(Box::new(req.error(
                "invalid_request",
                "Only code_challenge_method=S256 is supported.",
            )));
        }
        (Some(_), None) => {
            return Err(Box::new(req.error(
                "invalid_request",
                "code_challenge_method=S256 is required (plain is refused).",
            )));
        }
        (None, Some(_)) => {
            return Err(Box::new(
                req.error("invalid_request", "code_challenge is missing."),
            ));
        }
        (Some(c), Some(_)) if !pkce::valid_challenge(c) => {
            return Err(Box::new(req.error(
                "invalid_request",
                "code_challenge must be 43 base64url characters.",
            )));
        }
        _ => {}
    }
    if challenge.is_none() && !req.app.is_confidential() {
        return Err(Box::new(req.error(
            "invalid_request",
            "PKCE (code_challenge with S256) is required for this client.",
        )));
    }
    if let Some(why) = foreign_resource(&resources(params), authority_domain) {
        return Err(Box::new(req.error("invalid_target", why)));
    }
    Ok(scopes)
}

/// A sign-in older than the request allows (`prompt=login`, `max_age`) is
/// renewed: the sign-in page, or `login_required` with `prompt=none`. The
/// sign-in page then comes back with `login_after` (the moment it was asked
/// for), which a fresh sign-in satisfies.
fn renewal(req: &Request<'_>, prompts: &[&str], session: &Session) -> Option<Response> {
    let params = req.params;
    let now = chrono::Utc::now().timestamp();
    let fresh_after = match params
        .get("login_after")
        .and_then(|t| t.parse::<i64>().ok())
    {
        Some(after) => Some(after),
        None => {
            let by_age = params
                .get("max_age")
                .and_then(|a| a.parse::<i64>().ok())
                .map(|age| now - age.max(0));
            let by_prompt = prompts.contains(&"login").then_some(now);
            by_age.max(by_prompt)
        }
    };
    if let Some(after) = fresh_after
        && session.iat < after
    {
        if prompts.contains(&"none") {
            return Some(req.error(
                "login_required",
                "The sign-in is older than max_age allows.",
            ));
        }
        return Some(to_login(params, true));
    }
    None
}

/// The consent step: a posted answer to a consent form this user and
/// session were shown (allow: a code; deny: `access_denied`), else the form
/// (or `consent_required` with `prompt=none`).
async fn consent(
    state: &AuthState,
    method: &Method,
    req: &Request<'_>,
    signed: SignedIn<'_>,
    scopes: Vec<String>,
    prompts: &[&str],
) -> Response {
    let SignedIn { user, session } = signed;
    let params = req.params;
    let bound = req.bound();
    if *method == Method::POST
        && let (Some(answer), Some(token)) = (params.get("consent"), params.get("consent_token"))
        && state
            .consent()
            .verify(token, &user.id, &session.sid, &bound)
    {
        let expires = ConsentSigner::expiry(token).unwrap_or_else(chrono::Utc::now);
        match consents::answer_once(state.db(), &digest(token), expires).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(client_id = %req.app.uid, "a consent form was answered twice");
                return req.error(
                    "access_denied",
                    "This consent form was answered already; authorize again.",
                );
            }
            Err(e) => return crate::AuthError::from(e).into_response(),
        }
        return match answer {
            "allow" => issue_code(state, req, user, session, scopes).await,
            _ => req.error("access_denied", "The user denied the request."),
        };
    }
    if prompts.contains(&"none") {
        return req.error(
            "consent_required",
            "The user has not approved this application.",
        );
    }
    let token = state.consent().token(&user.id, &session.sid, &bound);
    let mut fields: Vec<(&str, String)> = bound
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| (*k, (*v).to_owned()))
        .collect();
    fields.push(("consent_token", token));
    // A client that describes itself (a metadata document) names itself: show
    // where its document lives, and warn when it can only come back to this
    // computer (anyone can publish such a document for a local program).
    let described_at = metadata::is_metadata_url(&req.app.uid)
        .then(|| Url::parse(&req.app.uid).ok())
        .flatten()
        .and_then(|u| u.host_str().map(str::to_owned));
    let local_only = described_at.is_some()
        && req
            .app
            .redirect_uris
            .iter()
            .all(|u| redirect::is_loopback(u));
    pages::consent(&pages::Consent {
        client_name: &req.app.name,
        described_at: described_at.as_deref(),
        local_only,
        destination: destination(&req.redirect_uri),
        user_email: &user.email,
        scopes: &scopes,
        fields,
    })
}

/// The redirect target in plain words.
fn destination(redirect_uri: &str) -> String {
    match Url::parse(redirect_uri) {
        Ok(u) => match u.host_str() {
            Some(h) if redirect::is_loopback_host(h) => match u.port() {
                Some(p) => format!("an application on this computer (port {p})"),
                None => "an application on this computer".to_owned(),
            },
            Some(h) => h.to_owned(),
            None => format!("the application ({})", u.scheme()),
        },
        Err(_) => "the application".to_owned(),
    }
}

/// Sends the browser to the sign-in page, to come back to this request.
/// `renew`: the user is signed in but must sign in again (`prompt=login`,
/// `max_age`): the page shows the form anyway, and the request comes back
/// without `prompt=login` and with `login_after`.
fn to_login(params: &Params, renew: bool) -> Response {
    let mut q = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in &params.0 {
        match k.as_str() {
            "consent" | "consent_token" | "login_after" => {}
            "prompt" if renew => {
                let rest: Vec<&str> = v.split_whitespace().filter(|p| *p != "login").collect();
                if !rest.is_empty() {
                    q.append_pair(k, &rest.join(" "));
                }
            }
            _ => {
                q.append_pair(k, v);
            }
        }
    }
    if renew {
        q.append_pair("login_after", &chrono::Utc::now().timestamp().to_string());
    }
    let back = format!("/auth/authorize?{}", q.finish());
    let mut login = url::form_urlencoded::Serializer::new(String::new());
    login.append_pair("continue", &back);
    if renew {
        login.append_pair("prompt", "login");
    }
    super::signin::see_other(&format!("/auth/login?{}", login.finish()))
}

async fn issue_code(
    state: &AuthState,
    req: &Request<'_>,
    user: &User,
    session: &Session,
    scopes: Vec<String>,
) -> Response {
    let mut raw = [0u8; 32];
    rand::rng().fill_bytes(&mut raw);
    let code = hex::encode(raw);
    let now = chrono::Utc::now();
    let row = Code {
        code_digest: tolk_storage::auth::digest(&code),
        application_id: req.app.id,
        user_id: user.id.clone(),
        redirect_uri: req.redirect_uri.clone(),
        scopes,
        code_challenge: req.params.get("code_challenge").map(str::to_owned),
        resource: crate::tokens::audience::stored(&resources(req.params)),
        nonce: req.params.get("nonce").map(str::to_owned),
        auth_time: chrono::DateTime::from_timestamp(session.iat, 0).unwrap_or(now),
        expires_at: now + chrono::Duration::seconds(CODE_SECONDS),
    };
    if let Err(e) = codes::insert(state.db(), &row).await {
        return crate::AuthError::from(e).into_response();
    }
    tracing::info!(client_id = %req.app.uid, user_id = %user.id, "authorization code issued");
    req.redirect(&[("code", &code)])
}
