-- Two indexes of apalis-postgres' first migration duplicate later ones: `lidx`
-- (= idx_apalis_jobs_lock_by) and `unique_job_id` (= jobs_pkey). Fetch and ack
-- UPDATEs change indexed columns, so every index gets a new entry per job and per
-- state change; these two only cost writes. apalis' own index clean-up
-- (20260824233636_streamline_indices) dropped their siblings the same way.
DROP INDEX IF EXISTS apalis.lidx;
DROP INDEX IF EXISTS apalis.unique_job_id;
