//! The browser's state between a federated sign-in's kickoff and its
//! callback: an encrypted cookie `_coauth_flow` (the session key's jar) with
//! the strategy, the `state` sent to the provider, the PKCE verifier, the
//! redirect URI and where to go afterwards. The callback accepts only the
//! `state` of the flow this browser started, within ten minutes.

use axum::http::HeaderMap;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore;
use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq;

use crate::sessions::SessionKey;
use crate::sessions::cookie::{SameSite, clear_cookie};

/// The cookie's name.
pub const FLOW_COOKIE: &str = "_coauth_flow";
/// How long a browser may take at the provider.
pub const FLOW_SECONDS: i64 = 600;

/// A federated sign-in in progress.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Flow {
    /// `oauth2` or `saml`.
    pub kind: String,
    /// The strategy id.
    pub strategy: String,
    /// The `state` (OAuth 2.0) or request id (SAML) sent to the provider.
    pub state: String,
    /// The PKCE code verifier (OAuth 2.0).
    #[serde(default)]
    pub verifier: String,
    /// The AuthnRequest's ID the response must answer (SAML).
    #[serde(default)]
    pub request_id: String,
    /// The redirect URI (OAuth 2.0; the token request repeats it) or the
    /// assertion consumer service URL (SAML) the provider was given.
    pub redirect_uri: String,
    /// Where to send the browser after signing in (already sanitised).
    pub continue_to: Option<String>,
    /// When the flow expires (seconds).
    pub exp: i64,
}

/// 32 random bytes, base64url: a `state`, a verifier, a request id.
pub fn random_token() -> String {
    let mut raw = [0u8; 32];
    rand::rng().fill_bytes(&mut raw);
    URL_SAFE_NO_PAD.encode(raw)
}

impl Flow {
    /// A new flow of `kind` through `strategy`.
    pub fn new(
        kind: &str,
        strategy: &str,
        redirect_uri: String,
        continue_to: Option<String>,
    ) -> Self {
        Self {
            kind: kind.to_owned(),
            strategy: strategy.to_owned(),
            state: random_token(),
            verifier: random_token(),
            request_id: String::new(),
            redirect_uri,
            continue_to,
            exp: chrono::Utc::now().timestamp() + FLOW_SECONDS,
        }
    }

    /// The `Set-Cookie` value carrying the flow. `SameSite=None` (with
    /// `secure`) lets a provider's cross-site POST back carry it.
    pub fn cookie(&self, key: &SessionKey, secure: bool) -> String {
        key.seal(FLOW_COOKIE, self, FLOW_SECONDS, secure, SameSite::None)
    }

    /// The request's unexpired flow of `kind` whose `state` is `state`.
    pub fn find(key: &SessionKey, headers: &HeaderMap, kind: &str, state: &str) -> Option<Self> {
        let now = chrono::Utc::now().timestamp();
        key.open(headers, FLOW_COOKIE, |f: &Flow| {
            f.kind == kind && f.exp > now && bool::from(f.state.as_bytes().ct_eq(state.as_bytes()))
        })
    }

    /// The `Set-Cookie` value that ends the flow.
    pub fn clear(secure: bool) -> String {
        clear_cookie(FLOW_COOKIE, secure)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn only_the_flow_with_the_same_state_and_kind_is_found() {
        let key = SessionKey::from_secret(Some("0123456789abcdef0123456789abcdef")).expect("key");
        let flow = Flow::new("oauth2", "oauth_strat-x", "http://h/cb".into(), None);
        let set = flow.cookie(&key, false);
        assert!(set.contains("SameSite=Lax"), "None needs Secure: {set}");
        assert!(flow.cookie(&key, true).contains("SameSite=None"));
        let pair = set.split(';').next().expect("pair").to_owned();
        let mut h = HeaderMap::new();
        h.insert(
            axum::http::header::COOKIE,
            HeaderValue::from_str(&pair).expect("header"),
        );
        assert_eq!(
            Flow::find(&key, &h, "oauth2", &flow.state),
            Some(flow.clone())
        );
        assert_eq!(Flow::find(&key, &h, "oauth2", "another state"), None);
        assert_eq!(Flow::find(&key, &h, "saml", &flow.state), None);
        assert_ne!(flow.state, flow.verifier);
        assert_eq!(flow.verifier.len(), 43);
    }
}
