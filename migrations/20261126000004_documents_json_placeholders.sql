-- input_conversion_options' json-placeholders of a JSON upload: 'translate'
-- translates identifier-shaped placeholders with the text; NULL (the
-- default, protect) keeps them verbatim.
ALTER TABLE documents ADD COLUMN json_placeholders text
    CHECK (json_placeholders IN ('translate'));
