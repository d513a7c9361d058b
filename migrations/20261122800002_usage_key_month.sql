-- The usage rollup per key and UTC month, derived from usage_key_day by the
-- same scheduler round (storage::rollup): one row holds a key's days of a month,
-- packed so that a report streams them as raw bytes (PostgreSQL sends a bytea
-- as it is; an int8[] costs a conversion per element). A report over a year
-- reads 12–13 rows per key instead of up to 366 (tolk-bench analytics).
--   days     one byte per day of the month that has usage (1–31), ascending
--   figures  per such day, five big-endian int8 (int8send): text translation,
--            document translation and text improvement characters, speech-to-text
--            and speech-to-speech milliseconds
CREATE TABLE usage_key_month (
    organization_id  uuid NOT NULL,
    api_key_id       text NOT NULL,
    month            date NOT NULL CHECK (extract(day FROM month) = 1),
    days             bytea NOT NULL,
    figures          bytea NOT NULL CHECK (length(figures) = 40 * length(days)),
    PRIMARY KEY (organization_id, api_key_id, month)
);

INSERT INTO usage_key_month
SELECT organization_id, api_key_id, date_trunc('month', day)::date,
       string_agg(set_byte('\x00'::bytea, 0, extract(day FROM day)::int), ''::bytea ORDER BY day),
       string_agg(int8send(text_translation_characters) || int8send(document_translation_characters)
                  || int8send(text_improvement_characters) || int8send(speech_to_text_milliseconds)
                  || int8send(speech_to_speech_milliseconds), ''::bytea ORDER BY day)
FROM usage_key_day
GROUP BY 1, 2, 3;
