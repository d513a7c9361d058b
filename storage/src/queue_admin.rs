//! What the operator dashboard reads of the queue: the worker loops with
//! their heartbeat and jobs in flight, and jobs by state or by id.

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::StorageError;

/// A worker loop as the dashboard lists it.
#[derive(Debug, Clone)]
pub struct WorkerLoop {
    /// Its name (apalis' worker id).
    pub name: String,
    /// Its queue.
    pub queue: String,
    /// The machine it runs on.
    pub host: String,
    /// Its process.
    pub pid: i32,
    /// Jobs it runs at once.
    pub concurrency: i32,
    /// When it started.
    pub started_at: DateTime<Utc>,
    /// Its last heartbeat (`None`: its apalis row is gone).
    pub last_seen: Option<DateTime<Utc>>,
    /// Jobs it holds (`Queued` or `Running`).
    pub in_flight: i64,
}

/// The worker loops recorded, the most recently seen first within each
/// queue; at most `limit`.
pub async fn worker_loops(pool: &PgPool, limit: i64) -> Result<Vec<WorkerLoop>, StorageError> {
    let rows = sqlx::query!(
        r#"SELECT l.name, l.queue, l.host, l.pid, l.concurrency, l.started_at,
                  w.last_seen AS "last_seen?",
                  (SELECT count(*) FROM apalis.jobs j
                   WHERE j.lock_by = l.name AND j.status IN ('Queued', 'Running')) AS "in_flight!"
           FROM worker_loops l
           LEFT JOIN apalis.workers w ON w.id = l.name
           ORDER BY l.queue, w.last_seen DESC NULLS LAST, l.name
           LIMIT $1"#,
        limit
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| WorkerLoop {
            name: r.name,
            queue: r.queue,
            host: r.host,
            pid: r.pid,
            concurrency: r.concurrency,
            started_at: r.started_at,
            last_seen: r.last_seen,
            in_flight: r.in_flight,
        })
        .collect())
}

/// A queue row as the dashboard lists it.
#[derive(Debug, Clone)]
pub struct JobRow {
    /// The job's id.
    pub id: String,
    /// Its queue.
    pub queue: String,
    /// apalis' status: `Pending`, `Queued`, `Running`, `Done`, `Failed`,
    /// `Killed`.
    pub status: String,
    /// Runs so far.
    pub attempts: i32,
    /// Runs it may have.
    pub max_attempts: i32,
    /// When it is (or was) due.
    pub run_at: DateTime<Utc>,
    /// When it ended.
    pub done_at: Option<DateTime<Utc>>,
    /// The worker loop holding or last holding it.
    pub lock_by: Option<String>,
    /// Its last result (a failure's error), as JSON text.
    pub last_result: Option<String>,
}

/// Which jobs [`jobs`] lists (each field narrows, `None` does not).
#[derive(Debug, Clone, Copy, Default)]
pub struct JobFilter<'a> {
    /// apalis' status.
    pub status: Option<&'a str>,
    /// The queue.
    pub queue: Option<&'a str>,
    /// The worker loop holding or last holding it.
    pub worker: Option<&'a str>,
    /// A job id, or the id of the document whose job it is.
    pub search: Option<&'a str>,
}

/// The jobs `filter` keeps, the latest enqueued first (job ids are ULIDs, so
/// the primary key is in enqueue order: over a million rows the page reads
/// it backwards instead of sorting the table); at most `limit`.
pub async fn jobs(
    pool: &PgPool,
    filter: JobFilter<'_>,
    limit: i64,
) -> Result<Vec<JobRow>, StorageError> {
    let rows = sqlx::query!(
        r#"SELECT j.id, j.job_type, j.status, j.attempts, j.max_attempts, j.run_at, j.done_at,
                  j.lock_by, j.last_result::text AS "last_result?"
           FROM apalis.jobs j
           WHERE ($1::text IS NULL OR j.status = $1)
             AND ($2::text IS NULL OR j.job_type = $2)
             AND ($3::text IS NULL OR j.lock_by = $3)
             AND ($4::text IS NULL
                  OR j.id = $4
                  OR j.id = (SELECT d.job_id FROM documents d WHERE d.id = $4))
           ORDER BY j.id DESC
           LIMIT $5"#,
        filter.status,
        filter.queue,
        filter.worker,
        filter.search,
        limit
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| JobRow {
            id: r.id,
            queue: r.job_type,
            status: r.status,
            attempts: r.attempts,
            max_attempts: r.max_attempts,
            run_at: r.run_at,
            done_at: r.done_at,
            lock_by: r.lock_by,
            last_result: r.last_result,
        })
        .collect())
}

/// Cancels a job that has not started, or waits for its next attempt: its
/// queue row ends `Killed` with "cancelled by an operator" as its error (each
/// job kind's lost-job sweep then ends its record, see
/// [`crate::lifecycle`]). The action is recorded for audit, done or refused,
/// with the admin key that asked. Returns the job's queue when it was
/// cancelled, `None` when it was not waiting (running, over, or unknown).
pub async fn cancel(
    pool: &PgPool,
    job_id: &str,
    api_key_id: &str,
) -> Result<Option<String>, StorageError> {
    let mut tx = pool.begin().await?;
    let queue = sqlx::query_scalar!(
        r#"UPDATE apalis.jobs
           SET status = 'Killed', done_at = now(), lock_by = NULL, lock_at = NULL,
               last_result = '{"Err": "cancelled by an operator"}'::jsonb
           WHERE id = $1
             AND (status = 'Pending' OR (status = 'Failed' AND attempts < max_attempts))
           RETURNING job_type"#,
        job_id
    )
    .fetch_optional(&mut *tx)
    .await?;
    audit(&mut tx, api_key_id, "cancel", job_id, queue.as_deref()).await?;
    tx.commit().await?;
    Ok(queue)
}

/// Runs again a job that ended in failure (failed for good, killed or
/// cancelled) while its record is kept: the queue row is due at once with
/// its attempts cleared, and the record waits again (each kind's
/// [`crate::lifecycle::JobKind::reopen`]), both in one transaction. Recorded
/// for audit like [`cancel`]. Returns the job's queue when it was retried,
/// `None` when it had not ended in failure or its record is gone; the caller
/// wakes the queue's workers ([`crate::queue::notify_enqueued`]).
pub async fn retry(
    pool: &PgPool,
    job_id: &str,
    api_key_id: &str,
) -> Result<Option<String>, StorageError> {
    let mut tx = pool.begin().await?;
    let mut attempt = sqlx::Connection::begin(&mut *tx).await?;
    let queue = sqlx::query_scalar!(
        r#"UPDATE apalis.jobs
           SET status = 'Pending', attempts = 0, run_at = now(), done_at = NULL,
               lock_by = NULL, lock_at = NULL, last_result = NULL
           WHERE id = $1
             AND (status = 'Killed' OR (status = 'Failed' AND attempts >= max_attempts))
           RETURNING job_type"#,
        job_id
    )
    .fetch_optional(&mut *attempt)
    .await?;
    let mut reopened = false;
    if queue.is_some() {
        for kind in crate::lifecycle::JOB_KINDS {
            reopened |= kind.reopen(&mut attempt, job_id).await?;
        }
    }
    let queue = if reopened {
        attempt.commit().await?;
        queue
    } else {
        attempt.rollback().await?;
        None
    };
    audit(&mut tx, api_key_id, "retry", job_id, queue.as_deref()).await?;
    tx.commit().await?;
    Ok(queue)
}

/// Records an operator's `action` on `job_id` for audit: done when it acted
/// on a job of `queue`, refused when `queue` is `None`.
async fn audit(
    conn: &mut sqlx::PgConnection,
    api_key_id: &str,
    action: &str,
    job_id: &str,
    queue: Option<&str>,
) -> Result<(), StorageError> {
    sqlx::query!(
        r#"INSERT INTO operator_actions (api_key_id, action, job_id, queue, outcome)
           VALUES ($1, $2, $3,
                   COALESCE($4, (SELECT job_type FROM apalis.jobs WHERE id = $3)), $5)"#,
        api_key_id,
        action,
        job_id,
        queue,
        if queue.is_some() { "done" } else { "refused" }
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// An operator's action, as the audit lists it.
#[derive(Debug, Clone)]
pub struct Action {
    /// When.
    pub at: DateTime<Utc>,
    /// The admin key that asked.
    pub api_key_id: String,
    /// What (`cancel`, `retry`).
    pub action: String,
    /// To which job, of which queue.
    pub job_id: String,
    /// The job's queue, when known.
    pub queue: Option<String>,
    /// `done` or `refused`.
    pub outcome: String,
}

/// The latest `limit` operator actions, the latest first.
pub async fn actions(pool: &PgPool, limit: i64) -> Result<Vec<Action>, StorageError> {
    let rows = sqlx::query!(
        r#"SELECT at, api_key_id, action, job_id, queue, outcome
           FROM operator_actions ORDER BY at DESC, id DESC LIMIT $1"#,
        limit
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Action {
            at: r.at,
            api_key_id: r.api_key_id,
            action: r.action,
            job_id: r.job_id,
            queue: r.queue,
            outcome: r.outcome,
        })
        .collect())
}
