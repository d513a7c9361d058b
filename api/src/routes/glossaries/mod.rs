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

use axum::{Json, Router};
use serde_json::{Map, Value};
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
pub(crate) use crate::requests::{name, pair, time};

/// A glossary id from the path.
pub(crate) fn glossary_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| not_found())
}

/// A dictionary from `source_lang`, `target_lang`, `entries`, `entries_format`.
pub(crate) fn dictionary(obj: &Map<String, Value>, at: &str) -> Result<NewDictionary, ApiError> {
    let (s, t) = pair(required(obj, "source_lang")?, required(obj, "target_lang")?)?;
    let format = entries::Format::parse(string(obj, "entries_format")?).map_err(ApiError::bad)?;
    let text = required(obj, "entries")?;
    if text.len() as i64 > MAX_GLOSSARY_BYTES * 2 {
        return Err(ApiError::TooLarge(format!(
            "A glossary may hold at most {MAX_GLOSSARY_BYTES} bytes of terms."
        )));
    }
    let (sources, targets) =
        entries::parse(text, format, (&s, &t)).map_err(|e| ApiError::bad(format!("{at}{e}")))?;
    Ok(NewDictionary {
        source_lang: s,
        target_lang: t,
        sources,
        targets,
    })
}
