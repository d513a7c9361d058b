-- Finished queue jobs, counted when the scheduler prunes their rows, so that
-- /metrics reports monotonic totals and run-time histograms per queue
-- (storage::queue::prune_finished moves each pruned row's outcome and run
-- time here in the same statement; rows not pruned yet are added when read).
CREATE TABLE queue_job_totals (
    queue    text NOT NULL,
    outcome  text NOT NULL CHECK (outcome IN ('done', 'failed')),
    jobs     bigint NOT NULL DEFAULT 0 CHECK (jobs >= 0),
    seconds  double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (queue, outcome)
);

-- Run times (done_at - lock_at) by bucket: `bucket` is the index of the first
-- bound of storage::queue::RUN_TIME_BOUNDS the run time does not exceed (the
-- bounds' count for longer ones).
CREATE TABLE queue_job_run_times (
    queue    text NOT NULL,
    outcome  text NOT NULL CHECK (outcome IN ('done', 'failed')),
    bucket   smallint NOT NULL CHECK (bucket >= 0),
    jobs     bigint NOT NULL DEFAULT 0 CHECK (jobs >= 0),
    PRIMARY KEY (queue, outcome, bucket)
);
