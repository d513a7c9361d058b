//! `input_conversion_options` of `POST /v2/document`: a comma-separated
//! `key:value` list that starts with a `version` entry. Known keys are
//! validated (a wrong value is a 400 naming it); unknown keys, and keys for
//! other file types, are ignored, as the interface says.

use crate::ApiError;

/// Image content types `suppress-image-types` may name.
const IMAGE_TYPES: &[&str] = &[
    "logo",
    "icon",
    "decorative",
    "barcode",
    "formula",
    "signature",
    "handwriting",
    "stamp",
    "screenshot",
    "diagram",
    "chart",
    "photo",
    "illustration",
    "comic",
    "music",
    "infographic",
    "table",
    "text",
    "other",
    "unknown",
];

/// How JSON placeholders are handled (`json-placeholders`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JsonPlaceholders {
    /// Identifier-shaped placeholders stay verbatim (the default).
    #[default]
    Protect,
    /// Placeholders are translated with the text.
    Translate,
}

/// The options of an upload.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConversionOptions {
    /// The `version` entry.
    pub version: u32,
    /// Image types whose text is left alone in pptx (`all` lists them all).
    /// Tolk reads no text inside images, so every image is left alone
    /// already; the value is checked, not needed.
    pub suppress_image_types: Vec<String>,
    /// JSON placeholders.
    pub json_placeholders: JsonPlaceholders,
    /// XLIFF: every target translated anew (`xliff-targets:overwrite`), not
    /// only those still to do (`keep`, the default).
    pub overwrite_xliff_targets: bool,
}

/// Parses the parameter's value.
pub fn parse(value: &str) -> Result<ConversionOptions, ApiError> {
    let mut entries = value.split(',').map(str::trim).filter(|e| !e.is_empty());
    let version = entries
        .next()
        .and_then(|e| e.strip_prefix("version:"))
        .and_then(|v| v.trim().parse::<u32>().ok())
        .ok_or_else(|| {
            ApiError::bad(format!(
                "Value for 'input_conversion_options' must start with a version entry (e.g. version:1): '{value}'."
            ))
        })?;
    let mut options = ConversionOptions {
        version,
        ..ConversionOptions::default()
    };
    for entry in entries {
        let Some((key, v)) = entry.split_once(':') else {
            return Err(ApiError::bad(format!(
                "Value for 'input_conversion_options' has an entry without ':': '{entry}'."
            )));
        };
        match key.trim() {
            "suppress-image-types" => {
                let v = v.trim();
                options.suppress_image_types = if v == "all" {
                    IMAGE_TYPES.iter().map(|t| (*t).to_owned()).collect()
                } else {
                    let types: Vec<String> = v.split('-').map(str::to_owned).collect();
                    if let Some(t) = types.iter().find(|t| !IMAGE_TYPES.contains(&t.as_str())) {
                        return Err(ApiError::bad(format!(
                            "Value for 'input_conversion_options' names an unknown image type in suppress-image-types: '{t}' (allowed: all, {}).",
                            IMAGE_TYPES.join(", ")
                        )));
                    }
                    types
                };
            }
            "json-placeholders" => {
                options.json_placeholders = match v.trim() {
                    "protect" => JsonPlaceholders::Protect,
                    "translate" => JsonPlaceholders::Translate,
                    other => {
                        return Err(ApiError::bad(format!(
                            "Value for 'input_conversion_options' json-placeholders must be protect or translate, not '{other}'."
                        )));
                    }
                };
            }
            "xliff-targets" => {
                options.overwrite_xliff_targets = match v.trim() {
                    "keep" => false,
                    "overwrite" => true,
                    other => {
                        return Err(ApiError::bad(format!(
                            "Value for 'input_conversion_options' xliff-targets must be keep or overwrite, not '{other}'."
                        )));
                    }
                };
            }
            _ => {}
        }
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_entry_comes_first() {
        assert!(parse("suppress-image-types:all").is_err());
        assert!(parse("").is_err());
        assert!(parse("version:x").is_err());
        assert_eq!(parse("version:1").ok().map(|o| o.version), Some(1));
    }

    #[test]
    fn known_keys_are_checked_and_unknown_ones_ignored() {
        let o = parse("version:1, suppress-image-types:logo-icon-photo,future-key:yes")
            .unwrap_or_default();
        assert_eq!(o.suppress_image_types, ["logo", "icon", "photo"]);
        let all = parse("version:1,suppress-image-types:all").unwrap_or_default();
        assert_eq!(all.suppress_image_types.len(), IMAGE_TYPES.len());
        let m = parse("version:1,suppress-image-types:logo-cats")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(m.contains("'cats'"), "{m}");
        assert_eq!(
            parse("version:1,json-placeholders:translate")
                .ok()
                .map(|o| o.json_placeholders),
            Some(JsonPlaceholders::Translate)
        );
        assert!(parse("version:1,json-placeholders:maybe").is_err());
        assert_eq!(
            parse("version:1,xliff-targets:overwrite")
                .ok()
                .map(|o| o.overwrite_xliff_targets),
            Some(true)
        );
        assert!(parse("version:1,xliff-targets:all").is_err());
        assert!(parse("version:1,nonsense").is_err());
    }
}
