-- Finished queue rows are counted once, soon after they finish, instead of
-- when the prune deletes them: failed rows are kept for days, and counting
-- every unpruned row on each read of /metrics or the dashboard grew with them
-- (seconds over a million rows). storage::queue::prune_finished adds the rows
-- finished up to a watermark to queue_job_totals, queue_job_run_times and
-- queue_job_minutes and moves the watermark; readers add only the rows
-- finished after it, found through the index below (which the prune's
-- deletes use too).
CREATE INDEX apalis_jobs_done_at ON apalis.jobs (done_at) WHERE done_at IS NOT NULL;

CREATE TABLE queue_stats_watermark (
    one            boolean PRIMARY KEY DEFAULT true CHECK (one),
    -- Every finished row with done_at up to here is in the totals.
    counted_until  timestamptz NOT NULL
);

-- The rows finished so far and not pruned yet are counted now (the buckets'
-- bounds are storage::queue_stats::RUN_TIME_BOUNDS).
WITH live AS (
    SELECT job_type,
           CASE WHEN status = 'Done' THEN 'done' ELSE 'failed' END AS outcome,
           GREATEST(0, EXTRACT(EPOCH FROM done_at - COALESCE(lock_at, run_at)))::float8 AS secs,
           date_trunc('minute', done_at) AS minute
    FROM apalis.jobs
    WHERE done_at <= now()
      AND (status IN ('Done', 'Killed') OR (status = 'Failed' AND attempts >= max_attempts))
),
totals AS (
    INSERT INTO queue_job_totals AS t (queue, outcome, jobs, seconds)
    SELECT job_type, outcome, count(*), COALESCE(sum(secs), 0) FROM live GROUP BY 1, 2
    ON CONFLICT (queue, outcome)
    DO UPDATE SET jobs = t.jobs + EXCLUDED.jobs, seconds = t.seconds + EXCLUDED.seconds
),
run_times AS (
    INSERT INTO queue_job_run_times AS r (queue, outcome, bucket, jobs)
    SELECT job_type, outcome,
           (SELECT count(*) FROM unnest(ARRAY[0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
                                              120.0, 300.0, 600.0, 1800.0, 3600.0]::float8[]) b
            WHERE b < COALESCE(secs, 0))::int2,
           count(*)
    FROM live GROUP BY 1, 2, 3
    ON CONFLICT (queue, outcome, bucket) DO UPDATE SET jobs = r.jobs + EXCLUDED.jobs
),
minutes AS (
    INSERT INTO queue_job_minutes AS m (queue, outcome, minute, jobs, seconds)
    SELECT job_type, outcome, minute, count(*), COALESCE(sum(secs), 0)
    FROM live WHERE minute >= now() - interval '2 hours' GROUP BY 1, 2, 3
    ON CONFLICT (queue, outcome, minute)
    DO UPDATE SET jobs = m.jobs + EXCLUDED.jobs, seconds = m.seconds + EXCLUDED.seconds
)
INSERT INTO queue_stats_watermark (counted_until) VALUES (now());
