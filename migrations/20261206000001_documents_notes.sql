-- What a document's filter left untranslated and why (a sentence each),
-- set when it is done and shown in its status.
ALTER TABLE documents ADD COLUMN notes text[] NOT NULL DEFAULT '{}';
