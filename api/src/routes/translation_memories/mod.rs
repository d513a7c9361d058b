//! Translation memories (`/v3/translation_memories`), per the DeepL interface
//! description (list in the spec file; the rest as published):
//!
//! * `GET /v3/translation_memories?page&page_size` → `{translation_memories, total_count}`;
//! * `GET /v3/translation_memories/{id}` → one memory; `DELETE` → 204;
//! * `GET /v3/translation_memories/{id}/segments?page_cursor&page_size&filter_text&filter_case_sensitive`
//!   → `{segments, segment_count, next_page_cursor?}`;
//! * TMX import and export jobs: see [`jobs`];
//! * use in `/v2/translate` and documents: `tolk_pipeline::customizations::memory`.

pub mod jobs;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};
use tolk_storage::translation_memories::{self as memories, Memory};
use uuid::Uuid;

use crate::auth::AuthKey;
use crate::{ApiError, AppState};

/// Largest `page_size` of the memory list.
pub const MAX_LIST_PAGE: i64 = 25;
/// Largest `page_size` of the segment listing.
pub const MAX_SEGMENT_PAGE: i64 = 100;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v3/translation_memories", get(list))
        .route(
            "/v3/translation_memories/{id}",
            get(get_one).delete(delete_one),
        )
        .route("/v3/translation_memories/{id}/segments", get(segments))
        .merge(jobs::router())
}

/// 404 for a memory that does not exist (for this organization).
pub(crate) fn not_found(id: &str) -> ApiError {
    ApiError::NotFound(format!("Translation memory '{id}' not found."))
}

/// A memory id from the path: not a UUID → 400, as for glossaries.
pub(crate) fn memory_id(id: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(id)
        .map_err(|_| ApiError::bad(format!("Invalid translation memory ID: '{id}'.")))
}

pub(crate) fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn memory_json(m: &Memory) -> Value {
    json!({
        "translation_memory_id": m.id,
        "name": m.name,
        "source_language": m.source_language,
        "target_languages": m.target_languages,
        "segment_count": m.segment_count,
        "creation_time": time(m.created_at),
        "updated_time": time(m.updated_at),
    })
}

/// An integer query parameter within `range`.
fn int_param(
    query: &[(String, String)],
    name: &str,
    default: i64,
    range: std::ops::RangeInclusive<i64>,
) -> Result<i64, ApiError> {
    match query.iter().rev().find(|(k, _)| k == name) {
        None => Ok(default),
        Some((_, v)) => v
            .trim()
            .parse::<i64>()
            .ok()
            .filter(|n| range.contains(n))
            .ok_or_else(|| {
                ApiError::bad(format!(
                    "Value for '{name}' must be an integer from {} to {}, not '{v}'.",
                    range.start(),
                    range.end()
                ))
            }),
    }
}

fn param<'q>(query: &'q [(String, String)], name: &str) -> Option<&'q str> {
    query
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

async fn list(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Query(query): Query<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    let page = int_param(&query, "page", 0, 0..=i64::from(i32::MAX))?;
    let page_size = int_param(&query, "page_size", 10, 1..=MAX_LIST_PAGE)?;
    let (rows, total) = memories::list(&state.db, key.organization_id, page, page_size).await?;
    Ok(Json(json!({
        "translation_memories": rows.iter().map(memory_json).collect::<Vec<_>>(),
        "total_count": total,
    }))
    .into_response())
}

/// A memory of the key's organization, or 404.
pub(crate) async fn load(
    state: &AppState,
    organization_id: Uuid,
    id: &str,
) -> Result<Memory, ApiError> {
    let uuid = memory_id(id)?;
    memories::get(&state.db, organization_id, uuid)
        .await?
        .ok_or_else(|| not_found(id))
}

async fn get_one(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let m = load(&state, key.organization_id, &id).await?;
    Ok(Json(memory_json(&m)).into_response())
}

async fn delete_one(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let uuid = memory_id(&id)?;
    if !memories::delete(&state.db, key.organization_id, uuid).await? {
        return Err(not_found(&id));
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn segments(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
    Query(query): Query<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    let m = load(&state, key.organization_id, &id).await?;
    let page_size = int_param(&query, "page_size", 10, 1..=MAX_SEGMENT_PAGE)?;
    let after = match param(&query, "page_cursor").map(str::trim) {
        None | Some("") => None,
        Some(c) => Some(c.parse::<i32>().ok().filter(|n| *n >= 0).ok_or_else(|| {
            ApiError::bad(format!(
                "Value for 'page_cursor' is not a cursor of this listing: '{c}'."
            ))
        })?),
    };
    let filter = match param(&query, "filter_text") {
        None | Some("") => None,
        Some(t) if t.chars().count() < 2 => {
            return Err(ApiError::bad(
                "Value for 'filter_text' must be at least 2 characters long.",
            ));
        }
        Some(t) => Some(t),
    };
    let case_sensitive = match param(&query, "filter_case_sensitive") {
        None | Some("") | Some("false") | Some("0") => false,
        Some("true") | Some("1") => true,
        Some(v) => {
            return Err(ApiError::bad(format!(
                "Value for 'filter_case_sensitive' must be true or false, not '{v}'."
            )));
        }
    };
    let rows = memories::segments(
        &state.db,
        m.id,
        after,
        page_size + 1,
        filter.map(|f| (f, case_sensitive)),
    )
    .await?;
    let more = rows.len() as i64 > page_size;
    let rows = &rows[..rows.len().min(page_size as usize)];
    let segments: Vec<Value> = rows
        .iter()
        .map(|s| {
            let created = time(s.created_at);
            json!({
                "source_segment_id": s.unit_no.to_string(),
                "source_text": s.source_text,
                "creation_time": created,
                "targets": s.targets.0.iter().map(|(lang, text)| json!({
                    "target_segment_id": format!("{}-{lang}", s.unit_no),
                    "target_language": lang,
                    "target_text": text,
                    "creation_time": created,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut out = json!({"segments": segments, "segment_count": m.segment_count});
    if more && let Some(last) = rows.last() {
        out["next_page_cursor"] = json!(last.unit_no.to_string());
    }
    Ok(Json(out).into_response())
}
