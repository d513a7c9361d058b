//! The consent form's token: `"{expiry}.{nonce}.{hex HMAC-SHA256}"` over the
//! nonce, the user, the session and every authorization parameter, each
//! length-prefixed (the random nonce makes every rendered form's token unique). Changing
//! any of them, another session, or ten minutes passing invalidates it. An
//! answered token is recorded (`oauth_consent_answers`), so a form counts once.

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

    fn mac(
        &self,
        expiry: i64,
        nonce: &str,
        user_id: &str,
        sid: &str,
        params: &[(&str, &str)],
    ) -> String {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        let mut field = |b: &[u8]| {
            mac.update(&(b.len() as u64).to_be_bytes());
            mac.update(b);
        };
        field(expiry.to_string().as_bytes());
        field(nonce.as_bytes());
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
        let mut raw = [0u8; 12];
        rand::RngCore::fill_bytes(&mut rand::rng(), &mut raw);
        let nonce = hex::encode(raw);
        let mac = self.mac(expiry, &nonce, user_id, sid, params);
        format!("{expiry}.{nonce}.{mac}")
    }

    /// When `token` expires (its own claim; check it with [`Self::verify`]).
    pub fn expiry(token: &str) -> Option<chrono::DateTime<chrono::Utc>> {
        let (expiry, _) = token.split_once('.')?;
        chrono::DateTime::from_timestamp(expiry.parse().ok()?, 0)
    }

    /// Whether `token` was made for exactly these values and is unexpired.
    pub fn verify(&self, token: &str, user_id: &str, sid: &str, params: &[(&str, &str)]) -> bool {
        let mut parts = token.splitn(3, '.');
        let (Some(expiry), Some(nonce), Some(mac)) = (parts.next(), parts.next(), parts.next())
        else {
            return false;
        };
        let Ok(expiry) = expiry.parse::<i64>() else {
            return false;
        };
        if expiry < chrono::Utc::now().timestamp() {
            return false;
        }
        let expected = self.mac(expiry, nonce, user_id, sid, params);
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
        assert!(!s.verify("1.ab.cd", "user-1", "sid1", &p));
        // Two forms for the same request carry different tokens.
        assert_ne!(t, s.token("user-1", "sid1", &p));
        assert!(!ConsentSigner::new(b"other").verify(&t, "user-1", "sid1", &p));
    }
}
