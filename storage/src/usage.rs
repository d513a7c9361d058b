//! The append-only usage ledger (table `usage_events`).

use sqlx::PgConnection;
use uuid::Uuid;

use crate::StorageError;

/// Kinds of billable usage, as stored in `usage_events.kind`.
pub mod kind {
    /// Characters of text translation.
    pub const TEXT_TRANSLATION: &str = "text_translation_characters";
    /// Characters of document translation.
    pub const DOCUMENT_TRANSLATION: &str = "document_translation_characters";
    /// Characters of text improvement (`/v2/write/*`).
    pub const TEXT_IMPROVEMENT: &str = "text_improvement_characters";
    /// Milliseconds of audio transcribed (voice translation jobs).
    pub const SPEECH_TO_TEXT: &str = "speech_to_text_milliseconds";
    /// Milliseconds of audio converted to another voice (`POST /v1/vc/convert`).
    pub const SPEECH_TO_SPEECH: &str = "speech_to_speech_milliseconds";
}

/// One ledger entry.
#[derive(Debug, Clone)]
pub struct UsageEvent<'a> {
    /// Organization billed.
    pub organization_id: Uuid,
    /// Key that caused it.
    pub api_key_id: &'a str,
    /// One of [`kind`].
    pub kind: &'a str,
    /// Characters or milliseconds.
    pub amount: i64,
    /// The client's reporting tag.
    pub custom_tag: Option<&'a str>,
    /// The document billed, for document translations (billed once).
    pub document_id: Option<&'a str>,
}

/// Appends an entry. A second entry of the same kind for the same document is
/// ignored (a re-run job bills once).
pub async fn record(conn: &mut PgConnection, event: &UsageEvent<'_>) -> Result<(), StorageError> {
    sqlx::query!(
        r#"INSERT INTO usage_events (organization_id, api_key_id, kind, amount, custom_tag, document_id)
           VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (document_id, kind) WHERE document_id IS NOT NULL DO NOTHING"#,
        event.organization_id,
        event.api_key_id,
        event.kind,
        event.amount,
        event.custom_tag,
        event.document_id
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Total of one kind recorded for a key.
pub async fn total_for_key(
    conn: &mut PgConnection,
    api_key_id: &str,
    kind: &str,
) -> Result<i64, StorageError> {
    Ok(sqlx::query_scalar!(
        r#"SELECT COALESCE(sum(amount), 0)::bigint AS "n!" FROM usage_events
           WHERE api_key_id = $1 AND kind = $2"#,
        api_key_id,
        kind
    )
    .fetch_one(&mut *conn)
    .await?)
}

/// A key's character usage and its limit, as `GET /v2/usage` reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyCharacters {
    /// Characters billed to the key so far: text plus document translation.
    pub count: i64,
    /// The key's `character_limit`; `None` when the key has no limit.
    pub limit: Option<i64>,
}

/// Characters billed to `api_key_id` (text and document translation, all time)
/// and the key's character limit; `None` if the key does not exist.
pub async fn key_characters(
    conn: &mut PgConnection,
    api_key_id: &str,
) -> Result<Option<KeyCharacters>, StorageError> {
    let row = sqlx::query!(
        r#"SELECT k.character_limit,
                  COALESCE((SELECT sum(u.amount) FROM usage_events u
                            WHERE u.api_key_id = k.key_id AND u.kind = ANY($2)), 0)::bigint AS "count!"
           FROM api_keys k WHERE k.key_id = $1"#,
        api_key_id,
        &[kind::TEXT_TRANSLATION, kind::DOCUMENT_TRANSLATION] as &[&str]
    )
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(|r| KeyCharacters {
        count: r.count,
        limit: r.character_limit,
    }))
}
