//! Document translation: upload (`POST /v2/document`), status
//! (`POST /v2/document/{document_id}`) and download
//! (`POST /v2/document/{document_id}/result`), in the DeepL wire format.

mod conversion;

use axum::body::Body;
use axum::extract::{Multipart, Path, State};
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Extension, Json, Router};
use bytes::Bytes;
use futures::StreamExt;
use serde::Serialize;
use tolk_formats::{DocumentFormat, Output};
use tolk_storage::documents::{self, NewDocument, random_upper_hex, status};
use tolk_storage::{quality, queue};

use crate::auth::AuthKey;
use crate::body::{FormOrJson, TextParams};
use crate::params::Params;
use crate::trace_id::TraceId;
use crate::{ApiError, AppState};

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v2/document", post(upload))
        .route("/v2/document/{document_id}", post(status))
        .route("/v2/document/{document_id}/result", post(result))
}

/// The fields of an upload.
#[derive(Debug, Default)]
pub(crate) struct Upload {
    file: Option<(Option<String>, Bytes)>,
    filename: Option<String>,
    target_lang: Option<String>,
    source_lang: Option<String>,
    output_format: Option<String>,
    formality: Option<String>,
    quality_evaluation: bool,
    /// `glossary_id`, if given.
    glossary_id: Option<String>,
    /// `glossary_ids`: every value, each comma-separated.
    glossary_ids: Vec<String>,
    /// `style_id`, if given.
    style_id: Option<String>,
    /// `input_conversion_options`, parsed.
    conversion: conversion::ConversionOptions,
    /// `translation_memory_id`, if given.
    translation_memory_id: Option<String>,
    /// `translation_memory_threshold`, if given.
    translation_memory_threshold: Option<String>,
    /// `enable_watermark`.
    watermark: bool,
}

/// Reads the upload form; fields DeepL documents but that change nothing
/// (`enable_beta_languages`) and unknown ones are ignored.
pub(crate) async fn read_upload(
    mut multipart: Multipart,
    limit: usize,
) -> Result<Upload, ApiError> {
    let mut up = Upload::default();
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => return Err(crate::body::multipart_error(e, "The document", limit)),
        };
        let name = field.name().unwrap_or_default().to_owned();
        if name == "file" {
            let file_name = field.file_name().map(str::to_owned);
            if file_name.as_deref().is_some_and(|n| n.contains('\0')) {
                return Err(crate::body::nul_error("file"));
            }
            let data = field
                .bytes()
                .await
                .map_err(|e| crate::body::multipart_error(e, "The document", limit))?;
            up.file = Some((file_name, data));
            continue;
        }
        let value = field
            .text()
            .await
            .map_err(|e| crate::body::multipart_error(e, "The document", limit))?;
        if value.contains('\0') {
            return Err(crate::body::nul_error(&name));
        }
        let value = value.trim().to_owned();
        match name.as_str() {
            "filename" => up.filename = Some(value),
            "target_lang" => up.target_lang = Some(value),
            "source_lang" => up.source_lang = Some(value).filter(|v| !v.is_empty()),
            "output_format" => up.output_format = Some(value).filter(|v| !v.is_empty()),
            "formality" => up.formality = Some(value),
            "translation_memory_id" => {
                up.translation_memory_id = Some(value).filter(|v| !v.is_empty())
            }
            "translation_memory_threshold" => {
                up.translation_memory_threshold = Some(value).filter(|v| !v.is_empty())
            }
            "enable_beta_languages" | "auth_key" => {}
            "enable_quality_evaluation" => up.quality_evaluation = is_true(&value),
            "glossary_id" if !value.is_empty() && up.glossary_id.is_some() => {
                return Err(ApiError::BadRequest(
                    "Parameter 'glossary_id' may be given only once.".to_owned(),
                ));
            }
            "glossary_id" if !value.is_empty() => up.glossary_id = Some(value),
            "glossary_ids" => up.glossary_ids.extend(
                value
                    .split(',')
                    .map(|v| v.trim().to_owned())
                    .filter(|v| !v.is_empty()),
            ),
            "style_id" if !value.is_empty() => up.style_id = Some(value),
            "enable_watermark" => up.watermark = is_true(&value),
            "input_conversion_options" if !value.is_empty() => {
                up.conversion = conversion::parse(&value)?;
            }
            _ => {}
        }
    }
    Ok(up)
}

fn is_true(value: &str) -> bool {
    value.eq_ignore_ascii_case("true") || value == "1"
}

#[derive(Serialize)]
struct UploadResponse {
    document_id: String,
    document_key: String,
    /// With `enable_quality_evaluation=true`: the job id to poll at
    /// `GET /v1/quality-evaluation/{id}` (a Tolk extension).
    #[serde(skip_serializing_if = "Option::is_none")]
    quality_evaluation_id: Option<uuid::Uuid>,
}

async fn upload(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Extension(TraceId(trace_id)): Extension<TraceId>,
    multipart: Multipart,
) -> Result<Response, ApiError> {
    let up = read_upload(multipart, state.max_upload_bytes).await?;
    let checked = Checked::of(up)?;
    let resolved = checked.resolve(&state, &key).await?;
    // 456 once the key's character limit is reached (a document's size is known
    // only after translation; it is billed in full then).
    crate::limits::refuse_if_reached(&state, &key, tolk_storage::limits::Meter::Characters).await?;
    let answer = checked.store(&state, &key, resolved, trace_id).await?;
    Ok(Json(answer).into_response())
}

/// An upload whose fields are checked: the file, its format and the one it is
/// delivered in, the languages and formality.
struct Checked {
    up: Upload,
    data: Bytes,
    filename: String,
    format: DocumentFormat,
    output: Output,
    target_lang: String,
    formality: tolk_engine::Formality,
}

/// What an upload's customisations resolve to.
struct Resolved {
    glossary_ids: Vec<uuid::Uuid>,
    memory: Option<tolk_storage::translation_memories::DocumentMemory>,
    style_id: Option<uuid::Uuid>,
}

impl Checked {
    /// Checks every field of the form; the first problem is a 400 naming it.
    fn of(mut up: Upload) -> Result<Self, ApiError> {
        let (part_name, data) = up
            .file
            .take()
            .ok_or_else(|| ApiError::bad("Parameter 'file' is required."))?;
        let target_lang = up
            .target_lang
            .clone()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| ApiError::bad("Parameter 'target_lang' is required."))?;
        let filename = up
            .filename
            .clone()
            .filter(|f| !f.is_empty())
            .or(part_name)
            .ok_or_else(|| {
                ApiError::bad("Invalid file data: the file name is missing (send it in the file part or as 'filename').")
            })?;
        let format = DocumentFormat::from_filename(&filename).ok_or_else(|| {
            ApiError::bad(match DocumentFormat::unsupported_kind(&filename) {
                Some(why) => format!("Invalid file data: {why}"),
                None => format!(
                    "Invalid file data: the file extension of '{filename}' is not supported (supported: {}).",
                    DocumentFormat::extensions().collect::<Vec<_>>().join(", ")
                ),
            })
        })?;
        let output = output_format(format, up.output_format.as_deref())?;
        if up.watermark && !tolk_formats::can_mark(output) {
            return Err(ApiError::bad(format!(
                "Parameter 'enable_watermark' is supported for docx, pptx and pdf output only, not {}.",
                output.extension()
            )));
        }
        if data.is_empty() {
            return Err(ApiError::bad("Invalid file data: the file is empty."));
        }
        if format == DocumentFormat::Pdf
            && let Some(pages) = tolk_formats::pdf_page_count(&data)
            && pages > tolk_formats::PDF_MAX_PAGES
        {
            return Err(ApiError::TooLarge(format!(
                "The PDF has {pages} pages; at most {} are translated in one document.",
                tolk_formats::PDF_MAX_PAGES
            )));
        }
        let formality = match up.formality.as_deref().map(str::trim) {
            None | Some("") => tolk_engine::Formality::Default,
            Some(f) => tolk_engine::Formality::parse(f).ok_or_else(|| {
                ApiError::bad(format!(
                    "Value for 'formality' not supported: '{f}' (allowed: default, more, less, prefer_more, prefer_less)."
                ))
            })?,
        };
        Ok(Self {
            up,
            data,
            filename,
            format,
            output,
            target_lang,
            formality,
        })
    }

    /// Checks that the languages are served and resolves the glossaries,
    /// memory and style list (404 for one that does not exist, 400 for one
    /// that does not fit).
    async fn resolve(
        &self,
        state: &AppState,
        key: &tolk_storage::keys::ApiKey,
    ) -> Result<Resolved, ApiError> {
        let (up, target_lang) = (&self.up, &self.target_lang);
        let source = up.source_lang.as_deref();
        crate::requests::languages(state, source, target_lang, self.formality)?;
        let glossaries = (up.glossary_id.as_deref(), up.glossary_ids.as_slice());
        let glossary_ids = glossaries_of(state, key, glossaries, source, target_lang).await?;
        let memory = document_memory(
            state,
            key.organization_id,
            &up.translation_memory_id,
            &up.translation_memory_threshold,
            source,
            target_lang,
        )
        .await?;
        let style_id = match up.style_id.as_deref() {
            None => None,
            Some(id) => {
                let uuid = uuid::Uuid::parse_str(id).map_err(|_| {
                    ApiError::NotFound(format!("Style rule list '{id}' not found."))
                })?;
                state
                    .pipeline()
                    .style_rules(key.organization_id, uuid, target_lang)
                    .await?;
                Some(uuid)
            }
        };
        Ok(Resolved {
            glossary_ids,
            memory,
            style_id,
        })
    }

    /// Stores the file, and records the document (with its memory and
    /// evaluation) and its queue job in one transaction; the file goes again
    /// when that fails.
    async fn store(
        self,
        state: &AppState,
        key: &tolk_storage::keys::ApiKey,
        resolved: Resolved,
        trace_id: String,
    ) -> Result<UploadResponse, ApiError> {
        let Self {
            up,
            data,
            filename,
            format,
            output,
            target_lang,
            ..
        } = self;
        let id = random_upper_hex(16);
        let doc_key = random_upper_hex(32);
        let source_object = format!("uploads/{id}/source.{}", format.extension());
        state.objects.put(&source_object, data).await?;
        let job_id = queue::new_job_id();
        let doc = NewDocument {
            id: id.clone(),
            key: doc_key.clone(),
            organization_id: key.organization_id,
            api_key_id: key.key_id.clone(),
            filename,
            input_format: format.extension().to_owned(),
            output_format: output.extension().to_owned(),
            source_lang: up.source_lang.map(|s| s.to_ascii_uppercase()),
            target_lang: target_lang.to_ascii_uppercase(),
            source_object: source_object.clone(),
            job_id: job_id.clone(),
            trace_id: trace_id.clone(),
            glossary_ids: resolved.glossary_ids,
            style_id: resolved.style_id,
            json_placeholders: (up.conversion.json_placeholders
                == conversion::JsonPlaceholders::Translate)
                .then(|| "translate".to_owned()),
            xliff_targets: up
                .conversion
                .overwrite_xliff_targets
                .then(|| "overwrite".to_owned()),
            watermark: up.watermark,
        };
        let evaluation = up.quality_evaluation.then(|| quality::NewEvaluation {
            id: uuid::Uuid::new_v4(),
            organization_id: key.organization_id,
            api_key_id: key.key_id.clone(),
            source_lang: doc.source_lang.clone().unwrap_or_default(),
            target_lang: doc.target_lang.clone(),
            request: None,
            document_id: Some(id.clone()),
            segment_count: 0,
            // Enqueued by the document job once the translation exists.
            job_id: None,
            trace_id: trace_id.clone(),
        });
        let job = queue::TranslateDocument {
            document_id: id.clone(),
            trace_id,
        };
        let stored = async {
            let mut tx = state.enqueuer.begin().await?;
            documents::insert(&mut tx, &doc).await?;
            if let Some(m) = &resolved.memory {
                tolk_storage::translation_memories::attach_to_document(&mut tx, &id, m).await?;
            }
            if let Some(e) = &evaluation {
                quality::insert(&mut tx, e).await?;
            }
            queue::enqueue(
                &mut tx,
                queue::TRANSLATE_DOCUMENT,
                &job_id,
                &job,
                queue::TRANSLATE_DOCUMENT_MAX_ATTEMPTS,
                &format!("document:{id}"),
            )
            .await?;
            tx.commit().await?;
            Ok::<_, tolk_storage::StorageError>(())
        }
        .await;
        if let Err(e) = stored {
            if let Err(del) = state.objects.delete(&source_object).await {
                tracing::warn!(error = %del, "could not delete the upload of a failed enqueue");
            }
            return Err(e.into());
        }
        // Visible (a worker may be translating it already); answer once durable.
        state.enqueuer.committed(queue::TRANSLATE_DOCUMENT).await;
        tracing::info!(document_id = %id, job_id = %job_id, "document queued");
        Ok(UploadResponse {
            document_id: id,
            document_key: doc_key,
            quality_evaluation_id: evaluation.map(|e| e.id),
        })
    }
}

/// The format a document of `format` is delivered in (`output_format`).
fn output_format(format: DocumentFormat, wanted: Option<&str>) -> Result<Output, ApiError> {
    let Some(out) = wanted else {
        return Ok(Output::Document(format));
    };
    let wanted = Output::from_extension(out).ok_or_else(|| {
        ApiError::bad(format!("Value for 'output_format' not supported: '{out}'."))
    })?;
    if !tolk_formats::can_convert(format, wanted) {
        return Err(ApiError::bad(format!(
            "Conversion from {} to {} is not supported.",
            format.extension(),
            wanted.extension()
        )));
    }
    Ok(wanted)
}

/// The glossaries of an upload, checked: at most 5, not both fields, a
/// source language, each one existing (404) with a dictionary for the pair
/// (400). The worker loads their entries when it runs.
async fn glossaries_of(
    state: &AppState,
    key: &tolk_storage::keys::ApiKey,
    (glossary_id, glossary_ids): (Option<&str>, &[String]),
    source_lang: Option<&str>,
    target_lang: &str,
) -> Result<Vec<uuid::Uuid>, ApiError> {
    let (field, ids): (&str, Vec<&str>) = match (glossary_id, glossary_ids.is_empty()) {
        (Some(_), false) => {
            return Err(ApiError::BadRequest(
                "Parameters 'glossary_id' and 'glossary_ids' cannot be combined.".to_owned(),
            ));
        }
        (Some(id), true) => ("glossary_id", vec![id]),
        (None, _) => (
            "glossary_ids",
            glossary_ids.iter().map(String::as_str).collect(),
        ),
    };
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    if ids.len() > crate::requests::MAX_GLOSSARIES {
        return Err(ApiError::BadRequest(format!(
            "Parameter 'glossary_ids' accepts at most {} glossaries.",
            crate::requests::MAX_GLOSSARIES
        )));
    }
    let source = source_lang.ok_or_else(|| {
        ApiError::BadRequest(format!(
            "Parameter 'source_lang' is required when '{field}' is given."
        ))
    })?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let uuid = crate::requests::check_for_pair(
            state,
            key.organization_id,
            field,
            id,
            source,
            target_lang,
        )
        .await?;
        if !out.contains(&uuid) {
            out.push(uuid);
        }
    }
    Ok(out)
}

/// The translation memory of an upload: 400 for a bad id or threshold, 404
/// for a memory that does not exist or does not cover the pair.
async fn document_memory(
    state: &AppState,
    organization_id: uuid::Uuid,
    id: &Option<String>,
    threshold: &Option<String>,
    source_lang: Option<&str>,
    target_lang: &str,
) -> Result<Option<tolk_storage::translation_memories::DocumentMemory>, ApiError> {
    let threshold = match threshold {
        None => None,
        Some(t) => Some(
            t.parse::<u8>()
                .ok()
                .filter(|v| *v <= 100)
                .ok_or_else(|| {
                    ApiError::BadRequest(format!(
                        "Value for 'translation_memory_threshold' must be an integer from 0 to 100, not '{t}'."
                    ))
                })?,
        ),
    };
    let Some(id) = id else {
        if threshold.is_some() {
            return Err(ApiError::BadRequest(
                "Parameter 'translation_memory_threshold' needs 'translation_memory_id'."
                    .to_owned(),
            ));
        }
        return Ok(None);
    };
    let Ok(uuid) = uuid::Uuid::parse_str(id) else {
        return Err(ApiError::BadRequest(format!(
            "Value for 'translation_memory_id' is not a valid ID: '{id}'."
        )));
    };
    let m = state
        .pipeline()
        .memory(organization_id, uuid, source_lang, target_lang, threshold)
        .await?;
    Ok(Some((&m).into()))
}

/// Body of status and download requests.
#[derive(Debug)]
struct DocumentKey {
    document_key: Option<String>,
}

impl DocumentKey {
    /// The `document_key` parameter of a JSON or form body.
    fn from(params: &Params) -> Result<Self, ApiError> {
        Ok(Self {
            document_key: params.raw_string("document_key")?,
        })
    }
}

#[derive(Serialize)]
struct StatusResponse {
    document_id: String,
    status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    seconds_remaining: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    billed_characters: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_message: Option<String>,
    /// The quality evaluation of this document, when requested (a Tolk extension).
    #[serde(skip_serializing_if = "Option::is_none")]
    quality_evaluation_id: Option<uuid::Uuid>,
    /// What was left untranslated and why, once done (a Tolk extension).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    notes: Vec<String>,
}

const NOT_FOUND: &str = "Document not found.";

async fn load(
    state: &AppState,
    key: &tolk_storage::keys::ApiKey,
    document_id: &str,
    body: DocumentKey,
) -> Result<documents::Document, ApiError> {
    let doc_key = body
        .document_key
        .filter(|k| !k.is_empty())
        .ok_or_else(|| ApiError::BadRequest("Parameter 'document_key' is required.".to_owned()))?;
    let well_formed = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    if !well_formed(document_id, 32) || !well_formed(&doc_key, 64) {
        return Err(ApiError::NotFound(NOT_FOUND.to_owned()));
    }
    documents::get_for_client(
        &state.db,
        &document_id.to_ascii_uppercase(),
        &doc_key.to_ascii_uppercase(),
        key.organization_id,
    )
    .await?
    .ok_or_else(|| ApiError::NotFound(NOT_FOUND.to_owned()))
}

async fn status(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(document_id): Path<String>,
    FormOrJson(params): TextParams,
) -> Result<Json<StatusResponse>, ApiError> {
    let doc = load(&state, &key, &document_id, DocumentKey::from(&params)?).await?;
    let quality_evaluation_id = quality::for_document(&state.db, &doc.id).await?;
    let seconds_remaining = doc.seconds_remaining(chrono::Utc::now());
    let done = doc.status == status::DONE;
    let error = doc.status == status::ERROR;
    Ok(Json(StatusResponse {
        document_id: doc.id,
        status: doc.status,
        seconds_remaining,
        billed_characters: doc.billed_characters.filter(|_| done),
        error_message: doc.error_message.filter(|_| error),
        quality_evaluation_id,
        notes: match done {
            true => doc.notes,
            false => Vec::new(),
        },
    }))
}

async fn result(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    Path(document_id): Path<String>,
    FormOrJson(params): TextParams,
) -> Result<Response, ApiError> {
    let doc = load(&state, &key, &document_id, DocumentKey::from(&params)?).await?;
    match doc.status.as_str() {
        status::DONE => {}
        status::ERROR => {
            return Err(ApiError::BadRequest(format!(
                "The document could not be translated: {}",
                doc.error_message.unwrap_or_default()
            )));
        }
        _ => {
            return Err(ApiError::NotReady(
                "Document translation is not done yet.".to_owned(),
            ));
        }
    }
    let object = documents::take_result(&state.db, &doc.id)
        .await?
        .ok_or_else(|| ApiError::NotFound(NOT_FOUND.to_owned()))?;
    let stream = state.objects.stream(&object).await?;
    let format = Output::from_extension(&doc.output_format).ok_or_else(|| {
        ApiError::Internal(format!("unknown stored format {}", doc.output_format))
    })?;
    let body = Body::from_stream(stream.map(|r| r.map_err(std::io::Error::other)));
    Ok((
        [
            (CONTENT_TYPE, format.content_type().to_owned()),
            (
                CONTENT_DISPOSITION,
                content_disposition(&delivered_name(&doc.filename, format)),
            ),
        ],
        body,
    )
        .into_response())
}

/// The name a result is delivered under: the uploaded name, with the
/// extension of the format delivered when it was converted (`talk.srt`
/// delivered as WebVTT is `talk.vtt`, `report.docx` as PDF `report.pdf`).
fn delivered_name(uploaded: &str, delivered: Output) -> String {
    if DocumentFormat::from_filename(uploaded).map(Output::Document) == Some(delivered) {
        return uploaded.to_owned();
    }
    let stem = uploaded.rsplit_once('.').map_or(uploaded, |(stem, _)| stem);
    format!("{stem}.{}", delivered.extension())
}

/// `attachment; filename="…"; filename*=UTF-8''…` for any file name.
fn content_disposition(name: &str) -> String {
    let ascii: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut encoded = String::new();
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converted_results_are_named_with_their_own_extension() {
        let doc = Output::Document;
        assert_eq!(
            delivered_name("talk.srt", doc(DocumentFormat::Vtt)),
            "talk.vtt"
        );
        assert_eq!(
            delivered_name("talk.SRT", doc(DocumentFormat::Srt)),
            "talk.SRT"
        );
        assert_eq!(
            delivered_name("notes.v2.htm", doc(DocumentFormat::Html)),
            "notes.v2.htm"
        );
        assert_eq!(
            delivered_name("no-extension", doc(DocumentFormat::Vtt)),
            "no-extension.vtt"
        );
        assert_eq!(
            delivered_name(
                "report.docx",
                Output::Document(tolk_formats::DocumentFormat::Pdf)
            ),
            "report.pdf"
        );
    }

    #[test]
    fn content_disposition_escapes() {
        assert_eq!(
            content_disposition("a b.docx"),
            "attachment; filename=\"a b.docx\"; filename*=UTF-8''a%20b.docx"
        );
        let v = content_disposition("über\"x.txt");
        assert!(v.starts_with("attachment; filename=\"_ber_x.txt\""));
        assert!(v.ends_with("%C3%BCber%22x.txt"));
    }
}
