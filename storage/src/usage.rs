//! The append-only usage ledger (table `usage_events`).

use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::StorageError;

/// Kinds of billable usage, as stored in `usage_events.kind`.
pub mod kind {
    /// Characters of text translation.
    pub const TEXT_TRANSLATION: &str = "text_translation_characters";
    /// Characters of document translation.
    pub const DOCUMENT_TRANSLATION: &str = "document_translation_characters";
    /// Characters of text improvement (rephrasing).
    pub const TEXT_IMPROVEMENT: &str = "text_improvement_characters";
    /// Milliseconds of speech-to-text.
    pub const SPEECH_TO_TEXT: &str = "speech_to_text_milliseconds";
    /// Milliseconds of speech-to-speech.
    pub const SPEECH_TO_SPEECH: &str = "speech_to_speech_milliseconds";
    /// Characters of text-to-speech.
    pub const TEXT_TO_SPEECH: &str = "text_to_speech_characters";
    /// Every kind.
    pub const ALL: [&str; 6] = [
        TEXT_TRANSLATION,
        DOCUMENT_TRANSLATION,
        TEXT_IMPROVEMENT,
        SPEECH_TO_TEXT,
        SPEECH_TO_SPEECH,
        TEXT_TO_SPEECH,
    ];
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

/// Appends an entry like [`record`], committing the enclosing transaction (or
/// the statement's own) without waiting for the WAL flush
/// (`synchronous_commit = off`, local to that transaction). The entry is visible
/// at once (limits and reports see it); only a crash of PostgreSQL itself within
/// about 3 × `wal_writer_delay` (600 ms by default) of the commit can lose it,
/// never an application crash. Used for request metering, where the flush would
/// otherwise cost more than a short translation (see `tolk-bench analytics`).
pub async fn record_relaxed(
    conn: &mut PgConnection,
    event: &UsageEvent<'_>,
) -> Result<(), StorageError> {
    sqlx::query!(
        r#"INSERT INTO usage_events (organization_id, api_key_id, kind, amount, custom_tag, document_id)
           SELECT $1, $2, $3, $4, $5, $6
           FROM (SELECT set_config('synchronous_commit', 'off', true)) AS relaxed
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

/// Appends the entry of a request (never a document's) and returns its id. With
/// `durable` the commit waits for the WAL flush; without, it does not (see
/// [`record_relaxed`]).
pub async fn append(
    pool: &PgPool,
    event: &UsageEvent<'_>,
    durable: bool,
) -> Result<i64, StorageError> {
    Ok(sqlx::query_scalar!(
        r#"INSERT INTO usage_events (organization_id, api_key_id, kind, amount, custom_tag)
           SELECT $1, $2, $3, $4, $5
           FROM (SELECT CASE WHEN $6 THEN '' ELSE set_config('synchronous_commit', 'off', true) END)
                AS relaxed
           RETURNING id"#,
        event.organization_id,
        event.api_key_id,
        event.kind,
        event.amount,
        event.custom_tag,
        durable
    )
    .fetch_one(pool)
    .await?)
}

/// Appends the reversal of entry `entry_id` (the same key, kind and tag, the
/// negated amount): the ledger stays append-only, and its sums no longer count
/// a request that was metered before it failed. An entry is reversed at most
/// once; a second reversal is ignored.
pub async fn reverse(pool: &PgPool, entry_id: i64) -> Result<(), StorageError> {
    sqlx::query!(
        r#"INSERT INTO usage_events (organization_id, api_key_id, kind, amount, custom_tag, reverses)
           SELECT organization_id, api_key_id, kind, -amount, custom_tag, id
           FROM usage_events WHERE id = $1 AND reverses IS NULL
           ON CONFLICT (reverses) WHERE reverses IS NOT NULL DO NOTHING"#,
        entry_id
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// A key's character usage in the current period and its limit, as
/// `GET /v2/usage` reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyCharacters {
    /// Characters billed to the key in the current period (UTC calendar month):
    /// text translation, document translation and text improvement.
    pub count: i64,
    /// The key's `character_limit`; `None` when the key has no limit.
    pub limit: Option<i64>,
}

/// Characters billed to `api_key_id` in the current period and the key's
/// character limit; `None` if the key does not exist.
pub async fn key_characters(
    conn: &mut PgConnection,
    api_key_id: &str,
) -> Result<Option<KeyCharacters>, StorageError> {
    let Some(limit) = sqlx::query_scalar!(
        "SELECT character_limit FROM api_keys WHERE key_id = $1",
        api_key_id
    )
    .fetch_optional(&mut *conn)
    .await?
    else {
        return Ok(None);
    };
    let count =
        crate::limits::period_usage(conn, api_key_id, crate::limits::Meter::Characters).await?;
    Ok(Some(KeyCharacters { count, limit }))
}
