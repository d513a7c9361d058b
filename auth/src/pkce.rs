//! PKCE (RFC 7636), S256 only.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

fn unreserved(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// Whether a `code_challenge` is well formed (43 base64url characters: a SHA-256).
pub fn valid_challenge(challenge: &str) -> bool {
    challenge.len() == 43
        && challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The S256 `code_challenge` of `verifier` (what a client sends).
pub fn challenge_s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Whether `verifier` (43 to 128 unreserved characters) hashes to `challenge`.
pub fn verify_s256(verifier: &str, challenge: &str) -> bool {
    if !(43..=128).contains(&verifier.len()) || !unreserved(verifier) {
        return false;
    }
    challenge_s256(verifier)
        .as_bytes()
        .ct_eq(challenge.as_bytes())
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b() {
        let v = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let c = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert!(valid_challenge(c));
        assert_eq!(challenge_s256(v), c);
        assert!(verify_s256(v, c));
        assert!(!verify_s256(
            "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXX",
            c
        ));
        assert!(!verify_s256("short", c));
        assert!(!verify_s256(c, c), "plain is not S256");
        assert!(!valid_challenge(
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM="
        ));
    }
}
