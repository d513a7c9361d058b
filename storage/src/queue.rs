//! The job queue: payload types, queue names and enqueue inside a caller's
//! transaction, on apalis-postgres (table `apalis.jobs`).
//!
//! apalis-postgres brings fetching with `FOR UPDATE SKIP LOCKED`, NOTIFY on insert,
//! heartbeats and re-enqueue of jobs held by dead workers. What it lacks, and this
//! module adds for the worker and scheduler:
//! - a persisted backoff before a retry ([`schedule_retry`]): apalis re-fetches a
//!   `Failed` row at once, so the worker moves its `run_at` before failing;
//! - a sweep of rows locked by workers that stopped heartbeating
//!   ([`release_dead_workers`]), independent of a live worker of the same queue;
//! - retention of finished rows ([`prune_finished`]).

use std::time::Duration;

use apalis::prelude::{TaskBuilder, TaskId};
use serde::{Deserialize, Serialize};
use sqlx::postgres::types::PgInterval;
use sqlx::{PgConnection, PgPool};
use ulid::Ulid;

use crate::StorageError;

/// Queue of document translation jobs.
pub const TRANSLATE_DOCUMENT: &str = "translate-document";

/// How many times a document job runs at most (first run included).
pub const TRANSLATE_DOCUMENT_MAX_ATTEMPTS: i32 = 5;

/// Payload of a document translation job. The document row holds everything else.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct TranslateDocument {
    /// `documents.id`.
    pub document_id: String,
    /// The trace id of the request that enqueued the job.
    pub trace_id: String,
}

/// Queue of quality evaluation jobs.
pub const EVALUATE_QUALITY: &str = "evaluate-quality";

/// How many times an evaluation job runs at most (first run included).
pub const EVALUATE_QUALITY_MAX_ATTEMPTS: i32 = 3;

/// Payload of a quality evaluation job. The `quality_evaluations` row holds the rest.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct EvaluateQuality {
    /// `quality_evaluations.id`.
    pub evaluation_id: uuid::Uuid,
    /// The trace id of the request that enqueued the job.
    pub trace_id: String,
}

/// Queue of voice translation jobs (recognition, translation, synthesis).
pub const VOICE_TRANSLATE: &str = "voice-translate";

/// How many times a voice job runs at most (first run included).
pub const VOICE_TRANSLATE_MAX_ATTEMPTS: i32 = 3;

/// Payload of a voice translation job. The `voice_jobs` row holds everything else.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct VoiceTranslate {
    /// `voice_jobs.id`.
    pub job_id: uuid::Uuid,
    /// The trace id of the request that enqueued the job.
    pub trace_id: String,
}

/// Queue of TMX import jobs (TMX file → new translation memory).
pub const IMPORT_TMX: &str = "import-tmx";

/// Queue of TMX export jobs (translation memory → TMX file).
pub const EXPORT_TMX: &str = "export-tmx";

/// Every queue the workers serve.
pub const QUEUES: [&str; 5] = [
    TRANSLATE_DOCUMENT,
    EVALUATE_QUALITY,
    VOICE_TRANSLATE,
    IMPORT_TMX,
    EXPORT_TMX,
];

/// How many times a TMX import or export job runs at most (first run included).
pub const TMX_MAX_ATTEMPTS: i32 = 3;

/// Payload of a TMX import or export job. The `translation_memory_jobs` row
/// holds everything else.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct TmxJob {
    /// `translation_memory_jobs.id`.
    pub job_id: uuid::Uuid,
    /// The trace id of the request that enqueued the job.
    pub trace_id: String,
}

/// A fresh job id (a ULID, as apalis-postgres uses).
pub fn new_job_id() -> String {
    Ulid::generate().to_string()
}

/// Enqueues `job` on `queue` with the given id, inside the caller's transaction.
/// `idempotency_key` (unique per queue among jobs not yet `Done`: migration
/// 20261125100001) makes a second enqueue of the same work fail while the first can
/// still run (pending, running, or failed and waiting for a retry). After the commit,
/// call [`notify_enqueued`] to wake idle workers at once (otherwise they find the job
/// at their next interval poll).
pub async fn enqueue<T: Serialize>(
    conn: &mut PgConnection,
    queue: &str,
    job_id: &str,
    job: &T,
    max_attempts: i32,
    idempotency_key: &str,
) -> Result<(), StorageError> {
    let ulid = Ulid::from_string(job_id)
        .map_err(|e| StorageError::QueueArgument(format!("bad job id {job_id}: {e}")))?;
    let task = TaskBuilder::new(serde_json::to_vec(job)?)
        .task_id(TaskId::from_ulid(ulid))
        .max_attempts(max_attempts.max(1) as usize)
        .idempotency_key(idempotency_key)
        .build();
    apalis_postgres::queries::push_tasks(conn, queue, vec![task]).await?;
    Ok(())
}

/// apalis-postgres' insert channel, shared by every queue (the payload names
/// the queue in `job_type`). Workers still LISTEN on it, for notifications
/// sent the apalis way (a payload without `k` wakes every local worker of
/// the queue); Tolk's enqueues notify on each queue's [`wake_channel`].
pub const INSERT_CHANNEL: &str = "apalis::job::insert";

/// The channel that wakes the workers of `queue`: one per queue, so that a
/// worker process hears only of the kinds of job it runs. On one shared
/// channel every enqueue of a document reached every voice-only worker too,
/// which woke to read and drop it (`tolk-bench queue --kinds`:
/// docs/benchmarks.md). The payload is the same as on [`INSERT_CHANNEL`].
/// At most 63 bytes (PostgreSQL's longest identifier) for every queue name
/// [`valid_queue_name`] lets through.
pub fn wake_channel(queue: &str) -> String {
    format!("{INSERT_CHANNEL}::{queue}")
}

/// Wakes an idle worker of `queue`: a NOTIFY in a transaction of its own, sent after
/// the enqueueing transaction committed. The payload carries a number `k` (a
/// per-process counter): the worker processes' wake hubs (`tolk_worker::wake`)
/// wake only the live worker at index `k mod n`, so consecutive jobs go to the
/// workers in turn instead of every job waking every worker.
///
/// PostgreSQL serializes every committing transaction that notifies (a database-wide
/// lock held through the commit's WAL flush), so the NOTIFY that apalis' insert
/// trigger sent inside each enqueue made concurrent enqueues wait on each other's
/// fsync (a long enqueue tail in `tolk-bench queue`). Migration
/// `20261121000003` drops that trigger; this transaction notifies with
/// `synchronous_commit = off`, so it holds the lock without waiting for a flush.
/// Losing the notification in a crash only delays the job to the next poll.
pub async fn notify_enqueued(pool: &PgPool, queue: &str) -> Result<(), StorageError> {
    let sql = format!(
        "BEGIN; SET LOCAL synchronous_commit = off; {} COMMIT;",
        notify_statement(queue)?
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
        .execute(pool)
        .await?;
    Ok(())
}

/// `SELECT pg_notify(…);` waking a worker of `queue`, with the next `k`. Sent
/// with the simple-query protocol (one round trip), so the payload is a
/// literal: queue names are our constants; anything that would need quoting is
/// refused.
pub(crate) fn notify_statement(queue: &str) -> Result<String, StorageError> {
    valid_queue_name(queue)?;
    let k = next_wake_number();
    let channel = wake_channel(queue);
    Ok(format!(
        "SELECT pg_notify('{channel}', '{{\"job_type\":\"{queue}\",\"k\":{k}}}');"
    ))
}

/// The longest queue name whose [`wake_channel`] PostgreSQL takes (63 bytes).
const MAX_QUEUE_NAME: usize = 63 - INSERT_CHANNEL.len() - 2;

/// Refuses a queue name that would need quoting in a NOTIFY payload literal
/// (queue names are our constants: `[A-Za-z0-9_-]+`) or whose wake channel
/// would be too long.
pub(crate) fn valid_queue_name(queue: &str) -> Result<(), StorageError> {
    if queue.is_empty()
        || queue.len() > MAX_QUEUE_NAME
        || !queue
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(StorageError::QueueArgument(format!(
            "queue name {queue:?} is not [A-Za-z0-9_-]{{1,{MAX_QUEUE_NAME}}}"
        )));
    }
    Ok(())
}

/// The `k` of the next notification: a counter starting at a random point, so
/// one API process's jobs go to the workers in turn and several API processes
/// do not all start with the same worker.
fn next_wake_number() -> u64 {
    static NEXT: std::sync::OnceLock<std::sync::atomic::AtomicU64> = std::sync::OnceLock::new();
    NEXT.get_or_init(|| std::sync::atomic::AtomicU64::new(u64::from(rand::random::<u32>())))
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The workers of `queues` seen within `within` (apalis' `workers` rows, which
/// every worker's heartbeat refreshes), by queue, sorted by name: every process
/// reads the same list, which is how the wake hubs agree on whose turn it is.
pub async fn live_workers(
    pool: &PgPool,
    queues: &[String],
    within: Duration,
) -> Result<std::collections::HashMap<String, Vec<String>>, StorageError> {
    let within = interval(within);
    let rows = sqlx::query!(
        r#"SELECT worker_type, id FROM apalis.workers
           WHERE worker_type = ANY($1) AND last_seen > now() - $2::interval
           ORDER BY worker_type, id"#,
        queues,
        within
    )
    .fetch_all(pool)
    .await?;
    let mut live = std::collections::HashMap::<String, Vec<String>>::new();
    for r in rows {
        live.entry(r.worker_type).or_default().push(r.id);
    }
    Ok(live)
}

/// Moves a job's next run time `delay` into the future; called by a handler just
/// before it returns a transient error, so the retry waits (apalis-postgres would
/// otherwise fetch the `Failed` row again at once).
pub async fn schedule_retry(
    pool: &PgPool,
    job_id: &str,
    delay: Duration,
) -> Result<(), StorageError> {
    let delay = interval(delay);
    sqlx::query!(
        "UPDATE apalis.jobs SET run_at = now() + $2 WHERE id = $1",
        job_id,
        delay
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Exponential backoff for attempt `attempt` (1-based): 2 s, 4 s, 8 s … capped at 5 minutes.
pub fn backoff(attempt: u32) -> Duration {
    let secs = 2u64.saturating_pow(attempt.clamp(1, 16));
    Duration::from_secs(secs.min(300))
}

/// Puts back to `Pending` every job still `Queued`/`Running` under a worker that has
/// not been seen for `dead_after` (a killed process), or under a name with no
/// worker row at all (`jobs.lock_by` has no foreign key: migration
/// 20261123000002). Returns how many rows moved. Worker names are unique per
/// process start, so a dead name never comes back.
pub async fn release_dead_workers(
    pool: &PgPool,
    dead_after: Duration,
) -> Result<u64, StorageError> {
    let dead_after = interval(dead_after);
    let res = sqlx::query!(
        r#"WITH stale AS (
               SELECT j.id FROM apalis.jobs j
               LEFT JOIN apalis.workers w ON w.id = j.lock_by
               WHERE j.status IN ('Queued', 'Running') AND j.lock_by IS NOT NULL
                 AND (w.id IS NULL OR now() - w.last_seen >= $1)
               FOR UPDATE OF j SKIP LOCKED)
           UPDATE apalis.jobs j
           SET status = 'Pending', lock_by = NULL, lock_at = NULL, done_at = NULL,
               attempts = j.attempts + 1,
               last_result = '{"Err": "Re-enqueued: its worker stopped heartbeating."}'
           FROM stale WHERE j.id = stale.id"#,
        dead_after
    )
    .execute(pool)
    .await?;
    Ok(res.rows_affected())
}

/// Puts back to `Pending` the jobs still `Queued`/`Running` under `worker`, a
/// worker of this process whose loop has ended (its handlers were dropped with
/// it), without counting an attempt: the job did not fail, its worker went
/// away. Returns how many rows moved.
pub async fn release_stopped_worker(pool: &PgPool, worker: &str) -> Result<u64, StorageError> {
    let res = sqlx::query!(
        r#"UPDATE apalis.jobs
           SET status = 'Pending', lock_by = NULL, lock_at = NULL, done_at = NULL,
               last_result = '{"Err": "Re-enqueued: its worker loop was restarted."}'
           WHERE lock_by = $1 AND status IN ('Queued', 'Running')"#,
        worker
    )
    .execute(pool)
    .await?;
    Ok(res.rows_affected())
}

/// Adds `restarts` to the restart count of `queue`'s worker loops.
pub async fn record_loop_restarts(
    pool: &PgPool,
    queue: &str,
    restarts: u64,
) -> Result<(), StorageError> {
    let restarts = i64::try_from(restarts).unwrap_or(i64::MAX);
    sqlx::query!(
        r#"INSERT INTO worker_loop_restarts (queue, restarts) VALUES ($1, $2)
           ON CONFLICT (queue) DO UPDATE
           SET restarts = worker_loop_restarts.restarts + EXCLUDED.restarts,
               last_restart_at = now()"#,
        queue,
        restarts
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// The worker loops of one queue, across every process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueLoops {
    /// The queue.
    pub queue: String,
    /// Loops that sent a heartbeat within the period asked for.
    pub live: i64,
    /// How often loops of the queue were started again after an error.
    pub restarts: i64,
    /// Jobs the live loops run at once, together.
    pub concurrency: i64,
}

/// Worker loops by queue: how many sent a heartbeat within `within` (across
/// every process), how many jobs those run at once, and how often loops of
/// the queue were restarted. Every queue with a worker row or a restart is
/// listed.
pub async fn loop_liveness(
    pool: &PgPool,
    within: Duration,
) -> Result<Vec<QueueLoops>, StorageError> {
    let within = interval(within);
    let rows = sqlx::query!(
        r#"SELECT q.queue AS "queue!",
                  (SELECT count(*) FROM apalis.workers w
                   WHERE w.worker_type COLLATE "C" = q.queue
                     AND w.last_seen > now() - $1::interval) AS "live!",
                  COALESCE((SELECT r.restarts FROM worker_loop_restarts r
                            WHERE r.queue COLLATE "C" = q.queue), 0) AS "restarts!",
                  (SELECT COALESCE(sum(l.concurrency), 0) FROM worker_loops l
                   JOIN apalis.workers w ON w.id = l.name
                   WHERE l.queue COLLATE "C" = q.queue
                     AND w.last_seen > now() - $1::interval)::bigint AS "concurrency!"
           FROM (SELECT worker_type COLLATE "C" AS queue FROM apalis.workers
                 UNION SELECT queue COLLATE "C" FROM worker_loop_restarts) q
           ORDER BY 1"#,
        within
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| QueueLoops {
            queue: r.queue,
            live: r.live,
            restarts: r.restarts,
            concurrency: r.concurrency,
        })
        .collect())
}

/// Records a worker loop starting under `name` (its apalis worker's id) on
/// `queue`, running `concurrency` jobs at once, in this process of `host`.
pub async fn register_loop(
    pool: &PgPool,
    name: &str,
    queue: &str,
    host: &str,
    concurrency: usize,
) -> Result<(), StorageError> {
    sqlx::query!(
        r#"INSERT INTO worker_loops (name, queue, host, pid, concurrency)
           VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (name) DO NOTHING"#,
        name,
        queue,
        host,
        i32::try_from(std::process::id()).unwrap_or(i32::MAX),
        i32::try_from(concurrency.max(1)).unwrap_or(i32::MAX)
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Deletes worker rows not seen for `older_than` that hold no job in flight
/// (`Queued` or `Running`). Finished rows may still name a forgotten worker in
/// `lock_by`: nothing reads that but people (`jobs.lock_by` has no foreign key), and
/// the index on `lock_by` holds in-flight rows only (migration 20261125000001).
pub async fn forget_dead_workers(pool: &PgPool, older_than: Duration) -> Result<u64, StorageError> {
    let older_than = interval(older_than);
    let res = sqlx::query!(
        r#"DELETE FROM apalis.workers w
           WHERE now() - w.last_seen >= $1
             AND NOT EXISTS (SELECT 1 FROM apalis.jobs j
                             WHERE j.lock_by = w.id AND j.status IN ('Queued', 'Running'))"#,
        older_than
    )
    .execute(pool)
    .await?;
    // The loops whose apalis row is gone (or never came: a loop that failed
    // to start) once as old.
    sqlx::query!(
        r#"DELETE FROM worker_loops l
           WHERE now() - l.started_at >= $1
             AND NOT EXISTS (SELECT 1 FROM apalis.workers w WHERE w.id = l.name)"#,
        older_than
    )
    .execute(pool)
    .await?;
    Ok(res.rows_affected())
}

/// How long after a job finished its row is counted in the totals: the
/// finishing transaction (apalis' acknowledgement, an operator's cancel) has
/// committed by then, so the counting statement sees it.
pub const COUNT_AFTER: Duration = Duration::from_secs(30);

/// Counts and deletes finished queue rows, in one transaction.
///
/// Counting: the rows finished after the watermark (`queue_stats_watermark`)
/// and at least [`COUNT_AFTER`] ago are added to the totals, the run-time
/// buckets and the minutes of their queue ([`crate::queue_stats`]), and the
/// watermark moves past them, so each finished row is counted once and
/// readers add only the rows after the watermark; minutes older than two
/// hours are dropped.
///
/// Deleting: rows of jobs that succeeded (`Done`) once older than
/// `keep_done`, those of jobs that failed for good (`Killed`, or `Failed` with
/// no attempt left) once older than `keep_failed`; a row deleted before the
/// watermark reached it is counted as it goes. The platform's own state
/// tables remain the durable record; `documents::fail_lost_jobs` reads the
/// failed rows. Returns the rows deleted.
pub async fn prune_finished(
    pool: &PgPool,
    keep_done: Duration,
    keep_failed: Duration,
) -> Result<u64, StorageError> {
    let keep_done = interval(keep_done);
    let keep_failed = interval(keep_failed);
    let mut tx = pool.begin().await?;
    // Locked first, so a second prune waits and then reads the moved mark.
    let counted_until =
        sqlx::query_scalar!("SELECT counted_until FROM queue_stats_watermark WHERE one FOR UPDATE")
            .fetch_one(&mut *tx)
            .await?;
    let pruned = sqlx::query_scalar!(
        r#"WITH mark AS (SELECT GREATEST($3::timestamptz, now() - $4::interval) AS t),
           gone AS (
               DELETE FROM apalis.jobs
               WHERE (status = 'Done' AND done_at < now() - $1::interval)
                  OR (done_at < now() - $2::interval
                      AND (status = 'Killed' OR (status = 'Failed' AND attempts >= max_attempts)))
               RETURNING job_type, status, done_at, lock_at, run_at
           ),
           finished AS (
               SELECT job_type, status, done_at, lock_at, run_at FROM apalis.jobs, mark
               WHERE done_at > $3 AND done_at <= mark.t
                 AND (status IN ('Done', 'Killed') OR (status = 'Failed' AND attempts >= max_attempts))
               UNION ALL
               SELECT job_type, status, done_at, lock_at, run_at FROM gone, mark
               WHERE gone.done_at > mark.t
           ),
           counted AS (
               SELECT job_type,
                      CASE WHEN status = 'Done' THEN 'done' ELSE 'failed' END AS outcome,
                      GREATEST(0, EXTRACT(EPOCH FROM done_at - COALESCE(lock_at, run_at)))::float8 AS secs,
                      date_trunc('minute', done_at) AS minute
               FROM finished
           ),
           minutes AS (
               INSERT INTO queue_job_minutes AS m (queue, outcome, minute, jobs, seconds)
               SELECT job_type, outcome, minute, count(*), COALESCE(sum(secs), 0)
               FROM counted WHERE minute >= now() - interval '2 hours' GROUP BY 1, 2, 3
               ON CONFLICT (queue, outcome, minute)
               DO UPDATE SET jobs = m.jobs + EXCLUDED.jobs, seconds = m.seconds + EXCLUDED.seconds
           ),
           old_minutes AS (
               DELETE FROM queue_job_minutes WHERE minute < now() - interval '2 hours'
           ),
           totals AS (
               INSERT INTO queue_job_totals AS t (queue, outcome, jobs, seconds)
               SELECT job_type, outcome, count(*), COALESCE(sum(secs), 0) FROM counted GROUP BY 1, 2
               ON CONFLICT (queue, outcome)
               DO UPDATE SET jobs = t.jobs + EXCLUDED.jobs, seconds = t.seconds + EXCLUDED.seconds
           ),
           run_times AS (
               INSERT INTO queue_job_run_times AS r (queue, outcome, bucket, jobs)
               SELECT job_type, outcome,
                      (SELECT count(*) FROM unnest($5::float8[]) b WHERE b < COALESCE(secs, 0))::int2,
                      count(*)
               FROM counted GROUP BY 1, 2, 3
               ON CONFLICT (queue, outcome, bucket) DO UPDATE SET jobs = r.jobs + EXCLUDED.jobs
           ),
           moved AS (
               UPDATE queue_stats_watermark SET counted_until = (SELECT t FROM mark) WHERE one
           )
           SELECT count(*) AS "n!" FROM gone"#,
        keep_done,
        keep_failed,
        counted_until,
        interval(COUNT_AFTER),
        &crate::queue_stats::RUN_TIME_BOUNDS[..]
    )
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(u64::try_from(pruned).unwrap_or(0))
}

/// Queue rows by queue and status, for metrics.
pub async fn counts(pool: &PgPool) -> Result<Vec<(String, String, i64)>, StorageError> {
    let rows = sqlx::query!(
        r#"SELECT job_type, status, count(*) AS "n!" FROM apalis.jobs GROUP BY job_type, status"#
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| (r.job_type, r.status, r.n))
        .collect())
}

pub(crate) fn interval(d: Duration) -> PgInterval {
    PgInterval {
        months: 0,
        days: 0,
        microseconds: i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_caps() {
        assert_eq!(backoff(1), Duration::from_secs(2));
        assert_eq!(backoff(2), Duration::from_secs(4));
        assert_eq!(backoff(10), Duration::from_secs(300));
        assert_eq!(backoff(u32::MAX), Duration::from_secs(300));
    }

    #[test]
    fn each_queue_is_woken_on_its_own_channel() {
        let a = notify_statement(TRANSLATE_DOCUMENT).unwrap();
        let b = notify_statement(VOICE_TRANSLATE).unwrap();
        assert!(
            a.contains("'apalis::job::insert::translate-document'"),
            "{a}"
        );
        assert!(b.contains("'apalis::job::insert::voice-translate'"), "{b}");
        assert!(a.contains(r#""job_type":"translate-document""#), "{a}");
        // Names that need quoting, or whose channel PostgreSQL would refuse.
        assert!(notify_statement("a'b").is_err());
        assert!(notify_statement("").is_err());
        let longest = "q".repeat(MAX_QUEUE_NAME);
        assert_eq!(wake_channel(&longest).len(), 63);
        assert!(notify_statement(&longest).is_ok());
        assert!(notify_statement(&format!("{longest}q")).is_err());
    }

    #[test]
    fn job_ids_are_ulids() {
        assert!(Ulid::from_string(&new_job_id()).is_ok());
    }
}
