-- input_conversion_options' xliff-targets of a bilingual (XLIFF) upload:
-- 'overwrite' translates every target anew; NULL (the default, keep) keeps
-- the targets a translator settled (approved, confirmed, final, signed-off,
-- translated, locked).
ALTER TABLE documents ADD COLUMN xliff_targets text
    CHECK (xliff_targets IN ('overwrite'));
