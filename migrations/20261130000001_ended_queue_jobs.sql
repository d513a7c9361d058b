-- Queue jobs that are over without their record finished by them: killed, or
-- failed with no attempt left, with the error of their last run. Every job
-- kind's lost-job sweep (storage::lifecycle) ends its unfinished records whose
-- queue job stands here, so what "over" means is written once.
CREATE VIEW ended_queue_jobs AS
    SELECT id, COALESCE(last_result ->> 'Err', 'unknown error') AS error
    FROM apalis.jobs
    WHERE status = 'Killed' OR (status = 'Failed' AND attempts >= max_attempts);
