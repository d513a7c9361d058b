-- A spoken-terms collection may set its own keyword-spotting threshold; a
-- voice job keeps the collection it was given and the threshold in force.
ALTER TABLE spoken_terms ADD COLUMN keyword_threshold double precision;
ALTER TABLE voice_jobs ADD COLUMN spoken_terms_id uuid,
                       ADD COLUMN keyword_threshold double precision;
