//! TMX import and export jobs of translation memories:
//!
//! * `POST /v3/translation_memories/import` `{source_file: {file_name,
//!   content_type?, content_length}, parameters: {display_name?}}` → 202
//!   `{job_id, upload_url, expires_at}`; the job is `awaiting_input`.
//! * `PUT {upload_url}` (signed; no key needed) with the TMX as the body: the
//!   body is streamed into the object store (multipart), then one transaction
//!   moves the job to `processing` and enqueues it on `import-tmx`.
//! * `POST /v3/translation_memories/{id}/export` → 202 `{job_id, parameters:
//!   {translation_memory_id}}`, enqueued on `export-tmx` at once.
//! * `GET /v3/translation_memories/jobs/{job_id}` → the job, with exactly one
//!   result: `awaiting_input`, `processing`, `completed` (import:
//!   `translation_memory_id`, `skipped_segment_count`, `skipped_segments`;
//!   export: `download_url`, `expires_at`), `failed` (`error.message`) or
//!   `expired`.
//! * `GET {download_url}` (signed) → the exported TMX, streamed.

use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Extension, Json, Router};
use chrono::{Duration, Utc};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tolk_storage::queue;
use tolk_storage::translation_memories::jobs::{self, NewTmJob, TmJob, operation, status};
use tolk_storage::voice_jobs::{new_secret, sign, verify};
use uuid::Uuid;

use super::{load, time};
use crate::auth::AuthKey;
use crate::body::{JobBody, JsonBody};
use crate::trace_id::TraceId;
use crate::{ApiError, AppState};

/// Largest TMX file accepted (1 GiB, the interface description's limit).
pub const MAX_TMX_BYTES: i64 = 1 << 30;
/// Longest file name.
const MAX_FILE_NAME_CHARS: usize = 100;
/// Longest content type.
const MAX_CONTENT_TYPE_CHARS: usize = 127;
/// Longest display name, in UTF-8 bytes.
const MAX_DISPLAY_NAME_BYTES: usize = 1024;
/// Content types accepted for the upload.
const CONTENT_TYPES: [&str; 3] = ["application/xml", "text/xml", "application/x-tmx+xml"];
/// How long an import waits for its file.
const UPLOAD_MINUTES: i64 = 60;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v3/translation_memories/import", post(create_import))
        .route("/v3/translation_memories/{id}/export", post(create_export))
        .route("/v3/translation_memories/jobs/{job_id}", get(status_of))
        .route(
            "/v3/translation_memories/jobs/{job_id}/upload",
            put(upload).layer(DefaultBodyLimit::disable()),
        )
        .route(
            "/v3/translation_memories/jobs/{job_id}/download",
            get(download),
        )
}

fn job_not_found() -> ApiError {
    ApiError::NotFound("Translation memory job not found.".to_owned())
}

async fn load_job(state: &AppState, job_id: &str) -> Result<TmJob, ApiError> {
    let id = Uuid::parse_str(job_id).map_err(|_| job_not_found())?;
    jobs::get(&state.db, id).await?.ok_or_else(job_not_found)
}

/// A validated import request.
struct ImportRequest {
    file_name: String,
    content_type: Option<String>,
    content_length: i64,
    display_name: Option<String>,
}

fn parse_import(body: &Value) -> Result<ImportRequest, ApiError> {
    let obj = body
        .as_object()
        .ok_or_else(|| ApiError::bad("The body must be a JSON object."))?;
    let file = obj
        .get("source_file")
        .and_then(Value::as_object)
        .ok_or_else(|| ApiError::bad("source_file: Value is required and must be an object."))?;
    let file_name = file
        .get("file_name")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| ApiError::bad("source_file.file_name: Value must be a non-empty string."))?;
    if file_name.chars().count() > MAX_FILE_NAME_CHARS {
        return Err(ApiError::bad(format!(
            "source_file.file_name: at most {MAX_FILE_NAME_CHARS} characters."
        )));
    }
    let content_type = match file.get("content_type") {
        None | Some(Value::Null) => None,
        Some(Value::String(ct)) => {
            if ct.chars().count() > MAX_CONTENT_TYPE_CHARS {
                return Err(ApiError::bad(format!(
                    "source_file.content_type: at most {MAX_CONTENT_TYPE_CHARS} characters."
                )));
            }
            let essence = ct.split(';').next().unwrap_or_default().trim();
            if !CONTENT_TYPES
                .iter()
                .any(|c| c.eq_ignore_ascii_case(essence))
            {
                return Err(ApiError::bad(format!(
                    "source_file.content_type: TMX is the only supported format; leave it unset or use application/xml (got '{ct}')."
                )));
            }
            Some(ct.clone())
        }
        Some(_) => {
            return Err(ApiError::bad(
                "source_file.content_type: Value must be a string.",
            ));
        }
    };
    let content_length = file
        .get("content_length")
        .and_then(Value::as_i64)
        .filter(|n| (1..=MAX_TMX_BYTES).contains(n))
        .ok_or_else(|| {
            ApiError::bad(format!(
                "source_file.content_length: Value must be an integer from 1 to {MAX_TMX_BYTES}."
            ))
        })?;
    let display_name = match obj.get("parameters") {
        None | Some(Value::Null) => None,
        Some(Value::Object(p)) => match p.get("display_name") {
            None | Some(Value::Null) => None,
            Some(Value::String(n)) if n.trim().is_empty() => {
                return Err(ApiError::bad(
                    "parameters.display_name: Value must not be empty.",
                ));
            }
            Some(Value::String(n)) if n.len() > MAX_DISPLAY_NAME_BYTES => {
                return Err(ApiError::bad(format!(
                    "parameters.display_name: at most {MAX_DISPLAY_NAME_BYTES} bytes."
                )));
            }
            Some(Value::String(n)) => Some(n.trim().to_owned()),
            Some(_) => {
                return Err(ApiError::bad(
                    "parameters.display_name: Value must be a string.",
                ));
            }
        },
        Some(_) => return Err(ApiError::bad("parameters: Value must be an object.")),
    };
    Ok(ImportRequest {
        file_name: file_name.to_owned(),
        content_type,
        content_length,
        display_name,
    })
}

async fn create_import(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Extension(TraceId(trace_id)): Extension<TraceId>,
    headers: HeaderMap,
    JsonBody(body): JobBody,
) -> Result<Response, ApiError> {
    let req = parse_import(&body)?;
    let id = Uuid::new_v4();
    let secret = new_secret();
    let expires = Utc::now() + Duration::minutes(UPLOAD_MINUTES);
    let job = NewTmJob {
        id,
        organization_id: key.organization_id,
        api_key_id: key.key_id.clone(),
        operation: operation::IMPORT,
        status: status::AWAITING_INPUT,
        translation_memory_id: Uuid::new_v4(),
        display_name: req.display_name,
        secret: secret.clone(),
        file_name: Some(req.file_name),
        content_type: req.content_type,
        content_length: Some(req.content_length),
        object: format!("translation_memories/imports/{id}/source.tmx"),
        trace_id,
        expires_at: Some(expires),
        queue_job_id: None,
    };
    let mut conn = state.db.acquire().await?;
    jobs::insert(&mut conn, &job).await?;
    let signature = sign(&secret, "upload", expires);
    let upload_url = format!(
        "{}/v3/translation_memories/jobs/{id}/upload?signature={signature}",
        crate::requests::public_base_url(&state, &headers)
    );
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({"job_id": id, "upload_url": upload_url, "expires_at": time(expires)})),
    )
        .into_response())
}

const BAD_SIGNATURE: &str = "The URL's signature is missing, wrong or expired.";

fn signature(query: &[(String, String)]) -> Option<&str> {
    query
        .iter()
        .find(|(k, _)| k == "signature")
        .map(|(_, v)| v.as_str())
}

async fn upload(
    State(state): State<AppState>,
    Path(job_id): Path<String>,
    Query(query): Query<Vec<(String, String)>>,
    Extension(TraceId(trace_id)): Extension<TraceId>,
    body: Body,
) -> Result<Response, ApiError> {
    let job = load_job(&state, &job_id).await?;
    let sig = signature(&query).ok_or_else(|| ApiError::Forbidden(BAD_SIGNATURE.to_owned()))?;
    if job.operation != operation::IMPORT || !verify(&job.secret, "upload", sig, Utc::now()) {
        return Err(ApiError::Forbidden(BAD_SIGNATURE.to_owned()));
    }
    if job.status != status::AWAITING_INPUT {
        return Err(ApiError::bad(
            "The file of this import was already uploaded.",
        ));
    }
    let declared = job.content_length.unwrap_or(MAX_TMX_BYTES);
    let mut writer = state.objects.writer(&job.object);
    let mut stream = body.into_data_stream();
    let mut size: i64 = 0;
    let outcome: Result<(), ApiError> = async {
        while let Some(chunk) = stream.next().await {
            let chunk =
                chunk.map_err(|e| ApiError::bad(format!("The upload was interrupted: {e}")))?;
            size += chunk.len() as i64;
            if size > declared {
                return Err(ApiError::TooLarge(format!(
                    "The upload is larger than the declared content_length ({declared} bytes)."
                )));
            }
            writer
                .write_all(&chunk)
                .await
                .map_err(|e| ApiError::failed("storing the upload", e))?;
        }
        if size == 0 {
            return Err(ApiError::bad("The upload is empty."));
        }
        writer
            .shutdown()
            .await
            .map_err(|e| ApiError::failed("storing the upload", e))
    }
    .await;
    if let Err(e) = outcome {
        if let Err(abort) = writer.abort().await {
            tracing::warn!(error = %abort, "could not abort a partial TMX upload");
        }
        return Err(e);
    }
    let queue_job = queue::new_job_id();
    let mut tx = state.enqueuer.begin().await?;
    if !jobs::mark_uploaded(&mut tx, job.id, &queue_job, size).await? {
        return Err(ApiError::bad(
            "The file of this import was already uploaded, or the upload period is over.",
        ));
    }
    queue::enqueue(
        &mut tx,
        queue::IMPORT_TMX,
        &queue_job,
        &queue::TmxJob {
            job_id: job.id,
            trace_id,
        },
        queue::TMX_MAX_ATTEMPTS,
        &job.id.to_string(),
    )
    .await?;
    tx.commit().await?;
    state.enqueuer.committed(queue::IMPORT_TMX).await;
    Ok(StatusCode::OK.into_response())
}

async fn create_export(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Extension(TraceId(trace_id)): Extension<TraceId>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let memory = load(&state, key.organization_id, &id).await?;
    let job_id = Uuid::new_v4();
    let queue_job = queue::new_job_id();
    let job = NewTmJob {
        id: job_id,
        organization_id: key.organization_id,
        api_key_id: key.key_id.clone(),
        operation: operation::EXPORT,
        status: status::PROCESSING,
        translation_memory_id: memory.id,
        display_name: None,
        secret: new_secret(),
        file_name: None,
        content_type: None,
        content_length: None,
        object: format!("translation_memories/exports/{job_id}/export.tmx"),
        trace_id: trace_id.clone(),
        expires_at: None,
        queue_job_id: Some(queue_job.clone()),
    };
    let mut tx = state.enqueuer.begin().await?;
    jobs::insert(&mut tx, &job).await?;
    queue::enqueue(
        &mut tx,
        queue::EXPORT_TMX,
        &queue_job,
        &queue::TmxJob { job_id, trace_id },
        queue::TMX_MAX_ATTEMPTS,
        &job_id.to_string(),
    )
    .await?;
    tx.commit().await?;
    state.enqueuer.committed(queue::EXPORT_TMX).await;
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({"job_id": job_id, "parameters": {"translation_memory_id": memory.id}})),
    )
        .into_response())
}

async fn status_of(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(job_id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let job = load_job(&state, &job_id).await?;
    if job.organization_id != key.organization_id {
        return Err(job_not_found());
    }
    let now = Utc::now();
    let st = job.status_at(now);
    let mut result = json!({"status": st});
    match st {
        status::AWAITING_INPUT => {
            result["status_metadata"] = json!({"required_action": "upload_file"});
        }
        status::FAILED => {
            result["error"] = json!({"message": job.error_message.clone().unwrap_or_default()});
        }
        status::COMPLETED if job.operation == operation::IMPORT => {
            result["translation_memory_id"] = json!(job.translation_memory_id);
            result["skipped_segment_count"] = json!(job.skipped_segment_count.unwrap_or(0));
            if let Some(s) = &job.skipped {
                result["skipped_segments"] = s.clone();
            }
        }
        status::COMPLETED => {
            let until = job.expires_at.unwrap_or(now);
            let sig = sign(&job.secret, "download", until);
            result["download_url"] = json!(format!(
                "{}/v3/translation_memories/jobs/{}/download?signature={sig}",
                crate::requests::public_base_url(&state, &headers),
                job.id
            ));
            result["expires_at"] = json!(time(until));
        }
        _ => {}
    }
    let mut out = json!({
        "job_id": job.id,
        "product": "translation_memory",
        "operation": job.operation,
        "creation_time": time(job.created_at),
        "updated_time": time(job.updated_at),
        "results": [result],
    });
    if job.operation == operation::IMPORT {
        let mut params = json!({});
        if let Some(n) = &job.display_name {
            params["display_name"] = json!(n);
        }
        out["parameters"] = params;
        let mut file = json!({});
        if let Some(n) = &job.file_name {
            file["file_name"] = json!(n);
        }
        if let Some(ct) = &job.content_type {
            file["content_type"] = json!(ct);
        }
        if let Some(l) = job.content_length {
            file["content_length"] = json!(l);
        }
        out["source_file"] = file;
    } else {
        out["parameters"] = json!({"translation_memory_id": job.translation_memory_id});
    }
    Ok(Json(out).into_response())
}

async fn download(
    State(state): State<AppState>,
    Path(job_id): Path<String>,
    Query(query): Query<Vec<(String, String)>>,
) -> Result<Response, ApiError> {
    let job = load_job(&state, &job_id).await?;
    let sig = signature(&query).ok_or_else(|| ApiError::Forbidden(BAD_SIGNATURE.to_owned()))?;
    if job.operation != operation::EXPORT || !verify(&job.secret, "download", sig, Utc::now()) {
        return Err(ApiError::Forbidden(BAD_SIGNATURE.to_owned()));
    }
    if job.status_at(Utc::now()) != status::COMPLETED {
        return Err(ApiError::NotFound(
            "This export has no file (not completed, or expired).".to_owned(),
        ));
    }
    let stream = state.objects.stream(&job.object).await?;
    let mut res = Body::from_stream(stream).into_response();
    res.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/xml; charset=utf-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&format!(
        "attachment; filename=\"{}.tmx\"",
        job.translation_memory_id
    )) {
        res.headers_mut().insert(CONTENT_DISPOSITION, v);
    }
    Ok(res)
}
