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
    /// The key's usage limits (`None` in a field: no limit).
    pub limits: Limits,
}

/// A key's usage limits per monthly period (UTC calendar month); `None` is no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// Characters of text translation, document translation and text improvement.
    pub characters: Option<i64>,
    /// Milliseconds of speech-to-text.
    pub speech_to_text_milliseconds: Option<i64>,
    /// Milliseconds of speech-to-speech.
    pub speech_to_speech_milliseconds: Option<i64>,
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
            limits: Limits::default(),
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
        r#"SELECT key_id, organization_id, label, digest, is_admin, created_at, deactivated_at,
                  character_limit, speech_to_text_milliseconds_limit,
                  speech_to_speech_milliseconds_limit
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
        limits: Limits {
            characters: row.character_limit,
            speech_to_text_milliseconds: row.speech_to_text_milliseconds_limit,
            speech_to_speech_milliseconds: row.speech_to_speech_milliseconds_limit,
        },
    }))
}

/// The columns of [`ApiKey`], in the order the queries below select them.
macro_rules! key_from_row {
    ($row:expr) => {{
        let row = $row;
        ApiKey {
            key_id: row.key_id,
            organization_id: row.organization_id,
            label: row.label,
            is_admin: row.is_admin,
            created_at: row.created_at,
            deactivated_at: row.deactivated_at,
            limits: Limits {
                characters: row.character_limit,
                speech_to_text_milliseconds: row.speech_to_text_milliseconds_limit,
                speech_to_speech_milliseconds: row.speech_to_speech_milliseconds_limit,
            },
        }
    }};
}

/// The key that carries the usage of a Bearer token on the translation and voice
/// APIs: one per token subject (`key_id` such as `oauth-user-…`), created on first
/// use in the organization of the authority whose domain is the token's `aud`.
/// Its stored digest is not hex, so it can never be presented as a secret key.
/// `None` when no authority has that domain.
pub async fn bearer_key(
    pool: &PgPool,
    key_id: &str,
    authority_domain: &str,
    label: &str,
) -> Result<Option<ApiKey>, StorageError> {
    // A concurrent first use can lose the insert race and see nothing: once more.
    match bearer_key_once(pool, key_id, authority_domain, label).await? {
        Some(k) => Ok(Some(k)),
        None => bearer_key_once(pool, key_id, authority_domain, label).await,
    }
}

async fn bearer_key_once(
    pool: &PgPool,
    key_id: &str,
    authority_domain: &str,
    label: &str,
) -> Result<Option<ApiKey>, StorageError> {
    let row = sqlx::query!(
        r#"WITH created AS (
               INSERT INTO api_keys (key_id, organization_id, label, digest, is_admin)
               SELECT $1, a.organization_id, $3, '-', false
               FROM authorities a WHERE a.domain = $2
               ON CONFLICT (key_id) DO NOTHING
               RETURNING key_id, organization_id, label, is_admin, created_at, deactivated_at,
                         character_limit, speech_to_text_milliseconds_limit,
                         speech_to_speech_milliseconds_limit)
           SELECT key_id AS "key_id!", organization_id AS "organization_id!", label AS "label!",
                  is_admin AS "is_admin!", created_at AS "created_at!", deactivated_at,
                  character_limit, speech_to_text_milliseconds_limit,
                  speech_to_speech_milliseconds_limit
           FROM created
           UNION ALL
           SELECT key_id, organization_id, label, is_admin, created_at, deactivated_at,
                  character_limit, speech_to_text_milliseconds_limit,
                  speech_to_speech_milliseconds_limit
           FROM api_keys WHERE key_id = $1 AND digest = '-'
           LIMIT 1"#,
        key_id,
        authority_domain,
        label
    )
    .fetch_optional(pool)
    .await?;
    Ok(row
        .map(|r| key_from_row!(r))
        .filter(|k| k.deactivated_at.is_none()))
}

/// The developer keys (not admin keys) of an organization, oldest first,
/// deactivated ones included.
pub async fn list_developer_keys(
    pool: &PgPool,
    organization_id: Uuid,
) -> Result<Vec<ApiKey>, StorageError> {
    let rows = sqlx::query!(
        r#"SELECT key_id, organization_id, label, is_admin, created_at, deactivated_at,
                  character_limit, speech_to_text_milliseconds_limit,
                  speech_to_speech_milliseconds_limit
           FROM api_keys WHERE organization_id = $1 AND NOT is_admin
           ORDER BY created_at, key_id"#,
        organization_id
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| key_from_row!(r)).collect())
}

/// Deactivates a developer key of the organization, for good (a key already
/// deactivated keeps its first deactivation time). `None` when the organization
/// has no such developer key.
pub async fn deactivate(
    pool: &PgPool,
    organization_id: Uuid,
    key_id: &str,
) -> Result<Option<ApiKey>, StorageError> {
    let row = sqlx::query!(
        r#"UPDATE api_keys SET deactivated_at = COALESCE(deactivated_at, now())
           WHERE key_id = $1 AND organization_id = $2 AND NOT is_admin
           RETURNING key_id, organization_id, label, is_admin, created_at, deactivated_at,
                     character_limit, speech_to_text_milliseconds_limit,
                     speech_to_speech_milliseconds_limit"#,
        key_id,
        organization_id
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| key_from_row!(r)))
}

/// Renames a developer key of the organization; `None` when there is no such key.
pub async fn set_label(
    pool: &PgPool,
    organization_id: Uuid,
    key_id: &str,
    label: &str,
) -> Result<Option<ApiKey>, StorageError> {
    let row = sqlx::query!(
        r#"UPDATE api_keys SET label = $3
           WHERE key_id = $1 AND organization_id = $2 AND NOT is_admin
           RETURNING key_id, organization_id, label, is_admin, created_at, deactivated_at,
                     character_limit, speech_to_text_milliseconds_limit,
                     speech_to_speech_milliseconds_limit"#,
        key_id,
        organization_id,
        label
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| key_from_row!(r)))
}

/// Replaces all limits of a developer key of the organization; `None` when there
/// is no such key.
pub async fn set_limits(
    pool: &PgPool,
    organization_id: Uuid,
    key_id: &str,
    limits: Limits,
) -> Result<Option<ApiKey>, StorageError> {
    let row = sqlx::query!(
        r#"UPDATE api_keys SET character_limit = $3, speech_to_text_milliseconds_limit = $4,
                               speech_to_speech_milliseconds_limit = $5
           WHERE key_id = $1 AND organization_id = $2 AND NOT is_admin
           RETURNING key_id, organization_id, label, is_admin, created_at, deactivated_at,
                     character_limit, speech_to_text_milliseconds_limit,
                     speech_to_speech_milliseconds_limit"#,
        key_id,
        organization_id,
        limits.characters,
        limits.speech_to_text_milliseconds,
        limits.speech_to_speech_milliseconds
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| key_from_row!(r)))
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
