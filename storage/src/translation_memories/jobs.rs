//! TMX import and export jobs (table `translation_memory_jobs`): the public
//! state polled at `GET /v3/translation_memories/jobs/{id}`.
//!
//! An import is created `awaiting_input`; the upload of its file moves it to
//! `processing` in the transaction that enqueues its queue job; the worker ends
//! it `completed` in the very transaction that loads the memory (so a completed
//! import always has its whole memory, and a failed one none of it) or
//! `failed`. An export is created `processing` with its queue job and ends
//! `completed` (the file stored) or `failed`. `expired` is not stored: an
//! import still awaiting its file after `expires_at`, or a completed export
//! whose download period is over, reads as expired.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::StorageError;

/// Status values (as on the wire, but `expired`, which is computed).
pub mod status {
    /// Import created; its file is not uploaded yet.
    pub const AWAITING_INPUT: &str = "awaiting_input";
    /// Queued or running.
    pub const PROCESSING: &str = "processing";
    /// Done.
    pub const COMPLETED: &str = "completed";
    /// Failed; see `error_message`.
    pub const FAILED: &str = "failed";
    /// Upload or download period over (computed, never stored).
    pub const EXPIRED: &str = "expired";
}

/// Operation values.
pub mod operation {
    /// TMX → new memory.
    pub const IMPORT: &str = "import";
    /// Memory → TMX.
    pub const EXPORT: &str = "export";
}

/// A job row.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TmJob {
    /// Public id.
    pub id: Uuid,
    /// Owner.
    pub organization_id: Uuid,
    /// The key that created it.
    pub api_key_id: String,
    /// `import` or `export`.
    pub operation: String,
    /// See [`status`].
    pub status: String,
    /// The memory created (import) or read (export).
    pub translation_memory_id: Uuid,
    /// Name of the memory an import creates.
    pub display_name: Option<String>,
    /// Signing secret.
    pub secret: String,
    /// Declared file name (import).
    pub file_name: Option<String>,
    /// Declared content type (import).
    pub content_type: Option<String>,
    /// Declared (import) or written (export) size in bytes.
    pub content_length: Option<i64>,
    /// Object key of the uploaded or exported file.
    pub object: String,
    /// Units left out by an import.
    pub skipped_segment_count: Option<i64>,
    /// The first skipped units: `[{line, reason}]`.
    pub skipped: Option<serde_json::Value>,
    /// Why it failed.
    pub error_message: Option<String>,
    /// Runs started.
    pub attempts: i32,
    /// Trace id of the create request.
    pub trace_id: String,
    /// Upload deadline (import) or end of the download period (export).
    pub expires_at: Option<DateTime<Utc>>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

impl TmJob {
    /// The status as reported at `now` (with `expired` computed).
    pub fn status_at(&self, now: DateTime<Utc>) -> &str {
        let past = self.expires_at.is_some_and(|t| t < now);
        match self.status.as_str() {
            status::AWAITING_INPUT if past => status::EXPIRED,
            status::COMPLETED if past && self.operation == operation::EXPORT => status::EXPIRED,
            s => s,
        }
    }
}

/// A new job, as the API records it.
#[derive(Debug, Clone)]
pub struct NewTmJob {
    /// Public id.
    pub id: Uuid,
    /// Owner.
    pub organization_id: Uuid,
    /// The key that created it.
    pub api_key_id: String,
    /// `import` or `export`.
    pub operation: &'static str,
    /// Initial status (`awaiting_input` for imports, `processing` for exports).
    pub status: &'static str,
    /// Memory created or read.
    pub translation_memory_id: Uuid,
    /// Name of the memory an import creates.
    pub display_name: Option<String>,
    /// Signing secret.
    pub secret: String,
    /// Declared file name.
    pub file_name: Option<String>,
    /// Declared content type.
    pub content_type: Option<String>,
    /// Declared size.
    pub content_length: Option<i64>,
    /// Object key of the file.
    pub object: String,
    /// Trace id.
    pub trace_id: String,
    /// Upload deadline (imports).
    pub expires_at: Option<DateTime<Utc>>,
    /// Queue job id (exports, enqueued at once).
    pub queue_job_id: Option<String>,
}

/// Inserts a job.
pub async fn insert(conn: &mut PgConnection, j: &NewTmJob) -> Result<(), StorageError> {
    sqlx::query(
        "INSERT INTO translation_memory_jobs (id, organization_id, api_key_id, operation, status,
             translation_memory_id, display_name, secret, file_name, content_type, content_length,
             object, trace_id, expires_at, queue_job_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
    )
    .bind(j.id)
    .bind(j.organization_id)
    .bind(&j.api_key_id)
    .bind(j.operation)
    .bind(j.status)
    .bind(j.translation_memory_id)
    .bind(&j.display_name)
    .bind(&j.secret)
    .bind(&j.file_name)
    .bind(&j.content_type)
    .bind(j.content_length)
    .bind(&j.object)
    .bind(&j.trace_id)
    .bind(j.expires_at)
    .bind(&j.queue_job_id)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

const COLUMNS: &str = "id, organization_id, api_key_id, operation, status, translation_memory_id,
    display_name, secret, file_name, content_type, content_length, object, skipped_segment_count,
    skipped, error_message, attempts, trace_id, expires_at, created_at, updated_at";

/// Reads a job.
pub async fn get(pool: &PgPool, id: Uuid) -> Result<Option<TmJob>, StorageError> {
    Ok(sqlx::query_as::<_, TmJob>(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM translation_memory_jobs WHERE id = $1"
    )))
    .bind(id)
    .fetch_optional(pool)
    .await?)
}

/// awaiting_input → processing with its queue job (in the enqueueing
/// transaction); false when the job was not awaiting its file.
pub async fn mark_uploaded(
    conn: &mut PgConnection,
    id: Uuid,
    queue_job_id: &str,
    bytes: i64,
) -> Result<bool, StorageError> {
    let res = sqlx::query(
        "UPDATE translation_memory_jobs SET status = 'processing', queue_job_id = $2,
             content_length = $3, updated_at = now()
         WHERE id = $1 AND status = 'awaiting_input' AND expires_at > now()",
    )
    .bind(id)
    .bind(queue_job_id)
    .bind(bytes)
    .execute(&mut *conn)
    .await?;
    Ok(res.rows_affected() == 1)
}

/// Counts a run of a processing job; false when it already ended.
pub async fn start(pool: &PgPool, id: Uuid) -> Result<bool, StorageError> {
    let res = sqlx::query(
        "UPDATE translation_memory_jobs SET attempts = attempts + 1, updated_at = now()
         WHERE id = $1 AND status = 'processing'",
    )
    .bind(id)
    .execute(pool)
    .await?;
    Ok(res.rows_affected() == 1)
}

/// processing → completed for an import (in the loading transaction).
pub async fn complete_import(
    conn: &mut PgConnection,
    id: Uuid,
    skipped_count: i64,
    skipped: &serde_json::Value,
) -> Result<bool, StorageError> {
    let res = sqlx::query(
        "UPDATE translation_memory_jobs SET status = 'completed', skipped_segment_count = $2,
             skipped = $3, error_message = NULL, updated_at = now()
         WHERE id = $1 AND status = 'processing'",
    )
    .bind(id)
    .bind(skipped_count)
    .bind(skipped)
    .execute(&mut *conn)
    .await?;
    Ok(res.rows_affected() == 1)
}

/// processing → completed for an export whose file is stored.
pub async fn complete_export(
    pool: &PgPool,
    id: Uuid,
    bytes: i64,
    download_until: DateTime<Utc>,
) -> Result<bool, StorageError> {
    let res = sqlx::query(
        "UPDATE translation_memory_jobs SET status = 'completed', content_length = $2,
             expires_at = $3, error_message = NULL, updated_at = now()
         WHERE id = $1 AND status = 'processing'",
    )
    .bind(id)
    .bind(bytes)
    .bind(download_until)
    .execute(pool)
    .await?;
    Ok(res.rows_affected() == 1)
}

/// Ends a job as failed (unless it completed).
pub async fn fail(pool: &PgPool, id: Uuid, message: &str) -> Result<(), StorageError> {
    sqlx::query(
        "UPDATE translation_memory_jobs SET status = 'failed', error_message = $2, updated_at = now()
         WHERE id = $1 AND status <> 'completed'",
    )
    .bind(id)
    .bind(message)
    .execute(pool)
    .await?;
    Ok(())
}

/// Translation-memory jobs as a job kind: a `processing` job whose queue
/// job is over ends `failed`; a job goes `finished` after it ended or its
/// upload or download period did, with its file.
pub struct TmJobs;

#[async_trait::async_trait]
impl crate::lifecycle::JobKind for TmJobs {
    fn name(&self) -> &'static str {
        "translation memory jobs"
    }

    async fn fail_lost(&self, db: &PgPool) -> Result<u64, StorageError> {
        let res = sqlx::query!(
            r#"UPDATE translation_memory_jobs t
               SET status = 'failed', updated_at = now(),
                   error_message = 'The translation memory job ended without finishing: '
                       || e.error
               FROM ended_queue_jobs e
               WHERE e.id = t.queue_job_id AND t.status = 'processing'"#
        )
        .execute(db)
        .await?;
        Ok(res.rows_affected())
    }

    async fn reopen(
        &self,
        conn: &mut sqlx::PgConnection,
        queue_job_id: &str,
    ) -> Result<bool, StorageError> {
        let res = sqlx::query!(
            r#"UPDATE translation_memory_jobs
               SET status = 'processing', error_message = NULL, attempts = 0, updated_at = now()
               WHERE queue_job_id = $1 AND status = 'failed'"#,
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
        let rows = sqlx::query!(
            r#"WITH expired AS (
                   SELECT id FROM translation_memory_jobs
                   WHERE status <> 'processing'
                     AND GREATEST(updated_at, COALESCE(expires_at, updated_at))
                         < now() - make_interval(secs => $1)
                   LIMIT 500 FOR UPDATE SKIP LOCKED)
               DELETE FROM translation_memory_jobs t USING expired WHERE t.id = expired.id
               RETURNING t.object"#,
            retention.finished.as_secs_f64()
        )
        .fetch_all(db)
        .await?;
        Ok(rows.into_iter().map(|r| r.object).collect())
    }
}

/// Notes why a run failed before its retry (the status stays `processing`).
pub async fn note_retry(pool: &PgPool, id: Uuid, message: &str) -> Result<(), StorageError> {
    sqlx::query(
        "UPDATE translation_memory_jobs SET error_message = $2, updated_at = now()
         WHERE id = $1 AND status = 'processing'",
    )
    .bind(id)
    .bind(message)
    .execute(pool)
    .await?;
    Ok(())
}
