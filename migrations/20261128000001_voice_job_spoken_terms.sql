-- Spoken terms of a voice translation job (parameters.spoken_terms_id): the
-- terms of the collection's list for the source language, copied when the
-- job is created, so later edits of the collection do not change a job.
ALTER TABLE voice_jobs ADD COLUMN spoken_terms text[] NOT NULL DEFAULT '{}';
