-- Glossaries (v2 single-pair and v3 multilingual): a glossary of an
-- organization holds dictionaries, one per language pair. Languages are stored
-- as lower-case DeepL base codes (en, de, pt): a dictionary for a base target
-- serves all its variants (EN-US, EN-GB, PT-BR, ZH-HANS).
CREATE TABLE glossaries (
    id               uuid PRIMARY KEY,
    organization_id  uuid NOT NULL REFERENCES organizations (id),
    name             text NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX glossaries_organization ON glossaries (organization_id, created_at);

CREATE TABLE glossary_dictionaries (
    glossary_id  uuid NOT NULL REFERENCES glossaries (id) ON DELETE CASCADE,
    source_lang  text NOT NULL,
    target_lang  text NOT NULL,
    -- Entries in their order: sources[i] translates to targets[i].
    sources      text[] NOT NULL,
    targets      text[] NOT NULL,
    -- UTF-8 bytes of all terms, for the 10 MiB limit per glossary.
    size_bytes   bigint NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (glossary_id, source_lang, target_lang),
    CHECK (cardinality(sources) = cardinality(targets))
);
