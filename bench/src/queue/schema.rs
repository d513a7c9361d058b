//! The schema variants of Tolk's settings: apalis' own schema against the
//! platform's migrations (the fetch function's planner settings, the NOTIFY
//! trigger, redundant indexes, the `lock_by` foreign key, collation), set on the
//! emptied queue tables before each run.

use anyhow::Context;

use super::bench::Bench;
use super::settings::TolkSetting;

/// Planner settings on apalis' fetch function. `apalis.get_jobs` is a `LANGUAGE sql`
/// function, planned with its `LIMIT` as an unknown parameter (estimated at 10 % of
/// the rows): once the table has statistics and a backlog, its outer UPDATE becomes a
/// hash join over a sequential scan of the whole of `apalis.jobs` on every fetch.
/// Forbidding hash and merge joins inside that one function gives the nested loop
/// over the primary key. A migration of the platform can run the same two
/// statements; they survive until apalis replaces the function.
pub(super) const FETCH_FIX: &str =
    "ALTER FUNCTION apalis.get_jobs(text, text, integer) SET enable_hashjoin = off;
ALTER FUNCTION apalis.get_jobs(text, text, integer) SET enable_mergejoin = off;";
/// Back to apalis' own function.
const FETCH_UNFIX: &str = "ALTER FUNCTION apalis.get_jobs(text, text, integer) RESET ALL;";

/// apalis' own per-row NOTIFY trigger (as its migrations create it; the platform's
/// migration 20261121000003 drops it).
const APALIS_TRIGGER_ON: &str = "DROP TRIGGER IF EXISTS notify_workers ON apalis.jobs;
CREATE TRIGGER notify_workers AFTER INSERT ON apalis.jobs
FOR EACH ROW EXECUTE FUNCTION apalis.notify_new_jobs();";
/// The platform's: no trigger, `notify_enqueued` after the commit.
const APALIS_TRIGGER_OFF: &str = "DROP TRIGGER IF EXISTS notify_workers ON apalis.jobs;";

/// apalis' own `apalis.jobs` text columns and idempotency index (before the
/// platform's migration 20261125100001). Run on the emptied table.
const APALIS_ROWS: &str = r#"ALTER TABLE apalis.jobs
    ALTER COLUMN id TYPE text COLLATE "default", ALTER COLUMN job_type TYPE text COLLATE "default",
    ALTER COLUMN status TYPE text COLLATE "default", ALTER COLUMN lock_by TYPE text COLLATE "default",
    ALTER COLUMN idempotency_key TYPE text COLLATE "default";
DROP INDEX IF EXISTS apalis.idx_jobs_idempotency_key;
CREATE UNIQUE INDEX idx_jobs_idempotency_key ON apalis.jobs (job_type, idempotency_key);"#;
/// The platform's: migration 20261125100001 itself (bytewise text columns, the
/// idempotency index over unfinished rows), run again on the emptied table.
/// The view every job kind's lost-job sweep reads (as the migration makes it).
const ENDED_QUEUE_JOBS: &str =
    include_str!("../../../migrations/20261130000001_ended_queue_jobs.sql");

const PLATFORM_ROWS: &str = include_str!(
    "../../../migrations/20261125100001_apalis_jobs_c_collation_idempotency_unfinished.sql"
);

impl Bench {
    /// Empties the queue tables, sets the schema variant of `s` (the fetch
    /// function's planner settings, triggers, indexes, foreign key, collation), and
    /// checkpoints, so every run starts alike.
    pub(super) async fn reset_tolk(&self, s: &TolkSetting) -> anyhow::Result<()> {
        sqlx::query("TRUNCATE apalis.jobs, apalis.workers")
            .execute(&self.obs)
            .await
            .context("truncating apalis.jobs")?;
        let steps = [
            (
                if s.fetch_fix { FETCH_FIX } else { FETCH_UNFIX },
                "setting apalis.get_jobs' planner settings",
            ),
            (
                if s.apalis_trigger {
                    APALIS_TRIGGER_ON
                } else {
                    APALIS_TRIGGER_OFF
                },
                "setting apalis' NOTIFY trigger",
            ),
            (
                if s.apalis_dup_indexes {
                    "CREATE INDEX IF NOT EXISTS lidx ON apalis.jobs (lock_by);
                     CREATE UNIQUE INDEX IF NOT EXISTS unique_job_id ON apalis.jobs (id);"
                } else {
                    "DROP INDEX IF EXISTS apalis.lidx; DROP INDEX IF EXISTS apalis.unique_job_id;"
                },
                "setting apalis' redundant indexes",
            ),
            (
                if s.lock_fk {
                    "DO $$ BEGIN
                         IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'fk_worker_lock_by') THEN
                             ALTER TABLE apalis.jobs ADD CONSTRAINT fk_worker_lock_by
                                 FOREIGN KEY (lock_by) REFERENCES apalis.workers (id);
                         END IF;
                     END $$;"
                } else {
                    "ALTER TABLE apalis.jobs DROP CONSTRAINT IF EXISTS fk_worker_lock_by;"
                },
                "setting apalis' lock_by foreign key",
            ),
            (
                if s.apalis_rows {
                    APALIS_ROWS
                } else {
                    PLATFORM_ROWS
                },
                "setting apalis.jobs' collation and idempotency index",
            ),
        ];
        // The view of ended jobs reads the columns whose collation the rows
        // step sets: it is made again around that step.
        sqlx::raw_sql("DROP VIEW IF EXISTS ended_queue_jobs")
            .execute(&self.obs)
            .await
            .context("dropping the view of ended queue jobs")?;
        for (sql, what) in steps {
            sqlx::raw_sql(sql).execute(&self.obs).await.context(what)?;
        }
        sqlx::raw_sql(ENDED_QUEUE_JOBS)
            .execute(&self.obs)
            .await
            .context("making the view of ended queue jobs again")?;
        self.checkpoint().await
    }
}
