-- apalis' index on jobs.lock_by covers every row a worker ever locked, Done ones
-- included, and apalis' ack (queries/task/handle_result.sql) finds the rows to
-- lock through it: `… INNER JOIN j ON j.task_id = jobs.id WHERE jobs.lock_by = $2
-- … FOR UPDATE`. The planner estimates one row for a worker name (new names are
-- never in the statistics) and scans the index, so each ack read all of the
-- worker's finished rows: 12,205 rows to lock 200 near the end of
-- `tolk-bench queue` (100,000 jobs, 8 workers), an ack 30 ms instead of 1 ms,
-- growing with every job until the scheduler prunes Done rows.
--
-- Every query that looks rows up by lock_by also asks for Queued or Running
-- (apalis' re-enqueue of orphaned and abandoned jobs, the scheduler's
-- `queue::release_dead_workers` and `queue::forget_dead_workers`), so the index
-- now holds in-flight rows only. The ack then finds its rows by primary key,
-- and an insert (Pending) or an ack (Done) adds no entry to this index.
DROP INDEX IF EXISTS apalis.idx_apalis_jobs_lock_by;
CREATE INDEX IF NOT EXISTS idx_apalis_jobs_lock_by_in_flight ON apalis.jobs (lock_by)
    WHERE status = 'Queued' OR status = 'Running';
