//! Text translation: `POST /v2/translate`, in the DeepL wire format.
//!
//! The body is JSON or `application/x-www-form-urlencoded` (at most 128 KiB,
//! else 413). Both are read into one [`Params`] map first, so that every
//! option is validated the same way whatever the encoding; repeated form keys
//! (`text=a&text=b`) keep their order. Options the engine cannot honour are
//! refused with a 400 naming them, never silently ignored.

use std::collections::HashMap;

use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde::Serialize;
use tolk_engine::{EngineError, TagHandling, TranslateRequest};
use tolk_storage::limits::Meter;
use tolk_storage::usage;

use crate::auth::AuthKey;
use crate::limits::Charge;
use crate::routes::languages;
use crate::{ApiError, AppState};

/// Largest request body, in bytes (DeepL's limit).
pub const MAX_BODY_BYTES: usize = 128 * 1024;

/// Header carrying the client's custom reporting tag.
pub const REPORTING_TAG_HEADER: &str = "x-deepl-reporting-tag";

/// Longest accepted reporting tag, in characters.
pub const MAX_REPORTING_TAG_CHARS: usize = 100;

/// Options this server cannot honour yet: present with a value → 400 naming them.
const NOT_SUPPORTED_YET: [&str; 8] = [
    "glossary_id",
    "glossary_ids",
    "style_id",
    "custom_instructions",
    "translation_memory_id",
    "translation_memory_threshold",
    "splitting_tags",
    "ignore_tags",
];

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new().route("/v2/translate", post(translate))
}

/// One request field as sent.
#[derive(Debug)]
enum Field {
    /// A member of a JSON object.
    Json(serde_json::Value),
    /// Every value of a form key, in order.
    Form(Vec<String>),
}

/// The fields of a request body, whatever its encoding.
#[derive(Debug)]
struct Params {
    fields: HashMap<String, Field>,
    json: bool,
}

fn bad(message: String) -> ApiError {
    ApiError::BadRequest(message)
}

impl Params {
    /// Reads a JSON object or form pairs.
    fn parse(bytes: &[u8], json: bool) -> Result<Self, ApiError> {
        let mut fields = HashMap::new();
        if json {
            let value: serde_json::Value = serde_json::from_slice(bytes)
                .map_err(|e| bad(format!("Invalid JSON body: {e}")))?;
            let serde_json::Value::Object(map) = value else {
                return Err(bad("Invalid JSON body: expected an object.".to_owned()));
            };
            for (k, v) in map {
                fields.insert(k, Field::Json(v));
            }
        } else {
            let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(bytes)
                .map_err(|e| bad(format!("Invalid form body: {e}")))?;
            for (k, v) in pairs {
                match fields.entry(k).or_insert_with(|| Field::Form(Vec::new())) {
                    Field::Form(values) => values.push(v),
                    Field::Json(_) => {}
                }
            }
        }
        Ok(Self { fields, json })
    }

    /// Whether `name` was sent with a value (not null, not empty).
    fn has_value(&self, name: &str) -> bool {
        match self.fields.get(name) {
            None | Some(Field::Json(serde_json::Value::Null)) => false,
            Some(Field::Json(serde_json::Value::String(s))) => !s.trim().is_empty(),
            Some(Field::Json(serde_json::Value::Array(a))) => !a.is_empty(),
            Some(Field::Json(_)) => true,
            Some(Field::Form(values)) => values.iter().any(|v| !v.trim().is_empty()),
        }
    }

    /// A single string, untrimmed; `None` when absent or null.
    fn raw_string(&self, name: &str) -> Result<Option<String>, ApiError> {
        match self.fields.get(name) {
            None | Some(Field::Json(serde_json::Value::Null)) => Ok(None),
            Some(Field::Json(serde_json::Value::String(s))) => Ok(Some(s.clone())),
            Some(Field::Json(serde_json::Value::Number(n))) => Ok(Some(n.to_string())),
            Some(Field::Json(_)) => Err(bad(format!("Value for '{name}' must be a string."))),
            Some(Field::Form(values)) => match values.as_slice() {
                [] => Ok(None),
                [v] => Ok(Some(v.clone())),
                _ => Err(bad(format!("Parameter '{name}' may be given only once."))),
            },
        }
    }

    /// A single string, trimmed; `None` when absent, null or empty.
    fn string(&self, name: &str) -> Result<Option<String>, ApiError> {
        Ok(self
            .raw_string(name)?
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty()))
    }

    /// A boolean: JSON `true`/`false`, or `1`/`0`/`true`/`false` as text.
    fn bool(&self, name: &str) -> Result<Option<bool>, ApiError> {
        let invalid = || {
            bad(format!(
                "Value for '{name}' must be a boolean (true/false or 1/0)."
            ))
        };
        if let Some(Field::Json(serde_json::Value::Bool(b))) = self.fields.get(name) {
            return Ok(Some(*b));
        }
        match self.string(name).map_err(|_| invalid())? {
            None => Ok(None),
            Some(v) => match v.to_ascii_lowercase().as_str() {
                "1" | "true" => Ok(Some(true)),
                "0" | "false" => Ok(Some(false)),
                _ => Err(invalid()),
            },
        }
    }

    /// A list of strings: a JSON array of strings (or one comma-separated
    /// string), or form values, each comma-separated. Empty entries are dropped.
    fn tag_list(&self, name: &str) -> Result<Vec<String>, ApiError> {
        let invalid = || {
            bad(format!(
                "Value for '{name}' must be an array of strings or a comma-separated string."
            ))
        };
        let raw: Vec<String> = match self.fields.get(name) {
            None | Some(Field::Json(serde_json::Value::Null)) => Vec::new(),
            Some(Field::Json(serde_json::Value::String(s))) => vec![s.clone()],
            Some(Field::Json(serde_json::Value::Array(items))) => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned).ok_or_else(invalid))
                .collect::<Result<_, _>>()?,
            Some(Field::Json(_)) => return Err(invalid()),
            Some(Field::Form(values)) => values.clone(),
        };
        Ok(raw
            .iter()
            .flat_map(|v| v.split(','))
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
            .collect())
    }

    /// The texts: a JSON array of strings, or every `text` of a form, in order.
    fn texts(&self) -> Result<Vec<String>, ApiError> {
        let texts = match self.fields.get("text") {
            None | Some(Field::Json(serde_json::Value::Null)) => {
                return Err(bad("Parameter 'text' is required.".to_owned()));
            }
            Some(Field::Json(serde_json::Value::Array(items))) => items
                .iter()
                .map(|v| {
                    v.as_str().map(str::to_owned).ok_or_else(|| {
                        bad("Value for 'text' must be an array of strings.".to_owned())
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
            Some(Field::Json(_)) => {
                return Err(bad(
                    "Value for 'text' must be an array of strings.".to_owned()
                ));
            }
            Some(Field::Form(values)) => values.clone(),
        };
        if texts.is_empty() {
            return Err(bad(
                "Parameter 'text' must contain at least one text.".to_owned()
            ));
        }
        Ok(texts)
    }

    /// A string that must be one of `allowed`.
    fn choice(
        &self,
        name: &str,
        allowed: &'static [&'static str],
    ) -> Result<Option<&'static str>, ApiError> {
        match self.string(name)? {
            None => Ok(None),
            Some(v) => allowed
                .iter()
                .find(|a| a.eq_ignore_ascii_case(&v))
                .copied()
                .map(Some)
                .ok_or_else(|| {
                    bad(format!(
                        "Value for '{name}' not supported: '{v}' (allowed: {}).",
                        allowed.join(", ")
                    ))
                }),
        }
    }
}

/// A validated translation request.
#[derive(Debug)]
struct Options {
    texts: Vec<String>,
    target_lang: String,
    source_lang: Option<String>,
    tag_handling: Option<&'static str>,
    tag_handling_version: Option<&'static str>,
    show_billed_characters: bool,
    model_type: Option<&'static str>,
    formality: Option<String>,
    /// Whether line breaks end sentences (`split_sentences=1` on plain text).
    split_lines: bool,
}

/// Validates every field of the request; the first problem is a 400 naming it.
fn options(p: &Params) -> Result<Options, ApiError> {
    let texts = p.texts()?;
    let target_lang = p
        .string("target_lang")?
        .ok_or_else(|| bad("Parameter 'target_lang' is required.".to_owned()))?;
    let source_lang = p.string("source_lang")?;
    for name in NOT_SUPPORTED_YET {
        if p.has_value(name) {
            return Err(bad(format!(
                "Parameter '{name}' is not supported by this server yet."
            )));
        }
    }
    // Accepted; Apertium translates each text on its own and cannot use it.
    p.raw_string("context")?;
    // Apertium finds sentence ends at punctuation itself but reads a line break
    // as a blank; "1" (the default without markup) therefore sends each line
    // on its own, "0" and "nonewlines" send the text as it is.
    let split_sentences = p.choice("split_sentences", &["0", "1", "nonewlines"])?;
    // Apertium never corrects punctuation or case: formatting is always preserved.
    p.bool("preserve_formatting")?;
    // Deprecated by DeepL, no effect.
    p.bool("enable_beta_languages")?;
    // Tags never split sentences here, and there is no automatic outline
    // detection to switch off: both are honoured by construction.
    p.bool("outline_detection")?;
    p.tag_list("non_splitting_tags")?;
    let tag_handling = p.choice("tag_handling", &["xml", "html"])?;
    let tag_handling_version = p.choice("tag_handling_version", &["v1", "v2"])?;
    if tag_handling_version.is_some() && !p.json {
        return Err(bad(
            "Parameter 'tag_handling_version' is only accepted in JSON bodies.".to_owned(),
        ));
    }
    let show_billed_characters = p.bool("show_billed_characters")?.unwrap_or(false);
    let model_type = p.choice(
        "model_type",
        &[
            "quality_optimized",
            "prefer_quality_optimized",
            "latency_optimized",
        ],
    )?;
    let formality = p.string("formality")?;
    let split_lines = tag_handling.is_none() && split_sentences.unwrap_or("1") == "1";
    Ok(Options {
        texts,
        target_lang,
        source_lang,
        tag_handling,
        tag_handling_version,
        show_billed_characters,
        model_type,
        formality,
        split_lines,
    })
}

/// One translated text.
#[derive(Debug, Serialize)]
struct Translation {
    detected_source_language: String,
    text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    billed_characters: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_type_used: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tag_handling_version: Option<&'static str>,
}

/// Body of a successful `POST /v2/translate`.
#[derive(Debug, Serialize)]
struct TranslateResponse {
    translations: Vec<Translation>,
}

/// The reporting tag of the request, if any (at most 100 characters).
fn reporting_tag(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get(REPORTING_TAG_HEADER) else {
        return Ok(None);
    };
    let tag = value
        .to_str()
        .map_err(|_| bad("Header 'X-DeepL-Reporting-Tag' must be visible ASCII text.".to_owned()))?
        .trim();
    if tag.chars().count() > MAX_REPORTING_TAG_CHARS {
        return Err(bad(format!(
            "Header 'X-DeepL-Reporting-Tag' is longer than {MAX_REPORTING_TAG_CHARS} characters."
        )));
    }
    Ok(Some(tag.to_owned()).filter(|t| !t.is_empty()))
}

/// The model reported as used. Tolk has one model per route; the value mirrors
/// the request as DeepL does when the preferred model is available.
fn model_type_used(requested: &str) -> &'static str {
    match requested {
        "latency_optimized" => "latency_optimized",
        _ => "quality_optimized",
    }
}

async fn translate(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let json = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            ct.trim_start()
                .to_ascii_lowercase()
                .starts_with("application/json")
        });
    let bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| {
            ApiError::TooLarge(format!(
                "Request body too large: at most {MAX_BODY_BYTES} bytes are accepted."
            ))
        })?;
    let params = Params::parse(&bytes, json)?;
    let opts = options(&params)?;
    let custom_tag = reporting_tag(&headers)?;
    languages::check(
        &state,
        opts.source_lang.as_deref(),
        &opts.target_lang,
        opts.formality.as_deref(),
    )?;

    let billed: Vec<usize> = opts.texts.iter().map(|t| t.chars().count()).collect();
    let total: usize = billed.iter().sum();
    let total = i64::try_from(total)
        .map_err(|_| ApiError::Internal("character count overflow".to_owned()))?;
    // Metering (api/src/limits.rs): 456 unless the characters fit the key's limit.
    let charge = Charge::reserve(&state, &key, Meter::Characters, total).await?;

    let (layouts, engine_texts) = if opts.split_lines {
        let (layouts, lines) = split_lines(&opts.texts);
        (Some(layouts), lines)
    } else {
        (None, opts.texts)
    };
    let res = state
        .translator
        .translate(TranslateRequest {
            source_lang: opts.source_lang.clone(),
            target_lang: opts.target_lang.clone(),
            texts: engine_texts,
            tag_handling: if opts.tag_handling.is_some() {
                TagHandling::Xml
            } else {
                TagHandling::None
            },
        })
        .await
        .map_err(languages::engine_error)?;
    let detected_source_lang = res.detected_source_lang;
    let out = match layouts {
        Some(layouts) => join_lines(layouts, res.texts)?,
        None => res.texts,
    };
    if out.len() != billed.len() {
        return Err(engine_mismatch(billed.len(), out.len()));
    }

    // The ledger entry (and the reservation dropped), in one transaction.
    charge
        .settle(&state, usage::kind::TEXT_TRANSLATION, custom_tag.as_deref())
        .await?;

    let model_type_used = opts.model_type.map(model_type_used);
    let tag_handling_version = opts
        .tag_handling
        .map(|_| opts.tag_handling_version.unwrap_or("v2"));
    let translations = out
        .into_iter()
        .zip(billed)
        .map(|(text, chars)| Translation {
            detected_source_language: detected_source_lang.clone(),
            text,
            billed_characters: opts.show_billed_characters.then_some(chars),
            model_type_used,
            tag_handling_version,
        })
        .collect();
    Ok(Json(TranslateResponse { translations }).into_response())
}

/// A piece of an input text: kept as it is (line breaks and the whitespace around
/// lines) or the engine's translation of one line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Keep(String),
    Engine(usize),
}

/// Splits every text into lines for the engine (so that a line break ends a
/// sentence, as DeepL's `split_sentences=1` does); returns each text's layout
/// and the lines to translate (whitespace-only lines are not sent).
fn split_lines(texts: &[String]) -> (Vec<Vec<Part>>, Vec<String>) {
    let mut lines = Vec::new();
    let layouts = texts
        .iter()
        .map(|text| {
            let mut parts = Vec::new();
            for line in text.split_inclusive(['\n', '\r']) {
                let core = line.trim();
                if core.is_empty() {
                    parts.push(Part::Keep(line.to_owned()));
                    continue;
                }
                let start = line.len() - line.trim_start().len();
                let end = start + core.len();
                if start > 0 {
                    parts.push(Part::Keep(line[..start].to_owned()));
                }
                parts.push(Part::Engine(lines.len()));
                lines.push(core.to_owned());
                if end < line.len() {
                    parts.push(Part::Keep(line[end..].to_owned()));
                }
            }
            parts
        })
        .collect();
    (layouts, lines)
}

/// Puts translated lines back into their texts' layouts.
fn join_lines(layouts: Vec<Vec<Part>>, translated: Vec<String>) -> Result<Vec<String>, ApiError> {
    layouts
        .into_iter()
        .map(|parts| {
            let mut text = String::new();
            for part in parts {
                match part {
                    Part::Keep(s) => text.push_str(&s),
                    Part::Engine(i) => text.push_str(
                        translated
                            .get(i)
                            .ok_or_else(|| engine_mismatch(i + 1, translated.len()))?,
                    ),
                }
            }
            Ok(text)
        })
        .collect()
}

fn engine_mismatch(expected: usize, got: usize) -> ApiError {
    languages::engine_error(EngineError::Failed(format!(
        "the engine returned {got} texts for {expected}"
    )))
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
            (
                r#""custom_instructions":["be nice"]"#,
                "custom_instructions",
            ),
            (r#""ignore_tags":"x""#, "ignore_tags"),
            (r#""splitting_tags":["p"]"#, "splitting_tags"),
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
        let m = message(options(&form(
            "text=a&target_lang=ES&tag_handling=xml&tag_handling_version=v1",
        )));
        assert!(m.contains("'tag_handling_version'"), "{m}");
        let o = options(&form(
            "text=a&target_lang=ES&preserve_formatting=1&show_billed_characters=true",
        ))
        .unwrap();
        assert!(o.show_billed_characters);
    }

    #[test]
    fn lines_are_split_and_joined_keeping_whitespace() {
        let texts = vec![
            "One.\n  Two  \r\n\nThree".to_owned(),
            String::new(),
            " x ".to_owned(),
        ];
        let (layouts, lines) = split_lines(&texts);
        assert_eq!(lines, ["One.", "Two", "Three", "x"]);
        let upper: Vec<String> = lines.iter().map(|l| l.to_uppercase()).collect();
        assert_eq!(
            join_lines(layouts.clone(), upper).ok(),
            Some(vec![
                "ONE.\n  TWO  \r\n\nTHREE".to_owned(),
                String::new(),
                " X ".to_owned()
            ])
        );
        assert!(join_lines(layouts, vec!["a".to_owned()]).is_err());
        let o = options(&form("text=a&target_lang=ES")).unwrap();
        assert!(o.split_lines);
        let o = options(&form("text=a&target_lang=ES&split_sentences=nonewlines")).unwrap();
        assert!(!o.split_lines);
        let o = options(&form("text=a&target_lang=ES&tag_handling=xml")).unwrap();
        assert!(!o.split_lines);
    }

    #[test]
    fn reporting_tag_is_bounded() {
        let mut h = HeaderMap::new();
        assert_eq!(reporting_tag(&h).ok(), Some(None));
        h.insert(REPORTING_TAG_HEADER, "team-billing".parse().unwrap());
        assert_eq!(
            reporting_tag(&h).ok(),
            Some(Some("team-billing".to_owned()))
        );
        h.insert(REPORTING_TAG_HEADER, "x".repeat(101).parse().unwrap());
        assert!(reporting_tag(&h).is_err());
    }
}
