//! Document translations (table `documents`): the public state of a document job,
//! written in the same transaction as its queue job.

use chrono::{DateTime, Utc};
use rand::RngCore;
use sha2::{Digest, Sha256};
use sqlx::{PgConnection, PgPool};
use subtle::ConstantTimeEq;
use uuid::Uuid;

use crate::StorageError;

/// Status values of the DeepL wire format.
pub mod status {
    /// Uploaded, waiting for a worker.
    pub const QUEUED: &str = "queued";
    /// A worker is translating it.
    pub const TRANSLATING: &str = "translating";
    /// The result is ready.
    pub const DONE: &str = "done";
    /// It failed; `error_message` says why.
    pub const ERROR: &str = "error";
}

/// A new document, as the API records it.
#[derive(Debug, Clone)]
pub struct NewDocument {
    /// 32 upper-case hex characters.
    pub id: String,
    /// 64 upper-case hex characters, given to the client once.
    pub key: String,
    /// Owner.
    pub organization_id: Uuid,
    /// The key that uploaded it.
    pub api_key_id: String,
    /// The file name as uploaded.
    pub filename: String,
    /// Extension of the uploaded format.
    pub input_format: String,
    /// Extension of the result format.
    pub output_format: String,
    /// DeepL code, when given.
    pub source_lang: Option<String>,
    /// DeepL code.
    pub target_lang: String,
    /// Object key of the upload.
    pub source_object: String,
    /// apalis job id.
    pub job_id: String,
    /// Trace id of the upload request.
    pub trace_id: String,
    /// Glossaries to apply (their entries are loaded by the worker).
    pub glossary_ids: Vec<Uuid>,
    /// Style rule list to apply.
    pub style_id: Option<Uuid>,
    /// `translate` when JSON placeholders are translated with the text
    /// (`input_conversion_options` `json-placeholders:translate`).
    pub json_placeholders: Option<String>,
    /// `overwrite` when every XLIFF target is translated anew, settled ones
    /// too (`input_conversion_options` `xliff-targets:overwrite`).
    pub xliff_targets: Option<String>,
    /// Whether the delivered document carries the mark of machine
    /// translation (`enable_watermark`).
    pub watermark: bool,
}

/// A document row.
#[derive(Debug, Clone)]
pub struct Document {
    /// 32 upper-case hex characters.
    pub id: String,
    /// Owner.
    pub organization_id: Uuid,
    /// The key that uploaded it.
    pub api_key_id: String,
    /// queued | translating | done | error.
    pub status: String,
    /// The file name as uploaded.
    pub filename: String,
    /// Extension of the uploaded format.
    pub input_format: String,
    /// Extension of the result format.
    pub output_format: String,
    /// DeepL code, when given.
    pub source_lang: Option<String>,
    /// DeepL code.
    pub target_lang: String,
    /// Object key of the upload.
    pub source_object: String,
    /// Object key of the result, once done.
    pub result_object: Option<String>,
    /// Characters billed, once done.
    pub billed_characters: Option<i64>,
    /// Why it failed.
    pub error_message: Option<String>,
    /// 0..1 while translating.
    pub progress: f32,
    /// How many times a worker started it.
    pub attempts: i32,
    /// Trace id of the upload request.
    pub trace_id: String,
    /// Upload time.
    pub created_at: DateTime<Utc>,
    /// When the current attempt started.
    pub started_at: Option<DateTime<Utc>>,
    /// When it reached done or error.
    pub finished_at: Option<DateTime<Utc>>,
    /// When the result was downloaded.
    pub downloaded_at: Option<DateTime<Utc>>,
    /// Glossaries to apply.
    pub glossary_ids: Vec<Uuid>,
    /// Style rule list to apply.
    pub style_id: Option<Uuid>,
    /// See [`NewDocument::json_placeholders`].
    pub json_placeholders: Option<String>,
    /// See [`NewDocument::xliff_targets`].
    pub xliff_targets: Option<String>,
    /// See [`NewDocument::watermark`].
    pub watermark: bool,
    /// What the filter left untranslated and why, a sentence each, once
    /// done (text a PDF shows in a Type3 font, say).
    pub notes: Vec<String>,
}

impl Document {
    /// Estimated seconds until done, from the progress so far.
    pub fn seconds_remaining(&self, now: DateTime<Utc>) -> Option<i64> {
        match self.status.as_str() {
            status::DONE => Some(0),
            status::TRANSLATING => {
                let started = self.started_at?;
                let elapsed = (now - started).num_milliseconds().max(0) as f64 / 1000.0;
                let p = f64::from(self.progress).clamp(0.0, 1.0);
                if p < 0.01 {
                    return Some(elapsed.max(1.0).ceil() as i64);
                }
                Some((elapsed * (1.0 - p) / p).ceil().max(1.0) as i64)
            }
            _ => None,
        }
    }
}

/// A random id of `bytes` bytes as upper-case hex.
pub fn random_upper_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    hex::encode_upper(buf)
}

/// hex SHA-256 of a document key (what is stored).
pub fn key_digest(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// Inserts the row (status queued) inside the caller's transaction.
pub async fn insert(conn: &mut PgConnection, doc: &NewDocument) -> Result<(), StorageError> {
    let digest = key_digest(&doc.key);
    sqlx::query!(
        r#"INSERT INTO documents (id, key_digest, organization_id, api_key_id, filename,
               input_format, output_format, source_lang, target_lang, source_object, job_id, trace_id,
               glossary_ids, style_id, json_placeholders, xliff_targets, watermark)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)"#,
        doc.id,
        digest,
        doc.organization_id,
        doc.api_key_id,
        doc.filename,
        doc.input_format,
        doc.output_format,
        doc.source_lang,
        doc.target_lang,
        doc.source_object,
        doc.job_id,
        doc.trace_id,
        &doc.glossary_ids,
        doc.style_id,
        doc.json_placeholders,
        doc.xliff_targets,
        doc.watermark
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Loads a document by id.
pub async fn get(pool: &PgPool, id: &str) -> Result<Option<Document>, StorageError> {
    Ok(sqlx::query_as!(
        Document,
        r#"SELECT id, organization_id, api_key_id, status, filename, input_format, output_format,
               source_lang, target_lang, source_object, result_object, billed_characters,
               error_message, progress, attempts, trace_id, created_at, started_at,
               finished_at, downloaded_at, glossary_ids, style_id, json_placeholders,
               xliff_targets, watermark, notes
           FROM documents WHERE id = $1"#,
        id
    )
    .fetch_optional(pool)
    .await?)
}

/// Loads a document by id when `key` is its document key and it belongs to
/// `organization_id`, and has not been downloaded yet; `None` otherwise.
pub async fn get_for_client(
    pool: &PgPool,
    id: &str,
    key: &str,
    organization_id: Uuid,
) -> Result<Option<Document>, StorageError> {
    let Some(stored) = sqlx::query_scalar!(
        "SELECT key_digest FROM documents WHERE id = $1 AND organization_id = $2 AND downloaded_at IS NULL",
        id,
        organization_id
    )
    .fetch_optional(pool)
    .await?
    else {
        return Ok(None);
    };
    if !bool::from(key_digest(key).as_bytes().ct_eq(stored.as_bytes())) {
        return Ok(None);
    }
    get(pool, id).await
}

/// Marks a document downloaded, once: returns the result object key if this call
/// took it (done, not downloaded before), `None` otherwise.
pub async fn take_result(pool: &PgPool, id: &str) -> Result<Option<String>, StorageError> {
    Ok(sqlx::query_scalar!(
        r#"UPDATE documents SET downloaded_at = now()
           WHERE id = $1 AND status = 'done' AND downloaded_at IS NULL
           RETURNING result_object AS "result_object!""#,
        id
    )
    .fetch_optional(pool)
    .await?)
}

/// A worker starts (or restarts) the document: status translating, attempts + 1.
/// Returns `false` when the document is already finished (a re-delivered job).
pub async fn start(pool: &PgPool, id: &str) -> Result<bool, StorageError> {
    let res = sqlx::query!(
        r#"UPDATE documents
           SET status = 'translating', started_at = now(), progress = 0, attempts = attempts + 1
           WHERE id = $1 AND status IN ('queued', 'translating')"#,
        id
    )
    .execute(pool)
    .await?;
    Ok(res.rows_affected() == 1)
}

/// Records the detected source language.
pub async fn set_detected_source(pool: &PgPool, id: &str, lang: &str) -> Result<(), StorageError> {
    sqlx::query!(
        "UPDATE documents SET detected_source_lang = $2 WHERE id = $1",
        id,
        lang
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Records progress (0..1) while translating.
pub async fn set_progress(pool: &PgPool, id: &str, progress: f32) -> Result<(), StorageError> {
    sqlx::query!(
        "UPDATE documents SET progress = $2 WHERE id = $1 AND status = 'translating'",
        id,
        progress
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Puts a document back to queued after a transient failure (a retry will follow).
pub async fn requeue(pool: &PgPool, id: &str, reason: &str) -> Result<(), StorageError> {
    sqlx::query!(
        r#"UPDATE documents SET status = 'queued', progress = 0, error_message = $2
           WHERE id = $1 AND status IN ('queued', 'translating')"#,
        id,
        reason
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Ends a document in state error with a human-readable message.
pub async fn fail(pool: &PgPool, id: &str, message: &str) -> Result<(), StorageError> {
    sqlx::query!(
        r#"UPDATE documents SET status = 'error', error_message = $2, finished_at = now()
           WHERE id = $1 AND status IN ('queued', 'translating')"#,
        id,
        message
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Marks a document done, with the notes of what was left untranslated,
/// inside the caller's transaction. Returns `false` if it was already
/// finished (so the caller records usage only once).
pub async fn complete(
    conn: &mut PgConnection,
    id: &str,
    result_object: &str,
    billed_characters: i64,
    notes: &[String],
) -> Result<bool, StorageError> {
    let res = sqlx::query!(
        r#"UPDATE documents
           SET status = 'done', result_object = $2, billed_characters = $3, progress = 1,
               error_message = NULL, finished_at = now(), notes = $4
           WHERE id = $1 AND status IN ('queued', 'translating')"#,
        id,
        result_object,
        billed_characters,
        notes
    )
    .execute(&mut *conn)
    .await?;
    Ok(res.rows_affected() == 1)
}

/// Documents by status, for metrics.
pub async fn counts_by_status(pool: &PgPool) -> Result<Vec<(String, i64)>, StorageError> {
    let rows = sqlx::query!(r#"SELECT status, count(*) AS "n!" FROM documents GROUP BY status"#)
        .fetch_all(pool)
        .await?;
    Ok(rows.into_iter().map(|r| (r.status, r.n)).collect())
}

/// Durations (seconds) of documents finished in the last `window_secs`, for metrics.
pub async fn recent_durations(
    pool: &PgPool,
    window_secs: f64,
) -> Result<Vec<(String, f64)>, StorageError> {
    let rows = sqlx::query!(
        r#"SELECT status, EXTRACT(EPOCH FROM (finished_at - started_at))::float8 AS "secs!"
           FROM documents
           WHERE finished_at > now() - make_interval(secs => $1) AND started_at IS NOT NULL"#,
        window_secs
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| (r.status, r.secs)).collect())
}

/// Objects that can be deleted: sources of finished documents, results downloaded
/// more than `grace_secs` ago, and everything of documents older than `max_age_secs`.
/// Returns (document id, object keys) and forgets the object keys in the rows.
pub async fn expire(
    pool: &PgPool,
    grace_secs: f64,
    max_age_secs: f64,
) -> Result<Vec<(String, Vec<String>)>, StorageError> {
    let rows = sqlx::query!(
        r#"WITH expired AS (
               SELECT id FROM documents
               WHERE (downloaded_at < now() - make_interval(secs => $1))
                  OR (created_at < now() - make_interval(secs => $2) AND status IN ('done', 'error'))
               LIMIT 500 FOR UPDATE SKIP LOCKED)
           DELETE FROM documents d USING expired WHERE d.id = expired.id
           RETURNING d.id, d.source_object, d.result_object"#,
        grace_secs,
        max_age_secs
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let mut objects = vec![r.source_object];
            objects.extend(r.result_object);
            (r.id, objects)
        })
        .collect())
}

/// Documents as a job kind: lost jobs end in `error`; a document goes
/// `downloaded` after its download, or `finished` after its upload when done
/// or failed, with its source and result objects.
pub struct Documents;

#[async_trait::async_trait]
impl crate::lifecycle::JobKind for Documents {
    fn name(&self) -> &'static str {
        "documents"
    }

    async fn fail_lost(&self, db: &PgPool) -> Result<u64, StorageError> {
        fail_lost_jobs(db).await
    }

    async fn reopen(
        &self,
        conn: &mut PgConnection,
        queue_job_id: &str,
    ) -> Result<bool, StorageError> {
        let res = sqlx::query!(
            r#"UPDATE documents
               SET status = 'queued', error_message = NULL, progress = 0, attempts = 0,
                   started_at = NULL, finished_at = NULL
               WHERE job_id = $1 AND status = 'error'"#,
            queue_job_id
        )
        .execute(conn)
        .await?;
        Ok(res.rows_affected() > 0)
    }

    async fn expire(
        &self,
        db: &PgPool,
        retention: &crate::lifecycle::Retention,
    ) -> Result<Vec<String>, StorageError> {
        let downloaded = retention.downloaded.as_secs_f64();
        let expired = expire(db, downloaded, retention.finished.as_secs_f64()).await?;
        Ok(expired.into_iter().flat_map(|(_, keys)| keys).collect())
    }
}

/// Ends in error every unfinished document whose queue job is over (killed, or
/// failed with no attempt left): a safety net so no client polls forever.
pub async fn fail_lost_jobs(pool: &PgPool) -> Result<u64, StorageError> {
    let res = sqlx::query!(
        r#"UPDATE documents d
           SET status = 'error', finished_at = now(),
               error_message = 'The translation job ended without finishing the document: '
                   || e.error
           FROM ended_queue_jobs e
           WHERE e.id = d.job_id AND d.status IN ('queued', 'translating')"#
    )
    .execute(pool)
    .await?;
    Ok(res.rows_affected())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_upper_hex_of_the_wire_lengths() {
        let id = random_upper_hex(16);
        let key = random_upper_hex(32);
        assert_eq!(id.len(), 32);
        assert_eq!(key.len(), 64);
        assert!(
            id.chars()
                .all(|c| c.is_ascii_digit() || ('A'..='F').contains(&c))
        );
    }
}
