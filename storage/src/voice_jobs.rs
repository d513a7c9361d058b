//! Voice translation jobs (table `voice_jobs`): the public state of a job and
//! the short-lived signatures that authorise its upload and downloads.
//!
//! A job is created `pending` (awaiting its audio), becomes `uploaded` in the
//! transaction that enqueues its queue job, `processing` while a worker runs
//! it, and ends `complete` (each target's result then has its own status) or
//! `failed`.

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use sqlx::{PgConnection, PgPool};
use subtle::ConstantTimeEq;
use uuid::Uuid;

use crate::StorageError;

/// Job status values (the wire's result statuses before completion).
pub mod status {
    /// Created, awaiting the upload.
    pub const PENDING: &str = "pending";
    /// Uploaded, awaiting a worker.
    pub const UPLOADED: &str = "uploaded";
    /// A worker is on it.
    pub const PROCESSING: &str = "processing";
    /// Done; see each result.
    pub const COMPLETE: &str = "complete";
    /// Failed as a whole; see `error_message`.
    pub const FAILED: &str = "failed";
    /// A result that has been downloaded.
    pub const DOWNLOADED: &str = "downloaded";
}

/// One requested target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// Target language (DeepL code).
    pub language: String,
    /// Output type (`text/plain`, `audio/pcm;encoding=s16le;rate=16000`, `audio/wav`…).
    #[serde(rename = "type")]
    pub kind: String,
}

/// The result of one target.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetResult {
    /// `complete`, `downloaded` or `failed`.
    pub status: String,
    /// Object key of the result, when complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// Content type of the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Size of the result in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<i64>,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A new job, as the API records it.
#[derive(Debug, Clone)]
pub struct NewVoiceJob {
    /// Public id.
    pub id: Uuid,
    /// Owner.
    pub organization_id: Uuid,
    /// The key that created it.
    pub api_key_id: String,
    /// Signing secret (random).
    pub secret: String,
    /// Declared file name.
    pub source_name: String,
    /// Declared content type.
    pub source_content_type: String,
    /// Declared size in bytes.
    pub source_content_length: i64,
    /// Requested source language, if any.
    pub source_language: Option<String>,
    /// Targets in request order.
    pub targets: Vec<Target>,
    /// Terms recognition listens for (the spoken terms' list for the source
    /// language).
    pub spoken_terms: Vec<String>,
    /// The spoken-terms collection they come from.
    pub spoken_terms_id: Option<Uuid>,
    /// Its keyword-spotting threshold, when it sets one.
    pub keyword_threshold: Option<f64>,
    /// Where the upload goes.
    pub source_object: String,
    /// Trace id of the create request.
    pub trace_id: String,
    /// Until when the upload is accepted.
    pub upload_expires_at: DateTime<Utc>,
}

/// A job row.
#[derive(Debug, Clone)]
pub struct VoiceJob {
    /// Public id.
    pub id: Uuid,
    /// Owner.
    pub organization_id: Uuid,
    /// The key that created it.
    pub api_key_id: String,
    /// See [`status`].
    pub status: String,
    /// Signing secret.
    pub secret: String,
    /// Declared file name.
    pub source_name: String,
    /// Declared content type.
    pub source_content_type: String,
    /// Declared size in bytes.
    pub source_content_length: i64,
    /// Requested source language, if any.
    pub source_language: Option<String>,
    /// Targets in request order.
    pub targets: Vec<Target>,
    /// Terms recognition listens for.
    pub spoken_terms: Vec<String>,
    /// The spoken-terms collection they come from.
    pub spoken_terms_id: Option<Uuid>,
    /// Its keyword-spotting threshold, when it sets one.
    pub keyword_threshold: Option<f64>,
    /// Results in target order (empty until complete).
    pub results: Vec<TargetResult>,
    /// Object key of the upload.
    pub source_object: String,
    /// What recognition heard.
    pub transcript: Option<String>,
    /// Duration of the audio.
    pub speech_milliseconds: Option<i64>,
    /// Bytes stored for the job (upload and results).
    pub storage_used: i64,
    /// Why it failed.
    pub error_message: Option<String>,
    /// Runs started.
    pub attempts: i32,
    /// Trace id of the create request.
    pub trace_id: String,
    /// Until when the upload is accepted.
    pub upload_expires_at: DateTime<Utc>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

/// Inserts a pending job.
pub async fn insert(conn: &mut PgConnection, job: &NewVoiceJob) -> Result<(), StorageError> {
    let targets = serde_json::to_value(&job.targets)?;
    sqlx::query!(
        r#"INSERT INTO voice_jobs (id, organization_id, api_key_id, secret, source_name,
               source_content_type, source_content_length, source_language, targets,
               spoken_terms, source_object, trace_id, upload_expires_at, spoken_terms_id,
               keyword_threshold)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"#,
        job.id,
        job.organization_id,
        job.api_key_id,
        job.secret,
        job.source_name,
        job.source_content_type,
        job.source_content_length,
        job.source_language,
        targets,
        &job.spoken_terms,
        job.source_object,
        job.trace_id,
        job.upload_expires_at,
        job.spoken_terms_id,
        job.keyword_threshold
    )
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Reads a job.
pub async fn get(pool: &PgPool, id: Uuid) -> Result<Option<VoiceJob>, StorageError> {
    let Some(r) = sqlx::query!(
        r#"SELECT id, organization_id, api_key_id, status, secret, source_name,
                  source_content_type, source_content_length, source_language, targets,
                  spoken_terms, results, source_object, transcript, speech_milliseconds, storage_used,
                  error_message, attempts, trace_id, upload_expires_at, created_at, updated_at,
                  spoken_terms_id, keyword_threshold
           FROM voice_jobs WHERE id = $1"#,
        id
    )
    .fetch_optional(pool)
    .await?
    else {
        return Ok(None);
    };
    Ok(Some(VoiceJob {
        id: r.id,
        organization_id: r.organization_id,
        api_key_id: r.api_key_id,
        status: r.status,
        secret: r.secret,
        source_name: r.source_name,
        source_content_type: r.source_content_type,
        source_content_length: r.source_content_length,
        source_language: r.source_language,
        targets: serde_json::from_value(r.targets)?,
        spoken_terms: r.spoken_terms,
        spoken_terms_id: r.spoken_terms_id,
        keyword_threshold: r.keyword_threshold,
        results: serde_json::from_value(r.results)?,
        source_object: r.source_object,
        transcript: r.transcript,
        speech_milliseconds: r.speech_milliseconds,
        storage_used: r.storage_used,
        error_message: r.error_message,
        attempts: r.attempts,
        trace_id: r.trace_id,
        upload_expires_at: r.upload_expires_at,
        created_at: r.created_at,
        updated_at: r.updated_at,
    }))
}

/// pending → uploaded, recording the queue job; false when the job is not
/// pending any more (a second upload).
pub async fn mark_uploaded(
    conn: &mut PgConnection,
    id: Uuid,
    queue_job_id: &str,
    bytes: i64,
) -> Result<bool, StorageError> {
    let res = sqlx::query!(
        r#"UPDATE voice_jobs SET status = 'uploaded', queue_job_id = $2,
               storage_used = storage_used + $3, updated_at = now()
           WHERE id = $1 AND status = 'pending'"#,
        id,
        queue_job_id,
        bytes
    )
    .execute(&mut *conn)
    .await?;
    Ok(res.rows_affected() == 1)
}

/// uploaded (or processing, on a re-run) → processing, counting the attempt;
/// false when the job already ended.
pub async fn start(pool: &PgPool, id: Uuid) -> Result<bool, StorageError> {
    let res = sqlx::query!(
        r#"UPDATE voice_jobs SET status = 'processing', attempts = attempts + 1,
               error_message = NULL, updated_at = now()
           WHERE id = $1 AND status IN ('uploaded', 'processing')"#,
        id
    )
    .execute(pool)
    .await?;
    Ok(res.rows_affected() == 1)
}

/// processing → complete with the results; false when it was not processing.
pub async fn complete(
    conn: &mut PgConnection,
    id: Uuid,
    results: &[TargetResult],
    transcript: &str,
    speech_milliseconds: i64,
    result_bytes: i64,
) -> Result<bool, StorageError> {
    let results = serde_json::to_value(results)?;
    let res = sqlx::query!(
        r#"UPDATE voice_jobs SET status = 'complete', results = $2, transcript = $3,
               speech_milliseconds = $4, storage_used = storage_used + $5, updated_at = now()
           WHERE id = $1 AND status = 'processing'"#,
        id,
        results,
        transcript,
        speech_milliseconds,
        result_bytes
    )
    .execute(&mut *conn)
    .await?;
    Ok(res.rows_affected() == 1)
}

/// Ends the job as failed (unless it already completed).
pub async fn fail(pool: &PgPool, id: Uuid, message: &str) -> Result<(), StorageError> {
    sqlx::query!(
        r#"UPDATE voice_jobs SET status = 'failed', error_message = $2, updated_at = now()
           WHERE id = $1 AND status <> 'complete'"#,
        id,
        message
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Voice jobs as a job kind: a job whose queue job is over while it is
/// `uploaded` or `processing` ends `failed`; a finished job goes `finished`
/// after its last change, one never uploaded that long after its upload
/// period, with its audio and results.
pub struct VoiceJobs;

#[async_trait::async_trait]
impl crate::lifecycle::JobKind for VoiceJobs {
    fn name(&self) -> &'static str {
        "voice jobs"
    }

    async fn fail_lost(&self, db: &PgPool) -> Result<u64, StorageError> {
        let res = sqlx::query!(
            r#"UPDATE voice_jobs v
               SET status = 'failed', updated_at = now(),
                   error_message = 'The voice job ended without finishing: ' || e.error
               FROM ended_queue_jobs e
               WHERE e.id = v.queue_job_id AND v.status IN ('uploaded', 'processing')"#
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
            r#"UPDATE voice_jobs
               SET status = 'uploaded', error_message = NULL, attempts = 0, updated_at = now()
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
                   SELECT id FROM voice_jobs
                   WHERE (status IN ('complete', 'failed')
                          AND updated_at < now() - make_interval(secs => $1))
                      OR (status = 'pending'
                          AND upload_expires_at < now() - make_interval(secs => $1))
                   LIMIT 500 FOR UPDATE SKIP LOCKED)
               DELETE FROM voice_jobs v USING expired WHERE v.id = expired.id
               RETURNING v.source_object, v.results"#,
            retention.finished.as_secs_f64()
        )
        .fetch_all(db)
        .await?;
        Ok(rows
            .into_iter()
            .flat_map(|r| {
                let results: Vec<TargetResult> =
                    serde_json::from_value(r.results).unwrap_or_default();
                std::iter::once(r.source_object).chain(results.into_iter().filter_map(|t| t.object))
            })
            .collect())
    }
}

/// Puts a job back to `uploaded` with a note, before a retry.
pub async fn requeue(pool: &PgPool, id: Uuid, message: &str) -> Result<(), StorageError> {
    sqlx::query!(
        r#"UPDATE voice_jobs SET status = 'uploaded', error_message = $2, updated_at = now()
           WHERE id = $1 AND status = 'processing'"#,
        id,
        message
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Marks result `index` (0-based) as downloaded.
pub async fn mark_downloaded(pool: &PgPool, id: Uuid, index: usize) -> Result<(), StorageError> {
    let path = vec![index.to_string(), "status".to_owned()];
    sqlx::query!(
        r#"UPDATE voice_jobs
           SET results = jsonb_set(results, $2::text[], '"downloaded"'::jsonb), updated_at = now()
           WHERE id = $1 AND status = 'complete' AND results -> ($3::int) ->> 'status' = 'complete'"#,
        id,
        &path,
        index as i32
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// A random signing secret.
pub fn new_secret() -> String {
    crate::documents::random_upper_hex(32)
}

fn mac(secret: &str, purpose: &str, expires: i64) -> String {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
    mac.update(format!("{purpose}:{expires}").as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// A signature for `purpose` (`upload`, `download:0`…) valid until `expires`:
/// `{unix seconds}.{hex HMAC-SHA256(secret, "{purpose}:{unix seconds}")}`.
pub fn sign(secret: &str, purpose: &str, expires: DateTime<Utc>) -> String {
    let t = expires.timestamp();
    format!("{t}.{}", mac(secret, purpose, t))
}

/// Whether `token` is a valid, unexpired signature for `purpose`.
pub fn verify(secret: &str, purpose: &str, token: &str, now: DateTime<Utc>) -> bool {
    let Some((t, given)) = token.trim().split_once('.') else {
        return false;
    };
    let Ok(t) = t.parse::<i64>() else {
        return false;
    };
    if t < now.timestamp() {
        return false;
    }
    let expected = mac(secret, purpose, t);
    expected.as_bytes().ct_eq(given.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_bind_purpose_secret_and_time() {
        let now = Utc::now();
        let later = now + chrono::Duration::hours(1);
        let s = sign("secret", "upload", later);
        assert!(verify("secret", "upload", &s, now));
        assert!(!verify("secret", "download:0", &s, now));
        assert!(!verify("other", "upload", &s, now));
        assert!(!verify(
            "secret",
            "upload",
            &s,
            later + chrono::Duration::seconds(1)
        ));
        let (t, m) = s.split_once('.').unwrap();
        let forged = format!("{}.{m}", t.parse::<i64>().unwrap() + 3600);
        assert!(!verify("secret", "upload", &forged, now));
        assert!(!verify("secret", "upload", "garbage", now));
    }
}
