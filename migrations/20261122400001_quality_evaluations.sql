-- Quality evaluation jobs (POST /v1/quality-evaluation, and the report of a
-- document translated with enable_quality_evaluation=true): the public state of
-- an evaluation, written in the same transaction as its queue job.
CREATE TABLE quality_evaluations (
    id               uuid PRIMARY KEY,
    organization_id  uuid NOT NULL REFERENCES organizations (id),
    api_key_id       text NOT NULL REFERENCES api_keys (key_id),
    status           text NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued', 'processing', 'done', 'error')),
    source_lang      text NOT NULL,            -- DeepL code as given (EN, PT-BR); for a
    target_lang      text NOT NULL,            -- document without source_lang: the detected one
    -- Segments and options of a text job: {"segments": [{source, target}], "glossary": {..}}.
    request          jsonb,
    -- The document whose translation is evaluated (document jobs).
    document_id      text REFERENCES documents (id) ON DELETE SET NULL,
    segment_count    integer NOT NULL DEFAULT 0,
    report_object    text,                     -- object key of the report, once done
    error_message    text,
    attempts         integer NOT NULL DEFAULT 0,
    job_id           text,                     -- apalis.jobs.id, once enqueued
    trace_id         text NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz
);
CREATE INDEX quality_evaluations_finished ON quality_evaluations (finished_at)
    WHERE finished_at IS NOT NULL;
CREATE INDEX quality_evaluations_document ON quality_evaluations (document_id)
    WHERE document_id IS NOT NULL;
