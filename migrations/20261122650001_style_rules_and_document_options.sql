-- Style rule lists (/v3/style_rules) of an organization: a language (a root
-- such as `en`, which covers every variant, or a variant such as `en-GB`),
-- the configured rules (category -> rule -> option, validated against
-- DeepL's ConfiguredRules schema by the API) and custom instructions
-- (a jsonb array of {id, label, prompt, source_language}). `version` counts
-- the changes.
CREATE TABLE style_rules (
    id                   uuid PRIMARY KEY,
    organization_id      uuid NOT NULL REFERENCES organizations (id),
    name                 text NOT NULL,
    language             text NOT NULL,
    version              integer NOT NULL DEFAULT 1,
    configured_rules     jsonb NOT NULL DEFAULT '{}',
    custom_instructions  jsonb NOT NULL DEFAULT '[]',
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX style_rules_organization ON style_rules (organization_id, created_at, id);

-- The customizations of a document job: the worker loads the glossaries'
-- entries and the style rule list when it runs.
ALTER TABLE documents
    ADD COLUMN glossary_ids uuid[] NOT NULL DEFAULT '{}',
    ADD COLUMN style_id uuid;
