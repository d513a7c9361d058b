-- Issue 4: developer-key administration, limits, the usage rollup.

-- A third per-key limit (the reference interface has one for speech-to-speech),
-- and sane values for all three (NULL = no limit).
ALTER TABLE api_keys ADD COLUMN speech_to_speech_milliseconds_limit bigint;
ALTER TABLE api_keys
    ADD CONSTRAINT api_keys_limits_non_negative CHECK (
        (character_limit IS NULL OR character_limit >= 0)
        AND (speech_to_text_milliseconds_limit IS NULL OR speech_to_text_milliseconds_limit >= 0)
        AND (speech_to_speech_milliseconds_limit IS NULL OR speech_to_speech_milliseconds_limit >= 0));

-- The 64-bit id of the transaction that appended a ledger entry. The scheduler
-- rolls up entries whose transaction id is below the oldest transaction still
-- running (`pg_snapshot_xmin`): no transaction that could still commit an
-- entry is below that mark, so an entry can never be skipped or counted twice,
-- even though ids of the bigserial are committed out of order.
ALTER TABLE usage_events
    ADD COLUMN tx bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint);
CREATE INDEX usage_events_tx ON usage_events (tx);
CREATE INDEX usage_events_key_tx ON usage_events (api_key_id, tx);

-- Rollup per key and UTC day (one column per kind). Maintained only by the
-- scheduler (storage::rollup), never by request paths.
CREATE TABLE usage_key_day (
    organization_id                  uuid NOT NULL,
    api_key_id                       text NOT NULL,
    day                              date NOT NULL,
    text_translation_characters      bigint NOT NULL DEFAULT 0,
    document_translation_characters  bigint NOT NULL DEFAULT 0,
    text_improvement_characters      bigint NOT NULL DEFAULT 0,
    speech_to_text_milliseconds      bigint NOT NULL DEFAULT 0,
    speech_to_speech_milliseconds    bigint NOT NULL DEFAULT 0,
    entries                          bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (organization_id, api_key_id, day)
);
CREATE INDEX usage_key_day_key ON usage_key_day (api_key_id, day);

-- Rollup per custom tag and UTC day (entries without a tag are not in it).
CREATE TABLE usage_tag_day (
    organization_id                  uuid NOT NULL,
    custom_tag                       text NOT NULL,
    day                              date NOT NULL,
    text_translation_characters      bigint NOT NULL DEFAULT 0,
    document_translation_characters  bigint NOT NULL DEFAULT 0,
    text_improvement_characters      bigint NOT NULL DEFAULT 0,
    speech_to_text_milliseconds      bigint NOT NULL DEFAULT 0,
    speech_to_speech_milliseconds    bigint NOT NULL DEFAULT 0,
    entries                          bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (organization_id, custom_tag, day)
);

-- How far the rollup has gone: every ledger entry with tx < watermark is in
-- the rollup tables, none with tx >= watermark is.
CREATE TABLE usage_rollup_state (
    singleton     boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    watermark     bigint NOT NULL,
    rolled_up_at  timestamptz
);
INSERT INTO usage_rollup_state (singleton, watermark) VALUES (true, 0);

-- Amounts reserved by requests in flight against a key with a limit: the limit
-- check counts ledger + holds under a per-key row lock, and a finished request
-- turns its hold into a ledger entry in one transaction. A hold left by a
-- crashed process stops counting at expires_at; the scheduler deletes it later.
CREATE TABLE usage_holds (
    id          bigserial PRIMARY KEY,
    api_key_id  text NOT NULL REFERENCES api_keys (key_id),
    meter       text NOT NULL CHECK (meter IN ('characters', 'speech_to_text_milliseconds',
                                               'speech_to_speech_milliseconds')),
    amount      bigint NOT NULL CHECK (amount >= 0),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX usage_holds_key ON usage_holds (api_key_id, meter);
