//! Identity providers' tokens kept for users (OAuth access and refresh
//! tokens, Graph tokens from token exchange) are sealed at rest: AES-256-GCM
//! with a random nonce, bound to the row and column they are stored in, and
//! tagged with the id of the key that sealed them
//! (`sealed:v1:<key id>:<base64url of nonce and ciphertext>`).
//!
//! The keys come from `PROVIDER_TOKEN_KEYS` (`id:base64 of 32 bytes`, comma
//! separated): the first seals, every one opens, and so does the key derived
//! from the session secret (below) unless a listed key has its id, so tokens
//! sealed before the setting was given still open. Rotation without downtime:
//! put a new key first and keep the old one after it on every replica, run
//! `tolk admin reseal-provider-tokens` (every token sealed again with the new
//! key), then drop the old key. Without the setting, one key is derived from
//! `COOKIE_SESSION_SECRET` (id `session`): tokens then stay readable as long
//! as that secret does not change.

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use sha2::{Digest, Sha256};
use tolk_storage::auth::users;

use crate::AuthError;

/// What every sealed value starts with.
const PREFIX: &str = "sealed:v1:";
/// The id of the key derived from the session secret.
pub const SESSION_KEY_ID: &str = "session";
/// Bytes of a nonce.
const NONCE_BYTES: usize = 12;

/// A value that could not be opened.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OpenError {
    /// Sealed with a key this process does not have.
    #[error("sealed with the key {0:?}, which is not configured")]
    UnknownKey(String),
    /// Damaged, or sealed for another row or column.
    #[error("the sealed value does not open (damaged, or moved from another row)")]
    Damaged,
}

/// The keys that seal and open provider tokens.
pub struct TokenKeys {
    /// Id and cipher; the first seals.
    keys: Vec<(String, Aes256Gcm)>,
}

impl std::fmt::Debug for TokenKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<&str> = self.keys.iter().map(|(id, _)| id.as_str()).collect();
        f.debug_struct("TokenKeys").field("ids", &ids).finish()
    }
}

impl TokenKeys {
    /// From `PROVIDER_TOKEN_KEYS` when set, else one key derived from the
    /// session key's material (`master`).
    pub fn from_setting(setting: Option<&str>, master: &[u8]) -> Result<Self, AuthError> {
        let bad = |why: String| AuthError::TokenKeys(format!("PROVIDER_TOKEN_KEYS: {why}"));
        let derived = Sha256::new()
            .chain_update(b"tolk provider tokens v1\0")
            .chain_update(master)
            .finalize();
        let derived = (SESSION_KEY_ID.to_owned(), cipher(&derived)?);
        let Some(setting) = setting.filter(|s| !s.trim().is_empty()) else {
            return Ok(Self {
                keys: vec![derived],
            });
        };
        let mut keys: Vec<(String, Aes256Gcm)> = Vec::new();
        for entry in setting.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (id, key) = entry
                .split_once(':')
                .ok_or_else(|| bad(format!("{entry:?} is not id:base64-key")))?;
            if id.is_empty()
                || id.len() > 32
                || !id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(bad(format!(
                    "the key id {id:?} must be 1 to 32 letters, digits, '-' or '_'"
                )));
            }
            if keys.iter().any(|(known, _)| known == id) {
                return Err(bad(format!("the key id {id:?} is given twice")));
            }
            let bytes = STANDARD
                .decode(key.trim())
                .map_err(|e| bad(format!("the key {id:?} is not base64: {e}")))?;
            if bytes.len() != 32 {
                return Err(bad(format!(
                    "the key {id:?} has {} bytes; it must have 32",
                    bytes.len()
                )));
            }
            keys.push((id.to_owned(), cipher(&bytes)?));
        }
        if keys.is_empty() {
            return Err(bad("no key is given".to_owned()));
        }
        // Tokens sealed before the setting was given still open.
        if !keys.iter().any(|(id, _)| id == SESSION_KEY_ID) {
            keys.push(derived);
        }
        Ok(Self { keys })
    }

    /// The id of the key that seals.
    pub fn current(&self) -> &str {
        &self.keys[0].0
    }

    /// `plain` sealed with the current key for `place` (the row and column
    /// it is stored in).
    pub fn seal(&self, plain: &str, place: &str) -> Result<String, AuthError> {
        let (id, cipher) = &self.keys[0];
        let nonce: [u8; NONCE_BYTES] = rand::random();
        let sealed = cipher
            .encrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: plain.as_bytes(),
                    aad: place.as_bytes(),
                },
            )
            .map_err(|e| AuthError::TokenKeys(format!("sealing a provider token: {e}")))?;
        let mut out = Vec::with_capacity(NONCE_BYTES + sealed.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok(format!("{PREFIX}{id}:{}", URL_SAFE_NO_PAD.encode(out)))
    }

    /// The value stored at `place`, opened. A value stored before tokens
    /// were sealed (no `sealed:` prefix) is returned as it is.
    pub fn open(&self, stored: &str, place: &str) -> Result<String, OpenError> {
        let Some((id, body)) = sealed_parts(stored) else {
            return Ok(stored.to_owned());
        };
        let (_, cipher) = self
            .keys
            .iter()
            .find(|(known, _)| known == id)
            .ok_or_else(|| OpenError::UnknownKey(id.to_owned()))?;
        let bytes = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| OpenError::Damaged)?;
        if bytes.len() < NONCE_BYTES {
            return Err(OpenError::Damaged);
        }
        let (nonce, sealed) = bytes.split_at(NONCE_BYTES);
        let nonce: [u8; NONCE_BYTES] = nonce.try_into().map_err(|_| OpenError::Damaged)?;
        let plain = cipher
            .decrypt(
                &Nonce::from(nonce),
                Payload {
                    msg: sealed,
                    aad: place.as_bytes(),
                },
            )
            .map_err(|_| OpenError::Damaged)?;
        String::from_utf8(plain).map_err(|_| OpenError::Damaged)
    }

    /// Whether `stored` is sealed with the current key.
    pub fn is_current(&self, stored: &str) -> bool {
        sealed_parts(stored).is_some_and(|(id, _)| id == self.current())
    }
}

/// What [`reseal_all`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Resealed {
    /// Users whose tokens are now sealed with the current key.
    pub resealed: u64,
    /// Users whose tokens no configured key opens (left as they are).
    pub unreadable: u64,
}

/// Seals again with the current key every provider token sealed with
/// another key or stored before sealing, a page of users at a time; tokens
/// no configured key opens are counted and left.
pub async fn reseal_all(
    db: &tolk_storage::PgPool,
    keys: &TokenKeys,
) -> Result<Resealed, AuthError> {
    const PAGE: i64 = 500;
    let prefix = format!("{PREFIX}{}:", keys.current());
    let mut done = Resealed::default();
    let mut after = String::new();
    loop {
        let page = users::provider_tokens_without_prefix(db, &prefix, &after, PAGE).await?;
        let Some(last) = page.last() else {
            return Ok(done);
        };
        after = last.id.clone();
        for stored in &page {
            let again =
                |column: &str, value: &Option<String>| -> Result<Option<String>, AuthError> {
                    let Some(value) = value else { return Ok(None) };
                    if keys.is_current(value) {
                        return Ok(Some(value.clone()));
                    }
                    let here = place(&stored.id, column);
                    let plain = keys
                        .open(value, &here)
                        .map_err(|e| AuthError::TokenKeys(e.to_string()))?;
                    keys.seal(&plain, &here).map(Some)
                };
            let new = match (
                again(ACCESS_TOKEN, &stored.access_token),
                again(REFRESH_TOKEN, &stored.refresh_token),
            ) {
                (Ok(access_token), Ok(refresh_token)) => users::StoredProviderTokens {
                    id: stored.id.clone(),
                    access_token,
                    refresh_token,
                },
                (Err(e), _) | (_, Err(e)) => {
                    tracing::warn!(user_id = %stored.id, error = %e, "a provider token could not be resealed");
                    done.unreadable += 1;
                    continue;
                }
            };
            if users::replace_provider_tokens(db, stored, &new).await? {
                done.resealed += 1;
            }
        }
    }
}

/// The key id and body of a sealed value.
fn sealed_parts(stored: &str) -> Option<(&str, &str)> {
    stored.strip_prefix(PREFIX)?.split_once(':')
}

/// The cipher of a 32-byte key.
fn cipher(key: &[u8]) -> Result<Aes256Gcm, AuthError> {
    Aes256Gcm::new_from_slice(key)
        .map_err(|e| AuthError::TokenKeys(format!("an AES-256 key must have 32 bytes: {e}")))
}

/// The column of a user's provider access token.
pub const ACCESS_TOKEN: &str = "access_token";
/// The column of a user's provider refresh token.
pub const REFRESH_TOKEN: &str = "refresh_token";

/// Where a user's provider token is stored: the row and the column, which
/// the sealed value is bound to.
pub fn place(user_id: &str, column: &str) -> String {
    format!("users.{column}:{user_id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> String {
        STANDARD.encode([byte; 32])
    }

    #[test]
    fn a_sealed_token_opens_only_where_it_was_sealed() {
        let keys = TokenKeys::from_setting(Some(&format!("k1:{}", key(1))), &[]).unwrap();
        let here = place("u1", "access_token");
        let sealed = keys.seal("ya29.secret-token", &here).unwrap();
        assert!(sealed.starts_with("sealed:v1:k1:"), "{sealed}");
        assert!(!sealed.contains("secret"), "{sealed}");
        assert_ne!(sealed, keys.seal("ya29.secret-token", &here).unwrap());
        assert_eq!(keys.open(&sealed, &here).unwrap(), "ya29.secret-token");
        assert_eq!(
            keys.open(&sealed, &place("u2", "access_token")),
            Err(OpenError::Damaged)
        );
        assert_eq!(
            keys.open(&sealed, &place("u1", "refresh_token")),
            Err(OpenError::Damaged)
        );
        let mut flipped = sealed.clone().into_bytes();
        let last = flipped.len() - 2;
        flipped[last] = if flipped[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(
            keys.open(&String::from_utf8(flipped).unwrap(), &here),
            Err(OpenError::Damaged)
        );
        assert_eq!(keys.open("legacy-plain", &here).unwrap(), "legacy-plain");
    }

    #[test]
    fn a_new_key_seals_while_the_old_one_still_opens() {
        let old = TokenKeys::from_setting(Some(&format!("old:{}", key(1))), &[]).unwrap();
        let here = place("u1", "refresh_token");
        let sealed = old.seal("r-1", &here).unwrap();
        let both =
            TokenKeys::from_setting(Some(&format!("new:{}, old:{}", key(2), key(1))), &[]).unwrap();
        assert_eq!(both.current(), "new");
        assert!(!both.is_current(&sealed) && old.is_current(&sealed));
        assert_eq!(both.open(&sealed, &here).unwrap(), "r-1");
        let resealed = both.seal("r-1", &here).unwrap();
        assert!(both.is_current(&resealed));
        let new = TokenKeys::from_setting(Some(&format!("new:{}", key(2))), &[]).unwrap();
        assert_eq!(new.open(&resealed, &here).unwrap(), "r-1");
        let derived = TokenKeys::from_setting(None, &[3; 64]).unwrap();
        let before = derived.seal("r-0", &here).unwrap();
        let listed = TokenKeys::from_setting(Some(&format!("new:{}", key(2))), &[3; 64]).unwrap();
        assert_eq!(listed.open(&before, &here).unwrap(), "r-0");
        assert_eq!(
            new.open(&sealed, &here),
            Err(OpenError::UnknownKey("old".into()))
        );
    }

    #[test]
    fn without_the_setting_the_key_follows_the_session_secret() {
        let a = TokenKeys::from_setting(None, &[7; 64]).unwrap();
        let same = TokenKeys::from_setting(Some(" "), &[7; 64]).unwrap();
        let other = TokenKeys::from_setting(None, &[8; 64]).unwrap();
        let here = place("u", "access_token");
        let sealed = a.seal("t", &here).unwrap();
        assert_eq!(a.current(), SESSION_KEY_ID);
        assert_eq!(same.open(&sealed, &here).unwrap(), "t");
        assert_eq!(other.open(&sealed, &here), Err(OpenError::Damaged));
    }

    #[test]
    fn unusable_settings_are_refused_with_the_reason() {
        for (setting, why) in [
            ("k1", "not id:base64-key"),
            ("k1:***", "not base64"),
            (&*format!("k1:{}", STANDARD.encode([1; 16])), "has 16 bytes"),
            (&*format!("k 1:{}", key(1)), "key id"),
            (&*format!("k1:{},k1:{}", key(1), key(2)), "given twice"),
            (",", "no key"),
        ] {
            let e = TokenKeys::from_setting(Some(setting), &[]).unwrap_err();
            assert!(e.to_string().contains(why), "{setting}: {e}");
        }
    }
}
