-- How often each queue's worker loops were started again after ending on an
-- error (a lost database connection, a failed fetch or heartbeat), summed over
-- every worker process: `tolk_worker_loop_restarts_total` in /metrics.
CREATE TABLE IF NOT EXISTS worker_loop_restarts (
    queue text PRIMARY KEY,
    restarts bigint NOT NULL DEFAULT 0 CHECK (restarts >= 0),
    last_restart_at timestamptz NOT NULL DEFAULT now()
);
