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
