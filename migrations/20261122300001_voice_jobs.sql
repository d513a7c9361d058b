-- Voice translation jobs (POST /v1/jobs/voice/translate): the public state of
-- a job, written in the same transaction as its queue job once the audio is
-- uploaded. results holds one entry per target, in request order.
CREATE TABLE voice_jobs (
    id                     uuid PRIMARY KEY,
    organization_id        uuid NOT NULL REFERENCES organizations (id),
    api_key_id             text NOT NULL REFERENCES api_keys (key_id),
    status                 text NOT NULL DEFAULT 'pending'
                           CHECK (status IN ('pending', 'uploaded', 'processing', 'complete', 'failed')),
    -- HMAC key of this job's short-lived upload and download signatures.
    secret                 text NOT NULL,
    source_name            text NOT NULL,
    source_content_type    text NOT NULL,
    source_content_length  bigint NOT NULL,
    source_language        text,
    targets                jsonb NOT NULL,               -- [{language, type}]
    results                jsonb NOT NULL DEFAULT '[]',  -- [{status, object, content_type, error}]
    source_object          text NOT NULL,
    transcript             text,
    speech_milliseconds    bigint,
    storage_used           bigint NOT NULL DEFAULT 0,
    error_message          text,
    attempts               integer NOT NULL DEFAULT 0,
    queue_job_id           text,
    trace_id               text NOT NULL,
    upload_expires_at      timestamptz NOT NULL,
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX voice_jobs_organization ON voice_jobs (organization_id, created_at);
