//! The options of `POST /v2/translate`: every field validated, the first
//! problem a 400 naming it. Options the engine cannot honour are refused,
//! never silently ignored.

use tolk_engine::{Formality, MarkupOptions};
use uuid::Uuid;

use crate::ApiError;
use crate::params::Params;

/// Most entries of `glossary_ids`.
pub use crate::requests::MAX_GLOSSARIES;

/// Most entries of `custom_instructions`.
pub const MAX_CUSTOM_INSTRUCTIONS: usize = 10;
/// Longest custom instruction, in characters.
pub const MAX_CUSTOM_INSTRUCTION_CHARS: usize = 300;

/// Target languages (bases) that accept `custom_instructions`.
const CUSTOM_INSTRUCTION_TARGETS: [&str; 8] = ["DE", "EN", "ES", "FR", "IT", "JA", "KO", "ZH"];

/// Options that describe markup: without `tag_handling` they are refused.
const TAG_LISTS: [&str; 3] = ["splitting_tags", "non_splitting_tags", "ignore_tags"];

/// The model reported as used. Tolk has one model per route; the value mirrors
/// the request as DeepL does when the preferred model is available.
pub(super) fn model_type_used(requested: &str) -> &'static str {
    match requested {
        "latency_optimized" => "latency_optimized",
        _ => "quality_optimized",
    }
}

/// A validated translation request.
#[derive(Debug)]
pub(super) struct Options {
    pub(super) texts: Vec<String>,
    pub(super) target_lang: String,
    pub(super) source_lang: Option<String>,
    pub(super) context: Option<String>,
    pub(super) tag_handling: Option<&'static str>,
    pub(super) tag_handling_version: Option<&'static str>,
    pub(super) show_billed_characters: bool,
    pub(super) model_type: Option<&'static str>,
    pub(super) formality: Formality,
    pub(super) custom_instructions: Vec<String>,
    /// Glossaries named by the request, in order (an earlier one wins).
    pub(super) glossary_ids: Vec<Uuid>,
    /// The style rule list named by the request.
    pub(super) style_id: Option<Uuid>,
    /// The translation memory named by the request.
    pub(super) translation_memory_id: Option<Uuid>,
    /// Minimum match score of the translation memory (0–100).
    pub(super) translation_memory_threshold: Option<u8>,
    /// Whether line breaks end sentences (`split_sentences=1` on plain text).
    pub(super) split_lines: bool,
    /// Markup structure (with `tag_handling`).
    pub(super) markup: MarkupOptions,
    /// Extension: mark words the engine's dictionary does not know (`*word`).
    pub(super) mark_unknown: bool,
}

/// `id` (the value of `field`) as a UUID.
fn uuid_field(field: &str, id: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(id)
        .map_err(|_| ApiError::bad(format!("Value for '{field}' is not a valid ID: '{id}'.")))
}

/// Validates every field of the request; the first problem is a 400 naming it.
pub(super) fn options(p: &Params) -> Result<Options, ApiError> {
    let texts = p.texts()?;
    let target_lang = p
        .string("target_lang")?
        .ok_or_else(|| ApiError::bad("Parameter 'target_lang' is required.".to_owned()))?;
    let source_lang = p.string("source_lang")?;
    let context = p.string("context")?;
    let split_sentences = p.choice("split_sentences", &["0", "1", "nonewlines"])?;
    // Apertium never corrects punctuation or case: formatting is always preserved.
    p.bool("preserve_formatting")?;
    // Deprecated by DeepL, no effect.
    p.bool("enable_beta_languages")?;
    let outline_detection = p.bool("outline_detection")?;
    let tag_handling = p.choice("tag_handling", &["xml", "html"])?;
    let markup = markup(p, tag_handling, outline_detection)?;
    let tag_handling_version = p.choice("tag_handling_version", &["v1", "v2"])?;
    let show_billed_characters = p.bool("show_billed_characters")?.unwrap_or(false);
    let mark_unknown = p.bool("mark_unknown")?.unwrap_or(false);
    let model_type = p.choice(
        "model_type",
        &[
            "quality_optimized",
            "prefer_quality_optimized",
            "latency_optimized",
        ],
    )?;
    let formality = match p.string("formality")? {
        None => Formality::Default,
        Some(f) => Formality::parse(&f)
            .filter(|_| !matches!(f.to_ascii_lowercase().as_str(), "formal" | "informal"))
            .ok_or_else(|| {
                ApiError::bad(format!(
                    "Value for 'formality' not supported: '{f}' (allowed: default, more, less, prefer_more, prefer_less)."
                ))
            })?,
    };

    let custom_instructions = custom_instructions(p, &target_lang)?;
    let glossary_ids = glossaries(p, source_lang.as_deref())?;
    let style_id = p
        .string("style_id")?
        .map(|s| uuid_field("style_id", &s))
        .transpose()?;
    let (translation_memory_id, translation_memory_threshold) = memory(p)?;

    let split_lines = tag_handling.is_none() && split_sentences.unwrap_or("1") == "1";
    Ok(Options {
        texts,
        target_lang,
        source_lang,
        context,
        tag_handling,
        tag_handling_version,
        show_billed_characters,
        model_type,
        formality,
        custom_instructions,
        glossary_ids,
        style_id,
        translation_memory_id,
        translation_memory_threshold,
        split_lines,
        markup,
        mark_unknown,
    })
}

/// The markup options: the tag lists (each a list of XML names, given only
/// with `tag_handling`) and outline detection.
fn markup(
    p: &Params,
    tag_handling: Option<&str>,
    outline_detection: Option<bool>,
) -> Result<MarkupOptions, ApiError> {
    let mut lists = Vec::with_capacity(TAG_LISTS.len());
    for name in TAG_LISTS {
        let tags = p.name_list(name)?;
        if let Some(t) = tags.iter().find(|t| !is_tag_name(t)) {
            return Err(ApiError::bad(format!(
                "Value for '{name}' contains an invalid tag name: '{t}'."
            )));
        }
        if !tags.is_empty() && tag_handling.is_none() {
            return Err(ApiError::bad(format!(
                "Parameter '{name}' needs 'tag_handling' (xml or html)."
            )));
        }
        lists.push(tags);
    }
    let [splitting_tags, non_splitting_tags, ignore_tags] =
        <[Vec<String>; 3]>::try_from(lists).unwrap_or_default();
    Ok(MarkupOptions {
        html: tag_handling == Some("html"),
        splitting_tags,
        non_splitting_tags,
        ignore_tags,
        outline_detection: outline_detection.unwrap_or(true),
    })
}

/// `custom_instructions`: at most a few, each short and not empty, for a
/// target that takes them.
fn custom_instructions(p: &Params, target_lang: &str) -> Result<Vec<String>, ApiError> {
    let custom_instructions = p.strings("custom_instructions")?.unwrap_or_default();
    if custom_instructions.len() > MAX_CUSTOM_INSTRUCTIONS {
        return Err(ApiError::bad(format!(
            "Parameter 'custom_instructions' accepts at most {MAX_CUSTOM_INSTRUCTIONS} entries."
        )));
    }
    if let Some(i) = custom_instructions
        .iter()
        .position(|c| c.chars().count() > MAX_CUSTOM_INSTRUCTION_CHARS)
    {
        return Err(ApiError::bad(format!(
            "Entry {} of 'custom_instructions' is longer than {MAX_CUSTOM_INSTRUCTION_CHARS} characters.",
            i + 1
        )));
    }
    if custom_instructions.iter().any(|c| c.trim().is_empty()) {
        return Err(ApiError::bad(
            "Entries of 'custom_instructions' must not be empty.".to_owned(),
        ));
    }
    if !custom_instructions.is_empty()
        && !CUSTOM_INSTRUCTION_TARGETS.contains(&tolk_lang::deepl_base(target_lang).as_str())
    {
        return Err(ApiError::bad(format!(
            "Parameter 'custom_instructions' is not supported for target_lang {} (only DE, EN, ES, FR, IT, JA, KO, ZH and their variants).",
            target_lang.to_ascii_uppercase()
        )));
    }
    Ok(custom_instructions)
}

/// `glossary_id` or `glossary_ids` (not both, at most a few, each an id),
/// which need `source_lang`.
fn glossaries(p: &Params, source_lang: Option<&str>) -> Result<Vec<Uuid>, ApiError> {
    let glossary_id = p.string("glossary_id")?;
    let glossary_ids = p.name_list("glossary_ids")?;
    if glossary_id.is_some() && !glossary_ids.is_empty() {
        return Err(ApiError::bad(
            "Parameters 'glossary_id' and 'glossary_ids' cannot be combined.".to_owned(),
        ));
    }
    if glossary_ids.len() > MAX_GLOSSARIES {
        return Err(ApiError::bad(format!(
            "Parameter 'glossary_ids' accepts at most {MAX_GLOSSARIES} glossaries."
        )));
    }
    let glossary_field = if glossary_id.is_some() {
        "glossary_id"
    } else {
        "glossary_ids"
    };
    let glossaries: Vec<String> = glossary_id.into_iter().chain(glossary_ids).collect();
    if !glossaries.is_empty() && source_lang.is_none() {
        return Err(ApiError::bad(format!(
            "Parameter 'source_lang' is required when '{glossary_field}' is given."
        )));
    }
    glossaries
        .iter()
        .map(|g| uuid_field(glossary_field, g))
        .collect()
}

/// `translation_memory_id` and its `translation_memory_threshold` (0 to
/// 100, only with a memory).
fn memory(p: &Params) -> Result<(Option<Uuid>, Option<u8>), ApiError> {
    let tm = p.string("translation_memory_id")?;
    let mut translation_memory_threshold = None;
    if let Some(t) = p.string("translation_memory_threshold")? {
        let ok = t.parse::<u8>().ok().filter(|v| (0..=100).contains(v));
        if ok.is_none() {
            return Err(ApiError::bad(format!(
                "Value for 'translation_memory_threshold' must be an integer from 0 to 100, not '{t}'."
            )));
        }
        translation_memory_threshold = ok;
        if tm.is_none() {
            return Err(ApiError::bad(
                "Parameter 'translation_memory_threshold' needs 'translation_memory_id'."
                    .to_owned(),
            ));
        }
    }
    let translation_memory_id = tm
        .map(|tm| uuid_field("translation_memory_id", &tm))
        .transpose()?;
    Ok((translation_memory_id, translation_memory_threshold))
}

/// Whether `t` is an XML name (what a tag list may hold).
fn is_tag_name(t: &str) -> bool {
    let mut chars = t.chars();
    chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(body: &str) -> Params {
        Params::parse(body.as_bytes(), false).unwrap_or_else(|e| panic!("{e}"))
    }

    fn json(body: &str) -> Params {
        Params::parse(body.as_bytes(), true).unwrap_or_else(|e| panic!("{e}"))
    }

    fn message(r: Result<Options, ApiError>) -> String {
        match r {
            Ok(o) => panic!("accepted: {o:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn form_keeps_repeated_texts_in_order() {
        let o = options(&form("text=a&target_lang=ES&text=b%20c&text=")).unwrap();
        assert_eq!(o.texts, ["a", "b c", ""]);
        assert_eq!(o.target_lang, "ES");
    }

    #[test]
    fn json_types_are_checked() {
        let m = message(options(&json(r#"{"text":"a","target_lang":"ES"}"#)));
        assert!(m.contains("'text'"), "{m}");
        let m = message(options(&json(r#"{"text":["a",1],"target_lang":"ES"}"#)));
        assert!(m.contains("'text'"), "{m}");
        let m = message(options(&json(r#"{"text":[],"target_lang":"ES"}"#)));
        assert!(m.contains("'text'"), "{m}");
        let m = message(options(&json(
            r#"{"text":["a"],"target_lang":"ES","show_billed_characters":"maybe"}"#,
        )));
        assert!(m.contains("'show_billed_characters'"), "{m}");
        let m = message(options(&json(
            r#"{"text":["a"],"target_lang":"ES","non_splitting_tags":[1]}"#,
        )));
        assert!(m.contains("'non_splitting_tags'"), "{m}");
        let m = message(options(&form("text=a&target_lang=ES&target_lang=FR")));
        assert!(m.contains("'target_lang'"), "{m}");
    }

    #[test]
    fn options_are_validated_or_refused() {
        let base = r#""text":["a"],"target_lang":"ES""#;
        for (extra, field) in [
            (r#""split_sentences":"2""#, "split_sentences"),
            (r#""model_type":"fast""#, "model_type"),
            (r#""tag_handling":"json""#, "tag_handling"),
            (r#""tag_handling_version":"v3""#, "tag_handling_version"),
            (r#""glossary_ids":["g"]"#, "glossary_ids"),
            (r#""glossary_id":"g""#, "glossary_id"),
            (
                r#""custom_instructions":["x","x","x","x","x","x","x","x","x","x","x"]"#,
                "custom_instructions",
            ),
            (r#""custom_instructions":"be nice""#, "custom_instructions"),
            (
                r#""translation_memory_threshold":"101""#,
                "translation_memory_threshold",
            ),
            (r#""formality":"very""#, "formality"),
            (r#""style_id":"not-a-uuid""#, "style_id"),
            (r#""ignore_tags":"x""#, "ignore_tags"),
            (r#""splitting_tags":["p"]"#, "splitting_tags"),
            (
                r#""tag_handling":"xml","non_splitting_tags":["a b"]"#,
                "non_splitting_tags",
            ),
            (r#""outline_detection":"no""#, "outline_detection"),
        ] {
            let m = message(options(&json(&format!("{{{base},{extra}}}"))));
            assert!(m.contains(&format!("'{field}'")), "{extra}: {m}");
        }
        let o = options(&json(&format!(
            r#"{{{base},"split_sentences":"nonewlines","preserve_formatting":true,"outline_detection":false,"non_splitting_tags":["b"],"glossary_ids":[],"context":"c","tag_handling":"HTML","model_type":"prefer_quality_optimized"}}"#
        )))
        .unwrap();
        assert_eq!(o.tag_handling, Some("html"));
        assert_eq!(o.model_type.map(model_type_used), Some("quality_optimized"));
        let o = options(&form(
            "text=a&target_lang=ES&tag_handling=xml&tag_handling_version=v1",
        ))
        .unwrap();
        assert_eq!(o.tag_handling_version, Some("v1"));
        let o = options(&form(
            "text=a&target_lang=ES&preserve_formatting=1&show_billed_characters=true",
        ))
        .unwrap();
        assert!(o.show_billed_characters);
    }

    #[test]
    fn glossaries_instructions_and_form_fields() {
        let g = "3fa85f64-5717-4562-b3fc-2c963f66afa6";
        let m = message(options(&json(&format!(
            r#"{{"text":["a"],"target_lang":"ES","source_lang":"EN","glossary_id":"{g}","glossary_ids":["{g}"]}}"#
        ))));
        assert!(m.contains("'glossary_id' and 'glossary_ids'"), "{m}");
        let m = message(options(&form(&format!(
            "text=a&target_lang=ES&source_lang=EN&glossary_ids={g},{g},{g}&glossary_ids={g},{g},{g}"
        ))));
        assert!(m.contains("at most 5"), "{m}");
        let o = options(&form(&format!(
            "text=a&target_lang=ES&source_lang=EN&glossary_ids={g},{g}&glossary_ids={g}"
        )))
        .unwrap();
        assert_eq!(o.glossary_ids, vec![Uuid::parse_str(g).unwrap(); 3]);
        let m = message(options(&json(
            r#"{"text":["a"],"target_lang":"PT-BR","custom_instructions":["Be brief."]}"#,
        )));
        assert!(
            m.contains("'custom_instructions'") && m.contains("PT-BR"),
            "{m}"
        );
        let long = "x".repeat(301);
        let m = message(options(&json(&format!(
            r#"{{"text":["a"],"target_lang":"DE","custom_instructions":["{long}"]}}"#
        ))));
        assert!(
            m.contains("'custom_instructions'") && m.contains("300"),
            "{m}"
        );
        let o = options(&json(
            r#"{"text":["a"],"target_lang":"en-us","custom_instructions":["Be brief."]}"#,
        ))
        .unwrap();
        assert_eq!(o.custom_instructions, ["Be brief."]);
        // deepl-node sends these in forms too: read like the JSON ones.
        let o = options(&form(
            "text=a&target_lang=DE&tag_handling=xml&tag_handling_version=v1\
             &custom_instructions=Be%20brief.&custom_instructions=Be%20kind.\
             &style_id=3fa85f64-5717-4562-b3fc-2c963f66afa6",
        ))
        .unwrap();
        assert_eq!(o.custom_instructions, ["Be brief.", "Be kind."]);
        assert_eq!(o.tag_handling_version, Some("v1"));
        assert!(o.style_id.is_some());
        let m = message(options(&json(
            r#"{"text":["a"],"target_lang":"DE","translation_memory_threshold":80}"#,
        )));
        assert!(m.contains("'translation_memory_id'"), "{m}");
        let o = options(&form(
            "text=a&target_lang=DE&enable_beta_languages=1&formality=prefer_less",
        ))
        .unwrap();
        assert_eq!(o.formality, Formality::PreferLess);
    }

    #[test]
    fn plain_text_splits_lines_unless_asked_not_to() {
        let o = options(&form("text=a&target_lang=ES")).unwrap();
        assert!(o.split_lines);
        let o = options(&form("text=a&target_lang=ES&split_sentences=nonewlines")).unwrap();
        assert!(!o.split_lines);
        let o = options(&form("text=a&target_lang=ES&tag_handling=xml")).unwrap();
        assert!(!o.split_lines);
    }
}
