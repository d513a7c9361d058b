//! Glossaries, v2 interface: one language pair per glossary.
//! `POST/GET /v2/glossaries`, `GET/DELETE /v2/glossaries/{id}`,
//! `GET /v2/glossaries/{id}/entries` (TSV), `GET /v2/glossary-language-pairs`.

use axum::extract::{Path, State};
use axum::http::header::{ACCEPT, CONTENT_TYPE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use tolk_storage::glossaries::{self, Glossary};

use super::{MAX_GLOSSARIES, MAX_GLOSSARY_BYTES, dictionary, glossary_id, name};
use crate::auth::AuthKey;
use crate::body::{GlossaryBody, Object};
use crate::{ApiError, AppState};

/// Routes of the v2 interface.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v2/glossaries", get(list).post(create))
        .route("/v2/glossaries/{glossary_id}", get(show).delete(delete))
        .route("/v2/glossaries/{glossary_id}/entries", get(entries))
        .route("/v2/glossary-language-pairs", get(language_pairs))
}

/// `GET /v2/glossary-language-pairs`: every pair of base languages (lower
/// case, as DeepL lists them) the installed engines translate between, so a
/// glossary for it can be used.
async fn language_pairs(State(state): State<AppState>, AuthKey(_key): AuthKey) -> Json<Value> {
    let languages = state.translator.languages();
    let base = tolk_lang::base;
    let mut targets: Vec<String> = languages.target.iter().map(|l| base(&l.code)).collect();
    targets.sort();
    targets.dedup();
    let mut pairs = Vec::new();
    for source in languages.source.iter().map(|l| base(&l.code)) {
        for target in &targets {
            if *target != source && state.translator.route(&source, target).is_ok() {
                pairs.push(json!({ "source_lang": source, "target_lang": target }));
            }
        }
    }
    Json(json!({ "supported_languages": pairs }))
}

/// The v2 view: the glossary's single dictionary (the first, for a
/// multilingual one). A glossary without dictionaries (made through v3) has
/// no v2 form: v2 lists leave it out and answer 404 for it.
fn view(g: &Glossary) -> Option<Value> {
    let d = g.dictionaries.first()?;
    Some(json!({
        "glossary_id": g.id,
        "name": g.name,
        "ready": true,
        "source_lang": d.source_lang,
        "target_lang": d.target_lang,
        "creation_time": super::time(g.created_at),
        "entry_count": d.entry_count,
    }))
}

async fn create(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Object(obj): GlossaryBody,
) -> Result<Response, ApiError> {
    let name = name(super::required(&obj, "name")?)?;
    let dict = dictionary(&obj, "")?;
    let g = glossaries::create(
        &state.db,
        key.organization_id,
        &name,
        std::slice::from_ref(&dict),
        MAX_GLOSSARIES,
        MAX_GLOSSARY_BYTES,
    )
    .await?
    .map_err(super::refused)?;
    Ok((StatusCode::CREATED, Json(view(&g))).into_response())
}

async fn list(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
) -> Result<Json<Value>, ApiError> {
    super::list_as(&state, key.organization_id, view).await
}

async fn show(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    super::show_as(&state, key.organization_id, &id, view).await
}

async fn delete(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let id = glossary_id(&id)?;
    if glossaries::delete(&state.db, key.organization_id, id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(super::not_found())
    }
}

async fn entries(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let id = glossary_id(&id)?;
    let accept = headers
        .get(ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("*/*")
        .to_ascii_lowercase();
    if !accept.split(',').any(|a| {
        let a = a.split(';').next().unwrap_or("").trim();
        matches!(a, "text/tab-separated-values" | "*/*" | "text/*" | "")
    }) {
        return Err(ApiError::UnsupportedMediaType(
            "Accept: only text/tab-separated-values is supported.".to_owned(),
        ));
    }
    let dicts = glossaries::entries(&state.db, key.organization_id, id, None)
        .await?
        .ok_or_else(super::not_found)?;
    let tsv = dicts
        .first()
        .map(|d| super::entries::to_tsv(&d.sources, &d.targets))
        .unwrap_or_default();
    Ok((
        [(CONTENT_TYPE, "text/tab-separated-values; charset=utf-8")],
        tsv,
    )
        .into_response())
}
