//! Quality evaluations (table `quality_evaluations`): the public state of an
//! evaluation job, written in the same transaction as its queue job.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::StorageError;

/// Status values.
pub mod status {
    /// Waiting for a worker.
    pub const QUEUED: &str = "queued";
    /// A worker is evaluating it.
    pub const PROCESSING: &str = "processing";
    /// The report is ready.
    pub const DONE: &str = "done";
    /// It failed; `error_message` says why.
    pub const ERROR: &str = "error";
}

/// How long a finished evaluation stays pollable (the wire format's 24 hours).
pub const RETENTION: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// A new evaluation, as the API (or the document upload) records it.
#[derive(Debug, Clone)]
pub struct NewEvaluation {
    /// Job id given to the client.
    pub id: Uuid,
    /// Owner.
    pub organization_id: Uuid,
    /// The key that submitted it.
    pub api_key_id: String,
    /// DeepL source code (for a document without one: empty until detected).
    pub source_lang: String,
    /// DeepL target code.
    pub target_lang: String,
    /// Segments and options of a text job.
    pub request: Option<serde_json::Value>,
    /// The document evaluated, for document jobs.
    pub document_id: Option<String>,
    /// Number of segments (text jobs).
    pub segment_count: i32,
    /// apalis job id, when enqueued with the row.
    pub job_id: Option<String>,
    /// Trace id of the request.
    pub trace_id: String,
}

/// An evaluation row (without its request body).
#[derive(Debug, Clone)]
pub struct Evaluation {
    /// Job id.
    pub id: Uuid,
    /// Owner.
    pub organization_id: Uuid,
    /// The key that submitted it.
    pub api_key_id: String,
    /// queued | processing | done | error.
    pub status: String,
    /// DeepL source code.
    pub source_lang: String,
    /// DeepL target code.
    pub target_lang: String,
    /// The document evaluated, for document jobs.
    pub document_id: Option<String>,
    /// Number of segments.
    pub segment_count: i32,
    /// Object key of the report, once done.
    pub report_object: Option<String>,
    /// Why it failed.
    pub error_message: Option<String>,
    /// How many times a worker started it.
    pub attempts: i32,
    /// Trace id of the request.
    pub trace_id: String,
    /// Submission time.
    pub created_at: DateTime<Utc>,
    /// When it reached done or error.
    pub finished_at: Option<DateTime<Utc>>,
}

/// Inserts the row (status queued) inside the caller's transaction.
pub async fn insert(conn: &mut PgConnection, e: &NewEvaluation) -> Result<(), StorageError> {
    sqlx::query!(
        r#"INSERT INTO quality_evaluations (id, organization_id, api_key_id, source_lang,
               target_lang, request, document_id, segment_count, job_id, trace_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"#,
        e.id,
        e.organization_id,
        e.api_key_id,
        e.source_lang,
        e.target_lang,
        e.request,
        e.document_id,
        e.segment_count,
        e.job_id,
        e.trace_id
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Loads an evaluation by id.
pub async fn get(pool: &PgPool, id: Uuid) -> Result<Option<Evaluation>, StorageError> {
    Ok(sqlx::query_as!(
        Evaluation,
        r#"SELECT id, organization_id, api_key_id, status, source_lang, target_lang, document_id,
               segment_count, report_object, error_message, attempts, trace_id, created_at,
               finished_at
           FROM quality_evaluations WHERE id = $1"#,
        id
    )
    .fetch_optional(pool)
    .await?)
}

/// Loads an evaluation of `organization_id`; `None` when it does not exist or
/// belongs to another organization.
pub async fn get_for_org(
    pool: &PgPool,
    id: Uuid,
    organization_id: Uuid,
) -> Result<Option<Evaluation>, StorageError> {
    Ok(get(pool, id)
        .await?
        .filter(|e| e.organization_id == organization_id))
}

/// The evaluation attached to a document, if any.
pub async fn for_document(pool: &PgPool, document_id: &str) -> Result<Option<Uuid>, StorageError> {
    Ok(sqlx::query_scalar!(
        "SELECT id FROM quality_evaluations WHERE document_id = $1",
        document_id
    )
    .fetch_optional(pool)
    .await?)
}

/// The request body (segments and options) of a text job.
pub async fn request(pool: &PgPool, id: Uuid) -> Result<Option<serde_json::Value>, StorageError> {
    Ok(
        sqlx::query_scalar!("SELECT request FROM quality_evaluations WHERE id = $1", id)
            .fetch_optional(pool)
            .await?
            .flatten(),
    )
}

/// Records the queue job of an evaluation enqueued later than its row (documents),
/// inside the caller's transaction.
pub async fn set_job(
    conn: &mut PgConnection,
    id: Uuid,
    job_id: &str,
    source_lang: &str,
) -> Result<(), StorageError> {
    sqlx::query!(
        "UPDATE quality_evaluations SET job_id = $2, source_lang = $3 WHERE id = $1",
        id,
        job_id,
        source_lang
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// A worker starts (or restarts) the evaluation: status processing, attempts + 1.
/// Returns `false` when it is already finished (a re-delivered job).
pub async fn start(pool: &PgPool, id: Uuid) -> Result<bool, StorageError> {
    let res = sqlx::query!(
        r#"UPDATE quality_evaluations
           SET status = 'processing', started_at = now(), attempts = attempts + 1
           WHERE id = $1 AND status IN ('queued', 'processing')"#,
        id
    )
    .execute(pool)
    .await?;
    Ok(res.rows_affected() == 1)
}

/// Marks the evaluation done with its report.
pub async fn complete(pool: &PgPool, id: Uuid, report_object: &str) -> Result<(), StorageError> {
    sqlx::query!(
        r#"UPDATE quality_evaluations
           SET status = 'done', report_object = $2, error_message = NULL, finished_at = now()
           WHERE id = $1 AND status IN ('queued', 'processing')"#,
        id,
        report_object
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Marks the evaluation failed.
pub async fn fail(pool: &PgPool, id: Uuid, message: &str) -> Result<(), StorageError> {
    sqlx::query!(
        r#"UPDATE quality_evaluations
           SET status = 'error', error_message = $2, finished_at = now()
           WHERE id = $1 AND status IN ('queued', 'processing')"#,
        id,
        message
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Puts a processing evaluation back to queued before a retry.
pub async fn requeue(pool: &PgPool, id: Uuid) -> Result<(), StorageError> {
    sqlx::query!(
        "UPDATE quality_evaluations SET status = 'queued' WHERE id = $1 AND status = 'processing'",
        id
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Deletes evaluations finished more than `keep` ago (the wire format keeps jobs
/// 24 hours after done/error) and returns their ids and report objects; the caller
/// deletes the objects (the report, and a document evaluation's segments).
pub async fn expire(
    pool: &PgPool,
    keep: std::time::Duration,
) -> Result<Vec<(Uuid, Option<String>)>, StorageError> {
    let secs = keep.as_secs_f64();
    let rows = sqlx::query!(
        r#"DELETE FROM quality_evaluations
           WHERE finished_at < now() - make_interval(secs => $1)
           RETURNING id, report_object"#,
        secs
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| (r.id, r.report_object)).collect())
}

/// Object key of the segment pairs a document job writes for its evaluation.
pub fn segments_object(id: Uuid) -> String {
    format!("quality/{id}/segments.json")
}

/// Object key of an evaluation's report.
pub fn report_object(id: Uuid) -> String {
    format!("quality/{id}/report.json")
}

/// Quality evaluations as a job kind: lost jobs end in `error`; an
/// evaluation goes 24 hours after it finished ([`RETENTION`], as the wire
/// format keeps jobs), with its report and a document evaluation's segments.
pub struct Evaluations;

#[async_trait::async_trait]
impl crate::lifecycle::JobKind for Evaluations {
    fn name(&self) -> &'static str {
        "quality evaluations"
    }

    async fn fail_lost(&self, db: &PgPool) -> Result<u64, StorageError> {
        fail_lost_jobs(db).await
    }

    async fn reopen(
        &self,
        conn: &mut sqlx::PgConnection,
        queue_job_id: &str,
    ) -> Result<bool, StorageError> {
        let res = sqlx::query!(
            r#"UPDATE quality_evaluations
               SET status = 'queued', error_message = NULL, attempts = 0,
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
        _retention: &crate::lifecycle::Retention,
    ) -> Result<Vec<String>, StorageError> {
        let expired = expire(db, RETENTION).await?;
        // A text job has no segments object: deleting it finds none.
        Ok(expired
            .into_iter()
            .flat_map(|(id, report)| report.into_iter().chain([segments_object(id)]))
            .collect())
    }
}

/// Fails evaluations whose queue job is over without the handler recording
/// it (the worker was killed on every attempt, an operator cancelled it),
/// with the queue job's last error.
pub async fn fail_lost_jobs(pool: &PgPool) -> Result<u64, StorageError> {
    let res = sqlx::query!(
        r#"UPDATE quality_evaluations q
           SET status = 'error', finished_at = now(),
               error_message = 'The evaluation ended without finishing: ' || e.error
           FROM ended_queue_jobs e
           WHERE e.id = q.job_id AND q.status IN ('queued', 'processing')"#
    )
    .execute(pool)
    .await?;
    let docs = sqlx::query!(
        r#"UPDATE quality_evaluations q
           SET status = 'error', finished_at = now(),
               error_message = 'The document could not be translated, so there is no translation to evaluate.'
           FROM documents d
           WHERE d.id = q.document_id AND d.status = 'error'
             AND q.status IN ('queued', 'processing')"#
    )
    .execute(pool)
    .await?;
    Ok(res.rows_affected() + docs.rows_affected())
}
