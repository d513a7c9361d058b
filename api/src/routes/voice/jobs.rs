//! Voice translation jobs (alpha in the DeepL interface description):
//!
//! * `POST /v1/jobs/voice/translate` (DeepL-Auth-Key) → 201 `{job_id,
//!   upload_url, signature}`; the job is `pending` until its audio arrives.
//!   Beside `parameters.source_language`, Tolk reads
//!   `parameters.spoken_terms_id` (as the realtime interface names it): the
//!   collection's terms for the source language bias recognition.
//! * `PUT {upload_url}` with `Authorization: DeepL-Signature {signature}` (or
//!   `?signature=`) and the audio as the body: stored in the object store
//!   (local folder or S3), then one transaction marks the job `uploaded` and
//!   enqueues it for the workers.
//! * `GET /v1/jobs/voice/translate/{job_id}` → status with one result per
//!   target, in request order; complete results carry `download_url` and a
//!   short-lived `signature`.
//! * `GET {download_url}` with `Authorization: DeepL-Signature {signature}`
//!   (or `?signature=`) → the result.

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Extension, Json, Router};
use chrono::{Duration, SecondsFormat, Utc};
use serde_json::{Value, json};
use tolk_storage::limits::Meter;
use tolk_storage::objects::Presign;
use tolk_storage::queue;
use tolk_storage::spoken_terms;
use tolk_storage::voice_jobs::{self, NewVoiceJob, Target, VoiceJob, status};
use tolk_voice::voices;
use uuid::Uuid;

use crate::auth::AuthKey;
use crate::body::{JobBody, JsonBody};
use crate::trace_id::TraceId;
use crate::{ApiError, AppState};

/// Output types this server produces.
pub const OUTPUT_TYPES: [&str; 3] = [
    "text/plain",
    "audio/pcm;encoding=s16le;rate=16000",
    "audio/pcm;encoding=s16le;rate=24000",
];

/// Output types of the interface description this server does not produce.
const OTHER_OUTPUT_TYPES: [&str; 15] = [
    "application/x-subrip",
    "audio/opus",
    "audio/flac",
    "audio/pcm;encoding=ulaw;rate=8000",
    "audio/pcm;encoding=alaw;rate=8000",
    "audio/x-matroska;codecs=aac",
    "audio/x-matroska;codecs=flac",
    "audio/x-matroska;codecs=opus",
    "audio/x-matroska;codecs=pcm_s16le;rate=16000",
    "audio/x-matroska;codecs=pcm_s16le;rate=24000",
    "video/mp2t;codecs=aac",
    "video/mp2t;codecs=opus",
    "audio/ogg;codecs=flac",
    "audio/ogg;codecs=opus",
    "audio/webm;codecs=opus",
];

/// Source content types accepted (the interface description's list, minus
/// the two containers symphonia is not built for here).
const SOURCE_TYPES: [&str; 4] = ["audio/mpeg", "audio/wav", "audio/ogg", "audio/flac"];

/// Most targets per job.
const MAX_TARGETS: usize = 10;
/// How long upload and download signatures stay valid.
const SIGNATURE_TTL_MINUTES: i64 = 60;

fn signature_ttl() -> std::time::Duration {
    std::time::Duration::from_secs(SIGNATURE_TTL_MINUTES as u64 * 60)
}

/// Routes of this module; `upload_limit` bounds the audio upload.
pub fn router(upload_limit: usize) -> Router<AppState> {
    Router::new()
        .route("/v1/jobs/voice/translate", post(create))
        .route("/v1/jobs/voice/translate/{job_id}", get(status_of))
        .route(
            "/v1/jobs/voice/translate/{job_id}/upload",
            put(upload).layer(DefaultBodyLimit::max(upload_limit)),
        )
        .route(
            "/v1/jobs/voice/translate/{job_id}/results/{index}",
            get(download),
        )
}

fn wants_signed_url(query: &[(String, String)]) -> bool {
    query
        .iter()
        .any(|(k, v)| k == "include" && v.split(',').any(|p| p.trim() == "signed_url"))
}

/// A validated create request.
struct CreateRequest {
    name: String,
    content_type: String,
    length: i64,
    source_language: Option<String>,
    /// `parameters.spoken_terms_id`, with the language recognised.
    spoken_terms: Option<(Uuid, String)>,
    targets: Vec<Target>,
}

/// Validates the create body.
fn parse_create(state: &AppState, body: &Value) -> Result<CreateRequest, ApiError> {
    let obj = body
        .as_object()
        .ok_or_else(|| ApiError::BadRequest("The body must be a JSON object.".to_owned()))?;
    let file = obj
        .get("source_file")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            ApiError::bad_at("/source_file", "Value is required and must be an object")
        })?;
    let name = file
        .get("name")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| ApiError::bad_at("/source_file/name", "Value must be a non-empty string"))?;
    let content_type = file
        .get("content_type")
        .and_then(Value::as_str)
        .ok_or_else(|| ApiError::bad_at("/source_file/content_type", "Value is required"))?;
    if !SOURCE_TYPES.contains(&content_type) {
        return Err(ApiError::bad_at(
            "/source_file/content_type",
            &format!("Value is not valid; one of {}", SOURCE_TYPES.join(", ")),
        ));
    }
    let length = file
        .get("content_length")
        .and_then(Value::as_i64)
        .filter(|n| (1..=1_073_741_824).contains(n))
        .ok_or_else(|| {
            ApiError::bad_at(
                "/source_file/content_length",
                "Value must be an integer from 1 to 1073741824",
            )
        })?;
    if length as u64 > state.voice.max_upload_bytes as u64 {
        // 400, the one client error the description documents here.
        return Err(ApiError::bad_at(
            "/source_file/content_length",
            &format!(
                "this server accepts at most {} bytes",
                state.voice.max_upload_bytes
            ),
        ));
    }
    let source_language = match obj.get("parameters").and_then(|p| p.get("source_language")) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.to_ascii_uppercase()),
        Some(_) => {
            return Err(ApiError::bad_at(
                "/parameters/source_language",
                "Value must be a string",
            ));
        }
    };
    let spoken_terms_id = match obj.get("parameters").and_then(|p| p.get("spoken_terms_id")) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(Uuid::parse_str(s).map_err(|_| {
            ApiError::bad_at(
                "/parameters/spoken_terms_id",
                "Value must be the id of spoken terms",
            )
        })?),
        Some(_) => {
            return Err(ApiError::bad_at(
                "/parameters/spoken_terms_id",
                "Value must be a string",
            ));
        }
    };
    let recognised = source_language
        .as_deref()
        .unwrap_or(tolk_voice::asr::DEFAULT_LANGUAGE);
    if !state.voice.recognizer.supports(recognised) {
        return Err(ApiError::bad_at(
            "/parameters/source_language",
            &format!(
                "speech recognition of {recognised} is not available on this server (supported: {})",
                state.voice.recognizer.languages().join(", ")
            ),
        ));
    }
    let targets = obj
        .get("targets")
        .and_then(Value::as_array)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| ApiError::bad_at("/targets", "Value must be a non-empty array"))?;
    if targets.len() > MAX_TARGETS {
        return Err(ApiError::bad_at(
            "/targets",
            &format!("at most {MAX_TARGETS} targets"),
        ));
    }
    let out = targets
        .iter()
        .enumerate()
        .map(|(i, t)| parse_target(state, i, t, recognised))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(CreateRequest {
        name: name.trim().to_owned(),
        content_type: content_type.to_owned(),
        length,
        spoken_terms: spoken_terms_id.map(|id| (id, recognised.to_owned())),
        source_language,
        targets: out,
    })
}

/// Target `i` of a create body: a language the recognised speech can be
/// translated into and an output type this server produces (with a voice
/// for audio).
fn parse_target(
    state: &AppState,
    i: usize,
    t: &Value,
    recognised: &str,
) -> Result<Target, ApiError> {
    let language = t
        .get("language")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| ApiError::bad_at(&format!("/targets/{i}/language"), "Value is required"))?;
    let kind = t
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| ApiError::bad_at(&format!("/targets/{i}/type"), "Value is required"))?;
    if OTHER_OUTPUT_TYPES.contains(&kind) {
        return Err(ApiError::bad_at(
            &format!("/targets/{i}/type"),
            &format!(
                "{kind} is not produced by this server; use one of {}",
                OUTPUT_TYPES.join(", ")
            ),
        ));
    }
    if !OUTPUT_TYPES.contains(&kind) {
        return Err(ApiError::bad_at(
            &format!("/targets/{i}/type"),
            "Value is not valid",
        ));
    }
    let same = tolk_lang::same_language(language, recognised);
    if !same {
        state
            .translator
            .route(recognised, language)
            .map_err(|e| ApiError::bad_at(&format!("/targets/{i}/language"), &e.to_string()))?;
    }
    if kind != "text/plain" && voices::tts_voice_for_language(language).is_none() {
        return Err(ApiError::bad_at(
            &format!("/targets/{i}/language"),
            &format!("no voice speaks {language}; ask for text/plain"),
        ));
    }
    Ok(Target {
        language: language.to_ascii_uppercase(),
        kind: kind.to_owned(),
    })
}

/// The terms of the spoken terms `id` (of this organization) for the
/// recognised language `language` (none when the collection has no list for
/// it), and the collection's keyword-spotting threshold, when it sets one.
async fn spoken_terms_for(
    state: &AppState,
    organization_id: Uuid,
    id: Uuid,
    language: &str,
) -> Result<(Vec<String>, Option<f64>), ApiError> {
    let found = spoken_terms::get(&state.db, organization_id, id)
        .await?
        .ok_or_else(|| {
            ApiError::bad_at(
                "/parameters/spoken_terms_id",
                "no spoken terms with this id",
            )
        })?;
    let lang = tolk_lang::base(language);
    let threshold = found.keyword_threshold;
    let terms = found
        .lists
        .into_iter()
        .find(|l| l.lang == lang)
        .map(|l| l.terms)
        .unwrap_or_default();
    Ok((terms, threshold))
}

async fn create(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Extension(TraceId(trace_id)): Extension<TraceId>,
    Query(query): Query<Vec<(String, String)>>,
    headers: HeaderMap,
    JsonBody(body): JobBody,
) -> Result<Response, ApiError> {
    let CreateRequest {
        name,
        content_type,
        length,
        source_language,
        spoken_terms,
        targets,
    } = parse_create(&state, &body)?;
    // Refused before anything is stored once the key's speech-to-text limit is
    // reached: 403, the refusal this operation documents (it has no 456).
    crate::limits::refuse_if_reached(&state, &key, Meter::SpeechToText)
        .await
        .map_err(|e| match e {
            ApiError::QuotaExceeded(message) => ApiError::Forbidden(message),
            other => other,
        })?;
    let spoken_terms_id = spoken_terms.as_ref().map(|(id, _)| *id);
    let (spoken_terms, keyword_threshold) = match spoken_terms {
        Some((id, language)) => {
            spoken_terms_for(&state, key.organization_id, id, &language).await?
        }
        None => (Vec::new(), None),
    };
    let id = Uuid::new_v4();
    let secret = voice_jobs::new_secret();
    let expires = Utc::now() + Duration::minutes(SIGNATURE_TTL_MINUTES);
    let job = NewVoiceJob {
        id,
        organization_id: key.organization_id,
        api_key_id: key.key_id.clone(),
        secret: secret.clone(),
        source_name: name,
        source_content_type: content_type,
        source_content_length: length,
        source_language,
        targets,
        spoken_terms,
        spoken_terms_id,
        keyword_threshold,
        source_object: format!("voice/{id}/source"),
        trace_id,
        upload_expires_at: expires,
    };
    let mut conn = state.db.acquire().await?;
    voice_jobs::insert(&mut conn, &job).await?;
    let signature = voice_jobs::sign(&secret, "upload", expires);
    let upload_url = format!(
        "{}/v1/jobs/voice/translate/{id}/upload",
        crate::requests::public_base_url(&state, &headers)
    );
    let mut out = json!({"job_id": id, "upload_url": upload_url, "signature": signature});
    if wants_signed_url(&query) {
        // With an S3 store: a presigned PUT straight to the bucket; the job
        // starts when a status call finds the object there.
        let direct = state
            .objects
            .presigned_url(Presign::Put, &job.source_object, signature_ttl())
            .await?;
        out["signed_upload_url"] =
            json!(direct.unwrap_or_else(|| format!("{upload_url}?signature={signature}")));
    }
    Ok((StatusCode::CREATED, Json(out)).into_response())
}

/// The signature of a request: `Authorization: DeepL-Signature …` or `?signature=`.
fn presented_signature(headers: &HeaderMap, query: &[(String, String)]) -> Option<String> {
    headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("DeepL-Signature "))
        .map(str::to_owned)
        .or_else(|| {
            query
                .iter()
                .find(|(k, _)| k == "signature")
                .map(|(_, v)| v.clone())
        })
}

const BAD_SIGNATURE: &str =
    "Send the job's signature as Authorization: DeepL-Signature {signature}; it may have expired.";

async fn load(state: &AppState, job_id: &str) -> Result<VoiceJob, ApiError> {
    let id = Uuid::parse_str(job_id)
        .map_err(|_| ApiError::NotFound("Voice job not found.".to_owned()))?;
    voice_jobs::get(&state.db, id)
        .await?
        .ok_or_else(|| ApiError::NotFound("Voice job not found.".to_owned()))
}

async fn upload(
    State(state): State<AppState>,
    Path(job_id): Path<String>,
    Query(query): Query<Vec<(String, String)>>,
    Extension(TraceId(trace_id)): Extension<TraceId>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let job = load(&state, &job_id).await?;
    let sig = presented_signature(&headers, &query)
        .ok_or_else(|| ApiError::Forbidden(BAD_SIGNATURE.to_owned()))?;
    if !voice_jobs::verify(&job.secret, "upload", &sig, Utc::now()) {
        return Err(ApiError::Forbidden(BAD_SIGNATURE.to_owned()));
    }
    let data =
        body.map_err(|e| crate::body::bytes_error(e, "The upload", state.voice.max_upload_bytes))?;
    if job.status != status::PENDING {
        return Err(ApiError::BadRequest(
            "The audio of this job was already uploaded.".to_owned(),
        ));
    }
    if data.is_empty() {
        return Err(ApiError::BadRequest("The upload is empty.".to_owned()));
    }
    if data.len() as i64 > job.source_content_length {
        return Err(ApiError::TooLarge(format!(
            "The upload ({} bytes) is larger than the declared content_length ({}).",
            data.len(),
            job.source_content_length
        )));
    }
    let size = data.len() as i64;
    state.objects.put(&job.source_object, data).await?;
    if !start_job(&state, &job, size, trace_id).await? {
        return Err(ApiError::BadRequest(
            "The audio of this job was already uploaded.".to_owned(),
        ));
    }
    Ok(StatusCode::OK.into_response())
}

/// One transaction: the job becomes `uploaded` and its queue job is pushed.
/// False when the job was not pending any more.
async fn start_job(
    state: &AppState,
    job: &VoiceJob,
    size: i64,
    trace_id: String,
) -> Result<bool, ApiError> {
    let queue_job = queue::new_job_id();
    let mut tx = state.enqueuer.begin().await?;
    if !voice_jobs::mark_uploaded(&mut tx, job.id, &queue_job, size).await? {
        return Ok(false);
    }
    queue::enqueue(
        &mut tx,
        queue::VOICE_TRANSLATE,
        &queue_job,
        &queue::VoiceTranslate {
            job_id: job.id,
            trace_id,
        },
        queue::VOICE_TRANSLATE_MAX_ATTEMPTS,
        &job.id.to_string(),
    )
    .await?;
    tx.commit().await?;
    state.enqueuer.committed(queue::VOICE_TRANSLATE).await;
    Ok(true)
}

/// A pending job whose audio was uploaded straight to the bucket (presigned
/// URL) is started here; returns the job as it is now.
async fn start_if_uploaded(
    state: &AppState,
    job: VoiceJob,
    trace_id: &str,
) -> Result<VoiceJob, ApiError> {
    if job.status != status::PENDING || !state.objects.can_presign() {
        return Ok(job);
    }
    let Some(size) = state.objects.size(&job.source_object).await? else {
        return Ok(job);
    };
    let size = i64::try_from(size).unwrap_or(i64::MAX);
    if size > job.source_content_length {
        voice_jobs::fail(
            &state.db,
            job.id,
            &format!(
                "The upload ({size} bytes) is larger than the declared content_length ({}).",
                job.source_content_length
            ),
        )
        .await?;
    } else {
        start_job(state, &job, size, trace_id.to_owned()).await?;
    }
    load(state, &job.id.to_string()).await
}

async fn status_of(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Extension(TraceId(trace_id)): Extension<TraceId>,
    Path(job_id): Path<String>,
    Query(query): Query<Vec<(String, String)>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let job = load(&state, &job_id).await?;
    if job.organization_id != key.organization_id {
        return Err(ApiError::NotFound("Voice job not found.".to_owned()));
    }
    let job = start_if_uploaded(&state, job, &trace_id).await?;
    let mut direct: Vec<Option<String>> = vec![None; job.targets.len()];
    if wants_signed_url(&query) && job.status == status::COMPLETE {
        for (i, r) in job.results.iter().enumerate() {
            if let (Some(object), Some(slot)) = (&r.object, direct.get_mut(i)) {
                *slot = state
                    .objects
                    .presigned_url(Presign::Get, object, signature_ttl())
                    .await?;
            }
        }
    }
    let signed = wants_signed_url(&query);
    let base = crate::requests::public_base_url(&state, &headers);
    let expires = Utc::now() + Duration::minutes(SIGNATURE_TTL_MINUTES);
    let results: Vec<Value> = (0..job.targets.len())
        .map(|i| match job.status.as_str() {
            status::COMPLETE => match job.results.get(i) {
                Some(r) if r.status == status::COMPLETE || r.status == status::DOWNLOADED => {
                    let url = format!("{base}/v1/jobs/voice/translate/{}/results/{i}", job.id);
                    let signature = voice_jobs::sign(&job.secret, &format!("download:{i}"), expires);
                    let mut v = json!({"status": r.status, "download_url": url, "signature": signature});
                    if signed {
                        let own = format!("{url}?signature={signature}");
                        let direct = direct.get(i).cloned().flatten();
                        v["signed_download_url"] = json!(direct.unwrap_or(own));
                    }
                    v
                }
                Some(r) => json!({"status": status::FAILED, "error": {"message": r.error.clone().unwrap_or_default()}}),
                None => json!({"status": status::FAILED, "error": {"message": "no result"}}),
            },
            status::FAILED => json!({"status": status::FAILED, "error": {"message": job.error_message.clone().unwrap_or_default()}}),
            other => json!({"status": other}),
        })
        .collect();
    let mut parameters = json!({});
    if let Some(l) = &job.source_language {
        parameters["source_language"] = json!(l);
    }
    if let Some(id) = job.spoken_terms_id {
        parameters["spoken_terms_id"] = json!(id);
    }
    Ok(Json(json!({
        "job_id": job.id,
        "product": "voice",
        "operation": "translate",
        "created_at": job.created_at.to_rfc3339_opts(SecondsFormat::Millis, true),
        "updated_at": job.updated_at.to_rfc3339_opts(SecondsFormat::Millis, true),
        "usage": {"storage_used": job.storage_used},
        "source_file": {
            "name": job.source_name,
            "content_type": job.source_content_type,
            "content_length": job.source_content_length,
        },
        "parameters": parameters,
        "targets": job.targets,
        "results": results,
    }))
    .into_response())
}

async fn download(
    State(state): State<AppState>,
    Path((job_id, index)): Path<(String, usize)>,
    Query(query): Query<Vec<(String, String)>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let job = load(&state, &job_id).await?;
    let sig = presented_signature(&headers, &query)
        .ok_or_else(|| ApiError::Forbidden(BAD_SIGNATURE.to_owned()))?;
    if !voice_jobs::verify(&job.secret, &format!("download:{index}"), &sig, Utc::now()) {
        return Err(ApiError::Forbidden(BAD_SIGNATURE.to_owned()));
    }
    let result = job
        .results
        .get(index)
        .filter(|_| job.status == status::COMPLETE)
        .ok_or_else(|| ApiError::NotFound("No result with this index.".to_owned()))?;
    let object = result
        .object
        .as_deref()
        .ok_or_else(|| ApiError::NotFound("This target failed; it has no result.".to_owned()))?;
    let stream = state.objects.stream(object).await?;
    voice_jobs::mark_downloaded(&state.db, job.id, index).await?;
    let mut res = Body::from_stream(stream).into_response();
    let ct = result
        .content_type
        .as_deref()
        .unwrap_or("application/octet-stream");
    if let Ok(v) = HeaderValue::from_str(ct) {
        res.headers_mut().insert(CONTENT_TYPE, v);
    }
    Ok(res)
}
