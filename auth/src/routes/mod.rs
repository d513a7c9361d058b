//! The auth service's routes. Every OAuth route is also served under the
//! earlier deployment's `/auth/oauth/*` paths, and discovery under `/auth/.well-known/*`.

pub mod authority;
pub mod authorize;
pub mod discovery;
pub mod failure;
pub mod federated;
pub mod health;
pub mod login;
pub mod logout;
pub mod oauth2;
pub mod register;
pub mod revoke;
pub mod saml;
pub mod signin;
pub mod token;
pub mod userinfo;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{Method, header};
use axum::routing::{get, post};
use tower_http::cors::{Any, CorsLayer};

use crate::AuthState;

/// Largest request body the auth routes read.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The auth service's routes (no fallback, so it merges with the API's router).
pub fn router(state: AuthState) -> Router {
    let authorize = get(authorize::authorize).post(authorize::authorize);
    let userinfo = get(userinfo::userinfo).post(userinfo::userinfo);
    let discovery_doc = get(discovery::configuration);
    // What browser clients (single-page apps, MCP clients in a browser) call
    // from other origins: discovery, the keys, the token, revocation,
    // registration and userinfo (OpenID Connect Core §5.3) endpoints. No
    // cookies are involved there.
    let cors = CorsLayer::new()
        .allow_origin(Any)
        .allow_methods([Method::GET, Method::POST])
        .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE])
        .max_age(std::time::Duration::from_secs(3600));
    let for_browsers = Router::new()
        .route("/auth/token", post(token::token))
        .route("/auth/oauth/token", post(token::token))
        .route("/auth/register", post(register::register))
        .route("/auth/revoke", post(revoke::revoke))
        .route("/auth/userinfo", userinfo.clone())
        .route("/auth/oauth/userinfo", userinfo)
        .route("/auth/oauth/revoke", post(revoke::revoke))
        .route("/auth/oauth/discovery/keys", get(discovery::jwks))
        .route("/auth/jwks", get(discovery::jwks))
        .route("/.well-known/openid-configuration", discovery_doc.clone())
        .route(
            "/.well-known/oauth-authorization-server",
            discovery_doc.clone(),
        )
        .route(
            "/auth/.well-known/openid-configuration",
            discovery_doc.clone(),
        )
        .route(
            "/auth/.well-known/oauth-authorization-server",
            discovery_doc,
        )
        .layer(cors);
    Router::new()
        .route("/auth/healthz", get(health::healthz))
        .route("/auth/authority", get(authority::authority))
        .route("/auth/signin", post(signin::signin))
        .route("/auth/logout", get(logout::logout))
        .route("/auth/login", get(login::login))
        .route("/auth/failure", get(failure::failure))
        .route("/auth/oauth2", get(oauth2::start))
        .route(
            "/auth/oauth2/callback",
            get(oauth2::callback).post(oauth2::callback),
        )
        .route(
            "/auth/oauth2/callback/{strategy}",
            get(oauth2::callback).post(oauth2::callback),
        )
        .route("/auth/saml", get(saml::start))
        .route("/auth/saml/metadata", get(saml::metadata))
        .route(
            "/auth/saml/callback",
            get(saml::callback).post(saml::callback),
        )
        .route(
            "/auth/saml/callback/{strategy}",
            get(saml::callback).post(saml::callback),
        )
        .route("/auth/authorize", authorize.clone())
        .route("/auth/oauth/authorize", authorize)
        .merge(for_browsers)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

/// Request parameters (query or form), in order, duplicates kept.
#[derive(Debug, Default, Clone)]
pub struct Params(pub Vec<(String, String)>);

impl Params {
    /// Parses `application/x-www-form-urlencoded` text; `None` when malformed.
    pub fn parse(text: &str) -> Option<Self> {
        serde_urlencoded::from_str::<Vec<(String, String)>>(text)
            .ok()
            .map(Self)
    }

    /// From a JSON object of strings (sign-in accepts JSON).
    pub fn from_json(bytes: &[u8]) -> Option<Self> {
        let v: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(bytes).ok()?;
        Some(Self(
            v.into_iter()
                .filter_map(|(k, v)| match v {
                    serde_json::Value::String(s) => Some((k, s)),
                    serde_json::Value::Null => None,
                    other => Some((k, other.to_string())),
                })
                .collect(),
        ))
    }

    /// The value of `name` (the first), empty values counting as absent.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }

    /// The first parameter given more than once (RFC 6749 §3.1: an error),
    /// but `resource`, which RFC 8707 lets a request repeat.
    pub fn duplicate(&self) -> Option<&str> {
        self.0.iter().enumerate().find_map(|(i, (k, _))| {
            (k != "resource" && self.0[..i].iter().any(|(k2, _)| k2 == k)).then_some(k.as_str())
        })
    }
}

/// The body as parameters: JSON when the content type says so, else a form.
pub fn body_params(headers: &axum::http::HeaderMap, body: &[u8]) -> Option<Params> {
    let json = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.to_ascii_lowercase().contains("json"));
    if json {
        Params::from_json(body)
    } else {
        Params::parse(std::str::from_utf8(body).ok()?)
    }
}

/// The parameters of a GET (its query) or a POST (its body: a form, or JSON).
pub fn request_params(
    method: &axum::http::Method,
    headers: &axum::http::HeaderMap,
    query: Option<&str>,
    body: &[u8],
) -> Option<Params> {
    if method == axum::http::Method::POST {
        body_params(headers, body)
    } else {
        Params::parse(query.unwrap_or(""))
    }
}

/// The address the request came from (the TCP peer: behind a reverse proxy,
/// the proxy's), when the server recorded it.
pub fn peer_address(extensions: &axum::http::Extensions) -> Option<std::net::IpAddr> {
    extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0.ip())
}

/// The Bearer token of the `Authorization` header.
pub fn bearer(headers: &axum::http::HeaderMap) -> Option<&str> {
    let v = headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = v.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// Scopes of a space-separated `scope` parameter, deduplicated, in order.
pub fn split_scopes(scope: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in scope.unwrap_or("").split(' ').filter(|s| !s.is_empty()) {
        if !out.iter().any(|o| o == s) {
            out.push(s.to_owned());
        }
    }
    out
}

/// The RFC 8707 resources of a request: every `resource` value (the
/// parameter may repeat; a value may hold several, space-separated, as the
/// consent form carries them), in order, without repeats.
pub fn resources(params: &Params) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, value) in params.0.iter().filter(|(k, _)| k == "resource") {
        for r in value.split_whitespace() {
            if !out.iter().any(|o| o == r) {
                out.push(r.to_owned());
            }
        }
    }
    out
}

/// The `invalid_target` answer's reason when a resource is not on the
/// authority `domain` (RFC 8707 §2), if one is not.
pub fn foreign_resource(resources: &[String], domain: &str) -> Option<&'static str> {
    resources
        .iter()
        .any(|r| !crate::tokens::audience::on_authority(r, domain))
        .then_some("The resource is not on this authority.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_and_helpers() {
        let p = Params::parse("a=1&b=&a=2").expect("parse");
        assert_eq!(p.get("a"), Some("1"));
        assert_eq!(p.get("b"), None);
        assert_eq!(p.duplicate(), Some("a"));
        assert_eq!(
            split_scopes(Some("openid  public openid")),
            vec!["openid", "public"]
        );
        let p = Params::parse(
            "resource=http%3A%2F%2Flocalhost%2Fa&resource=http%3A%2F%2Flocalhost%2Fb+http%3A%2F%2Flocalhost%2Fa",
        )
        .expect("parse");
        assert_eq!(p.duplicate(), None, "resource may repeat");
        assert_eq!(resources(&p), ["http://localhost/a", "http://localhost/b"]);
        assert_eq!(foreign_resource(&resources(&p), "localhost"), None);
        let evil = ["https://localhost@evil.com/".to_owned()];
        assert!(foreign_resource(&evil, "localhost").is_some());
    }
}
