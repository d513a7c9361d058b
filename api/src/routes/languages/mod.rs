//! `GET /v2/languages`, `GET /v3/languages` and `/v3/languages/resources`
//! ([`v3`]), and the language validation shared by the routes that take
//! `source_lang`/`target_lang`.

mod v3;

use axum::extract::{RawQuery, State};
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;

use crate::auth::AuthKey;
use crate::body::{FormOrJson, TextParams};
use crate::{ApiError, AppState};

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v2/languages", get(list))
        .route("/v3/languages", get(v3::languages))
        .route("/v3/languages/resources", get(v3::resources))
}

/// One entry of `GET /v2/languages`.
#[derive(Debug, Serialize)]
struct LanguageEntry {
    language: String,
    name: String,
    /// Only in target lists (DeepL omits it for sources).
    #[serde(skip_serializing_if = "Option::is_none")]
    supports_formality: Option<bool>,
}

/// `GET /v2/languages?type=source|target` (default `source`): the languages
/// the installed engines really reach, directly or through pivots; with the
/// extension `source_lang=XX` (targets only) just those XX reaches. As DeepL's
/// servers do, `type` is also read from a body (form or JSON) sent with the
/// GET, as deepl-python sends it; the query wins when both give it.
async fn list(
    State(state): State<AppState>,
    AuthKey(_key): AuthKey,
    RawQuery(query): RawQuery,
    FormOrJson(body): TextParams,
) -> Result<Json<Vec<LanguageEntry>>, ApiError> {
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_str(query.as_deref().unwrap_or(""))
            .map_err(|e| ApiError::BadRequest(format!("Invalid query string: {e}")))?;
    let from_query = pairs
        .iter()
        .rev()
        .find(|(k, _)| k == "type")
        .map(|(_, v)| v.to_owned());
    let kind = match from_query {
        Some(kind) => kind,
        None => body.string("type")?.unwrap_or_default(),
    }
    .trim()
    .to_ascii_lowercase();
    // Extension: `source_lang` with `type=target` lists only what it reaches.
    let source_lang = pairs
        .iter()
        .rev()
        .find(|(k, _)| k == "source_lang")
        .map(|(_, v)| v.trim().to_owned())
        .filter(|v| !v.is_empty());
    let mut languages = state.translator.languages();
    if let Some(source) = &source_lang {
        if kind != "target" {
            return Err(ApiError::BadRequest(
                "Parameter 'source_lang' is only allowed with type=target.".to_owned(),
            ));
        }
        languages.target = state
            .translator
            .targets_from(source)
            .map_err(|_| ApiError::BadRequest("Value for 'source_lang' not supported.".into()))?;
    }
    let entries = match kind.as_str() {
        "" | "source" => languages
            .source
            .into_iter()
            .map(|l| LanguageEntry {
                language: l.code,
                name: l.name,
                supports_formality: None,
            })
            .collect(),
        "target" => languages
            .target
            .into_iter()
            .map(|l| LanguageEntry {
                language: l.code,
                name: l.name,
                supports_formality: Some(l.supports_formality),
            })
            .collect(),
        other => {
            return Err(ApiError::BadRequest(format!(
                "Value for 'type' not supported: '{other}' (allowed: source, target)."
            )));
        }
    };
    Ok(Json(entries))
}
