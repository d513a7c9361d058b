-- Tolk: organizations, API keys, documents (the public job state of document
-- translations) and the append-only usage ledger.
-- The queue itself lives in schema `apalis` (apalis-postgres runs its own
-- migrations, tracked in apalis._sqlx_migrations).

CREATE TABLE organizations (
    id          uuid PRIMARY KEY,
    name        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- A key is presented as `{key_id}.{secret}`; only the hex HMAC-SHA512 digest
-- (keyed by the secret, over the key_id) is stored.
CREATE TABLE api_keys (
    key_id           text PRIMARY KEY,
    organization_id  uuid NOT NULL REFERENCES organizations (id),
    label            text NOT NULL,
    digest           text NOT NULL,
    is_admin         boolean NOT NULL DEFAULT false,
    created_at       timestamptz NOT NULL DEFAULT now(),
    deactivated_at   timestamptz,
    character_limit  bigint,
    speech_to_text_milliseconds_limit bigint
);
CREATE INDEX api_keys_organization ON api_keys (organization_id);

CREATE TABLE documents (
    id                    text PRIMARY KEY CHECK (id ~ '^[0-9A-F]{32}$'),
    key_digest            text NOT NULL,           -- hex SHA-256 of the document_key
    organization_id       uuid NOT NULL REFERENCES organizations (id),
    api_key_id            text NOT NULL REFERENCES api_keys (key_id),
    status                text NOT NULL DEFAULT 'queued'
                          CHECK (status IN ('queued', 'translating', 'done', 'error')),
    filename              text NOT NULL,
    input_format          text NOT NULL,
    output_format         text NOT NULL,
    source_lang           text,
    target_lang           text NOT NULL,
    detected_source_lang  text,
    source_object         text NOT NULL,
    result_object         text,
    billed_characters     bigint,
    error_message         text,
    progress              real NOT NULL DEFAULT 0, -- 0..1, while translating
    attempts              integer NOT NULL DEFAULT 0,
    job_id                text NOT NULL,           -- apalis.jobs.id
    trace_id              text NOT NULL,
    created_at            timestamptz NOT NULL DEFAULT now(),
    started_at            timestamptz,
    finished_at           timestamptz,
    downloaded_at         timestamptz
);
CREATE INDEX documents_status ON documents (status);
CREATE INDEX documents_finished ON documents (finished_at) WHERE finished_at IS NOT NULL;

-- Append-only usage ledger: one row per billable action. Nothing updates or
-- deletes rows (enforced by the trigger below).
CREATE TABLE usage_events (
    id               bigserial PRIMARY KEY,
    organization_id  uuid NOT NULL REFERENCES organizations (id),
    api_key_id       text NOT NULL REFERENCES api_keys (key_id),
    kind             text NOT NULL CHECK (kind IN (
                        'text_translation_characters',
                        'document_translation_characters',
                        'text_improvement_characters',
                        'speech_to_text_milliseconds',
                        'speech_to_speech_milliseconds')),
    amount           bigint NOT NULL CHECK (amount >= 0),
    custom_tag       text,
    document_id      text,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX usage_events_key_time ON usage_events (api_key_id, created_at);
CREATE INDEX usage_events_org_time ON usage_events (organization_id, created_at);
-- A document is billed once, however often its job runs.
CREATE UNIQUE INDEX usage_events_document_once ON usage_events (document_id, kind)
    WHERE document_id IS NOT NULL;

CREATE FUNCTION usage_events_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'usage_events is append-only';
END;
$$;
CREATE TRIGGER usage_events_no_update_delete
    BEFORE UPDATE OR DELETE ON usage_events
    FOR EACH STATEMENT EXECUTE FUNCTION usage_events_append_only();
