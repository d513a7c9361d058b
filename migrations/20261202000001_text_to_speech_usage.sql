-- Text to speech is metered in characters (ledger kind text_to_speech_characters,
-- counted against a key's character limit): a column in the day rollups, and a
-- sixth figure a day in usage_key_month, whose figures are now six big-endian
-- int8 a day (48 bytes): the five before, then text-to-speech characters.
ALTER TABLE usage_events DROP CONSTRAINT usage_events_kind_check;
ALTER TABLE usage_events ADD CONSTRAINT usage_events_kind_check
    CHECK (kind IN ('text_translation_characters', 'document_translation_characters',
                    'text_improvement_characters', 'speech_to_text_milliseconds',
                    'speech_to_speech_milliseconds', 'text_to_speech_characters'));
ALTER TABLE usage_key_day ADD COLUMN text_to_speech_characters bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_tag_day ADD COLUMN text_to_speech_characters bigint NOT NULL DEFAULT 0;

ALTER TABLE usage_key_month DROP CONSTRAINT usage_key_month_check;
UPDATE usage_key_month m SET figures = r.figures
FROM (SELECT organization_id, api_key_id, date_trunc('month', day)::date AS month,
             string_agg(int8send(text_translation_characters)
                        || int8send(document_translation_characters)
                        || int8send(text_improvement_characters)
                        || int8send(speech_to_text_milliseconds)
                        || int8send(speech_to_speech_milliseconds)
                        || int8send(text_to_speech_characters), ''::bytea ORDER BY day) AS figures
      FROM usage_key_day
      GROUP BY 1, 2, 3) r
WHERE m.organization_id = r.organization_id AND m.api_key_id = r.api_key_id
  AND m.month = r.month;
ALTER TABLE usage_key_month ADD CONSTRAINT usage_key_month_check
    CHECK (length(figures) = 48 * length(days));
