//! Text improvement: `POST /v2/write/correct` (spelling with Hunspell
//! dictionaries and simple grammar, minimal change) and `POST /v2/write/rephrase`
//! (a language-model engine rewrites; without one, the text is only corrected —
//! translated first through the pipeline when it is in another language — and
//! the answer says so in [`REPHRASED_HEADER`]), in the DeepL wire format. Usage
//! goes to the ledger as `text_improvement_characters`.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde::Serialize;
use tolk_storage::limits::Meter;
use tolk_storage::usage;

use crate::auth::AuthKey;
use crate::body::{FormOrJson, TextParams};
use crate::limits::Charge;
use crate::params::Params;
use crate::requests::reporting_tag;
use crate::{ApiError, AppState};

/// `target_lang` values of the wire format.
const TARGET_LANGS: &[&str] = &[
    "de", "en", "en-GB", "en-US", "es", "fr", "it", "ja", "ko", "pt", "pt-BR", "pt-PT", "zh",
    "zh-Hans",
];
const WRITING_STYLES: &[&str] = &[
    "academic",
    "business",
    "casual",
    "default",
    "simple",
    "prefer_academic",
    "prefer_business",
    "prefer_casual",
    "prefer_simple",
];
const TONES: &[&str] = &[
    "confident",
    "default",
    "diplomatic",
    "enthusiastic",
    "friendly",
    "prefer_confident",
    "prefer_diplomatic",
    "prefer_enthusiastic",
    "prefer_friendly",
];
/// Response header of `/v2/write/rephrase` (an extension) saying how the
/// text was improved: `rewritten` by a language-model engine, or only
/// `corrected` (spelling and grammar, as `/v2/write/correct`) when no
/// configured engine can rephrase — never paraphrased by round-trip
/// translation, which changes meaning.
pub const REPHRASED_HEADER: &str = "x-tolk-rephrase";

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v2/write/correct", post(correct))
        .route("/v2/write/rephrase", post(rephrase))
}

#[derive(Serialize)]
struct Improvement {
    text: String,
    detected_source_language: String,
    target_language: String,
}

#[derive(Serialize)]
struct Improvements {
    improvements: Vec<Improvement>,
}

/// The language of each text: `target_lang` when given, else detected.
fn languages(
    state: &AppState,
    texts: &[String],
    target: Option<&str>,
) -> Result<Vec<(String, String)>, ApiError> {
    texts
        .iter()
        .map(|t| {
            let detected = state.translator.detect(t);
            // A detected language is reported in DeepL Write's lower case.
            let lang = match target {
                Some(l) => l.to_owned(),
                None => detected
                    .as_deref()
                    .map(str::to_ascii_lowercase)
                    .ok_or_else(|| {
                        ApiError::bad(
                            "The language of 'text' could not be detected; set 'target_lang'.",
                        )
                    })?,
            };
            let detected =
                detected.map_or_else(|| tolk_lang::base(&lang), |d| d.to_ascii_lowercase());
            Ok((detected, lang))
        })
        .collect()
}

/// The target language DeepL reports for a rephrase: a language with
/// variants is reported as its default variant (`en` → `en-US`, `pt` →
/// `pt-PT`); others as given.
fn reported_variant(lang: &str) -> String {
    match lang.to_ascii_lowercase().as_str() {
        "en" => "en-US".to_owned(),
        "pt" => "pt-PT".to_owned(),
        _ => lang.to_owned(),
    }
}

/// Starts metering the texts' characters (ledger kind `text_improvement`):
/// 456 before any work when the key's character limit is reached or the
/// texts do not fit in what remains of it; nothing is billed when the work
/// then fails ([`Charge`]).
async fn reserve(
    state: &AppState,
    key: &tolk_storage::keys::ApiKey,
    texts: &[String],
    tag: Option<&str>,
) -> Result<Charge, ApiError> {
    let amount: usize = texts.iter().map(|t| t.chars().count()).sum();
    let amount = i64::try_from(amount).unwrap_or(i64::MAX);
    Charge::reserve(
        state,
        key,
        Meter::Characters,
        amount,
        usage::kind::TEXT_IMPROVEMENT,
        tag,
    )
    .await
}

async fn correct(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    headers: HeaderMap,
    FormOrJson(p): TextParams,
) -> Result<Json<Improvements>, ApiError> {
    let texts = p.texts()?;
    let tag = reporting_tag(&headers)?;
    for option in ["writing_style", "tone"] {
        if p.string(option)?.is_some() {
            return Err(ApiError::bad(format!(
                "Parameter '{option}' is not supported by /v2/write/correct (use /v2/write/rephrase)."
            )));
        }
    }
    let target = p.choice("target_lang", TARGET_LANGS)?;
    let langs = languages(&state, &texts, target)?;
    let work: Vec<(String, String)> = texts
        .iter()
        .zip(&langs)
        .map(|(t, (_, lang))| (t.clone(), lang.clone()))
        .collect();
    let charge = reserve(&state, &key, &texts, tag.as_deref()).await?;
    let corrected = corrections(&state, work).await?;
    charge.settle(&state).await?;
    Ok(Json(Improvements {
        improvements: corrected
            .into_iter()
            .zip(langs)
            .map(|(text, (detected, lang))| Improvement {
                text,
                detected_source_language: detected,
                target_language: lang,
            })
            .collect(),
    }))
}

/// 400 unless a spelling dictionary of each language is installed.
fn dictionaries<'a>(
    state: &AppState,
    mut langs: impl Iterator<Item = &'a String>,
) -> Result<(), ApiError> {
    match langs.find(|lang| !state.speller.supports(lang)) {
        Some(lang) => Err(ApiError::bad(format!(
            "Value for 'target_lang' not supported: no spelling dictionary for {} is installed.",
            lang.to_ascii_uppercase()
        ))),
        None => Ok(()),
    }
}

/// Corrects each text with the dictionary of its language: 400 for a
/// language without an installed dictionary.
async fn corrections(
    state: &AppState,
    work: Vec<(String, String)>,
) -> Result<Vec<String>, ApiError> {
    dictionaries(state, work.iter().map(|(_, lang)| lang))?;
    let speller = state.speller.clone();
    let corrected = tokio::task::spawn_blocking(move || {
        work.iter()
            .map(|(t, lang)| {
                let dict = speller.dictionary(lang)?;
                Ok(tolk_write::correct(&dict, lang, t))
            })
            .collect::<Result<Vec<String>, tolk_write::WriteError>>()
    })
    .await
    .map_err(|e| ApiError::failed("the correction task", e))?
    .map_err(|e| ApiError::failed("correcting the text", e))?;
    Ok(corrected)
}

/// Refuses a style or tone that correction cannot honour; `default` and
/// `prefer_*` (which fall back to the default) pass.
fn honourable(p: &Params, name: &str, allowed: &'static [&'static str]) -> Result<(), ApiError> {
    match p.choice(name, allowed)? {
        None | Some("default") => Ok(()),
        Some(v) if v.starts_with("prefer_") => Ok(()),
        Some(v) => Err(ApiError::bad(format!(
            "'{name}' = '{v}' is not supported: no configured engine can rephrase, so the text is only corrected, which cannot honour a {}; use 'prefer_{v}' to fall back to the default.",
            if name == "tone" {
                "tone"
            } else {
                "writing style"
            }
        ))),
    }
}

/// The instruction a language model gets for a style or tone value.
fn instruction(name: &str, value: &str) -> Option<String> {
    let v = value.trim_start_matches("prefer_");
    if v == "default" {
        return None;
    }
    Some(if name == "tone" {
        format!("Use a {v} tone.")
    } else {
        format!("Use a {v} writing style.")
    })
}

async fn rephrase(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    headers: HeaderMap,
    FormOrJson(p): TextParams,
) -> Result<Response, ApiError> {
    let texts = p.texts()?;
    let tag = reporting_tag(&headers)?;
    let style = p.choice("writing_style", WRITING_STYLES)?;
    let tone = p.choice("tone", TONES)?;
    if style.is_some_and(|s| s != "default") && tone.is_some_and(|t| t != "default") {
        return Err(ApiError::bad(
            "Both writing_style and tone defined: give at most one of them.",
        ));
    }
    let target = p.choice("target_lang", TARGET_LANGS)?;
    let langs = languages(&state, &texts, target)?;
    let charge = reserve(&state, &key, &texts, tag.as_deref()).await?;

    // A language model engine rewrites directly and honours style and tone.
    let mut instructions = Vec::new();
    instructions.extend(style.and_then(|s| instruction("writing_style", s)));
    instructions.extend(tone.and_then(|t| instruction("tone", t)));
    let mut llm = Vec::new();
    for (detected, lang) in &langs {
        let same = tolk_lang::same_language(detected, lang);
        let engine = tolk_engine::lang::parse_target(lang).ok().and_then(|l| {
            state
                .translator
                .engines()
                .iter()
                .find(|e| e.can_rephrase(&l))
                .cloned()
                .map(|e| (e, l))
        });
        llm.push(engine.filter(|_| same));
    }
    let (improved, how) = if llm.iter().all(Option::is_some) {
        let mut out = Vec::with_capacity(texts.len());
        for (text, engine) in texts.iter().zip(llm) {
            let Some((engine, l)) = engine else { continue };
            let rewritten = engine
                .rephrase(&l, vec![text.clone()], &instructions)
                .await
                .map_err(ApiError::from)?;
            out.push(rewritten.into_iter().next().unwrap_or_default());
        }
        (out, "rewritten")
    } else {
        // Without one, the text is corrected only (in the target language,
        // translated there first through the pipeline when it is in another).
        honourable(&p, "writing_style", WRITING_STYLES)?;
        honourable(&p, "tone", TONES)?;
        // Refused before any text is translated.
        dictionaries(&state, langs.iter().map(|(_, lang)| lang))?;
        let mut work = Vec::with_capacity(texts.len());
        for (text, (detected, lang)) in texts.iter().zip(&langs) {
            let text = if tolk_lang::same_language(detected, lang) {
                text.clone()
            } else {
                let translated = state
                    .pipeline()
                    .translate_plain(&tolk_lang::deepl_base(detected), lang, vec![text.clone()])
                    .await?;
                translated.texts.into_iter().next().unwrap_or_default()
            };
            work.push((text, lang.clone()));
        }
        (corrections(&state, work).await?, "corrected")
    };
    charge.settle(&state).await?;
    let improvements = improved
        .into_iter()
        .zip(langs)
        .map(|(text, (detected, lang))| Improvement {
            text,
            detected_source_language: detected,
            target_language: reported_variant(&lang),
        })
        .collect();
    let mut response = Json(Improvements { improvements }).into_response();
    response
        .headers_mut()
        .insert(REPHRASED_HEADER, HeaderValue::from_static(how));
    Ok(response)
}
