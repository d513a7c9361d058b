//! Authorization codes: single use, short-lived, stored as a digest.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use crate::StorageError;

/// A code's grant.
#[derive(Debug, Clone)]
pub struct Code {
    /// Digest of the code (also the `code_digest` of the tokens issued from it).
    pub code_digest: String,
    /// The client it was issued to.
    pub application_id: Uuid,
    /// The user who approved it.
    pub user_id: String,
    /// The redirect URI of the authorization request.
    pub redirect_uri: String,
    /// Granted scopes.
    pub scopes: Vec<String>,
    /// PKCE S256 challenge, if the request had one.
    pub code_challenge: Option<String>,
    /// RFC 8707 resource of the request.
    pub resource: Option<String>,
    /// OIDC nonce of the request.
    pub nonce: Option<String>,
    /// When the user signed in.
    pub auth_time: DateTime<Utc>,
    /// Expiry.
    pub expires_at: DateTime<Utc>,
}

/// Stores a new code.
pub async fn insert(pool: &PgPool, code: &Code) -> Result<(), StorageError> {
    sqlx::query!(
        r#"INSERT INTO oauth_codes (code_digest, application_id, user_id, redirect_uri, scopes,
                                    code_challenge, resource, nonce, auth_time, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"#,
        code.code_digest,
        code.application_id,
        code.user_id,
        code.redirect_uri,
        &code.scopes,
        code.code_challenge,
        code.resource,
        code.nonce,
        code.auth_time,
        code.expires_at
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// What redeeming a code found.
#[derive(Debug)]
pub enum Redeemed {
    /// First use: the code is now spent.
    Fresh(Code),
    /// The code was already used: a replay.
    Reused(Code),
    /// No such code.
    Unknown,
}

/// Marks the code used, atomically; tells whether it was fresh.
pub async fn redeem(pool: &PgPool, code_digest: &str) -> Result<Redeemed, StorageError> {
    let row = sqlx::query!(
        r#"WITH spent AS (
               UPDATE oauth_codes SET used_at = now()
               WHERE code_digest = $1 AND used_at IS NULL
               RETURNING code_digest)
           SELECT c.code_digest, c.application_id, c.user_id, c.redirect_uri, c.scopes,
                  c.code_challenge, c.resource, c.nonce, c.auth_time, c.expires_at,
                  EXISTS (SELECT 1 FROM spent) AS "fresh!"
           FROM oauth_codes c WHERE c.code_digest = $1"#,
        code_digest
    )
    .fetch_optional(pool)
    .await?;
    Ok(match row {
        None => Redeemed::Unknown,
        Some(r) => {
            let fresh = r.fresh;
            let code = Code {
                code_digest: r.code_digest,
                application_id: r.application_id,
                user_id: r.user_id,
                redirect_uri: r.redirect_uri,
                scopes: r.scopes,
                code_challenge: r.code_challenge,
                resource: r.resource,
                nonce: r.nonce,
                auth_time: r.auth_time,
                expires_at: r.expires_at,
            };
            if fresh {
                Redeemed::Fresh(code)
            } else {
                Redeemed::Reused(code)
            }
        }
    })
}

/// Deletes codes that expired more than a day ago; returns how many.
pub async fn prune(pool: &PgPool) -> Result<u64, StorageError> {
    let done = sqlx::query!("DELETE FROM oauth_codes WHERE expires_at < now() - interval '1 day'")
        .execute(pool)
        .await?;
    Ok(done.rows_affected())
}
