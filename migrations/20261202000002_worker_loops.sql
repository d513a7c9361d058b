-- The worker loops started by every worker process, beside apalis' own worker
-- rows (same name: apalis.workers.id), with what apalis does not keep: the
-- host, the process and how many jobs the loop runs at once. A loop is live
-- while its apalis row heartbeats; the scheduler deletes rows whose apalis row
-- is gone (storage::queue::forget_dead_workers).
CREATE TABLE worker_loops (
    name         text PRIMARY KEY,
    queue        text NOT NULL,
    host         text NOT NULL,
    pid          integer NOT NULL,
    concurrency  integer NOT NULL CHECK (concurrency > 0),
    started_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX worker_loops_queue ON worker_loops (queue);
