-- Translation memories (/v3/translation_memories), their units, and the TMX
-- import and export jobs that fill and read them.
--
-- Fuzzy matching: candidates are the units sharing the query's rarest word
-- bigrams (a GIN index over each unit's bigram hashes, and per-memory
-- frequencies),
-- ranked by pg_trgm's similarity(); the score itself is computed by Tolk (an
-- edit-distance ratio; see docs/api.md, Translation memories). A GIN trigram
-- index on whole sentences was measured and dropped: every sentence shares
-- common trigrams, so a lookup read ~90,000 posting entries and rechecked as
-- many rows at 200,000 units (0.2–1.9 s), and it cut COPY to a third.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE translation_memories (
    id                uuid PRIMARY KEY,
    organization_id   uuid NOT NULL REFERENCES organizations (id),
    name              text NOT NULL,
    -- Lower-case base code (en, de).
    source_language   text NOT NULL,
    -- Lower-case codes: a base (de) or one of DeepL's variants (en-gb, pt-br,
    -- es-419, zh-hans, zh-hant).
    target_languages  text[] NOT NULL,
    segment_count     bigint NOT NULL DEFAULT 0,
    -- The TMX <header> of the imported file, kept for export.
    header            jsonb NOT NULL DEFAULT '{}',
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX translation_memories_organization
    ON translation_memories (organization_id, created_at, id);

-- One row per TMX unit. No foreign key to translation_memories: units are
-- bulk-loaded with COPY in the transaction that inserts their memory (a per-row
-- foreign-key trigger would halve the import rate), and deleted with it.
CREATE TABLE translation_memory_units (
    memory_id    uuid NOT NULL,
    unit_no      integer NOT NULL,
    -- Plain text of the source-language variant (what lookups match).
    source_text  text NOT NULL,
    -- {target language: plain text} (the first variant of each language).
    targets      jsonb NOT NULL,
    -- The whole TMX unit (attributes, notes, properties, every variant with its
    -- inline markup), for export.
    unit         jsonb NOT NULL,
    -- Distinct 32-bit hashes of the word bigrams of source_text (see
    -- storage/src/translation_memories/words.rs).
    words        integer[] NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (memory_id, unit_no)
);
-- Exact matches.
CREATE INDEX translation_memory_units_exact
    ON translation_memory_units (memory_id, md5(source_text));
-- Fuzzy-match candidates: units containing any of the given bigrams.
CREATE INDEX translation_memory_units_words
    ON translation_memory_units USING gin (words);

-- How many units of a memory contain each bigram (its rarity), written by
-- the import with the units.
CREATE TABLE translation_memory_words (
    memory_id  uuid NOT NULL,
    word       integer NOT NULL,
    df         integer NOT NULL,
    PRIMARY KEY (memory_id, word)
);

-- Import and export jobs: the public state polled at
-- GET /v3/translation_memories/jobs/{id}, written in the same transaction as
-- the queue job (import: once the file is uploaded).
CREATE TABLE translation_memory_jobs (
    id                     uuid PRIMARY KEY,
    organization_id        uuid NOT NULL REFERENCES organizations (id),
    api_key_id             text NOT NULL REFERENCES api_keys (key_id),
    operation              text NOT NULL CHECK (operation IN ('import', 'export')),
    status                 text NOT NULL
                           CHECK (status IN ('awaiting_input', 'processing', 'completed', 'failed')),
    -- import: the memory it creates (visible once completed); export: the memory read.
    translation_memory_id  uuid NOT NULL,
    display_name           text,
    -- HMAC key of the upload and download signatures.
    secret                 text NOT NULL,
    file_name              text,
    content_type           text,
    content_length         bigint,
    -- import: the uploaded TMX; export: the TMX written.
    object                 text NOT NULL,
    skipped_segment_count  bigint,
    -- The first skipped units: [{line, reason}].
    skipped                jsonb,
    error_message          text,
    attempts               integer NOT NULL DEFAULT 0,
    queue_job_id           text,
    trace_id               text NOT NULL,
    -- import: until when the upload is accepted; export: until when the
    -- result can be downloaded (set on completion).
    expires_at             timestamptz,
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX translation_memory_jobs_organization
    ON translation_memory_jobs (organization_id, created_at);

-- The translation memory a document job applies (POST /v2/document with
-- translation_memory_id): the memory, its target language serving the
-- document's target_lang, and the threshold. Deleted with the document.
CREATE TABLE document_translation_memories (
    document_id      text PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
    memory_id        uuid NOT NULL,
    target_language  text NOT NULL,
    threshold        smallint NOT NULL CHECK (threshold BETWEEN 0 AND 100)
);
