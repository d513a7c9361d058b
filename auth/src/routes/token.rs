//! `POST /auth/token`: authorization_code (+ PKCE S256), refresh_token (rotation;
//! a replayed refresh token revokes its family), client_credentials, token
//! exchange (RFC 8693, [`crate::federation::exchange`]). The password grant and
//! unknown grants answer unsupported_grant_type.

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use chrono::{DateTime, Utc};
use rand::RngCore;
use serde_json::json;
use subtle::ConstantTimeEq;
use tolk_storage::auth::applications::Application;
use tolk_storage::auth::authorities::Authority;
use tolk_storage::auth::codes::{self, Redeemed};
use tolk_storage::auth::tokens::{self, Rotation, Token};
use tolk_storage::auth::users::{self, User};
use uuid::Uuid;

use super::{Params, body_params, foreign_resource, resources, split_scopes};
use crate::clients::{self, Client};
use crate::federation::exchange::{self, ACCESS_TOKEN_TYPE};
use crate::throttle::Attempt;
use crate::tokens::jwt::{self, AccessClaims, IdClaims, UserBlock};
use crate::tokens::{ACCESS_TOKEN_SECONDS, Audience, REFRESH_TOKEN_SECONDS, audience};
use crate::{AuthState, OAuthError, context, pkce};

/// The token-exchange grant (RFC 8693).
pub const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";

/// The handler.
pub async fn token(
    State(state): State<AuthState>,
    headers: HeaderMap,
    extensions: axum::http::Extensions,
    body: Bytes,
) -> Response {
    let address = super::peer_address(&extensions);
    match handle(&state, &headers, address, &body).await {
        Ok(res) => res,
        Err(e) => e.into_response(),
    }
}

async fn handle(
    state: &AuthState,
    headers: &HeaderMap,
    address: Option<std::net::IpAddr>,
    body: &[u8],
) -> Result<Response, OAuthError> {
    let params = body_params(headers, body).ok_or_else(|| {
        OAuthError::invalid_request("The body must be a form (application/x-www-form-urlencoded).")
    })?;
    if let Some(d) = params.duplicate() {
        return Err(OAuthError::invalid_request(format!(
            "The parameter {d} was given more than once."
        )));
    }
    let grant = params
        .get("grant_type")
        .ok_or_else(|| OAuthError::invalid_request("grant_type is missing."))?;
    match grant {
        "authorization_code" | "refresh_token" | "client_credentials" | TOKEN_EXCHANGE => {}
        _ => {
            return Err(OAuthError::bad(
                "unsupported_grant_type",
                format!("The grant type {grant} is not supported."),
            ));
        }
    }
    let authority = context::authority(state, headers)
        .await
        .map_err(|_| OAuthError::invalid_request("No authority serves this host."))?;
    let app = authenticate_client(state, headers, address, &params, &authority).await?;
    if let Some(why) = foreign_resource(&resources(&params), &authority.domain) {
        return Err(OAuthError::bad("invalid_target", why));
    }
    let issuer = context::base_url(headers, state.config().production);
    match grant {
        "authorization_code" => authorization_code(state, &params, &app, &authority, &issuer).await,
        "refresh_token" => refresh(state, &params, &app, &authority, &issuer).await,
        TOKEN_EXCHANGE => token_exchange(state, &params, &app, &authority).await,
        _ => client_credentials(state, &params, &app, &authority, &issuer).await,
    }
}

/// The client of a token or revocation request: HTTP Basic or the body's
/// client_id/client_secret; a confidential client must prove its secret.
/// Authenticates the client of a token or revocation request; failed
/// secrets (and unknown clients) are throttled per client and per `address`
/// ([`crate::throttle`]).
pub async fn authenticate_client(
    state: &AuthState,
    headers: &HeaderMap,
    address: Option<std::net::IpAddr>,
    params: &Params,
    authority: &Authority,
) -> Result<Application, OAuthError> {
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(s, _)| s.eq_ignore_ascii_case("basic"))
        .map(|(_, c)| c.trim().to_owned());
    let (client_id, secret) = match basic {
        Some(b) => {
            let decoded = STANDARD
                .decode(b.as_bytes())
                .ok()
                .and_then(|d| String::from_utf8(d).ok())
                .ok_or_else(|| OAuthError::invalid_client("Malformed Basic credentials."))?;
            let (id, secret) = decoded
                .split_once(':')
                .ok_or_else(|| OAuthError::invalid_client("Malformed Basic credentials."))?;
            let dec = |s: &str| {
                url::form_urlencoded::parse(format!("x={s}").as_bytes())
                    .next()
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default()
            };
            (dec(id), Some(dec(secret)).filter(|s| !s.is_empty()))
        }
        None => (
            params
                .get("client_id")
                .ok_or_else(|| OAuthError::invalid_client("Client authentication is missing."))?
                .to_owned(),
            params.get("client_secret").map(str::to_owned),
        ),
    };
    let tenant = authority.id.to_string();
    let attempt = Attempt::Client {
        authority: &tenant,
        client_id: &client_id,
        address,
    };
    if let Some(wait) = state.throttle().wait(attempt).await {
        tracing::warn!(%client_id, "client authentication throttled");
        return Err(OAuthError::too_many(
            "Too many failed client authentications; wait before trying again.",
            wait,
        ));
    }
    let app = match clients::find(state, authority, &client_id, address).await? {
        Client::Found(app) => app,
        Client::Unknown => {
            state.throttle().failed(attempt).await;
            return Err(OAuthError::invalid_client("Unknown client."));
        }
        Client::Refused(why) => {
            state.throttle().failed(attempt).await;
            return Err(OAuthError::invalid_client(format!(
                "The client's metadata document cannot be used: {why}."
            )));
        }
    };
    match (&app.secret_digest, secret) {
        (Some(stored), Some(given)) => {
            let d = tolk_storage::auth::digest(&given);
            if !bool::from(d.as_bytes().ct_eq(stored.as_bytes())) {
                state.throttle().failed(attempt).await;
                return Err(OAuthError::invalid_client("Client authentication failed."));
            }
        }
        (Some(_), None) => {
            state.throttle().failed(attempt).await;
            return Err(OAuthError::invalid_client("Client authentication failed."));
        }
        (None, Some(_)) => {
            return Err(OAuthError::invalid_client(
                "This client is public: it has no secret.",
            ));
        }
        (None, None) => {}
    }
    Ok(app)
}

async fn authorization_code(
    state: &AuthState,
    params: &Params,
    app: &Application,
    authority: &Authority,
    issuer: &str,
) -> Result<Response, OAuthError> {
    let code = params
        .get("code")
        .ok_or_else(|| OAuthError::invalid_request("code is missing."))?;
    let digest = tolk_storage::auth::digest(code);
    let code = match codes::redeem(state.db(), &digest).await? {
        Redeemed::Fresh(c) => c,
        Redeemed::Reused(c) => {
            let n = tokens::revoke_from_code(state.db(), &c.code_digest).await?;
            tracing::warn!(client_id = %app.uid, revoked = n, "authorization code reused: its tokens are revoked");
            return Err(OAuthError::invalid_grant(
                "The authorization code was already used.",
            ));
        }
        Redeemed::Unknown => {
            return Err(OAuthError::invalid_grant(
                "The authorization code is not valid.",
            ));
        }
    };
    if code.application_id != app.id {
        return Err(OAuthError::invalid_grant(
            "The authorization code was issued to another client.",
        ));
    }
    if code.expires_at < Utc::now() {
        return Err(OAuthError::invalid_grant(
            "The authorization code has expired.",
        ));
    }
    if params
        .get("redirect_uri")
        .is_some_and(|r| r != code.redirect_uri)
    {
        return Err(OAuthError::invalid_grant(
            "redirect_uri differs from the authorization request's.",
        ));
    }
    match (&code.code_challenge, params.get("code_verifier")) {
        (Some(ch), Some(v)) if pkce::verify_s256(v, ch) => {}
        (Some(_), Some(_)) => {
            return Err(OAuthError::invalid_grant(
                "The PKCE code_verifier does not match.",
            ));
        }
        (Some(_), None) => return Err(OAuthError::invalid_grant("code_verifier is missing.")),
        (None, Some(_)) => {
            return Err(OAuthError::invalid_grant(
                "The authorization request had no code_challenge.",
            ));
        }
        (None, None) => {}
    }
    let resource = narrowed(params, code.resource.as_deref())?;
    let user = live_user(state, &code.user_id, None).await?;
    let grant = Grant {
        app,
        authority,
        user: Some(&user),
        scopes: code.scopes.clone(),
        resource,
        family_id: Uuid::new_v4(),
        code_digest: Some(code.code_digest.clone()),
        refresh: true,
        id_token: Some((issuer, code.nonce.clone(), code.auth_time)),
    };
    issue(state, grant).await
}

async fn refresh(
    state: &AuthState,
    params: &Params,
    app: &Application,
    authority: &Authority,
    issuer: &str,
) -> Result<Response, OAuthError> {
    let rt = params
        .get("refresh_token")
        .ok_or_else(|| OAuthError::invalid_request("refresh_token is missing."))?;
    let digest = tolk_storage::auth::digest(rt);
    // Another client's refresh token fails without touching its owner's tokens.
    match tokens::by_refresh(state.db(), &digest).await? {
        Some(t) if t.application_id == app.id => {}
        _ => return Err(OAuthError::invalid_grant("The refresh token is not valid.")),
    }
    let old: Token = match tokens::rotate(state.db(), &digest).await? {
        Rotation::Fresh(t) => t,
        Rotation::Replayed(t) => {
            let n = tokens::revoke_family(state.db(), t.family_id).await?;
            tracing::warn!(client_id = %app.uid, revoked = n, "refresh token replayed: its family is revoked");
            return Err(OAuthError::invalid_grant(
                "The refresh token was already used or revoked.",
            ));
        }
        Rotation::Unknown => {
            return Err(OAuthError::invalid_grant("The refresh token is not valid."));
        }
    };
    if old.refresh_expires_at.is_none_or(|e| e < Utc::now()) {
        return Err(OAuthError::invalid_grant("The refresh token has expired."));
    }
    let user = match &old.user_id {
        Some(id) => Some(live_user(state, id, Some(old.created_at)).await?),
        None => None,
    };
    let requested = split_scopes(params.get("scope"));
    let scopes = if requested.is_empty() {
        old.scopes.clone()
    } else if let Some(s) = requested.iter().find(|s| !old.scopes.contains(s)) {
        tokens::unrotate(state.db(), old.jti).await?;
        return Err(OAuthError::bad(
            "invalid_scope",
            format!("The scope {s} was not granted."),
        ));
    } else {
        requested
    };
    let resource = match narrowed(params, old.resource.as_deref()) {
        Ok(resource) => resource,
        Err(e) => {
            tokens::unrotate(state.db(), old.jti).await?;
            return Err(e);
        }
    };
    let grant = Grant {
        app,
        authority,
        user: user.as_ref(),
        scopes,
        resource,
        family_id: old.family_id,
        code_digest: old.code_digest.clone(),
        refresh: true,
        id_token: Some((issuer, None, old.created_at)),
    };
    issue(state, grant).await
}

async fn client_credentials(
    state: &AuthState,
    params: &Params,
    app: &Application,
    authority: &Authority,
    _issuer: &str,
) -> Result<Response, OAuthError> {
    if !app.is_confidential() {
        return Err(OAuthError::bad(
            "unauthorized_client",
            "A public client cannot use client_credentials.",
        ));
    }
    let scopes = client_scopes(params, app).map_err(|s| {
        OAuthError::bad(
            "invalid_scope",
            format!("The scope {s} is not allowed for this client."),
        )
    })?;
    let grant = Grant {
        app,
        authority,
        user: None,
        scopes,
        resource: audience::stored(&resources(params)),
        family_id: Uuid::new_v4(),
        code_digest: None,
        refresh: false,
        id_token: None,
    };
    issue(state, grant).await
}

/// The requested `scope` (default `public`), or the first scope the client
/// may not have.
fn client_scopes(params: &Params, app: &Application) -> Result<Vec<String>, String> {
    let requested = split_scopes(params.get("scope"));
    let scopes = if requested.is_empty() {
        vec!["public".to_owned()]
    } else {
        requested
    };
    match scopes.iter().find(|s| !app.scopes.contains(s)) {
        Some(s) => Err(s.clone()),
        None => Ok(scopes),
    }
}

/// RFC 8693: the identity provider's access token of a user for a token pair
/// of ours. Any failure is `invalid_grant`; its reason is logged only.
async fn token_exchange(
    state: &AuthState,
    params: &Params,
    app: &Application,
    authority: &Authority,
) -> Result<Response, OAuthError> {
    let refused = |why: &dyn std::fmt::Display| {
        tracing::info!(client = %app.uid, reason = %why, "token exchange refused");
        OAuthError::invalid_grant("The subject token was not accepted.")
    };
    if params.get("subject_token_type") != Some(ACCESS_TOKEN_TYPE) {
        return Err(refused(&"subject_token_type is not an access token type"));
    }
    let subject = params
        .get("subject_token")
        .ok_or_else(|| refused(&"subject_token is missing"))?;
    let scopes = client_scopes(params, app)
        .map_err(|s| refused(&format!("scope {s} is not allowed for the client")))?;
    let (user, strategy) = exchange::exchange(state, authority, subject)
        .await
        .map_err(|e| refused(&e))?;
    tracing::info!(user_id = %user.id, strategy = %strategy.id, client = %app.uid,
        "token exchanged");
    let grant = Grant {
        app,
        authority,
        user: Some(&user),
        scopes,
        resource: audience::stored(&resources(params)),
        family_id: Uuid::new_v4(),
        code_digest: None,
        refresh: true,
        id_token: None,
    };
    let mut body = issue_body(state, grant).await?;
    body["issued_token_type"] = json!(ACCESS_TOKEN_TYPE);
    Ok(token_response(body))
}

/// The resources of a token asked for from a grant that holds `granted`
/// (stored form): those the request names (RFC 8707), each one the grant
/// holds when it holds any (a refresh keeps or narrows, never widens), else
/// the grant's own.
fn narrowed(params: &Params, granted: Option<&str>) -> Result<Option<String>, OAuthError> {
    let granted = audience::from_stored(granted);
    let asked = resources(params);
    if let Some(r) = asked
        .iter()
        .find(|r| !granted.is_empty() && !granted.contains(r))
    {
        return Err(OAuthError::bad(
            "invalid_target",
            format!("The resource {r} was not granted."),
        ));
    }
    Ok(audience::stored(if asked.is_empty() {
        &granted
    } else {
        &asked
    }))
}

/// The user of a grant, refused when deleted or logged out since `since`.
async fn live_user(
    state: &AuthState,
    id: &str,
    since: Option<DateTime<Utc>>,
) -> Result<User, OAuthError> {
    let user = users::by_id(state.db(), id)
        .await?
        .filter(|u| u.deleted_at.is_none())
        .ok_or_else(|| OAuthError::invalid_grant("The user no longer exists."))?;
    if let (Some(since), Some(out)) = (since, user.logged_out_at)
        && out >= since
    {
        return Err(OAuthError::invalid_grant(
            "The user has signed out since this grant.",
        ));
    }
    Ok(user)
}

/// What a token response is made from.
pub struct Grant<'a> {
    /// The client.
    pub app: &'a Application,
    /// Its authority (`aud`).
    pub authority: &'a Authority,
    /// The user; `None` for client_credentials.
    pub user: Option<&'a User>,
    /// Granted scopes.
    pub scopes: Vec<String>,
    /// RFC 8707 resources, as stored ([`audience::stored`]).
    pub resource: Option<String>,
    /// The grant's family.
    pub family_id: Uuid,
    /// The code it came from.
    pub code_digest: Option<String>,
    /// Whether to issue a refresh token.
    pub refresh: bool,
    /// For an id token (openid scope): issuer URL, nonce, auth time.
    pub id_token: Option<(&'a str, Option<String>, DateTime<Utc>)>,
}

/// The access token's claims for a grant.
pub fn access_claims(state: &AuthState, grant: &Grant<'_>, jti: Uuid, now: i64) -> AccessClaims {
    let (sub, u) = match grant.user {
        Some(u) => (
            u.id.clone(),
            UserBlock {
                n: u.name.clone(),
                e: u.email.to_lowercase(),
                p: u.permissions,
                r: u.groups.clone(),
            },
        ),
        None => (
            grant.app.uid.clone(),
            UserBlock {
                n: grant.app.name.clone(),
                ..UserBlock::default()
            },
        ),
    };
    AccessClaims {
        iss: state.config().jwt_issuer.clone(),
        iat: now,
        exp: now + ACCESS_TOKEN_SECONDS,
        jti: jti.to_string(),
        aud: Audience::of(
            &grant.authority.domain,
            &audience::from_stored(grant.resource.as_deref()),
        ),
        scope: grant.scopes.clone(),
        sub,
        u,
    }
}

/// Signs, records and answers a token pair.
pub async fn issue(state: &AuthState, grant: Grant<'_>) -> Result<Response, OAuthError> {
    Ok(token_response(issue_body(state, grant).await?))
}

/// Signs and records a token pair; the token response's JSON.
pub async fn issue_body(
    state: &AuthState,
    grant: Grant<'_>,
) -> Result<serde_json::Value, OAuthError> {
    let now = Utc::now();
    let jti = Uuid::new_v4();
    let claims = access_claims(state, &grant, jti, now.timestamp());
    let access = jwt::sign(state.keys(), &claims)?;
    let refresh = grant.refresh.then(|| {
        let mut raw = [0u8; 32];
        rand::rng().fill_bytes(&mut raw);
        URL_SAFE_NO_PAD.encode(raw)
    });
    let row = Token {
        jti,
        family_id: grant.family_id,
        application_id: grant.app.id,
        user_id: grant.user.map(|u| u.id.clone()),
        code_digest: grant.code_digest.clone(),
        scopes: grant.scopes.clone(),
        resource: grant.resource.clone(),
        expires_at: now + chrono::Duration::seconds(ACCESS_TOKEN_SECONDS),
        refresh_digest: refresh.as_deref().map(tolk_storage::auth::digest),
        refresh_expires_at: refresh
            .as_ref()
            .map(|_| now + chrono::Duration::seconds(REFRESH_TOKEN_SECONDS)),
        refreshed_at: None,
        revoked_at: None,
        created_at: now,
    };
    tokens::insert(state.db(), &row).await?;
    let mut body = json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": ACCESS_TOKEN_SECONDS,
        "scope": grant.scopes.join(" "),
        "created_at": now.timestamp(),
    });
    if let Some(r) = &refresh {
        body["refresh_token"] = json!(r);
    }
    if let (Some(user), Some((iss, nonce, auth_time))) = (grant.user, &grant.id_token)
        && grant.scopes.iter().any(|s| s == "openid")
    {
        let id = IdClaims {
            iss: (*iss).to_owned(),
            sub: user.id.clone(),
            aud: grant.app.uid.clone(),
            iat: now.timestamp(),
            exp: now.timestamp() + ACCESS_TOKEN_SECONDS,
            auth_time: auth_time.timestamp(),
            nonce: nonce.clone(),
            name: user.name.clone(),
            email: user.email.to_lowercase(),
        };
        body["id_token"] = json!(jwt::sign(state.keys(), &id)?);
    }
    Ok(body)
}

/// A token response: the JSON, never cached.
pub fn token_response(body: serde_json::Value) -> Response {
    let mut res = Json(body).into_response();
    let h = res.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    res
}
