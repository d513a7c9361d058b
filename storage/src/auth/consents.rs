//! Answered consent forms: each consent token counts once.

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::StorageError;

/// Records the answer to the consent form whose token has `token_digest`;
/// false when that form was answered already.
pub async fn answer_once(
    pool: &PgPool,
    token_digest: &str,
    expires_at: DateTime<Utc>,
) -> Result<bool, StorageError> {
    let done = sqlx::query!(
        r#"INSERT INTO oauth_consent_answers (token_digest, expires_at) VALUES ($1, $2)
           ON CONFLICT (token_digest) DO NOTHING"#,
        token_digest,
        expires_at
    )
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Deletes the answers whose tokens expired (they could not be replayed).
pub async fn prune(pool: &PgPool) -> Result<u64, StorageError> {
    let done = sqlx::query!("DELETE FROM oauth_consent_answers WHERE expires_at < now()")
        .execute(pool)
        .await?;
    Ok(done.rows_affected())
}
