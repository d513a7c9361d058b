//! Spoken terms (`/v3/spoken-terms`): named collections of term lists, one
//! per language, meant to bias speech recognition. `POST/GET
//! /v3/spoken-terms`, `GET/PATCH/DELETE /v3/spoken-terms/{id}`,
//! `GET /v3/spoken-terms/{id}/entries?lang=`, `PUT/DELETE
//! /v3/spoken-terms/{id}/term-lists`. Bodies are JSON or forms (a form gives
//! `term_lists` as indexed fields or as one JSON text field). A list's
//! `entries` are newline-separated terms, at most 300 characters in all.
//! Beyond DeepL's fields, a collection may set `keyword_threshold` (a number
//! in (0, 1]: the recogniser's keyword-spotting threshold for its terms; null
//! in a PATCH goes back to the default), shown only when set.

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Map, Value, json};
use tolk_storage::spoken_terms::{self, SpokenTerms, TermList};
use uuid::Uuid;

use crate::auth::AuthKey;
use crate::body::Object;
use crate::params::{object_required as required, object_string as string};
use crate::requests::time;
use crate::{ApiError, AppState};

/// Most characters of one list's entries.
const MAX_ENTRIES_CHARS: usize = 300;
/// Longest name, in characters.
const MAX_NAME_CHARS: usize = 1024;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v3/spoken-terms", get(list).post(create))
        .route(
            "/v3/spoken-terms/{spoken_terms_id}",
            get(show).patch(patch).delete(delete),
        )
        .route("/v3/spoken-terms/{spoken_terms_id}/entries", get(entries))
        .route(
            "/v3/spoken-terms/{spoken_terms_id}/term-lists",
            axum::routing::put(put_list).delete(delete_list),
        )
}

/// A spoken term list's body: JSON or a form, as one object (128 KiB).
type TermsBody = crate::body::Object<{ crate::body::TEXT_BODY_BYTES }>;

fn not_found() -> ApiError {
    ApiError::NotFound("Spoken terms not found.".to_owned())
}

fn id_of(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| not_found())
}

fn list_view(l: &TermList) -> Value {
    json!({ "lang": l.lang, "entry_count": l.terms.len() })
}

fn view(s: &SpokenTerms) -> Value {
    let mut out = json!({
        "spoken_terms_id": s.id,
        "name": s.name,
        "term_lists": s.lists.iter().map(list_view).collect::<Vec<_>>(),
        "creation_time": time(s.created_at),
    });
    if let Some(t) = s.keyword_threshold {
        out["keyword_threshold"] = json!(t);
    }
    out
}

/// `keyword_threshold`: absent (`None`), null (`Some(None)`) or a number in
/// (0, 1] (a form gives it as text).
fn keyword_threshold(obj: &Map<String, Value>) -> Result<Option<Option<f64>>, ApiError> {
    let bad =
        || ApiError::bad("Value for 'keyword_threshold' must be a number above 0, at most 1.");
    let value = match obj.get("keyword_threshold") {
        None => return Ok(None),
        Some(Value::Null) => return Ok(Some(None)),
        Some(Value::Number(n)) => n.as_f64().ok_or_else(bad)?,
        Some(Value::String(s)) => s.trim().parse::<f64>().map_err(|_| bad())?,
        Some(_) => return Err(bad()),
    };
    if value.is_finite() && value > 0.0 && value <= 1.0 {
        Ok(Some(Some(value)))
    } else {
        Err(bad())
    }
}

fn name(raw: &str) -> Result<String, ApiError> {
    let n = raw.trim();
    if n.is_empty() {
        return Err(ApiError::bad("Parameter 'name' must not be empty."));
    }
    if n.chars().count() > MAX_NAME_CHARS {
        return Err(ApiError::bad(format!(
            "Parameter 'name' exceeds {MAX_NAME_CHARS} characters."
        )));
    }
    Ok(n.to_owned())
}

/// A term list from `lang` and `entries`.
fn term_list(obj: &Map<String, Value>) -> Result<TermList, ApiError> {
    let lang = required(obj, "lang")?.trim().to_ascii_lowercase();
    if lang.len() != 2 || !lang.bytes().all(|b| b.is_ascii_lowercase()) {
        return Err(ApiError::bad(format!(
            "Value for 'lang' must be an ISO 639-1 code, not '{lang}'."
        )));
    }
    let entries = required(obj, "entries")?;
    if entries.chars().count() > MAX_ENTRIES_CHARS {
        return Err(ApiError::bad(format!(
            "Value for 'entries' exceeds {MAX_ENTRIES_CHARS} characters."
        )));
    }
    let mut terms: Vec<String> = Vec::new();
    for term in entries.lines().map(str::trim).filter(|t| !t.is_empty()) {
        if !terms.iter().any(|t| t == term) {
            terms.push(term.to_owned());
        }
    }
    if terms.is_empty() {
        return Err(ApiError::bad("Value for 'entries' holds no term."));
    }
    Ok(TermList { lang, terms })
}

/// The `term_lists` of a body (an array, or a form's JSON text), each
/// language once.
fn term_lists(obj: &Map<String, Value>) -> Result<Option<Vec<TermList>>, ApiError> {
    let items = match obj.get("term_lists") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(items)) => items.clone(),
        Some(Value::String(text)) => match serde_json::from_str(text) {
            Ok(Value::Array(items)) => items,
            _ => {
                return Err(ApiError::bad(
                    "Value for 'term_lists' must be an array of term lists.",
                ));
            }
        },
        Some(_) => {
            return Err(ApiError::bad(
                "Value for 'term_lists' must be an array of term lists.",
            ));
        }
    };
    let mut lists: Vec<TermList> = Vec::with_capacity(items.len());
    for item in &items {
        let Value::Object(obj) = item else {
            return Err(ApiError::bad(
                "Each term list must be an object with 'lang' and 'entries'.",
            ));
        };
        let list = term_list(obj)?;
        if lists.iter().any(|l| l.lang == list.lang) {
            return Err(ApiError::bad(format!(
                "The language '{}' has more than one term list.",
                list.lang
            )));
        }
        lists.push(list);
    }
    Ok(Some(lists))
}

async fn create(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Object(obj): TermsBody,
) -> Result<Response, ApiError> {
    let name = name(required(&obj, "name")?)?;
    let lists = term_lists(&obj)?
        .ok_or_else(|| ApiError::bad("Missing required parameter 'term_lists'."))?;
    let threshold = keyword_threshold(&obj)?.flatten();
    let s = spoken_terms::create(&state.db, key.organization_id, &name, threshold, &lists).await?;
    Ok((StatusCode::CREATED, Json(view(&s))).into_response())
}

async fn list(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
) -> Result<Json<Value>, ApiError> {
    let all = spoken_terms::list(&state.db, key.organization_id).await?;
    Ok(Json(
        json!({ "spoken_terms": all.iter().map(view).collect::<Vec<_>>() }),
    ))
}

async fn show(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let s = spoken_terms::get(&state.db, key.organization_id, id_of(&id)?)
        .await?
        .ok_or_else(not_found)?;
    Ok(Json(view(&s)))
}

async fn patch(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
    Object(obj): TermsBody,
) -> Result<Json<Value>, ApiError> {
    let id = id_of(&id)?;
    let name = string(&obj, "name")?.map(name).transpose()?;
    let lists = term_lists(&obj)?.unwrap_or_default();
    let threshold = keyword_threshold(&obj)?;
    if name.is_none() && lists.is_empty() && threshold.is_none() {
        return Err(ApiError::bad("Give 'name' or 'term_lists' to change."));
    }
    let s = spoken_terms::update(
        &state.db,
        key.organization_id,
        id,
        (name.as_deref(), threshold),
        &lists,
    )
    .await?
    .ok_or_else(not_found)?;
    Ok(Json(view(&s)))
}

async fn delete(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    if spoken_terms::delete(&state.db, key.organization_id, id_of(&id)?).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(not_found())
    }
}

/// The `lang` query parameter (required).
fn lang_param(query: Option<&str>) -> Result<String, ApiError> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query.unwrap_or(""))
        .map_err(|e| ApiError::bad(format!("Invalid query string: {e}")))?;
    pairs
        .into_iter()
        .rev()
        .find(|(k, _)| k == "lang")
        .map(|(_, v)| v.trim().to_ascii_lowercase())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| ApiError::bad("Missing required parameter 'lang'."))
}

async fn entries(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let lang = lang_param(query.as_deref())?;
    let s = spoken_terms::get(&state.db, key.organization_id, id_of(&id)?)
        .await?
        .ok_or_else(not_found)?;
    let list = s
        .lists
        .iter()
        .find(|l| l.lang == lang)
        .ok_or_else(|| ApiError::NotFound(format!("No term list for '{lang}'.")))?;
    Ok(Json(
        json!({ "lang": list.lang, "entries": list.terms.join("\n") }),
    ))
}

async fn put_list(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
    Object(obj): TermsBody,
) -> Result<Json<Value>, ApiError> {
    let id = id_of(&id)?;
    let list = term_list(&obj)?;
    spoken_terms::update(
        &state.db,
        key.organization_id,
        id,
        (None, None),
        std::slice::from_ref(&list),
    )
    .await?
    .ok_or_else(not_found)?;
    Ok(Json(list_view(&list)))
}

async fn delete_list(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<StatusCode, ApiError> {
    let lang = lang_param(query.as_deref())?;
    match spoken_terms::delete_list(&state.db, key.organization_id, id_of(&id)?, &lang).await? {
        Some(true) => Ok(StatusCode::NO_CONTENT),
        Some(false) => Err(ApiError::NotFound(format!("No term list for '{lang}'."))),
        None => Err(not_found()),
    }
}
