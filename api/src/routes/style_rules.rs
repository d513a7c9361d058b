//! Style rule lists, `/v3/style_rules`: create, list (paged), get, rename,
//! replace the configured rules, delete; custom instructions of a list
//! (create, get, replace, delete). Bodies are JSON. Configured rules are
//! validated against DeepL's `ConfiguredRules` schema (`tolk_style::catalogue`).
//!
//! A list is applied with `style_id` in `/v2/translate` and `/v2/document`
//! (loaded by `tolk_pipeline`): unknown → 404, a language that does not cover
//! the target → 400.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tolk_storage::style_rules::{self, StyleRuleList};
use tolk_style::{catalogue, language};
use uuid::Uuid;

use crate::auth::AuthKey;
use crate::body::{JsonBody, StyleRulesBody};
use crate::params::{object_required as required, object_string as string};
use crate::requests::{name, time};
use crate::{ApiError, AppState};

/// Most custom instructions per list.
pub const MAX_INSTRUCTIONS: usize = 200;
/// Longest label of a custom instruction, in characters.
pub const MAX_LABEL_CHARS: usize = 100;
/// Longest prompt of a custom instruction, in characters.
pub const MAX_PROMPT_CHARS: usize = 300;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v3/style_rules", get(list).post(create))
        .route(
            "/v3/style_rules/{style_id}",
            get(show).patch(rename).delete(delete),
        )
        .route(
            "/v3/style_rules/{style_id}/configured_rules",
            put(replace_rules),
        )
        .route(
            "/v3/style_rules/{style_id}/custom_instructions",
            axum::routing::post(create_instruction),
        )
        .route(
            "/v3/style_rules/{style_id}/custom_instructions/{instruction_id}",
            get(show_instruction)
                .put(replace_instruction)
                .delete(delete_instruction),
        )
}

fn not_found() -> ApiError {
    ApiError::NotFound("Style rule list not found.".to_owned())
}

fn instruction_not_found() -> ApiError {
    ApiError::NotFound("Custom instruction not found.".to_owned())
}

fn style_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| not_found())
}

fn view(l: &StyleRuleList, detailed: bool) -> Value {
    let mut v = json!({
        "style_id": l.id,
        "name": l.name,
        "creation_time": time(l.created_at),
        "updated_time": time(l.updated_at),
        "language": l.language,
        "version": l.version,
    });
    if detailed {
        v["configured_rules"] = l.configured_rules.clone();
        v["custom_instructions"] = l.custom_instructions.clone();
    }
    v
}

/// One custom instruction from `{label, prompt, source_language?}`, with a new
/// id or the given one.
fn instruction(obj: &Map<String, Value>, at: &str, id: Option<&str>) -> Result<Value, ApiError> {
    let label = required(obj, "label").map_err(|e| prefixed(at, e))?.trim();
    let prompt = required(obj, "prompt").map_err(|e| prefixed(at, e))?.trim();
    if label.is_empty() || prompt.is_empty() {
        return Err(ApiError::bad(format!(
            "{at}'label' and 'prompt' must not be empty."
        )));
    }
    if label.chars().count() > MAX_LABEL_CHARS {
        return Err(ApiError::bad(format!(
            "{at}'label' is longer than {MAX_LABEL_CHARS} characters."
        )));
    }
    if prompt.chars().count() > MAX_PROMPT_CHARS {
        return Err(ApiError::bad(format!(
            "{at}'prompt' is longer than {MAX_PROMPT_CHARS} characters."
        )));
    }
    let mut v = json!({
        "id": id.map_or_else(|| Uuid::new_v4().to_string(), str::to_owned),
        "label": label,
        "prompt": prompt,
    });
    if let Some(s) = string(obj, "source_language").map_err(|e| prefixed(at, e))? {
        let code = tolk_engine::lang::parse_source(s)
            .ok()
            .and_then(|l| l.deepl_base())
            .ok_or_else(|| {
                ApiError::bad(format!(
                    "{at}Value for 'source_language' not supported: '{s}'."
                ))
            })?;
        v["source_language"] = json!(code.to_ascii_lowercase());
    }
    Ok(v)
}

fn prefixed(at: &str, e: ApiError) -> ApiError {
    match e {
        ApiError::BadRequest(m) if !at.is_empty() => ApiError::bad(format!("{at}{m}")),
        other => other,
    }
}

fn configured(obj: &Map<String, Value>) -> Result<Value, ApiError> {
    let rules = catalogue::validate(obj.get("configured_rules").unwrap_or(&Value::Null))
        .map_err(|e| ApiError::bad(e.to_string()))?;
    Ok(catalogue::to_json(&rules))
}

async fn create(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    JsonBody(body): StyleRulesBody,
) -> Result<Response, ApiError> {
    let obj = crate::body::object(body)?;
    let name = name(required(&obj, "name")?)?;
    let lang_raw = required(&obj, "language")?;
    let lang = language::parse(lang_raw).ok_or_else(|| {
        ApiError::bad(format!(
            "Value for 'language' not supported: '{lang_raw}' (allowed: {}, {}).",
            language::ROOTS.join(", "),
            language::VARIANTS.join(", ")
        ))
    })?;
    let rules = configured(&obj)?;
    let instructions = match obj.get("custom_instructions") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => {
            if items.len() > MAX_INSTRUCTIONS {
                return Err(ApiError::bad(format!(
                    "Parameter 'custom_instructions' accepts at most {MAX_INSTRUCTIONS} entries."
                )));
            }
            items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let at = format!("custom_instructions[{i}]: ");
                    item.as_object()
                        .ok_or_else(|| ApiError::bad(format!("{at}must be an object.")))
                        .and_then(|o| instruction(o, &at, None))
                })
                .collect::<Result<Vec<_>, _>>()?
        }
        Some(_) => {
            return Err(ApiError::bad(
                "Value for 'custom_instructions' must be an array.",
            ));
        }
    };
    let l = style_rules::create(
        &state.db,
        key.organization_id,
        &name,
        &lang,
        &rules,
        &Value::Array(instructions),
    )
    .await?;
    Ok((StatusCode::CREATED, Json(view(&l, true))).into_response())
}

/// Query of the list operation.
#[derive(Debug, Deserialize)]
struct ListQuery {
    page: Option<String>,
    page_size: Option<String>,
    detailed: Option<String>,
}

async fn list(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Query(q): Query<ListQuery>,
) -> Result<Json<Value>, ApiError> {
    let page = match q.page.as_deref() {
        None | Some("") => 0,
        Some(p) => p.parse::<i64>().ok().filter(|p| *p >= 0).ok_or_else(|| {
            ApiError::bad(format!(
                "Value for 'page' must be a non-negative integer, not '{p}'."
            ))
        })?,
    };
    let size = match q.page_size.as_deref() {
        None | Some("") => 10,
        Some(s) => s
            .parse::<i64>()
            .ok()
            .filter(|s| (1..=25).contains(s))
            .ok_or_else(|| {
                ApiError::bad(format!(
                    "Value for 'page_size' must be an integer from 1 to 25, not '{s}'."
                ))
            })?,
    };
    let detailed = match q
        .detailed
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("") | Some("false") | Some("0") => false,
        Some("true") | Some("1") => true,
        Some(d) => {
            return Err(ApiError::bad(format!(
                "Value for 'detailed' must be a boolean, not '{d}'."
            )));
        }
    };
    let lists = style_rules::list(
        &state.db,
        key.organization_id,
        page.saturating_mul(size),
        size,
    )
    .await?;
    Ok(Json(json!({
        "style_rules": lists.iter().map(|l| view(l, detailed)).collect::<Vec<_>>()
    })))
}

async fn show(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let l = style_rules::get(&state.db, key.organization_id, style_id(&id)?)
        .await?
        .ok_or_else(not_found)?;
    Ok(Json(view(&l, true)))
}

async fn rename(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
    JsonBody(body): StyleRulesBody,
) -> Result<Json<Value>, ApiError> {
    let obj = crate::body::object(body)?;
    let id = style_id(&id)?;
    // `name` is the one field, and optional: without it the list is answered
    // as it is.
    let l = match string(&obj, "name")? {
        Some(raw) => {
            let new_name = name(raw)?;
            style_rules::update(&state.db, key.organization_id, id, Some(&new_name), None).await?
        }
        None => style_rules::get(&state.db, key.organization_id, id).await?,
    }
    .ok_or_else(not_found)?;
    Ok(Json(view(&l, true)))
}

async fn replace_rules(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
    JsonBody(body): StyleRulesBody,
) -> Result<Json<Value>, ApiError> {
    let obj = crate::body::object(body)?;
    let id = style_id(&id)?;
    let rules =
        catalogue::validate(&Value::Object(obj)).map_err(|e| ApiError::bad(e.to_string()))?;
    let l = style_rules::update(
        &state.db,
        key.organization_id,
        id,
        None,
        Some(&catalogue::to_json(&rules)),
    )
    .await?
    .ok_or_else(not_found)?;
    Ok(Json(view(&l, true)))
}

async fn delete(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    if style_rules::delete(&state.db, key.organization_id, style_id(&id)?).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(not_found())
    }
}

async fn create_instruction(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(id): Path<String>,
    JsonBody(body): StyleRulesBody,
) -> Result<Response, ApiError> {
    let obj = crate::body::object(body)?;
    let id = style_id(&id)?;
    let item = instruction(&obj, "", None)?;
    let added = style_rules::edit_instructions(&state.db, key.organization_id, id, |items| {
        if items.len() >= MAX_INSTRUCTIONS {
            return Some(Err(ApiError::bad(format!(
                "A style rule list may have at most {MAX_INSTRUCTIONS} custom instructions."
            ))));
        }
        items.push(item.clone());
        Some(Ok(item))
    })
    .await?
    .ok_or_else(not_found)?
    .ok_or_else(not_found)??;
    Ok((StatusCode::CREATED, Json(added)).into_response())
}

fn position(items: &[Value], instruction_id: &str) -> Option<usize> {
    items
        .iter()
        .position(|i| i.get("id").and_then(Value::as_str) == Some(instruction_id))
}

async fn show_instruction(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path((id, instruction_id)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let l = style_rules::get(&state.db, key.organization_id, style_id(&id)?)
        .await?
        .ok_or_else(not_found)?;
    let items = l
        .custom_instructions
        .as_array()
        .cloned()
        .unwrap_or_default();
    let i = position(&items, &instruction_id).ok_or_else(instruction_not_found)?;
    Ok(Json(items[i].clone()))
}

async fn replace_instruction(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path((id, instruction_id)): Path<(String, String)>,
    JsonBody(body): StyleRulesBody,
) -> Result<Json<Value>, ApiError> {
    let obj = crate::body::object(body)?;
    let id = style_id(&id)?;
    let item = instruction(&obj, "", Some(&instruction_id))?;
    let replaced = style_rules::edit_instructions(&state.db, key.organization_id, id, |items| {
        let i = position(items, &instruction_id)?;
        items[i] = item.clone();
        Some(item)
    })
    .await?
    .ok_or_else(not_found)?
    .ok_or_else(instruction_not_found)?;
    Ok(Json(replaced))
}

async fn delete_instruction(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path((id, instruction_id)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let id = style_id(&id)?;
    style_rules::edit_instructions(&state.db, key.organization_id, id, |items| {
        let i = position(items, &instruction_id)?;
        items.remove(i);
        Some(())
    })
    .await?
    .ok_or_else(not_found)?
    .ok_or_else(instruction_not_found)?;
    Ok(StatusCode::NO_CONTENT)
}
