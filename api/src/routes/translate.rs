//! Text translation: `POST /v2/translate`, in the DeepL wire format.
//!
//! The body is JSON or `application/x-www-form-urlencoded` (at most 128 KiB,
//! else 413). Both are read into one [`Params`] map first, so that every
//! option is validated the same way whatever the encoding; repeated form keys
//! (`text=a&text=b`) keep their order. Options the engine cannot honour are
//! refused with a 400 naming them, never silently ignored.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde::Serialize;
use tolk_engine::{
    EngineError, Formality, MarkupOptions, TagHandling, TranslateOptions, TranslateRequest,
};
use tolk_storage::limits::Meter;
use tolk_storage::usage;

use crate::auth::AuthKey;
use crate::glossary_cache;
use crate::limits::Charge;
use crate::routes::glossaries::{self, apply};
use crate::routes::languages;
use crate::routes::translation_memories::apply as tm_apply;
use crate::{ApiError, AppState};

/// Header carrying the client's custom reporting tag.
pub const REPORTING_TAG_HEADER: &str = "x-deepl-reporting-tag";

/// Longest accepted reporting tag, in characters.
pub const MAX_REPORTING_TAG_CHARS: usize = 100;

/// Most entries of `glossary_ids`.
pub const MAX_GLOSSARIES: usize = 5;

/// Most entries of `custom_instructions`, and the longest entry in characters.
pub const MAX_CUSTOM_INSTRUCTIONS: usize = 10;
/// Longest custom instruction, in characters.
pub const MAX_CUSTOM_INSTRUCTION_CHARS: usize = 300;

/// Target languages (bases) that accept `custom_instructions`.
const CUSTOM_INSTRUCTION_TARGETS: [&str; 8] = ["DE", "EN", "ES", "FR", "IT", "JA", "KO", "ZH"];

/// Options that describe markup: without `tag_handling` they are refused.
const TAG_LISTS: [&str; 3] = ["splitting_tags", "non_splitting_tags", "ignore_tags"];

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
pub(crate) struct Params {
    fields: HashMap<String, Field>,
    json: bool,
}

fn bad(message: String) -> ApiError {
    ApiError::BadRequest(message)
}

impl Params {
    /// Reads a JSON object or form pairs.
    pub(crate) fn parse(bytes: &[u8], json: bool) -> Result<Self, ApiError> {
        let mut fields = HashMap::new();
        if json {
            let value: serde_json::Value = serde_json::from_slice(bytes)
                .map_err(|e| bad(format!("Invalid JSON body: {e}")))?;
            crate::body::reject_nul(&value)?;
            let serde_json::Value::Object(map) = value else {
                return Err(bad("Invalid JSON body: expected an object.".to_owned()));
            };
            for (k, v) in map {
                fields.insert(k, Field::Json(v));
            }
        } else {
            let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(bytes)
                .map_err(|e| bad(format!("Invalid form body: {e}")))?;
            crate::body::reject_nul_pairs(&pairs)?;
            for (k, v) in pairs {
                match fields.entry(k).or_insert_with(|| Field::Form(Vec::new())) {
                    Field::Form(values) => values.push(v),
                    Field::Json(_) => {}
                }
            }
        }
        Ok(Self { fields, json })
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
    pub(crate) fn string(&self, name: &str) -> Result<Option<String>, ApiError> {
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
    pub(crate) fn texts(&self) -> Result<Vec<String>, ApiError> {
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
    pub(crate) fn choice(
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
    context: Option<String>,
    tag_handling: Option<&'static str>,
    tag_handling_version: Option<&'static str>,
    show_billed_characters: bool,
    model_type: Option<&'static str>,
    formality: Formality,
    custom_instructions: Vec<String>,
    /// Glossaries (applied, see `glossary_terms`), style rule lists
    /// (`style_rules::load_for`) and translation memories (applied, see
    /// `routes/translation_memories/apply.rs`) named by the request.
    lookups: Vec<Lookup>,
    /// Minimum match score of the translation memory (0–100).
    translation_memory_threshold: Option<u8>,
    /// Whether line breaks end sentences (`split_sentences=1` on plain text).
    split_lines: bool,
    /// Markup structure (with `tag_handling`).
    markup: MarkupOptions,
}

/// A stored resource a request refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Lookup {
    Glossary(String),
    StyleRules(String),
    TranslationMemory(String),
}

/// Refuses a field that DeepL accepts only in JSON bodies.
fn json_only(p: &Params, name: &str) -> Result<(), ApiError> {
    if !p.json && p.fields.contains_key(name) {
        return Err(bad(format!(
            "Parameter '{name}' is only accepted in JSON bodies."
        )));
    }
    Ok(())
}

/// Checks that `id` (the value of `field`) is a UUID.
fn uuid_field(field: &str, id: &str) -> Result<(), ApiError> {
    uuid::Uuid::parse_str(id)
        .map(|_| ())
        .map_err(|_| bad(format!("Value for '{field}' is not a valid ID: '{id}'.")))
}

/// The DeepL base of a target code (`EN-US` → `EN`).
fn target_base(target: &str) -> String {
    target
        .split('-')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_uppercase()
}

/// Validates every field of the request; the first problem is a 400 naming it.
fn options(p: &Params) -> Result<Options, ApiError> {
    let texts = p.texts()?;
    let target_lang = p
        .string("target_lang")?
        .ok_or_else(|| bad("Parameter 'target_lang' is required.".to_owned()))?;
    let source_lang = p.string("source_lang")?;
    let context = p.string("context")?;
    let split_sentences = p.choice("split_sentences", &["0", "1", "nonewlines"])?;
    // Apertium never corrects punctuation or case: formatting is always preserved.
    p.bool("preserve_formatting")?;
    // Deprecated by DeepL, no effect.
    p.bool("enable_beta_languages")?;
    let outline_detection = p.bool("outline_detection")?;
    let tag_handling = p.choice("tag_handling", &["xml", "html"])?;
    let mut lists = Vec::with_capacity(TAG_LISTS.len());
    for name in TAG_LISTS {
        let tags = p.tag_list(name)?;
        if let Some(t) = tags.iter().find(|t| !is_tag_name(t)) {
            return Err(bad(format!(
                "Value for '{name}' contains an invalid tag name: '{t}'."
            )));
        }
        if !tags.is_empty() && tag_handling.is_none() {
            return Err(bad(format!(
                "Parameter '{name}' needs 'tag_handling' (xml or html)."
            )));
        }
        lists.push(tags);
    }
    let [splitting_tags, non_splitting_tags, ignore_tags] =
        <[Vec<String>; 3]>::try_from(lists).unwrap_or_default();
    let markup = MarkupOptions {
        html: tag_handling == Some("html"),
        splitting_tags,
        non_splitting_tags,
        ignore_tags,
        outline_detection: outline_detection.unwrap_or(true),
    };
    json_only(p, "tag_handling_version")?;
    let tag_handling_version = p.choice("tag_handling_version", &["v1", "v2"])?;
    let show_billed_characters = p.bool("show_billed_characters")?.unwrap_or(false);
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
                bad(format!(
                    "Value for 'formality' not supported: '{f}' (allowed: default, more, less, prefer_more, prefer_less)."
                ))
            })?,
    };

    json_only(p, "custom_instructions")?;
    let custom_instructions = match p.fields.get("custom_instructions") {
        None | Some(Field::Json(serde_json::Value::Null)) => Vec::new(),
        Some(Field::Json(serde_json::Value::Array(items))) => items
            .iter()
            .map(|v| {
                v.as_str().map(str::to_owned).ok_or_else(|| {
                    bad("Value for 'custom_instructions' must be an array of strings.".to_owned())
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => {
            return Err(bad(
                "Value for 'custom_instructions' must be an array of strings.".to_owned(),
            ));
        }
    };
    if custom_instructions.len() > MAX_CUSTOM_INSTRUCTIONS {
        return Err(bad(format!(
            "Parameter 'custom_instructions' accepts at most {MAX_CUSTOM_INSTRUCTIONS} entries."
        )));
    }
    if let Some(i) = custom_instructions
        .iter()
        .position(|c| c.chars().count() > MAX_CUSTOM_INSTRUCTION_CHARS)
    {
        return Err(bad(format!(
            "Entry {} of 'custom_instructions' is longer than {MAX_CUSTOM_INSTRUCTION_CHARS} characters.",
            i + 1
        )));
    }
    if custom_instructions.iter().any(|c| c.trim().is_empty()) {
        return Err(bad(
            "Entries of 'custom_instructions' must not be empty.".to_owned()
        ));
    }
    if !custom_instructions.is_empty()
        && !CUSTOM_INSTRUCTION_TARGETS.contains(&target_base(&target_lang).as_str())
    {
        return Err(bad(format!(
            "Parameter 'custom_instructions' is not supported for target_lang {} (only DE, EN, ES, FR, IT, JA, KO, ZH and their variants).",
            target_lang.to_ascii_uppercase()
        )));
    }

    let mut lookups = Vec::new();
    let glossary_id = p.string("glossary_id")?;
    let glossary_ids = p.tag_list("glossary_ids")?;
    if glossary_id.is_some() && !glossary_ids.is_empty() {
        return Err(bad(
            "Parameters 'glossary_id' and 'glossary_ids' cannot be combined.".to_owned(),
        ));
    }
    if glossary_ids.len() > MAX_GLOSSARIES {
        return Err(bad(format!(
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
        return Err(bad(format!(
            "Parameter 'source_lang' is required when '{glossary_field}' is given."
        )));
    }
    for g in glossaries {
        uuid_field(glossary_field, &g)?;
        lookups.push(Lookup::Glossary(g));
    }

    json_only(p, "style_id")?;
    if let Some(style) = p.string("style_id")? {
        uuid_field("style_id", &style)?;
        lookups.push(Lookup::StyleRules(style));
    }
    let tm = p.string("translation_memory_id")?;
    let mut translation_memory_threshold = None;
    if let Some(t) = p.string("translation_memory_threshold")? {
        let ok = t.parse::<u8>().ok().filter(|v| (0..=100).contains(v));
        if ok.is_none() {
            return Err(bad(format!(
                "Value for 'translation_memory_threshold' must be an integer from 0 to 100, not '{t}'."
            )));
        }
        translation_memory_threshold = ok;
        if tm.is_none() {
            return Err(bad(
                "Parameter 'translation_memory_threshold' needs 'translation_memory_id'."
                    .to_owned(),
            ));
        }
    }
    if let Some(tm) = tm {
        uuid_field("translation_memory_id", &tm)?;
        lookups.push(Lookup::TranslationMemory(tm));
    }

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
        lookups,
        translation_memory_threshold,
        split_lines,
        markup,
    })
}

/// Whether `t` is an XML name (what a tag list may hold).
fn is_tag_name(t: &str) -> bool {
    let mut chars = t.chars();
    chars
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_alphanumeric() || matches!(c, '_' | ':' | '-' | '.'))
}

/// The terms of the request's glossaries for its language pair: 404 for an
/// unknown glossary, 400 for one without a dictionary for the pair. Terms are
/// cached per process and reused while every glossary's version is unchanged
/// (api/src/glossary_cache.rs).
async fn glossary_terms(
    state: &AppState,
    key: &tolk_storage::keys::ApiKey,
    opts: &Options,
) -> Result<Arc<apply::Terms>, ApiError> {
    let ids: Vec<&String> = opts
        .lookups
        .iter()
        .filter_map(|l| match l {
            Lookup::Glossary(id) => Some(id),
            _ => None,
        })
        .collect();
    if ids.is_empty() {
        return Ok(Arc::default());
    }
    let source = opts.source_lang.as_deref().ok_or_else(|| {
        bad("Parameter 'source_lang' is required when a glossary is given.".to_owned())
    })?;
    let s = glossaries::lang_code("source_lang", source)?;
    let t = glossaries::lang_code("target_lang", &opts.target_lang)?;
    let uuids = ids
        .iter()
        .map(|id| uuid::Uuid::parse_str(id).map_err(|_| lookup(&Lookup::Glossary((*id).clone()))))
        .collect::<Result<Vec<_>, _>>()?;
    // Versions first, entries after: a cached value is never older than its key.
    let current =
        tolk_storage::glossaries::versions(&state.db, key.organization_id, &uuids).await?;
    let versions = ids
        .iter()
        .zip(&uuids)
        .map(|(id, u)| {
            current
                .iter()
                .find(|(c, _)| c == u)
                .map(|(_, v)| *v)
                .ok_or_else(|| lookup(&Lookup::Glossary((*id).clone())))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let cache_key = glossary_cache::Key {
        ids: uuids.clone(),
        source: s.clone(),
        target: t.clone(),
    };
    if let Some(terms) = state.glossary_cache.get(&cache_key, &versions) {
        return Ok(terms);
    }
    let mut pairs = Vec::new();
    for (id, uuid) in ids.iter().zip(&uuids) {
        let dicts = tolk_storage::glossaries::entries(
            &state.db,
            key.organization_id,
            *uuid,
            Some((&s, &t)),
        )
        .await?
        .ok_or_else(|| lookup(&Lookup::Glossary((*id).clone())))?;
        let Some(d) = dicts.into_iter().next() else {
            return Err(bad(format!(
                "Glossary '{id}' has no dictionary for the language pair {s}→{t}."
            )));
        };
        pairs.extend(d.sources.into_iter().zip(d.targets));
    }
    let bytes = pairs.iter().map(|(a, b)| a.len() + b.len()).sum();
    let terms = Arc::new(apply::Terms::new(pairs));
    state
        .glossary_cache
        .put(cache_key, versions, terms.clone(), bytes);
    Ok(terms)
}

/// The 404 for a stored resource that does not exist (translation memories
/// cannot exist yet).
fn lookup(l: &Lookup) -> ApiError {
    match l {
        Lookup::Glossary(id) => ApiError::NotFound(format!("Glossary '{id}' not found.")),
        Lookup::StyleRules(id) => ApiError::NotFound(format!("Style rule list '{id}' not found.")),
        Lookup::TranslationMemory(id) => {
            ApiError::NotFound(format!("Translation memory '{id}' not found."))
        }
    }
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
pub(crate) fn reporting_tag(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
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
    let bytes = crate::body::read(body, crate::body::TEXT_BODY_BYTES).await?;
    let params = Params::parse(&bytes, crate::body::is_json(&headers))?;
    let opts = options(&params)?;
    let custom_tag = reporting_tag(&headers)?;
    languages::check(
        &state,
        opts.source_lang.as_deref(),
        &opts.target_lang,
        opts.formality,
    )?;
    let terms = glossary_terms(&state, &key, &opts).await?;
    let mut style = None;
    for l in &opts.lookups {
        match l {
            Lookup::Glossary(_) => {}
            Lookup::StyleRules(id) => {
                let (_, rules) = crate::routes::style_rules::load_for(
                    &state,
                    key.organization_id,
                    id,
                    &opts.target_lang,
                )
                .await?;
                style = Some(rules);
            }
            Lookup::TranslationMemory(_) => {}
        }
    }
    let memory = match opts.lookups.iter().find_map(|l| match l {
        Lookup::TranslationMemory(id) => Some(id),
        _ => None,
    }) {
        Some(id) => Some(
            tm_apply::resolve(
                &state,
                key.organization_id,
                id,
                opts.source_lang.as_deref(),
                &opts.target_lang,
                opts.translation_memory_threshold,
            )
            .await?,
        ),
        None => None,
    };

    let billed: Vec<usize> = opts.texts.iter().map(|t| t.chars().count()).collect();
    let total: usize = billed.iter().sum();
    let total = i64::try_from(total)
        .map_err(|_| ApiError::Internal("character count overflow".to_owned()))?;
    // Metering (api/src/limits.rs): 456 unless the characters fit the key's
    // limit; for a key without one, the ledger entry is appended during the work.
    let charge = Charge::reserve(
        &state,
        &key,
        Meter::Characters,
        total,
        usage::kind::TEXT_TRANSLATION,
        custom_tag.as_deref(),
    )
    .await?;

    let (layouts, engine_texts) = if opts.split_lines {
        let (layouts, lines) = split_lines(&opts.texts);
        (Some(layouts), lines)
    } else {
        (None, opts.texts)
    };
    // Segments the translation memory has a good match for skip the engine.
    let hits = match &memory {
        Some(m) => tm_apply::matches(&state, m, &engine_texts).await?,
        None => vec![None; engine_texts.len()],
    };
    let engine_texts: Vec<String> = engine_texts
        .into_iter()
        .zip(&hits)
        .filter(|(_, hit)| hit.is_none())
        .map(|(t, _)| t)
        .collect();
    // Glossary terms travel through the engine as ignored elements (see
    // routes/glossaries/apply.rs); plain text is sent as XML for that.
    let markup_in = opts.tag_handling.is_some();
    let mut markup = opts.markup.clone();
    let engine_texts = if terms.is_empty() {
        engine_texts
    } else {
        if !markup_in {
            markup = MarkupOptions::default();
        }
        markup.ignore_tags.push(apply::TERM_TAG.to_owned());
        engine_texts
            .iter()
            .map(|t| apply::protect(t, &terms, markup_in))
            .collect()
    };
    // Custom instructions of a style list may be meant for one source language.
    let source_base = opts.source_lang.as_deref().map(tolk_style::language::base);
    let res = if engine_texts.is_empty() {
        // Every segment came from the memory.
        tolk_engine::TranslateResponse {
            texts: Vec::new(),
            detected_source_lang: opts.source_lang.clone().map_or_else(
                || {
                    memory
                        .as_ref()
                        .map(|m| m.source_language.to_ascii_uppercase())
                        .unwrap_or_default()
                },
                |s| s.to_ascii_uppercase(),
            ),
            route: Vec::new(),
        }
    } else {
        state
            .translator
            .translate(TranslateRequest {
                source_lang: opts.source_lang.clone(),
                target_lang: opts.target_lang.clone(),
                texts: engine_texts,
                tag_handling: if markup_in || !terms.is_empty() {
                    TagHandling::Xml
                } else {
                    TagHandling::None
                },
                options: TranslateOptions {
                    formality: opts.formality,
                    context: opts.context.clone(),
                    custom_instructions: opts.custom_instructions.clone(),
                    model_type: opts.model_type.map(str::to_owned),
                    style_instructions: style
                        .as_ref()
                        .map(|s| s.instructions(source_base.as_deref()))
                        .unwrap_or_default(),
                },
                markup,
            })
            .await
            .map_err(languages::engine_error)?
    };
    let detected_source_lang = res.detected_source_lang;
    let res_texts = if terms.is_empty() {
        res.texts
    } else {
        res.texts
            .iter()
            .map(|t| apply::release(t, markup_in))
            .collect()
    };
    let res_texts = if memory.is_some() {
        let mut engine_out = res_texts.into_iter();
        hits.into_iter()
            .map(|hit| match hit {
                Some(t) => Ok(t),
                None => engine_out
                    .next()
                    .ok_or_else(|| engine_mismatch(billed.len(), 0)),
            })
            .collect::<Result<Vec<_>, _>>()?
    } else {
        res_texts
    };
    let out = match layouts {
        Some(layouts) => join_lines(layouts, res_texts)?,
        None => res_texts,
    };
    // The style list's deterministic rules, after any engine.
    let out = match &style {
        Some(rules) => {
            let source = detected_source_lang.to_ascii_lowercase();
            let source = source.split('-').next().unwrap_or_default();
            out.iter()
                .map(|t| rules.apply(t, markup_in, Some(source)))
                .collect()
        }
        None => out,
    };
    if out.len() != billed.len() {
        return Err(engine_mismatch(billed.len(), out.len()));
    }

    // The ledger entry durable (a hold becomes the entry in one transaction).
    charge.settle(&state).await?;

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
    fn glossaries_instructions_and_json_only_fields() {
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
        assert_eq!(o.lookups, vec![Lookup::Glossary(g.to_owned()); 3]);
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
        for field in ["custom_instructions", "style_id", "tag_handling_version"] {
            let m = message(options(&form(&format!("text=a&target_lang=DE&{field}=x"))));
            assert!(
                m.contains(&format!("'{field}'")) && m.contains("JSON"),
                "{m}"
            );
        }
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
