//! What several routes check of a request, and write in an answer, in one
//! place so that routes never borrow from each other: languages a request
//! may be served in, glossary languages, names and references, the
//! reporting tag, and DeepL's timestamps.

use axum::http::HeaderMap;
use chrono::{DateTime, SecondsFormat, Utc};
use tolk_engine::{EngineError, Formality, lang};
use tolk_storage::glossaries;
use uuid::Uuid;

use crate::{ApiError, AppState};

/// The header naming a request's reporting tag.
pub const REPORTING_TAG_HEADER: &str = "x-deepl-reporting-tag";

/// The longest reporting tag.
pub const MAX_REPORTING_TAG_CHARS: usize = 100;

/// The longest display name, in UTF-8 bytes.
pub const MAX_NAME_BYTES: usize = 1024;

/// Glossaries one request may name.
pub const MAX_GLOSSARIES: usize = 5;

/// Checks that the request can be served: known codes, a route between them (when
/// the source is given), and a formality the target supports. Source == target is
/// accepted here: the document then ends in error with a message saying so.
pub fn languages(
    state: &AppState,
    source: Option<&str>,
    target: &str,
    formality: Formality,
) -> Result<(), ApiError> {
    let target_lang = lang::parse_target(target).map_err(ApiError::from)?;
    match source {
        Some(source) => match state.translator.route(source, target) {
            Ok(_) | Err(EngineError::SameLanguage { .. }) => {}
            Err(e) => return Err(ApiError::from(e)),
        },
        None => {
            let code = target_lang
                .deepl_code()
                .unwrap_or_else(|| target.to_ascii_uppercase());
            let reachable = state
                .translator
                .languages()
                .target
                .iter()
                .any(|l| l.code.eq_ignore_ascii_case(&code));
            if !reachable {
                return Err(ApiError::BadRequest(format!(
                    "Value for 'target_lang' not supported: no installed engine translates into {code}."
                )));
            }
        }
    }
    check_formality(state, target, formality)
}

fn check_formality(state: &AppState, target: &str, formality: Formality) -> Result<(), ApiError> {
    if !formality.is_strict() {
        // `prefer_more`/`prefer_less` fall back to the default silently.
        return Ok(());
    }
    let supported = state
        .translator
        .languages()
        .target
        .iter()
        .any(|l| l.code.eq_ignore_ascii_case(target.trim()) && l.supports_formality);
    if supported {
        Ok(())
    } else {
        Err(ApiError::BadRequest(format!(
            "Target language {} does not support formality '{}'; use 'prefer_{}' to fall back to the default.",
            target.trim().to_ascii_uppercase(),
            formality.as_str(),
            formality.as_str()
        )))
    }
}

/// The reporting tag of the request, if any (at most 100 characters).
pub fn reporting_tag(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get(REPORTING_TAG_HEADER) else {
        return Ok(None);
    };
    let tag = value
        .to_str()
        .map_err(|_| {
            ApiError::BadRequest(
                "Header 'X-DeepL-Reporting-Tag' must be visible ASCII text.".to_owned(),
            )
        })?
        .trim();
    if tag.chars().count() > MAX_REPORTING_TAG_CHARS {
        return Err(ApiError::BadRequest(format!(
            "Header 'X-DeepL-Reporting-Tag' is longer than {MAX_REPORTING_TAG_CHARS} characters."
        )));
    }
    Ok(Some(tag.to_owned()).filter(|t| !t.is_empty()))
}

/// A display name (of a glossary, a style rule list): trimmed, non-empty, at
/// most 1024 bytes.
pub(crate) fn name(raw: &str) -> Result<String, ApiError> {
    let n = raw.trim();
    if n.is_empty() {
        return Err(ApiError::bad("Parameter 'name' must not be empty."));
    }
    if n.len() > MAX_NAME_BYTES {
        return Err(ApiError::bad(format!(
            "Parameter 'name' exceeds {} UTF-8 bytes.",
            MAX_NAME_BYTES
        )));
    }
    Ok(n.to_owned())
}

/// A glossary language: the lower-case DeepL base code (`EN-GB` → `en`); Thai refused.
pub(crate) fn lang_code(field: &str, code: &str) -> Result<String, ApiError> {
    let l = lang::parse_source(code)
        .ok()
        .and_then(|l| l.deepl_base())
        .ok_or_else(|| ApiError::bad(format!("Value for '{field}' not supported: '{code}'.")))?;
    if l == "TH" {
        return Err(ApiError::bad(format!(
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
        return Err(ApiError::bad(format!(
            "Source and target language of a glossary must differ (both '{s}')."
        )));
    }
    Ok((s, t))
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
        .map_err(|_| ApiError::bad(format!("Value for '{field}' is not a valid ID: '{id}'.")))?;
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
    ApiError::bad(format!(
        "No dictionary found for language pair {s}→{t} in glossary '{id}'."
    ))
}

/// A timestamp as DeepL writes it (`2021-08-03T14:16:18.329Z`).
pub(crate) fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The public base URL of the request (`TOLK_PUBLIC_URL` when set, else
/// `http://` and the request's `Host`), for the URLs a job's answer hands out.
pub fn public_base_url(state: &AppState, headers: &axum::http::HeaderMap) -> String {
    if let Some(url) = &state.voice.public_url {
        return url.trim_end_matches('/').to_owned();
    }
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    format!("http://{host}")
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn glossary_languages_are_base_codes_without_thai() {
        assert_eq!(lang_code("target_lang", "EN-GB").unwrap(), "en");
        assert_eq!(lang_code("target_lang", "pt-br").unwrap(), "pt");
        assert!(lang_code("source_lang", "TH").is_err());
        assert!(lang_code("source_lang", "xx").is_err());
        assert!(pair("en", "EN-US").is_err());
    }
}
