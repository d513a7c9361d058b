//! Quality evaluation jobs: submit (`POST /v1/quality-evaluation`, 202) and poll
//! (`GET /v1/quality-evaluation/{job_id}`), in the DeepL wire format. The API
//! validates, records the job and enqueues it in one transaction; a worker
//! evaluates (see `worker/src/quality.rs`) and stores the report in the object
//! store.

use axum::extract::{Path, State};
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use serde_json::{Map, Value, json};
use tolk_engine::lang;
use tolk_storage::quality::{self, NewEvaluation, status};
use tolk_storage::queue;
use uuid::Uuid;

use crate::auth::AuthKey;
use crate::body::{EvaluationBody, JsonBody};
use crate::trace_id::TraceId;
use crate::{ApiError, AppState};

/// Most segments per job.
pub const MAX_SEGMENTS: usize = 500;
/// Most characters per source or target.
pub const MAX_SEGMENT_CHARS: usize = 10_000;
/// Seconds a client should wait before polling.
const RETRY_AFTER_SECS: &str = "1";
const NOT_FOUND: &str = "Quality estimation job not found.";

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/quality-evaluation", post(submit))
        .route("/v1/quality-evaluation/{job_id}", get(poll))
}

/// A validated submission.
#[derive(Debug, PartialEq)]
pub struct Submission {
    /// DeepL source code, upper case.
    pub source_language: String,
    /// DeepL target code, upper case.
    pub target_language: String,
    /// The stored request: `{"segments": [...], "glossary": {...}, "back_translation": bool}`.
    pub request: Value,
    /// How many segments.
    pub segment_count: usize,
}

fn required_string<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'a str, ApiError> {
    match obj.get(key) {
        None | Some(Value::Null) => Err(ApiError::bad(format!("{path} is required."))),
        Some(Value::String(s)) if s.trim().is_empty() => {
            Err(ApiError::bad(format!("{path} is required.")))
        }
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(ApiError::bad(format!("{path} must be a string."))),
    }
}

/// Validates a submission body; every violation is a 400 naming the field.
pub fn validate(body: &Value) -> Result<Submission, ApiError> {
    let obj = body
        .as_object()
        .ok_or_else(|| ApiError::bad("The request body must be a JSON object."))?;
    let meta = match obj.get("metadata") {
        None | Some(Value::Null) => return Err(ApiError::bad("metadata is required.")),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(ApiError::bad("metadata must be an object.")),
    };
    let source = required_string(meta, "source_language", "metadata.source_language")?;
    let target = required_string(meta, "target_language", "metadata.target_language")?;
    let src = lang::parse_source(source).map_err(|_| {
        ApiError::bad(format!(
            "metadata.source_language '{source}' is not supported."
        ))
    })?;
    let tgt = lang::parse_target(target).map_err(|_| {
        ApiError::bad(format!(
            "metadata.target_language '{target}' is not supported."
        ))
    })?;
    if src.base == tgt.base {
        return Err(ApiError::bad(format!(
            "The combination of metadata.source_language '{source}' and metadata.target_language '{target}' is not supported: they are the same language."
        )));
    }
    let mut glossary = Map::new();
    match meta.get("glossary") {
        None | Some(Value::Null) => {}
        Some(Value::Object(g)) => {
            for (k, v) in g {
                match v {
                    Value::String(t) if !k.trim().is_empty() && !t.trim().is_empty() => {
                        glossary.insert(k.clone(), Value::String(t.clone()));
                    }
                    _ => {
                        return Err(ApiError::bad(format!(
                            "metadata.glossary['{k}'] must be a non-empty string (the required target term)."
                        )));
                    }
                }
            }
        }
        Some(_) => {
            return Err(ApiError::bad(
                "metadata.glossary must be an object mapping source terms to target terms.",
            ));
        }
    }
    let back_translation = match meta.get("back_translation") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(ApiError::bad(
                "metadata.back_translation must be a boolean.",
            ));
        }
    };
    let segments = match obj.get("segments") {
        None | Some(Value::Null) => return Err(ApiError::bad("segments is required.")),
        Some(Value::Array(a)) => a,
        Some(_) => return Err(ApiError::bad("segments must be an array.")),
    };
    if segments.is_empty() {
        return Err(ApiError::bad("segments must contain at least 1 segment."));
    }
    if segments.len() > MAX_SEGMENTS {
        return Err(ApiError::bad(format!(
            "segments must contain at most {MAX_SEGMENTS} entries (got {}).",
            segments.len()
        )));
    }
    let mut clean = Vec::with_capacity(segments.len());
    for (i, seg) in segments.iter().enumerate() {
        let seg = seg
            .as_object()
            .ok_or_else(|| ApiError::bad(format!("segments[{i}] must be an object.")))?;
        let mut pair = Map::new();
        for field in ["source", "target"] {
            let path = format!("segments[{i}].{field}");
            let text = required_string(seg, field, &path)?;
            let n = text.chars().count();
            if n > MAX_SEGMENT_CHARS {
                return Err(ApiError::bad(format!(
                    "{path} exceeds {MAX_SEGMENT_CHARS} characters (has {n})."
                )));
            }
            pair.insert(field.to_owned(), Value::String(text.to_owned()));
        }
        clean.push(Value::Object(pair));
    }
    Ok(Submission {
        source_language: source.trim().to_ascii_uppercase(),
        target_language: target.trim().to_ascii_uppercase(),
        segment_count: clean.len(),
        request: json!({
            "segments": clean,
            "glossary": glossary,
            "back_translation": back_translation,
        }),
    })
}

fn retry_after(mut res: Response) -> Response {
    res.headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static(RETRY_AFTER_SECS));
    res
}

async fn submit(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Extension(TraceId(trace_id)): Extension<TraceId>,
    JsonBody(body): EvaluationBody,
) -> Result<Response, ApiError> {
    let sub = validate(&body)?;
    if sub.request["back_translation"] == Value::Bool(true)
        && let Err(e) = state
            .translator
            .route(&sub.target_language, &sub.source_language)
    {
        return Err(ApiError::bad(format!(
            "metadata.back_translation is not available for this pair: {e}"
        )));
    }
    let id = Uuid::new_v4();
    let job_id = queue::new_job_id();
    let row = NewEvaluation {
        id,
        organization_id: key.organization_id,
        api_key_id: key.key_id.clone(),
        source_lang: sub.source_language,
        target_lang: sub.target_language,
        request: Some(sub.request),
        document_id: None,
        segment_count: i32::try_from(sub.segment_count).unwrap_or(i32::MAX),
        job_id: Some(job_id.clone()),
        trace_id: trace_id.clone(),
    };
    let job = queue::EvaluateQuality {
        evaluation_id: id,
        trace_id,
    };
    let mut tx = state.enqueuer.begin().await?;
    quality::insert(&mut tx, &row).await?;
    queue::enqueue(
        &mut tx,
        queue::EVALUATE_QUALITY,
        &job_id,
        &job,
        queue::EVALUATE_QUALITY_MAX_ATTEMPTS,
        &format!("quality:{id}"),
    )
    .await?;
    tx.commit().await?;
    state.enqueuer.committed(queue::EVALUATE_QUALITY).await;
    tracing::info!(evaluation_id = %id, job_id = %job_id, segments = sub.segment_count, "quality evaluation queued");
    Ok(retry_after(
        (
            StatusCode::ACCEPTED,
            Json(json!({
                "job_id": id,
                "poll_url": format!("/v1/quality-evaluation/{id}"),
            })),
        )
            .into_response(),
    ))
}

/// The wire answer for an evaluation in its current state (shared with documents).
pub async fn answer(state: &AppState, e: &quality::Evaluation) -> Result<Response, ApiError> {
    match e.status.as_str() {
        status::DONE => {
            let object = e
                .report_object
                .as_deref()
                .ok_or_else(|| ApiError::Internal(format!("evaluation {} has no report", e.id)))?;
            let report = state.objects.get(object).await?;
            let mut report: Map<String, Value> = serde_json::from_slice(&report)
                .map_err(|err| ApiError::failed("reading a stored evaluation report", err))?;
            report.insert("job_id".to_owned(), json!(e.id));
            report.insert("status".to_owned(), json!("done"));
            Ok(Json(Value::Object(report)).into_response())
        }
        status::ERROR => Ok(Json(json!({
            "job_id": e.id,
            "status": "error",
            "error": {
                "code": "evaluation_failed",
                "message": e.error_message.clone().unwrap_or_else(|| "The evaluation failed.".to_owned()),
            },
        }))
        .into_response()),
        _ => Ok(retry_after(
            (
                StatusCode::ACCEPTED,
                Json(json!({ "job_id": e.id, "status": "processing" })),
            )
                .into_response(),
        )),
    }
}

async fn poll(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(job_id): Path<String>,
) -> Result<Response, ApiError> {
    let id = Uuid::parse_str(job_id.trim())
        .map_err(|_| ApiError::bad("job_id must be a valid UUID."))?;
    let e = quality::get_for_org(&state.db, id, key.organization_id)
        .await?
        .ok_or_else(|| ApiError::NotFound(NOT_FOUND.to_owned()))?;
    answer(&state, &e).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(segments: Value) -> Value {
        json!({"metadata": {"source_language": "en", "target_language": "es"}, "segments": segments})
    }

    fn msg(v: Value) -> String {
        match validate(&v) {
            Err(ApiError::BadRequest(m)) => m,
            other => panic!("expected 400, got {other:?}"),
        }
    }

    #[test]
    fn every_violation_names_its_field() {
        assert_eq!(msg(json!({"segments": []})), "metadata is required.");
        assert_eq!(
            msg(json!({"metadata": {"target_language": "es"}, "segments": []})),
            "metadata.source_language is required."
        );
        assert_eq!(
            msg(json!({"metadata": {"source_language": "en"}, "segments": []})),
            "metadata.target_language is required."
        );
        assert!(msg(json!({"metadata": {"source_language": "xx", "target_language": "es"}, "segments": []})).contains("metadata.source_language 'xx' is not supported"));
        assert!(msg(json!({"metadata": {"source_language": "en", "target_language": "en-gb"}, "segments": []})).contains("same language"));
        assert_eq!(
            msg(json!({"metadata": {"source_language": "en", "target_language": "es"}})),
            "segments is required."
        );
        assert_eq!(
            msg(body(json!([]))),
            "segments must contain at least 1 segment."
        );
        let many: Vec<Value> = (0..501)
            .map(|_| json!({"source": "a", "target": "b"}))
            .collect();
        assert!(msg(body(Value::Array(many))).starts_with("segments must contain at most 500"));
        assert_eq!(
            msg(body(
                json!([{"source": "a", "target": "b"}, {"source": "a"}])
            )),
            "segments[1].target is required."
        );
        assert_eq!(
            msg(body(json!([{"target": "b"}]))),
            "segments[0].source is required."
        );
        let long = "x".repeat(10_001);
        assert!(
            msg(body(json!([{"source": long, "target": "b"}])))
                .starts_with("segments[0].source exceeds 10000 characters")
        );
        let ok = validate(&body(
            json!([{"source": "ñ".repeat(10_000), "target": "b"}]),
        ))
        .unwrap();
        assert_eq!(ok.segment_count, 1);
        assert_eq!(ok.source_language, "EN");
    }
}
