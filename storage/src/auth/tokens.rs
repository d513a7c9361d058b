//! Issued tokens: one row per access token (its `jti`) with the refresh token
//! issued beside it, grouped in families for rotation and replay detection.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use crate::StorageError;

/// A stored token pair.
#[derive(Debug, Clone)]
pub struct Token {
    /// The access token's `jti`.
    pub jti: Uuid,
    /// The grant it belongs to.
    pub family_id: Uuid,
    /// The client.
    pub application_id: Uuid,
    /// The user (`None` for client_credentials).
    pub user_id: Option<String>,
    /// The code it was issued from.
    pub code_digest: Option<String>,
    /// Granted scopes.
    pub scopes: Vec<String>,
    /// RFC 8707 resource.
    pub resource: Option<String>,
    /// Access token expiry.
    pub expires_at: DateTime<Utc>,
    /// Digest of the refresh token, if any.
    pub refresh_digest: Option<String>,
    /// Refresh token expiry.
    pub refresh_expires_at: Option<DateTime<Utc>>,
    /// When the refresh token was rotated.
    pub refreshed_at: Option<DateTime<Utc>>,
    /// When the pair was revoked.
    pub revoked_at: Option<DateTime<Utc>>,
    /// Issue time.
    pub created_at: DateTime<Utc>,
}

macro_rules! token_from_row {
    ($r:expr) => {{
        let r = $r;
        Token {
            jti: r.jti,
            family_id: r.family_id,
            application_id: r.application_id,
            user_id: r.user_id,
            code_digest: r.code_digest,
            scopes: r.scopes,
            resource: r.resource,
            expires_at: r.expires_at,
            refresh_digest: r.refresh_digest,
            refresh_expires_at: r.refresh_expires_at,
            refreshed_at: r.refreshed_at,
            revoked_at: r.revoked_at,
            created_at: r.created_at,
        }
    }};
}

/// Records an issued token pair (`created_at` is set by the database).
pub async fn insert(pool: &PgPool, t: &Token) -> Result<(), StorageError> {
    sqlx::query!(
        r#"INSERT INTO oauth_tokens (jti, family_id, application_id, user_id, code_digest, scopes,
                                     resource, expires_at, refresh_digest, refresh_expires_at,
                                     created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"#,
        t.jti,
        t.family_id,
        t.application_id,
        t.user_id,
        t.code_digest,
        &t.scopes,
        t.resource,
        t.expires_at,
        t.refresh_digest,
        t.refresh_expires_at,
        t.created_at
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// What presenting a refresh token found.
#[derive(Debug)]
pub enum Rotation {
    /// A live refresh token, now marked rotated: issue the next pair in its family.
    Fresh(Token),
    /// A refresh token already rotated or revoked: a replay.
    Replayed(Token),
    /// Unknown.
    Unknown,
}

/// Marks the refresh token rotated, atomically; tells whether it was live.
pub async fn rotate(pool: &PgPool, refresh_digest: &str) -> Result<Rotation, StorageError> {
    let row = sqlx::query!(
        r#"WITH rotated AS (
               UPDATE oauth_tokens SET refreshed_at = now()
               WHERE refresh_digest = $1 AND refreshed_at IS NULL AND revoked_at IS NULL
               RETURNING jti)
           SELECT t.jti, t.family_id, t.application_id, t.user_id, t.code_digest, t.scopes,
                  t.resource, t.expires_at, t.refresh_digest, t.refresh_expires_at,
                  t.refreshed_at, t.revoked_at, t.created_at,
                  EXISTS (SELECT 1 FROM rotated) AS "fresh!"
           FROM oauth_tokens t WHERE t.refresh_digest = $1"#,
        refresh_digest
    )
    .fetch_optional(pool)
    .await?;
    Ok(match row {
        None => Rotation::Unknown,
        Some(r) => {
            let fresh = r.fresh;
            let t = token_from_row!(r);
            if fresh {
                Rotation::Fresh(t)
            } else {
                Rotation::Replayed(t)
            }
        }
    })
}

/// Puts a rotated refresh token back (the next pair could not be issued).
pub async fn unrotate(pool: &PgPool, jti: Uuid) -> Result<(), StorageError> {
    sqlx::query!(
        "UPDATE oauth_tokens SET refreshed_at = NULL WHERE jti = $1",
        jti
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// The pair whose refresh token has this digest.
pub async fn by_refresh(
    pool: &PgPool,
    refresh_digest: &str,
) -> Result<Option<Token>, StorageError> {
    let row = sqlx::query!(
        r#"SELECT jti, family_id, application_id, user_id, code_digest, scopes, resource,
                  expires_at, refresh_digest, refresh_expires_at, refreshed_at, revoked_at,
                  created_at
           FROM oauth_tokens WHERE refresh_digest = $1"#,
        refresh_digest
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| token_from_row!(r)))
}

/// The pair of this access token.
pub async fn by_jti(pool: &PgPool, jti: Uuid) -> Result<Option<Token>, StorageError> {
    let row = sqlx::query!(
        r#"SELECT jti, family_id, application_id, user_id, code_digest, scopes, resource,
                  expires_at, refresh_digest, refresh_expires_at, refreshed_at, revoked_at,
                  created_at
           FROM oauth_tokens WHERE jti = $1"#,
        jti
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| token_from_row!(r)))
}

/// Revokes every pair of a family; returns how many were live.
pub async fn revoke_family(pool: &PgPool, family_id: Uuid) -> Result<u64, StorageError> {
    let done = sqlx::query!(
        "UPDATE oauth_tokens SET revoked_at = now() WHERE family_id = $1 AND revoked_at IS NULL",
        family_id
    )
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}

/// Revokes every pair issued from a code (a code redeemed twice).
pub async fn revoke_from_code(pool: &PgPool, code_digest: &str) -> Result<u64, StorageError> {
    let done = sqlx::query!(
        r#"UPDATE oauth_tokens SET revoked_at = now()
           WHERE family_id IN (SELECT family_id FROM oauth_tokens WHERE code_digest = $1)
             AND revoked_at IS NULL"#,
        code_digest
    )
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}

/// Revokes one access token (and the refresh token issued with it).
pub async fn revoke_jti(pool: &PgPool, jti: Uuid) -> Result<(), StorageError> {
    sqlx::query!(
        "UPDATE oauth_tokens SET revoked_at = now() WHERE jti = $1 AND revoked_at IS NULL",
        jti
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Whether a signature-checked access token is still good: not revoked, and not
/// issued before its user's last logout. A token without a row (issued by an
/// earlier deployment with the same key) is judged by its `iat` alone.
pub async fn access_token_live(
    pool: &PgPool,
    jti: Option<Uuid>,
    user_id: Option<&str>,
    iat: i64,
) -> Result<bool, StorageError> {
    let row = sqlx::query!(
        r#"SELECT (SELECT revoked_at IS NULL FROM oauth_tokens WHERE jti = $1) AS "live?",
                  (SELECT created_at FROM oauth_tokens WHERE jti = $1) AS "created_at?",
                  (SELECT logged_out_at FROM users WHERE id = $2) AS "logged_out_at?""#,
        jti,
        user_id
    )
    .fetch_one(pool)
    .await?;
    if row.live == Some(false) {
        return Ok(false);
    }
    if let Some(out) = row.logged_out_at {
        let before_logout = match row.created_at {
            Some(created) => created <= out,
            None => iat <= out.timestamp(),
        };
        if before_logout {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Deletes pairs whose access and refresh tokens both expired more than a day ago.
pub async fn prune(pool: &PgPool) -> Result<u64, StorageError> {
    let done = sqlx::query!(
        r#"DELETE FROM oauth_tokens
           WHERE GREATEST(expires_at, refresh_expires_at) < now() - interval '1 day'"#
    )
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}
