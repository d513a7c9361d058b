-- What operators did from the dashboard (/admin/ui), for audit: who (the admin
-- key), when, what, to which job, and what came of it.
CREATE TABLE operator_actions (
    id          bigserial PRIMARY KEY,
    at          timestamptz NOT NULL DEFAULT now(),
    api_key_id  text NOT NULL,
    action      text NOT NULL CHECK (action IN ('cancel')),
    job_id      text NOT NULL,
    queue       text,
    outcome     text NOT NULL CHECK (outcome IN ('done', 'refused'))
);
CREATE INDEX operator_actions_at ON operator_actions (at DESC);
