//! Glossaries: the v2 interface (one language pair per glossary, `v2.rs`) and
//! the v3 interface (multilingual, editable dictionaries, `v3.rs`) over the
//! same storage (`tolk_storage::glossaries`). Entries are TSV or CSV
//! (`entries.rs`). Limits: 10 MiB of terms per glossary, 1024 UTF-8 bytes per
//! name or term, 1000 glossaries per organization; no Thai. Languages are kept
//! as lower-case base codes, so an `en`, `pt` or `zh` target dictionary serves
//! every variant of its language.

pub mod entries;
pub mod v2;
pub mod v3;

use axum::http::HeaderMap;
use axum::{Json, Router};
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value};
use tolk_engine::lang;
use tolk_storage::glossaries::{self, Glossary, NewDictionary, Refusal};
use uuid::Uuid;

use crate::{ApiError, AppState};

/// Most UTF-8 bytes of all terms of one glossary (10 MiB).
pub const MAX_GLOSSARY_BYTES: i64 = 10 * 1024 * 1024;
/// Most glossaries per organization.
pub const MAX_GLOSSARIES: i64 = 1000;

/// Routes of v2 and v3.
pub fn router() -> Router<AppState> {
    v2::router().merge(v3::router())
}

fn bad(msg: impl Into<String>) -> ApiError {
    ApiError::BadRequest(msg.into())
}

/// 404 for an unknown glossary.
pub(crate) fn not_found() -> ApiError {
    ApiError::NotFound("Glossary not found.".to_owned())
}

/// The answer to a refused write.
pub(crate) fn refused(r: Refusal) -> ApiError {
    match r {
        Refusal::NotFound => not_found(),
        Refusal::TooLarge => ApiError::TooLarge(format!(
            "A glossary may hold at most {MAX_GLOSSARY_BYTES} bytes of terms."
        )),
        Refusal::TooManyGlossaries => ApiError::QuotaExceeded(format!(
            "Maximum number of glossaries reached: an account may have at most {MAX_GLOSSARIES}."
        )),
    }
}

/// Reads the body as one JSON object ([`crate::params::Params::into_object`]):
/// a form's keys once each, keys in bracket or dot notation as nested values.
pub(crate) async fn body_object(
    headers: &HeaderMap,
    body: axum::body::Body,
) -> Result<Map<String, Value>, ApiError> {
    crate::params::Params::read(headers, body, crate::body::GLOSSARY_BODY_BYTES)
        .await?
        .into_object()
}

/// Every glossary of the organization, each as `view` shows it.
pub(crate) async fn list_as(
    state: &AppState,
    organization_id: Uuid,
    view: fn(&Glossary) -> Option<Value>,
) -> Result<Json<Value>, ApiError> {
    let all = glossaries::list(&state.db, organization_id).await?;
    Ok(Json(
        serde_json::json!({ "glossaries": all.iter().filter_map(view).collect::<Vec<_>>() }),
    ))
}

/// Glossary `id` (from the path) as `view` shows it; 404 when unknown or
/// when `view` cannot show it.
pub(crate) async fn show_as(
    state: &AppState,
    organization_id: Uuid,
    id: &str,
    view: fn(&Glossary) -> Option<Value>,
) -> Result<Json<Value>, ApiError> {
    let id = glossary_id(id)?;
    let g = glossaries::get(&state.db, organization_id, id)
        .await?
        .ok_or_else(not_found)?;
    view(&g).map(Json).ok_or_else(not_found)
}

pub(crate) use crate::params::{object_required as required, object_string as string};

/// A glossary name: trimmed, non-empty, at most 1024 bytes.
pub(crate) fn name(raw: &str) -> Result<String, ApiError> {
    let n = raw.trim();
    if n.is_empty() {
        return Err(bad("Parameter 'name' must not be empty."));
    }
    if n.len() > entries::MAX_TERM_BYTES {
        return Err(bad(format!(
            "Parameter 'name' exceeds {} UTF-8 bytes.",
            entries::MAX_TERM_BYTES
        )));
    }
    Ok(n.to_owned())
}

/// A glossary language: the lower-case DeepL base code (`EN-GB` → `en`); Thai refused.
pub(crate) fn lang_code(field: &str, code: &str) -> Result<String, ApiError> {
    let l = lang::parse_source(code)
        .ok()
        .and_then(|l| l.deepl_base())
        .ok_or_else(|| bad(format!("Value for '{field}' not supported: '{code}'.")))?;
    if l == "TH" {
        return Err(bad(format!(
            "Value for '{field}' not supported: '{code}' (glossaries do not support Thai)."
        )));
    }
    Ok(l.to_ascii_lowercase())
}

/// The language pair of a dictionary.
pub(crate) fn pair(source: &str, target: &str) -> Result<(String, String), ApiError> {
    let s = lang_code("source_lang", source)?;
    let t = lang_code("target_lang", target)?;
    if s == t {
        return Err(bad(format!(
            "Source and target language of a glossary must differ (both '{s}')."
        )));
    }
    Ok((s, t))
}

/// A glossary id from the path.
pub(crate) fn glossary_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| not_found())
}

/// A dictionary from `source_lang`, `target_lang`, `entries`, `entries_format`.
pub(crate) fn dictionary(obj: &Map<String, Value>, at: &str) -> Result<NewDictionary, ApiError> {
    let (s, t) = pair(required(obj, "source_lang")?, required(obj, "target_lang")?)?;
    let format = entries::Format::parse(string(obj, "entries_format")?).map_err(bad)?;
    let text = required(obj, "entries")?;
    if text.len() as i64 > MAX_GLOSSARY_BYTES * 2 {
        return Err(ApiError::TooLarge(format!(
            "A glossary may hold at most {MAX_GLOSSARY_BYTES} bytes of terms."
        )));
    }
    let (sources, targets) =
        entries::parse(text, format, (&s, &t)).map_err(|e| bad(format!("{at}{e}")))?;
    Ok(NewDictionary {
        source_lang: s,
        target_lang: t,
        sources,
        targets,
    })
}

/// Checks that glossary `id` (the value of `field`) exists for the
/// organization (else 404) and has a dictionary for the pair (else 400);
/// returns its id. Used where the entries are loaded later (document jobs).
pub(crate) async fn check_for_pair(
    state: &AppState,
    organization_id: Uuid,
    field: &str,
    id: &str,
    source_lang: &str,
    target_lang: &str,
) -> Result<Uuid, ApiError> {
    let uuid = Uuid::parse_str(id)
        .map_err(|_| bad(format!("Value for '{field}' is not a valid ID: '{id}'.")))?;
    let s = lang_code("source_lang", source_lang)?;
    let t = lang_code("target_lang", target_lang)?;
    let g = glossaries::get(&state.db, organization_id, uuid)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("Glossary '{id}' not found.")))?;
    if !g
        .dictionaries
        .iter()
        .any(|d| d.source_lang == s && d.target_lang == t)
    {
        return Err(no_dictionary(id, &s, &t));
    }
    Ok(uuid)
}

/// The 400 for a glossary without a dictionary for the pair, in DeepL's words.
pub(crate) fn no_dictionary(id: impl std::fmt::Display, s: &str, t: &str) -> ApiError {
    bad(format!(
        "No dictionary found for language pair {s}→{t} in glossary '{id}'."
    ))
}

/// A timestamp as DeepL writes it (`2021-08-03T14:16:18.329Z`).
pub(crate) fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_are_base_codes_without_thai() {
        assert_eq!(lang_code("target_lang", "EN-GB").unwrap(), "en");
        assert_eq!(lang_code("target_lang", "pt-br").unwrap(), "pt");
        assert!(lang_code("source_lang", "TH").is_err());
        assert!(lang_code("source_lang", "xx").is_err());
        assert!(pair("en", "EN-US").is_err());
    }
}
