//! What `/metrics` reports of each queue beyond its rows: the jobs finished
//! since the database was made (monotonic counters, whatever the pruning),
//! their run times by bucket, the last hour by minute, and how long the
//! oldest due job has waited.
//!
//! The scheduler's prune ([`crate::queue::prune_finished`]) counts each
//! finished row once into `queue_job_totals`, `queue_job_run_times` and
//! `queue_job_minutes`, up to the watermark of `queue_stats_watermark`
//! (about [`crate::queue::COUNT_AFTER`] behind); the readers here add the
//! finished rows after the watermark (a few seconds' worth, found through the
//! `done_at` index), so a total never goes back and a read never scans the
//! rows kept for days.

use crate::{PgPool, StorageError};

/// Upper bounds (seconds) of the run-time buckets kept per queue; a job
/// longer than the last is in the bucket after it (`+Inf`). Each job kind
/// shows the subset that suits it (a cumulative histogram stays one when
/// buckets are left out).
pub const RUN_TIME_BOUNDS: [f64; 14] = [
    0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0,
];

/// The buckets `/metrics` shows for `queue`'s run times: a subset of
/// [`RUN_TIME_BOUNDS`] around what its jobs take (quality evaluations take
/// seconds, documents and voice jobs up to an hour).
pub fn bounds_of(queue: &str) -> &'static [f64] {
    match queue {
        crate::queue::EVALUATE_QUALITY => &[0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0],
        crate::queue::IMPORT_TMX | crate::queue::EXPORT_TMX => {
            &[0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 600.0, 1800.0]
        }
        _ => &[
            1.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0,
        ],
    }
}

impl Finished {
    /// Jobs that ran at most `bound` seconds (cumulative, as a histogram's
    /// bucket): `bound` is one of [`RUN_TIME_BOUNDS`].
    pub fn at_most(&self, bound: f64) -> i64 {
        RUN_TIME_BOUNDS
            .iter()
            .zip(&self.buckets)
            .take_while(|(b, _)| **b <= bound)
            .map(|(_, n)| *n)
            .sum()
    }
}

/// The finished jobs of one queue and outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// The queue (`translate-document`…).
    pub queue: String,
    /// `done` or `failed` (killed, or failed with no attempt left).
    pub outcome: String,
    /// Jobs.
    pub jobs: i64,
    /// Their run times added up (seconds; from the fetch to the end).
    pub seconds: f64,
    /// Jobs per bucket of [`RUN_TIME_BOUNDS`] (not cumulative), the last for
    /// longer ones; `RUN_TIME_BOUNDS.len() + 1` entries.
    pub buckets: Vec<i64>,
}

/// Every queue's finished jobs by outcome, with their run times.
pub async fn finished(pool: &PgPool) -> Result<Vec<Finished>, StorageError> {
    let bounds = &RUN_TIME_BOUNDS[..];
    let counted_until = counted_until(pool).await?;
    let rows = sqlx::query!(
        r#"WITH live AS (
               SELECT job_type AS queue,
                      CASE WHEN status = 'Done' THEN 'done' ELSE 'failed' END AS outcome,
                      GREATEST(0, EXTRACT(EPOCH FROM done_at - COALESCE(lock_at, run_at)))::float8 AS secs
               FROM apalis.jobs
               WHERE done_at > $2
                 AND (status IN ('Done', 'Killed') OR (status = 'Failed' AND attempts >= max_attempts))
           ),
           buckets AS (
               SELECT queue, outcome, bucket, sum(jobs)::int8 AS jobs FROM (
                   SELECT queue, outcome, bucket::int4 AS bucket, jobs FROM queue_job_run_times
                   UNION ALL
                   SELECT queue, outcome,
                          (SELECT count(*) FROM unnest($1::float8[]) b WHERE b < COALESCE(secs, 0))::int4,
                          count(*)
                   FROM live GROUP BY 1, 2, 3
               ) all_buckets GROUP BY 1, 2, 3
           )
           SELECT t.queue AS "queue!", t.outcome AS "outcome!", sum(t.jobs)::int8 AS "jobs!",
                  sum(t.seconds)::float8 AS "seconds!",
                  (SELECT array_agg(b.jobs ORDER BY b.bucket) FROM buckets b
                   WHERE b.queue = t.queue AND b.outcome = t.outcome) AS "bucket_jobs",
                  (SELECT array_agg(b.bucket ORDER BY b.bucket) FROM buckets b
                   WHERE b.queue = t.queue AND b.outcome = t.outcome) AS "bucket_index"
           FROM (SELECT queue, outcome, jobs, seconds FROM queue_job_totals
                 UNION ALL
                 SELECT queue, outcome, count(*), COALESCE(sum(secs), 0) FROM live GROUP BY 1, 2) t
           GROUP BY 1, 2
           ORDER BY 1, 2"#,
        bounds,
        counted_until
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let mut buckets = vec![0; RUN_TIME_BOUNDS.len() + 1];
            let index = r.bucket_index.unwrap_or_default();
            let jobs = r.bucket_jobs.unwrap_or_default();
            for (i, n) in index.into_iter().zip(jobs) {
                if let Some(slot) = usize::try_from(i).ok().and_then(|i| buckets.get_mut(i)) {
                    *slot += n;
                }
            }
            Finished {
                queue: r.queue,
                outcome: r.outcome,
                jobs: r.jobs,
                seconds: r.seconds,
                buckets,
            }
        })
        .collect())
}

/// Up to when the prune has counted finished rows (the watermark). Read on
/// its own and passed on as a value, so that the planner sees how recent it
/// is and reads the rows after it through the `done_at` index (as a subquery
/// it planned a scan of every row).
async fn counted_until(pool: &PgPool) -> Result<chrono::DateTime<chrono::Utc>, StorageError> {
    Ok(
        sqlx::query_scalar!("SELECT counted_until FROM queue_stats_watermark WHERE one")
            .fetch_one(pool)
            .await?,
    )
}

/// Width of the slices of [`last_hour`], in minutes.
pub const SLICE_MINUTES: i32 = 5;

/// Slices of the last hour.
pub const SLICES: usize = 12;

/// One queue's finished jobs over the last hour, by slice of
/// [`SLICE_MINUTES`] (oldest first, the current slice last).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LastHour {
    /// Jobs done, per slice.
    pub done: [i64; SLICES],
    /// Jobs failed for good (or killed), per slice.
    pub failed: [i64; SLICES],
    /// Their run times added up (seconds), per slice.
    pub seconds: [f64; SLICES],
}

impl LastHour {
    /// Jobs finished in the hour.
    pub fn jobs(&self) -> i64 {
        self.done.iter().chain(&self.failed).sum()
    }

    /// Mean run time over the hour (seconds), if any job finished.
    pub fn mean_seconds(&self) -> Option<f64> {
        let jobs = self.jobs();
        (jobs > 0).then(|| self.seconds.iter().sum::<f64>() / jobs as f64)
    }
}

/// Every queue's finished jobs over the last hour (queues with none are left
/// out): the minutes counted by the prune plus the rows finished since.
pub async fn last_hour(
    pool: &PgPool,
) -> Result<std::collections::BTreeMap<String, LastHour>, StorageError> {
    let counted_until = counted_until(pool).await?;
    let rows = sqlx::query!(
        r#"WITH finished AS (
               SELECT queue, outcome, minute, jobs, seconds FROM queue_job_minutes
               WHERE minute > now() - interval '1 hour'
               UNION ALL
               SELECT job_type, CASE WHEN status = 'Done' THEN 'done' ELSE 'failed' END,
                      date_trunc('minute', done_at), 1,
                      GREATEST(0, EXTRACT(EPOCH FROM done_at - COALESCE(lock_at, run_at)))::float8
               FROM apalis.jobs
               WHERE done_at > GREATEST(now() - interval '1 hour', $3::timestamptz)
                 AND (status IN ('Done', 'Killed') OR (status = 'Failed' AND attempts >= max_attempts))
           )
           SELECT queue AS "queue!", outcome AS "outcome!",
                  LEAST($1::int4 - 1, GREATEST(0, $1::int4 - 1 - floor(EXTRACT(EPOCH FROM
                      date_trunc('minute', now()) - minute)::float8 / 60.0 / $2::int4)::int4)) AS "slice!",
                  sum(jobs)::int8 AS "jobs!", sum(seconds)::float8 AS "seconds!"
           FROM finished GROUP BY 1, 2, 3"#,
        SLICES as i32,
        SLICE_MINUTES,
        counted_until
    )
    .fetch_all(pool)
    .await?;
    let mut hours = std::collections::BTreeMap::<String, LastHour>::new();
    for r in rows {
        let Some(slice) = usize::try_from(r.slice).ok().filter(|s| *s < SLICES) else {
            continue;
        };
        let hour = hours.entry(r.queue).or_default();
        match r.outcome.as_str() {
            "done" => hour.done[slice] += r.jobs,
            _ => hour.failed[slice] += r.jobs,
        }
        hour.seconds[slice] += r.seconds;
    }
    Ok(hours)
}

/// Seconds the oldest due job of each queue has waited (pending, or failed
/// with an attempt left and its retry due); queues with none are left out.
/// "Oldest" in the order workers take jobs (priority, then due time), read
/// from the head of the queue's fetch index instead of its whole backlog:
/// Tolk gives every job the same priority, so it is the oldest due job.
pub async fn oldest_waiting(pool: &PgPool) -> Result<Vec<(String, f64)>, StorageError> {
    let queues: Vec<String> = crate::queue::QUEUES
        .iter()
        .map(|q| (*q).to_owned())
        .collect();
    let rows = sqlx::query!(
        r#"SELECT q AS "queue!",
                  GREATEST(0, EXTRACT(EPOCH FROM now() - j.run_at))::float8 AS "seconds!"
           FROM unnest($1::text[]) AS q
           CROSS JOIN LATERAL (
               SELECT run_at FROM apalis.jobs
               WHERE job_type = q
                 AND (status = 'Pending' OR (status = 'Failed' AND attempts < max_attempts))
                 AND run_at <= now()
               ORDER BY priority DESC, run_at
               LIMIT 1
           ) j
           ORDER BY 1"#,
        &queues
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| (r.queue, r.seconds)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every queue's buckets are bounds kept in the database, and counts add
    /// up as a cumulative histogram's.
    #[test]
    fn buckets_are_cumulative_subsets_of_the_bounds() {
        for q in crate::queue::QUEUES {
            for b in bounds_of(q) {
                assert!(RUN_TIME_BOUNDS.contains(b), "{q}: {b}");
            }
        }
        let mut buckets = vec![0; RUN_TIME_BOUNDS.len() + 1];
        buckets[3] = 2; // (0.5, 1]
        buckets[6] = 1; // (5, 10]
        buckets[14] = 4; // over an hour
        let f = Finished {
            queue: "q".into(),
            outcome: "done".into(),
            jobs: 7,
            seconds: 0.0,
            buckets,
        };
        assert_eq!((f.at_most(0.5), f.at_most(1.0), f.at_most(10.0)), (0, 2, 3));
        assert_eq!(f.at_most(3600.0), 3);
    }
}
