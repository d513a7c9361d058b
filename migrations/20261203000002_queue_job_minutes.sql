-- Finished queue jobs by minute of their end, for the dashboard's last hour
-- per queue (throughput and run time): storage::queue::prune_finished adds
-- each finished row to its minute once (see queue_stats_watermark), and drops
-- minutes older than two hours; rows finished since are added when read.
CREATE TABLE queue_job_minutes (
    queue    text NOT NULL,
    outcome  text NOT NULL CHECK (outcome IN ('done', 'failed')),
    minute   timestamptz NOT NULL,
    jobs     bigint NOT NULL DEFAULT 0 CHECK (jobs >= 0),
    seconds  double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (queue, outcome, minute)
);
CREATE INDEX queue_job_minutes_minute ON queue_job_minutes (minute);
