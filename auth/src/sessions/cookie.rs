//! `_coauth_session`: AES-256-GCM encrypted and authenticated (the `cookie`
//! crate's private jar) with a key derived from `COOKIE_SESSION_SECRET`.
//!
//! An earlier deployment set a cookie of the same name at Path=/ in another
//! format. Browsers send both, so every `_coauth_session` value in the request is
//! tried and the first that decrypts wins; one that does not (tampered, foreign,
//! stale) counts as no session, never as an error. Signing in also expires the
//! Path=/ cookie.

use axum::http::HeaderMap;
use axum::http::header::COOKIE;
pub use cookie::SameSite;
use cookie::{Cookie, CookieJar, Key};
use rand::RngCore;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::AuthError;

/// The cookie's name (the earlier deployment's).
pub const COOKIE_NAME: &str = "_coauth_session";
/// The cookie's path.
pub const COOKIE_PATH: &str = "/auth";

/// The key that encrypts sessions.
#[derive(Clone)]
pub struct SessionKey {
    key: Key,
}

impl std::fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionKey(..)")
    }
}

impl SessionKey {
    /// From `COOKIE_SESSION_SECRET` (at least 32 bytes), or a random key for this
    /// boot (sessions end at restart) with a warning.
    pub fn from_secret(secret: Option<&str>) -> Result<Self, AuthError> {
        match secret.filter(|s| !s.is_empty()) {
            Some(s) if s.len() < 32 => Err(AuthError::SessionSecret(format!(
                "COOKIE_SESSION_SECRET must be at least 32 bytes (it has {})",
                s.len()
            ))),
            Some(s) => Ok(Self {
                key: Key::derive_from(s.as_bytes()),
            }),
            None => {
                tracing::warn!(
                    "COOKIE_SESSION_SECRET is not set: sessions are encrypted with an ephemeral \
                     key and end when this process restarts (and are not shared between replicas)"
                );
                Ok(Self {
                    key: Key::generate(),
                })
            }
        }
    }

    /// 64 bytes of key material for other derived keys (the consent HMAC).
    pub fn master(&self) -> &[u8] {
        self.key.master()
    }

    /// The first session in the request's cookies that decrypts and has not expired.
    pub fn read(&self, headers: &HeaderMap) -> Option<Session> {
        let now = chrono::Utc::now().timestamp();
        self.open(headers, COOKIE_NAME, |s: &Session| s.exp > now)
    }

    /// The `Set-Cookie` value carrying `session`.
    pub fn set_cookie(&self, session: &Session, max_age_secs: i64, secure: bool) -> String {
        self.seal(COOKIE_NAME, session, max_age_secs, secure, SameSite::Lax)
    }

    /// The first value of the cookies named `name` that decrypts, parses as a
    /// `T` and passes `accept`. Cookies that do not (tampered, foreign, stale)
    /// are skipped, never an error.
    pub fn open<T: DeserializeOwned>(
        &self,
        headers: &HeaderMap,
        name: &str,
        accept: impl Fn(&T) -> bool,
    ) -> Option<T> {
        for value in headers.get_all(COOKIE) {
            let Ok(value) = value.to_str() else { continue };
            for c in Cookie::split_parse_encoded(value.to_owned()).flatten() {
                if c.name() != name {
                    continue;
                }
                let mut jar = CookieJar::new();
                jar.add_original(c.into_owned());
                let Some(plain) = jar.private(&self.key).get(name) else {
                    continue;
                };
                match serde_json::from_str::<T>(plain.value()) {
                    Ok(v) if accept(&v) => return Some(v),
                    _ => continue,
                }
            }
        }
        None
    }

    /// The `Set-Cookie` value of an encrypted cookie `name` at Path=/auth
    /// holding `value` as JSON. `SameSite=None` is only sent with `secure`
    /// (browsers drop it otherwise): without it the cookie is `Lax`.
    pub fn seal<T: Serialize>(
        &self,
        name: &str,
        value: &T,
        max_age_secs: i64,
        secure: bool,
        same_site: SameSite,
    ) -> String {
        let value = serde_json::to_string(value).unwrap_or_default();
        let same_site = if same_site == SameSite::None && !secure {
            SameSite::Lax
        } else {
            same_site
        };
        let mut jar = CookieJar::new();
        jar.private_mut(&self.key).add(
            Cookie::build((name.to_owned(), value))
                .path(COOKIE_PATH)
                .http_only(true)
                .secure(secure)
                .same_site(same_site)
                .max_age(cookie::time::Duration::seconds(max_age_secs)),
        );
        jar.get(name)
            .map(|c| c.encoded().to_string())
            .unwrap_or_default()
    }
}

/// The `Set-Cookie` value that removes cookie `name` at Path=/auth.
pub fn clear_cookie(name: &str, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{name}=; Path={COOKIE_PATH}; Max-Age=0; HttpOnly; SameSite=Lax{secure}")
}

/// `Set-Cookie` values that remove the session: ours at /auth and a legacy one at /.
pub fn clear_cookies(secure: bool) -> [String; 2] {
    let legacy =
        clear_cookie(COOKIE_NAME, secure).replacen(&format!("Path={COOKIE_PATH};"), "Path=/;", 1);
    [clear_cookie(COOKIE_NAME, secure), legacy]
}

/// What the session cookie holds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Session {
    /// The user id.
    pub uid: String,
    /// A random id, new at every sign-in (binds consent tokens; no fixation).
    pub sid: String,
    /// When the user signed in (seconds).
    pub iat: i64,
    /// When the user signed in (milliseconds; 0 in a cookie written before this
    /// field existed). A sign-out is compared with this, not with `iat`: a
    /// sign-out in the same second as the sign-in must still end the session.
    #[serde(default)]
    pub iat_ms: i64,
    /// When the session ends (seconds).
    pub exp: i64,
    /// How the user signed in (`internal`, later the strategy's provider).
    pub provider: String,
}

impl Session {
    /// A new session for `uid`, valid `max_age_secs`.
    pub fn new(uid: &str, provider: &str, max_age_secs: i64) -> Self {
        let mut sid = [0u8; 16];
        rand::rng().fill_bytes(&mut sid);
        let now_ms = chrono::Utc::now().timestamp_millis();
        let now = now_ms.div_euclid(1000);
        Self {
            uid: uid.to_owned(),
            sid: hex::encode(sid),
            iat: now,
            iat_ms: now_ms,
            exp: now + max_age_secs,
            provider: provider.to_owned(),
        }
    }

    /// Whether the user signed in after `t` (a sign-out): only such a session
    /// is still valid. Without `iat_ms`, a sign-out in the session's second
    /// ends it.
    pub fn signed_in_after(&self, t: chrono::DateTime<chrono::Utc>) -> bool {
        if self.iat_ms > 0 {
            t.timestamp_millis() < self.iat_ms
        } else {
            t.timestamp() < self.iat
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn a_sign_out_in_the_same_second_ends_the_session() {
        let s = Session::new("u", "internal", 60);
        let at = |ms: i64| chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default();
        assert!(!s.signed_in_after(at(s.iat_ms)));
        assert!(!s.signed_in_after(at(s.iat_ms + 1)));
        assert!(s.signed_in_after(at(s.iat_ms - 1)));
        let old = Session {
            iat_ms: 0,
            ..s.clone()
        };
        assert!(!old.signed_in_after(at(s.iat * 1000 + 999)));
        assert!(old.signed_in_after(at(s.iat * 1000 - 1)));
    }

    fn key() -> SessionKey {
        SessionKey::from_secret(Some("0123456789abcdef0123456789abcdef")).expect("key")
    }

    fn headers(cookie: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(COOKIE, HeaderValue::from_str(cookie).expect("header"));
        h
    }

    fn value_of(set_cookie: &str) -> String {
        set_cookie
            .split(';')
            .next()
            .and_then(|kv| kv.split_once('='))
            .map(|(_, v)| v.to_owned())
            .expect("value")
    }

    #[test]
    fn round_trip_attributes_and_short_secret() {
        let k = key();
        let s = Session::new("user-1", "internal", 60);
        let set = k.set_cookie(&s, 60, true);
        assert!(set.starts_with("_coauth_session="));
        for attr in [
            "Path=/auth",
            "HttpOnly",
            "Secure",
            "SameSite=Lax",
            "Max-Age=60",
        ] {
            assert!(set.contains(attr), "{set} lacks {attr}");
        }
        let v = value_of(&set);
        assert!(!v.contains("user-1"), "the value is encrypted");
        assert_eq!(k.read(&headers(&format!("_coauth_session={v}"))), Some(s));
        assert!(SessionKey::from_secret(Some("short")).is_err());
    }

    #[test]
    fn tampered_foreign_and_legacy_cookies() {
        let k = key();
        let s = Session::new("user-1", "internal", 60);
        let v = value_of(&k.set_cookie(&s, 60, false));
        let mut bad = v.clone().into_bytes();
        let i = bad.len() / 2;
        bad[i] = if bad[i] == b'A' { b'B' } else { b'A' };
        let bad = String::from_utf8(bad).expect("utf8");
        assert_eq!(k.read(&headers(&format!("_coauth_session={bad}"))), None);
        let other =
            SessionKey::from_secret(Some("another secret of at least 32 bytes!")).expect("key");
        assert_eq!(other.read(&headers(&format!("_coauth_session={v}"))), None);
        // A legacy cookie first, then ours: ours is found.
        let both = format!(
            "_coauth_session=BAh7CEkiD3Nlc3Npb25faWQGOgZFVA%3D%3D--abc; _coauth_session={v}"
        );
        assert_eq!(k.read(&headers(&both)), Some(s.clone()));
        let expired = Session {
            exp: 1,
            ..s.clone()
        };
        let ev = value_of(&k.set_cookie(&expired, 60, false));
        assert_eq!(k.read(&headers(&format!("_coauth_session={ev}"))), None);
    }
}
