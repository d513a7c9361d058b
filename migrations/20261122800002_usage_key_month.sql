-- The usage rollup per key and UTC month, derived from usage_key_day by the
-- same scheduler round (storage::rollup): one row holds a key's days of a month
-- as parallel arrays (`days` = the days of the month that have entries, in
-- order; the other arrays hold that day's sums). A report over a year reads
-- 12–13 rows per key instead of up to 366 (tolk-bench analytics).
CREATE TABLE usage_key_month (
    organization_id                  uuid NOT NULL,
    api_key_id                       text NOT NULL,
    month                            date NOT NULL CHECK (extract(day FROM month) = 1),
    days                             smallint[] NOT NULL,
    text_translation_characters      bigint[] NOT NULL,
    document_translation_characters  bigint[] NOT NULL,
    text_improvement_characters      bigint[] NOT NULL,
    speech_to_text_milliseconds      bigint[] NOT NULL,
    speech_to_speech_milliseconds    bigint[] NOT NULL,
    PRIMARY KEY (organization_id, api_key_id, month)
);

INSERT INTO usage_key_month
SELECT organization_id, api_key_id, date_trunc('month', day)::date,
       array_agg(extract(day FROM day)::smallint ORDER BY day),
       array_agg(text_translation_characters ORDER BY day),
       array_agg(document_translation_characters ORDER BY day),
       array_agg(text_improvement_characters ORDER BY day),
       array_agg(speech_to_text_milliseconds ORDER BY day),
       array_agg(speech_to_speech_milliseconds ORDER BY day)
FROM usage_key_day
GROUP BY 1, 2, 3;
