//! Developer-key administration (`/v2/admin/developer-keys`), admin keys only.
//!
//! Every operation answers the key as the reference `ApiKey` object; creation
//! adds `key`, the full credential (`{key_id}.{secret}`), shown in that response
//! only. Operations reach the developer keys of the admin key's organization;
//! any other key id (unknown, another organization's, an admin key) is a 404.

use axum::extract::State;
use axum::routing::{get, put};
use axum::{Json, Router};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use serde_json::{Map, Value};
use tolk_storage::keys::{self, ApiKey, Limits};

use crate::auth::AdminKey;
use crate::body::{AdminBody, Object};
use crate::{ApiError, AppState};

/// Longest accepted label, in characters.
pub const MAX_LABEL_CHARS: usize = 256;

/// Label of a key created without one (the reference's default).
pub const DEFAULT_LABEL: &str = "DeepL API Key";

/// The 404 message for a key id the organization has no developer key for.
pub const NOT_FOUND: &str = "Developer key not found.";

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v2/admin/developer-keys", get(list_keys).post(create_key))
        .route("/v2/admin/developer-keys/deactivate", put(deactivate))
        .route("/v2/admin/developer-keys/label", put(set_label))
        .route("/v2/admin/developer-keys/limits", put(set_limits))
}

/// `usage_limits` of an `ApiKey`. A limit that is not set is left out (the
/// schema types each one as a number, never `null`).
#[derive(Debug, Serialize)]
struct UsageLimits {
    #[serde(skip_serializing_if = "Option::is_none")]
    characters: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    speech_to_text_milliseconds: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    speech_to_speech_milliseconds: Option<i64>,
}

/// The reference `ApiKey` object.
#[derive(Debug, Serialize)]
struct ApiKeyBody {
    key_id: String,
    label: String,
    creation_time: String,
    /// Left out while the key is active (the schema types it as a string).
    #[serde(skip_serializing_if = "Option::is_none")]
    deactivated_time: Option<String>,
    is_deactivated: bool,
    usage_limits: UsageLimits,
    /// The credential, on creation only.
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<String>,
}

fn timestamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

impl From<ApiKey> for ApiKeyBody {
    fn from(k: ApiKey) -> Self {
        Self {
            key_id: k.key_id,
            label: k.label,
            creation_time: timestamp(k.created_at),
            deactivated_time: k.deactivated_at.map(timestamp),
            is_deactivated: k.deactivated_at.is_some(),
            usage_limits: UsageLimits {
                characters: k.limits.characters,
                speech_to_text_milliseconds: k.limits.speech_to_text_milliseconds,
                speech_to_speech_milliseconds: k.limits.speech_to_speech_milliseconds,
            },
            key: None,
        }
    }
}

/// A string field; `None` when absent or null.
fn string_field(body: &Map<String, Value>, name: &str) -> Result<Option<String>, ApiError> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ApiError::bad(format!(
            "Value for '{name}' must be a string."
        ))),
    }
}

/// The required `key_id`.
fn key_id(body: &Map<String, Value>) -> Result<String, ApiError> {
    string_field(body, "key_id")?
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| ApiError::bad("Parameter 'key_id' is required."))
}

/// A label: trimmed, not empty, at most [`MAX_LABEL_CHARS`].
fn label(value: String) -> Result<String, ApiError> {
    let label = value.trim().to_owned();
    if label.is_empty() {
        return Err(ApiError::bad("Value for 'label' must not be empty."));
    }
    if label.chars().count() > MAX_LABEL_CHARS {
        return Err(ApiError::bad(format!(
            "Value for 'label' must be at most {MAX_LABEL_CHARS} characters."
        )));
    }
    Ok(label)
}

/// A limit: absent or null → no limit; else a non-negative integer.
fn limit_field(body: &Map<String, Value>, name: &str) -> Result<Option<i64>, ApiError> {
    let invalid = || {
        ApiError::bad(format!(
            "Value for '{name}' must be a non-negative integer or null."
        ))
    };
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            if let Some(i) = n.as_i64() {
                return if i >= 0 { Ok(Some(i)) } else { Err(invalid()) };
            }
            match n.as_f64() {
                // 5000.0 is an integer too; 2^63 and above is not representable.
                Some(f) if f >= 0.0 && f.fract() == 0.0 && f < 9.2e18 => Ok(Some(f as i64)),
                _ => Err(invalid()),
            }
        }
        Some(_) => Err(invalid()),
    }
}

fn found(key: Option<ApiKey>) -> Result<Json<ApiKeyBody>, ApiError> {
    key.map(|k| Json(k.into()))
        .ok_or_else(|| ApiError::NotFound(NOT_FOUND.to_owned()))
}

/// `POST /v2/admin/developer-keys` {label}: a new developer key in the admin's
/// organization; the credential is in this response only.
async fn create_key(
    State(state): State<AppState>,
    AdminKey(admin): AdminKey,
    Object(body): AdminBody,
) -> Result<Json<ApiKeyBody>, ApiError> {
    let label = match string_field(&body, "label")? {
        Some(l) => label(l)?,
        None => DEFAULT_LABEL.to_owned(),
    };
    let new = keys::create(&state.db, admin.organization_id, &label, false).await?;
    tracing::info!(key_id = %new.key.key_id, admin = %admin.key_id, "developer key created");
    let mut out = ApiKeyBody::from(new.key);
    out.key = Some(new.secret);
    Ok(Json(out))
}

/// `GET /v2/admin/developer-keys`: every developer key of the organization.
async fn list_keys(
    State(state): State<AppState>,
    AdminKey(admin): AdminKey,
) -> Result<Json<Vec<ApiKeyBody>>, ApiError> {
    let keys = keys::list_developer_keys(&state.db, admin.organization_id).await?;
    Ok(Json(keys.into_iter().map(ApiKeyBody::from).collect()))
}

/// `PUT /v2/admin/developer-keys/deactivate` {key_id}: permanent.
async fn deactivate(
    State(state): State<AppState>,
    AdminKey(admin): AdminKey,
    Object(body): AdminBody,
) -> Result<Json<ApiKeyBody>, ApiError> {
    let key_id = key_id(&body)?;
    let key = keys::deactivate(&state.db, admin.organization_id, &key_id).await?;
    if key.is_some() {
        tracing::info!(key_id = %key_id, admin = %admin.key_id, "developer key deactivated");
    }
    found(key)
}

/// `PUT /v2/admin/developer-keys/label` {key_id, label}.
async fn set_label(
    State(state): State<AppState>,
    AdminKey(admin): AdminKey,
    Object(body): AdminBody,
) -> Result<Json<ApiKeyBody>, ApiError> {
    let key_id = key_id(&body)?;
    let label = label(
        string_field(&body, "label")?
            .ok_or_else(|| ApiError::bad("Parameter 'label' is required."))?,
    )?;
    found(keys::set_label(&state.db, admin.organization_id, &key_id, &label).await?)
}

/// `PUT /v2/admin/developer-keys/limits` {key_id, characters,
/// speech_to_text_milliseconds, speech_to_speech_milliseconds}: replaces all
/// limits (an omitted or null one is removed), as the reference describes.
async fn set_limits(
    State(state): State<AppState>,
    AdminKey(admin): AdminKey,
    Object(body): AdminBody,
) -> Result<Json<ApiKeyBody>, ApiError> {
    let key_id = key_id(&body)?;
    let limits = Limits {
        characters: limit_field(&body, "characters")?,
        speech_to_text_milliseconds: limit_field(&body, "speech_to_text_milliseconds")?,
        speech_to_speech_milliseconds: limit_field(&body, "speech_to_speech_milliseconds")?,
    };
    found(keys::set_limits(&state.db, admin.organization_id, &key_id, limits).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JSON body as the admin routes' extractor reads it.
    fn obj(s: &str) -> Map<String, Value> {
        crate::params::Params::parse(s.as_bytes(), true)
            .and_then(crate::params::Params::into_object)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn err<T: std::fmt::Debug>(r: Result<T, ApiError>) -> String {
        match r {
            Ok(v) => panic!("accepted: {v:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn limits_are_non_negative_integers_or_null() {
        let b = obj(r#"{"characters": 5000, "speech_to_text_milliseconds": null, "x": 1.0}"#);
        assert_eq!(limit_field(&b, "characters").ok(), Some(Some(5000)));
        assert_eq!(
            limit_field(&b, "speech_to_text_milliseconds").ok(),
            Some(None)
        );
        assert_eq!(limit_field(&b, "absent").ok(), Some(None));
        assert_eq!(limit_field(&b, "x").ok(), Some(Some(1)));
        for bad in [
            r#"{"c": -1}"#,
            r#"{"c": 1.5}"#,
            r#"{"c": "10"}"#,
            r#"{"c": 1e30}"#,
        ] {
            let m = err(limit_field(&obj(bad), "c"));
            assert!(m.contains("'c'"), "{bad}: {m}");
        }
    }

    #[test]
    fn bodies_and_fields_name_the_problem() {
        assert!(err(key_id(&obj("{}"))).contains("'key_id'"));
        assert!(err(key_id(&obj(r#"{"key_id": 7}"#))).contains("'key_id'"));
        assert!(err(label("  ".to_owned())).contains("'label'"));
        assert!(err(label("x".repeat(257))).contains("'label'"));
        assert_eq!(label(" a ".to_owned()).ok().as_deref(), Some("a"));
    }
}
