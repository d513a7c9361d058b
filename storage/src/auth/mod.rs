//! The auth service's tables: authorities (tenants), users, OAuth applications,
//! authorization codes, answered consent forms, issued tokens and the
//! identity providers users sign in through (`oauth_strat`).
//!
//! Secrets never reach these tables in the clear: application secrets, codes and
//! refresh tokens are stored as hex SHA-256 digests ([`digest`]), passwords as
//! bcrypt digests (computed by the caller).

pub mod applications;
pub mod authorities;
pub mod codes;
pub mod consents;
pub mod oauth_strategies;
pub mod saml_strategies;
pub mod tokens;
pub mod users;

use rand::Rng;
use sha2::{Digest, Sha256};

/// A new record id: `{prefix}-` and 14 base-62 characters (the earlier
/// deployment's id shape: `user-…`, `oauth_strat-…`).
pub fn random_id(prefix: &str) -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut rng = rand::rng();
    let tail: String = (0..14)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    format!("{prefix}-{tail}")
}

/// Hex SHA-256 of a high-entropy secret (application secret, code, refresh token).
pub fn digest(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn digest_is_hex_sha256() {
        assert_eq!(
            super::digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
