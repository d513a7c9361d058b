//! `POST /auth/register`: dynamic client registration (RFC 7591) of public
//! clients, as MCP clients onboard themselves.
//!
//! A registered client is public (`dcr-…` id, no secret, `token_endpoint_auth_method`
//! `none`), may use only the authorization code (with S256 PKCE, which the
//! authorization endpoint requires of every public client) and refresh
//! grants, only the scopes in [`SCOPES`], and redirect URIs that are https,
//! loopback http (any port at authorization time) or a private-use scheme
//! (`com.example.app:/cb`). Consent is asked on every authorization.
//! Registering the same name and redirect URIs again returns the existing
//! client and is free; otherwise `MCP_REGISTRATION_LIMIT` new clients per
//! hour are accepted across all replicas (the count and the insert happen
//! under one PostgreSQL advisory lock), 429 with `Retry-After` beyond.

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rand::RngCore;
use serde_json::{Value, json};
use tolk_storage::auth::applications::{
    self, Application, DYNAMIC_PREFIX, NewApplication, Registration, RegistrationLimits,
};

use crate::{AuthState, OAuthError, context};

/// Scopes a registered client may ask for.
pub const SCOPES: [&str; 5] = ["public", "openid", "profile", "email", "offline_access"];

/// Grants a registered client may use.
const GRANTS: [&str; 2] = ["authorization_code", "refresh_token"];

/// Longest client name kept.
const MAX_NAME_CHARS: usize = 200;

/// Most redirect URIs of one client.
const MAX_REDIRECT_URIS: usize = 10;

/// The handler.
pub async fn register(
    State(state): State<AuthState>,
    headers: HeaderMap,
    extensions: axum::http::Extensions,
    body: Bytes,
) -> Response {
    let address = super::peer_address(&extensions);
    match handle(&state, &headers, address, &body).await {
        Ok((status, body)) => {
            let mut res = (status, Json(body)).into_response();
            res.headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            res
        }
        Err(e) => e.into_response(),
    }
}

/// What a registration (or a client metadata document) asks for, validated.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Metadata {
    /// The client's name (shown on the consent page).
    pub name: String,
    /// Its redirect URIs, sorted.
    pub redirect_uris: Vec<String>,
    /// Its scopes, sorted.
    pub scopes: Vec<String>,
}

async fn handle(
    state: &AuthState,
    headers: &HeaderMap,
    address: Option<std::net::IpAddr>,
    body: &[u8],
) -> Result<(StatusCode, Value), OAuthError> {
    let request: Value = serde_json::from_slice(body).map_err(|_| {
        OAuthError::bad(
            "invalid_client_metadata",
            "The body must be a JSON object of client metadata.",
        )
    })?;
    let metadata = validate(&request)?;
    let authority = context::authority(state, headers)
        .await
        .map_err(|_| OAuthError::invalid_request("No authority serves this host."))?;
    let mut raw = [0u8; 16];
    rand::rng().fill_bytes(&mut raw);
    let uid = format!("{DYNAMIC_PREFIX}{}", hex::encode(raw));
    let registration = applications::register_dynamic(
        state.db(),
        NewApplication {
            authority_id: authority.id,
            name: &metadata.name,
            uid: &uid,
            secret_digest: None,
            redirect_uris: &metadata.redirect_uris,
            scopes: &metadata.scopes,
            skip_authorization: false,
        },
        address.map(|a| a.to_string()).as_deref(),
        RegistrationLimits {
            per_address: state.config().mcp_registration_limit,
            ceiling: state.config().mcp_registration_ceiling,
        },
    )
    .await?;
    match registration {
        Registration::Created(app) => {
            tracing::info!(client_id = %app.uid, name = %app.name, "client registered");
            Ok((StatusCode::CREATED, response(&app)))
        }
        Registration::Existing(app) => Ok((StatusCode::CREATED, response(&app))),
        Registration::Limited(wait) => Err(OAuthError::too_many(
            format!(
                "At most {} new clients may register per hour from one address, and {} from \
                 all; try again in {} s.",
                state.config().mcp_registration_limit,
                state.config().mcp_registration_ceiling,
                wait.as_secs()
            ),
            wait,
        )),
    }
}

/// The registration response (RFC 7591 §3.2.1).
fn response(app: &Application) -> Value {
    json!({
        "client_id": app.uid,
        "client_name": app.name,
        "redirect_uris": app.redirect_uris,
        "grant_types": GRANTS,
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "scope": app.scopes.join(" "),
    })
}

fn invalid(description: impl Into<String>) -> OAuthError {
    OAuthError::bad("invalid_client_metadata", description)
}

/// Checks the metadata of a registration request or a client metadata
/// document.
pub(crate) fn validate(request: &Value) -> Result<Metadata, OAuthError> {
    let Some(object) = request.as_object() else {
        return Err(invalid(
            "The body must be a JSON object of client metadata.",
        ));
    };
    let strings = |field: &str| -> Result<Option<Vec<String>>, OAuthError> {
        match object.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| invalid(format!("{field} must be an array of strings.")))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(invalid(format!("{field} must be an array of strings."))),
        }
    };
    let mut redirect_uris = strings("redirect_uris")?.unwrap_or_default();
    if redirect_uris.is_empty() {
        return Err(OAuthError::bad(
            "invalid_redirect_uri",
            "redirect_uris must name at least one redirect URI.",
        ));
    }
    if redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(OAuthError::bad(
            "invalid_redirect_uri",
            format!("At most {MAX_REDIRECT_URIS} redirect URIs may be registered."),
        ));
    }
    for uri in &redirect_uris {
        check_redirect_uri(uri)?;
    }
    redirect_uris.sort();
    redirect_uris.dedup();
    for grant in strings("grant_types")?.unwrap_or_default() {
        if !GRANTS.contains(&grant.as_str()) {
            return Err(invalid(format!(
                "The grant type {grant} is not available to registered clients \
                 (authorization_code and refresh_token are)."
            )));
        }
    }
    for kind in strings("response_types")?.unwrap_or_default() {
        if kind != "code" {
            return Err(invalid(format!(
                "The response type {kind} is not supported."
            )));
        }
    }
    match object
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
    {
        None | Some("none") => {}
        Some(other) => {
            return Err(invalid(format!(
                "Registered clients are public: token_endpoint_auth_method must be none, not {other}."
            )));
        }
    }
    let scopes: Vec<String> = match object.get("scope") {
        None | Some(Value::Null) => SCOPES.iter().map(|s| (*s).to_owned()).collect(),
        Some(Value::String(scope)) => {
            let mut scopes: Vec<String> = scope.split_whitespace().map(str::to_owned).collect();
            if let Some(bad) = scopes.iter().find(|s| !SCOPES.contains(&s.as_str())) {
                return Err(invalid(format!(
                    "The scope {bad} is not available to registered clients (allowed: {}).",
                    SCOPES.join(" ")
                )));
            }
            scopes.sort();
            scopes.dedup();
            if scopes.is_empty() {
                return Err(invalid("scope names no scope."));
            }
            scopes
        }
        Some(_) => return Err(invalid("scope must be a string.")),
    };
    let name = match object.get("client_name") {
        None | Some(Value::Null) => "MCP client".to_owned(),
        Some(Value::String(name)) => {
            let name: String = name
                .chars()
                .filter(|c| !c.is_control())
                .take(MAX_NAME_CHARS)
                .collect();
            let name = name.trim().to_owned();
            if name.is_empty() {
                "MCP client".to_owned()
            } else {
                name
            }
        }
        Some(_) => return Err(invalid("client_name must be a string.")),
    };
    Ok(Metadata {
        name,
        redirect_uris,
        scopes,
    })
}

/// A redirect URI a public client may register: https, loopback http, or a
/// private-use scheme (a reversed domain name, RFC 8252 §7.1); never with a
/// fragment.
pub fn check_redirect_uri(uri: &str) -> Result<(), OAuthError> {
    let bad = |why: &str| {
        OAuthError::bad(
            "invalid_redirect_uri",
            format!("The redirect URI {uri:?} is not allowed: {why}."),
        )
    };
    let url = url::Url::parse(uri).map_err(|_| bad("it is not an absolute URI"))?;
    if url.fragment().is_some() {
        return Err(bad("it has a fragment"));
    }
    match url.scheme() {
        "https" => {
            if url.host_str().is_none_or(str::is_empty) {
                return Err(bad("it has no host"));
            }
            Ok(())
        }
        "http" => match url.host() {
            Some(url::Host::Ipv4(ip)) if ip.is_loopback() => Ok(()),
            Some(url::Host::Ipv6(ip)) if ip.is_loopback() => Ok(()),
            Some(url::Host::Domain("localhost")) => Ok(()),
            _ => Err(bad("plain http is only allowed to a loopback address")),
        },
        scheme if scheme.contains('.') => Ok(()),
        _ => Err(bad(
            "use https, http to a loopback address, or a private-use scheme (a reversed domain name)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris_public_clients_may_register() {
        for ok in [
            "https://app.example.com/callback",
            "http://127.0.0.1/callback",
            "http://localhost:3000/cb",
            "http://[::1]:8080/cb",
            "com.example.app:/oauth",
        ] {
            assert!(check_redirect_uri(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://app.example.com/cb",
            "https://app.example.com/cb#frag",
            "javascript:alert(1)",
            "data:text/html,hi",
            "file:///etc/passwd",
            "/relative",
            "myapp:/cb",
        ] {
            assert!(check_redirect_uri(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn metadata_is_checked_and_normalised() {
        let m = validate(&json!({
            "client_name": "Claude\u{7}",
            "redirect_uris": ["http://127.0.0.1:9/cb", "http://127.0.0.1:9/cb", "https://a.example/cb"],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none",
            "scope": "openid public"
        }))
        .unwrap();
        assert_eq!(m.name, "Claude");
        assert_eq!(
            m.redirect_uris,
            ["http://127.0.0.1:9/cb", "https://a.example/cb"]
        );
        assert_eq!(m.scopes, ["openid", "public"]);
        for (body, error) in [
            (json!({"redirect_uris": []}), "invalid_redirect_uri"),
            (
                json!({"redirect_uris": ["http://evil.example/cb"]}),
                "invalid_redirect_uri",
            ),
            (
                json!({"redirect_uris": ["https://a.example/cb"], "grant_types": ["client_credentials"]}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["https://a.example/cb"], "scope": "translate"}),
                "invalid_client_metadata",
            ),
            (
                json!({"redirect_uris": ["https://a.example/cb"], "token_endpoint_auth_method": "client_secret_basic"}),
                "invalid_client_metadata",
            ),
            (json!(["not", "an", "object"]), "invalid_client_metadata"),
        ] {
            assert_eq!(validate(&body).unwrap_err().error, error, "{body}");
        }
    }
}
