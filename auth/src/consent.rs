//! The consent form's token: `"{expiry}.{hex HMAC-SHA256}"` over the user, the
//! session and every authorization parameter, each length-prefixed. Changing
//! any of them, another session, or ten minutes passing invalidates it.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// How long a consent page may be left open.
pub const CONSENT_SECONDS: i64 = 600;

/// Makes and checks consent tokens.
#[derive(Clone)]
pub struct ConsentSigner {
    key: [u8; 32],
}

impl std::fmt::Debug for ConsentSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConsentSigner(..)")
    }
}

impl ConsentSigner {
    /// A signer keyed from the session key material.
    pub fn new(master: &[u8]) -> Self {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(master)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(b"tolk/auth/consent");
        Self {
            key: mac.finalize().into_bytes().into(),
        }
    }

    fn mac(&self, expiry: i64, user_id: &str, sid: &str, params: &[(&str, &str)]) -> String {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        let mut field = |b: &[u8]| {
            mac.update(&(b.len() as u64).to_be_bytes());
            mac.update(b);
        };
        field(expiry.to_string().as_bytes());
        field(user_id.as_bytes());
        field(sid.as_bytes());
        for (k, v) in params {
            field(k.as_bytes());
            field(v.as_bytes());
        }
        hex::encode(mac.finalize().into_bytes())
    }

    /// A token valid [`CONSENT_SECONDS`].
    pub fn token(&self, user_id: &str, sid: &str, params: &[(&str, &str)]) -> String {
        let expiry = chrono::Utc::now().timestamp() + CONSENT_SECONDS;
        format!("{expiry}.{}", self.mac(expiry, user_id, sid, params))
    }

    /// Whether `token` was made for exactly these values and is unexpired.
    pub fn verify(&self, token: &str, user_id: &str, sid: &str, params: &[(&str, &str)]) -> bool {
        let Some((expiry, mac)) = token.split_once('.') else {
            return false;
        };
        let Ok(expiry) = expiry.parse::<i64>() else {
            return false;
        };
        if expiry < chrono::Utc::now().timestamp() {
            return false;
        }
        let expected = self.mac(expiry, user_id, sid, params);
        expected.as_bytes().ct_eq(mac.as_bytes()).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_to_user_session_and_parameters() {
        let s = ConsentSigner::new(b"master key material");
        let p = [("client_id", "app"), ("redirect_uri", "https://a/cb")];
        let t = s.token("user-1", "sid1", &p);
        assert!(s.verify(&t, "user-1", "sid1", &p));
        assert!(!s.verify(&t, "user-2", "sid1", &p));
        assert!(!s.verify(&t, "user-1", "sid2", &p));
        assert!(!s.verify(
            &t,
            "user-1",
            "sid1",
            &[("client_id", "app"), ("redirect_uri", "https://b/cb")]
        ));
        // Length prefixes: moving a character between fields changes the MAC.
        assert!(!s.verify(&t, "user-1s", "id1", &p));
        assert!(!s.verify("1.abcd", "user-1", "sid1", &p));
        assert!(!ConsentSigner::new(b"other").verify(&t, "user-1", "sid1", &p));
    }
}
