//! Organizations and API keys (table `api_keys`).
//!
//! A key is shown to its owner once as `{key_id}.{secret}`. Only
//! `hex(HMAC-SHA512(key = secret, message = key_id))` is stored, and a presented
//! key is checked by recomputing that digest and comparing in constant time.

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha512;
use sqlx::PgPool;
use subtle::ConstantTimeEq;
use uuid::Uuid;

use crate::StorageError;

/// Name of the organization `admin create-key` uses when none exists yet.
pub const DEFAULT_ORGANIZATION: &str = "default";

/// A stored key, without its secret.
#[derive(Debug, Clone)]
pub struct ApiKey {
    /// The public part of the key.
    pub key_id: String,
    /// The organization the key belongs to.
    pub organization_id: Uuid,
    /// A human label.
    pub label: String,
    /// Whether the key may call the admin API.
    pub is_admin: bool,
    /// When the key was created.
    pub created_at: DateTime<Utc>,
    /// When the key was deactivated, if it was.
    pub deactivated_at: Option<DateTime<Utc>>,
}

/// A key just created: the full secret is only available here.
#[derive(Debug, Clone)]
pub struct NewKey {
    /// The stored record.
    pub key: ApiKey,
    /// `{key_id}.{secret}`: show it once, never store it.
    pub secret: String,
}

/// `hex(HMAC-SHA512(key = secret, message = key_id))`.
pub fn digest(key_id: &str, secret: &str) -> String {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = <Hmac<Sha512> as Mac>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
    mac.update(key_id.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    hex::encode(buf)
}

/// Returns the id of the organization named `name`, creating it if needed.
pub async fn ensure_organization(pool: &PgPool, name: &str) -> Result<Uuid, StorageError> {
    if let Some(id) = sqlx::query_scalar!(
        "SELECT id FROM organizations WHERE name = $1 ORDER BY created_at LIMIT 1",
        name
    )
    .fetch_optional(pool)
    .await?
    {
        return Ok(id);
    }
    let id = Uuid::new_v4();
    sqlx::query!(
        "INSERT INTO organizations (id, name) VALUES ($1, $2)",
        id,
        name
    )
    .execute(pool)
    .await?;
    Ok(id)
}

/// Creates a key in `organization_id`.
pub async fn create(
    pool: &PgPool,
    organization_id: Uuid,
    label: &str,
    is_admin: bool,
) -> Result<NewKey, StorageError> {
    let key_id = random_hex(16);
    let secret = random_hex(32);
    let digest = digest(&key_id, &secret);
    let row = sqlx::query!(
        r#"INSERT INTO api_keys (key_id, organization_id, label, digest, is_admin)
           VALUES ($1, $2, $3, $4, $5)
           RETURNING created_at"#,
        key_id,
        organization_id,
        label,
        digest,
        is_admin
    )
    .fetch_one(pool)
    .await?;
    Ok(NewKey {
        secret: format!("{key_id}.{secret}"),
        key: ApiKey {
            key_id,
            organization_id,
            label: label.to_owned(),
            is_admin,
            created_at: row.created_at,
            deactivated_at: None,
        },
    })
}

/// Checks a presented `{key_id}.{secret}`; returns the active key it names, or
/// `None` when it is malformed, unknown, wrong or deactivated.
pub async fn authenticate(pool: &PgPool, presented: &str) -> Result<Option<ApiKey>, StorageError> {
    // DeepL clients may carry a ":fx" free-account suffix; it is not part of our keys.
    let presented = presented.trim().trim_end_matches(":fx");
    let Some((key_id, secret)) = presented.split_once('.') else {
        return Ok(None);
    };
    if key_id.is_empty() || secret.is_empty() || key_id.len() > 128 {
        return Ok(None);
    }
    let Some(row) = sqlx::query!(
        r#"SELECT key_id, organization_id, label, digest, is_admin, created_at, deactivated_at
           FROM api_keys WHERE key_id = $1"#,
        key_id
    )
    .fetch_optional(pool)
    .await?
    else {
        return Ok(None);
    };
    let expected = digest(key_id, secret);
    let matches: bool = expected.as_bytes().ct_eq(row.digest.as_bytes()).into();
    if !matches || row.deactivated_at.is_some() {
        return Ok(None);
    }
    Ok(Some(ApiKey {
        key_id: row.key_id,
        organization_id: row.organization_id,
        label: row.label,
        is_admin: row.is_admin,
        created_at: row.created_at,
        deactivated_at: row.deactivated_at,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_hex_hmac_sha512_keyed_by_secret() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        assert_eq!(
            digest("what do ya want for nothing?", "Jefe"),
            "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"
        );
    }

    #[test]
    fn random_keys_differ() {
        assert_ne!(random_hex(16), random_hex(16));
        assert_eq!(random_hex(16).len(), 32);
    }
}
