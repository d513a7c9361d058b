//! Glossaries, v3 interface: multilingual glossaries with editable
//! dictionaries. `POST/GET /v3/glossaries`, `GET/PATCH/DELETE
//! /v3/glossaries/{id}`, `GET /v3/glossaries/{id}/entries?source_lang&target_lang`,
//! `PUT/DELETE /v3/glossaries/{id}/dictionaries`. Bodies are JSON or, where
//! the interface description allows it (create and patch), forms: a form
//! gives its dictionaries as indexed fields in bracket or dot notation
//! (`dictionaries[0][source_lang]=en`, as DeepL's mock server does, or
//! `dictionaries[0].source_lang=en`, as deepl-node does; read by
//! [`crate::params`]), as one `dictionaries` field holding a
//! JSON array, or, for a single dictionary, as top-level `source_lang`,
//! `target_lang`, `entries` and `entries_format` fields.

use std::collections::HashSet;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tolk_storage::glossaries::{self, Glossary, NewDictionary};

use super::{MAX_GLOSSARIES, MAX_GLOSSARY_BYTES, dictionary, glossary_id, name};
use crate::auth::AuthKey;
use crate::body::{GlossaryBody, Object};
use crate::{ApiError, AppState};

/// Routes of the v3 interface.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v3/glossaries", get(list).post(create))
        .route(
            "/v3/glossaries/{glossary_id}",
            get(show).patch(patch).delete(delete),
        )
        .route("/v3/glossaries/{glossary_id}/entries", get(entries))
        .route(
            "/v3/glossaries/{glossary_id}/dictionaries",
            put(replace_dictionary).delete(delete_dictionary),
        )
}

fn view(g: &Glossary) -> Value {
    json!({
        "glossary_id": g.id,
        "name": g.name,
        "dictionaries": g.dictionaries.iter().map(|d| json!({
            "source_lang": d.source_lang,
            "target_lang": d.target_lang,
            "entry_count": d.entry_count,
        })).collect::<Vec<_>>(),
        "creation_time": super::time(g.created_at),
    })
}

/// The dictionaries of a form body given as one JSON text or as top-level
/// fields, as JSON objects (see the module documentation); `None` when the
/// form names none. Indexed fields arrive as an array already.
fn form_dictionaries(obj: &Map<String, Value>) -> Result<Option<Vec<Value>>, ApiError> {
    if let Some(Value::String(text)) = obj.get("dictionaries") {
        return match serde_json::from_str(text) {
            Ok(Value::Array(items)) => Ok(Some(items)),
            _ => Err(ApiError::bad(
                "Value for 'dictionaries' must be a JSON array of dictionaries.",
            )),
        };
    }
    if obj.contains_key("entries") || obj.contains_key("source_lang") {
        let single: Map<String, Value> =
            ["source_lang", "target_lang", "entries", "entries_format"]
                .iter()
                .filter_map(|f| obj.get(*f).map(|v| ((*f).to_owned(), v.clone())))
                .collect();
        return Ok(Some(vec![Value::Object(single)]));
    }
    Ok(None)
}

/// The `dictionaries` array: each a dictionary, no pair twice.
fn dictionaries(obj: &Map<String, Value>) -> Result<Option<Vec<NewDictionary>>, ApiError> {
    let from_form;
    let items = match obj.get("dictionaries") {
        Some(Value::Array(a)) => a,
        None | Some(Value::Null) | Some(Value::String(_)) => match form_dictionaries(obj)? {
            Some(items) => {
                from_form = items;
                &from_form
            }
            None => return Ok(None),
        },
        Some(_) => return Err(ApiError::bad("Value for 'dictionaries' must be an array.")),
    };
    let mut out = Vec::with_capacity(items.len());
    let mut pairs = HashSet::new();
    for (i, item) in items.iter().enumerate() {
        let d = item
            .as_object()
            .ok_or_else(|| ApiError::bad(format!("dictionaries[{i}] must be an object.")))
            .and_then(|o| dictionary(o, &format!("dictionaries[{i}]: ")))?;
        if !pairs.insert((d.source_lang.clone(), d.target_lang.clone())) {
            return Err(ApiError::bad(format!(
                "dictionaries[{i}]: the language pair {}→{} is given twice.",
                d.source_lang, d.target_lang
            )));
        }
        out.push(d);
    }
    Ok(Some(out))
}

async fn create(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Object(obj): GlossaryBody,
) -> Result<Response, ApiError> {
    let name = name(super::required(&obj, "name")?)?;
    // A glossary may start empty, its dictionaries added later (as DeepL allows).
    let dicts = dictionaries(&obj)?.unwrap_or_default();
    let g = glossaries::create(
        &state.db,
        key.organization_id,
        &name,
        &dicts,
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
    super::list_as(&state, key.organization_id, |g| Some(view(g))).await
}

async fn show(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    super::show_as(&state, key.organization_id, &id, |g| Some(view(g))).await
}

async fn patch(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
    Object(obj): GlossaryBody,
) -> Result<Json<Value>, ApiError> {
    let id = glossary_id(&id)?;
    let new_name = super::string(&obj, "name")?.map(name).transpose()?;
    let dicts = dictionaries(&obj)?.unwrap_or_default();
    if new_name.is_none() && dicts.is_empty() {
        return Err(ApiError::bad(
            "Nothing to change: give 'name' and/or 'dictionaries'.",
        ));
    }
    let g = glossaries::update(
        &state.db,
        key.organization_id,
        id,
        new_name.as_deref(),
        &dicts,
        true,
        MAX_GLOSSARY_BYTES,
    )
    .await?
    .map_err(super::refused)?;
    Ok(Json(view(&g)))
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

/// `source_lang` and `target_lang` of the query.
#[derive(Debug, Deserialize)]
struct PairQuery {
    source_lang: Option<String>,
    target_lang: Option<String>,
}

impl PairQuery {
    fn pair(&self) -> Result<(String, String), ApiError> {
        let s = self
            .source_lang
            .as_deref()
            .ok_or_else(|| ApiError::bad("Missing required parameter 'source_lang'."))?;
        let t = self
            .target_lang
            .as_deref()
            .ok_or_else(|| ApiError::bad("Missing required parameter 'target_lang'."))?;
        super::pair(s, t)
    }
}

async fn entries(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
    Query(q): Query<PairQuery>,
) -> Result<Json<Value>, ApiError> {
    let id = glossary_id(&id)?;
    let (s, t) = q.pair()?;
    let dicts = glossaries::entries(&state.db, key.organization_id, id, Some((&s, &t)))
        .await?
        .ok_or_else(super::not_found)?;
    if dicts.is_empty() {
        return Err(ApiError::NotFound(format!(
            "The glossary has no dictionary for {s}→{t}."
        )));
    }
    Ok(Json(json!({
        "dictionaries": dicts.iter().map(|d| json!({
            "source_lang": d.source_lang,
            "target_lang": d.target_lang,
            "entries": super::entries::to_tsv(&d.sources, &d.targets),
            "entries_format": "tsv",
        })).collect::<Vec<_>>()
    })))
}

async fn replace_dictionary(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
    Object(obj): GlossaryBody,
) -> Result<Json<Value>, ApiError> {
    let id = glossary_id(&id)?;
    let d = dictionary(&obj, "")?;
    let g = glossaries::update(
        &state.db,
        key.organization_id,
        id,
        None,
        std::slice::from_ref(&d),
        false,
        MAX_GLOSSARY_BYTES,
    )
    .await?
    .map_err(super::refused)?;
    let count = g
        .dictionaries
        .iter()
        .find(|x| x.source_lang == d.source_lang && x.target_lang == d.target_lang)
        .map_or(0, |x| x.entry_count);
    Ok(Json(json!({
        "source_lang": d.source_lang,
        "target_lang": d.target_lang,
        "entry_count": count,
    })))
}

async fn delete_dictionary(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
    Query(q): Query<PairQuery>,
) -> Result<StatusCode, ApiError> {
    let id = glossary_id(&id)?;
    let (s, t) = q.pair()?;
    match glossaries::delete_dictionary(&state.db, key.organization_id, id, &s, &t).await? {
        None => Err(super::not_found()),
        Some(false) => Err(ApiError::NotFound(format!(
            "The glossary has no dictionary for {s}→{t}."
        ))),
        Some(true) => Ok(StatusCode::NO_CONTENT),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(body: &str) -> Map<String, Value> {
        crate::params::Params::parse(body.as_bytes(), false)
            .and_then(crate::params::Params::into_object)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn form_dictionaries_in_three_shapes() {
        let indexed = form(
            "name=g&dictionaries%5B1%5D%5Bsource_lang%5D=de&dictionaries%5B1%5D%5Btarget_lang%5D=en&dictionaries%5B1%5D%5Bentries%5D=Katze%09cat&dictionaries%5B0%5D%5Bsource_lang%5D=en&dictionaries%5B0%5D%5Btarget_lang%5D=de&dictionaries%5B0%5D%5Bentries%5D=cat%09Katze&dictionaries%5B0%5D%5Bentries_format%5D=tsv",
        );
        let d = dictionaries(&indexed).ok().flatten().unwrap_or_default();
        assert_eq!(d.len(), 2);
        assert_eq!(
            (d[0].source_lang.as_str(), d[1].source_lang.as_str()),
            ("en", "de")
        );
        assert_eq!(d[1].targets, ["cat"]);

        let json_text = form(
            "name=g&dictionaries=%5B%7B%22source_lang%22%3A%22en%22%2C%22target_lang%22%3A%22fr%22%2C%22entries%22%3A%22cat%5Ctchat%22%7D%5D",
        );
        let d = dictionaries(&json_text).ok().flatten().unwrap_or_default();
        assert_eq!(d[0].targets, ["chat"]);

        let flat =
            form("name=g&source_lang=en&target_lang=es&entries=cat%09gato&entries_format=tsv");
        let d = dictionaries(&flat).ok().flatten().unwrap_or_default();
        assert_eq!(d[0].targets, ["gato"]);

        assert!(matches!(dictionaries(&form("name=g")), Ok(None)));
        let dotted = form(
            "name=g&dictionaries%5B0%5D.source_lang=en&dictionaries%5B0%5D.target_lang=de&dictionaries%5B0%5D.entries=cat%09Katze",
        );
        let d = dictionaries(&dotted).ok().flatten().unwrap_or_default();
        assert_eq!(d[0].targets, ["Katze"]);
        for bad_form in ["dictionaries%5Bx%5D%5Bentries%5D=a", "dictionaries=notjson"] {
            assert!(dictionaries(&form(bad_form)).is_err(), "{bad_form}");
        }
    }
}
