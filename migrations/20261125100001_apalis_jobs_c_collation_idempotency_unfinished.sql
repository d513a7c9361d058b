-- Two changes that cut PostgreSQL's work per queue job (each fetch and ack of
-- apalis-postgres writes a new row version and an entry in every index whose
-- predicate it matches).
--
-- 1. The text columns of apalis.jobs that indexes hold or sort (id, job_type,
--    status, lock_by, idempotency_key) compare bytewise (COLLATE "C"). They are
--    machine names (ULIDs, queue names, worker names, keys), so no one needs
--    linguistic order, and under the database's default collation every b-tree
--    comparison went through strcoll (perf of `tolk-bench queue`: _bt_compare,
--    varstr_cmp and strcoll were 10-14 % of PostgreSQL's CPU). Comparisons with
--    other tables' columns are unaffected: the default collation yields to C
--    (`documents.job_id = apalis.jobs.id` compares bytewise and can use jobs_pkey).
--    Only the collation changes: PostgreSQL rebuilds the indexes, not the table.
--
-- 2. apalis' unique index on (job_type, idempotency_key) covered every row, so
--    the ack (Queued → Done) added an entry to it for each job. It now covers
--    unfinished rows only (Pending, Queued, Running, Failed, Killed): a second
--    enqueue with the key of a job that is not Done still fails, as before; one
--    after the job is Done succeeds. That was already true a few seconds later,
--    once the scheduler pruned the Done row (`queue::prune_finished`), so the key
--    never guarded "all rows ever"; it guards the job while it can still run,
--    which is what Graphile Worker's job_key and Oban's unique states do too.
--    apalis' insert has no ON CONFLICT clause naming the index, so a partial
--    index serves its uniqueness check the same way.
--
-- `tolk-bench queue` measures the effect (docs/benchmarks.md, queue section).
ALTER TABLE apalis.jobs
    ALTER COLUMN id TYPE text COLLATE "C",
    ALTER COLUMN job_type TYPE text COLLATE "C",
    ALTER COLUMN status TYPE text COLLATE "C",
    ALTER COLUMN lock_by TYPE text COLLATE "C",
    ALTER COLUMN idempotency_key TYPE text COLLATE "C";

DROP INDEX IF EXISTS apalis.idx_jobs_idempotency_key;
CREATE UNIQUE INDEX idx_jobs_idempotency_key ON apalis.jobs (job_type, idempotency_key)
    WHERE status <> 'Done';
