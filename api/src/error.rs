//! The API error type: every error is JSON `{"message": …}` with the spec's status code.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tolk_engine::EngineError;
use tolk_pipeline::PipelineError;

/// An error answered to the client.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: a parameter is missing or wrong; the message names it.
    #[error("{0}")]
    BadRequest(String),
    /// 401: no valid key, where the operation documents 401 rather than 403.
    #[error("{0}")]
    Unauthorized(String),
    /// 403: no valid key.
    #[error("{0}")]
    Forbidden(String),
    /// 404.
    #[error("{0}")]
    NotFound(String),
    /// 413.
    #[error("{0}")]
    TooLarge(String),
    /// 415: the requested or sent media type is not supported.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// 429: the key's rate limit; retry after the given number of seconds.
    #[error("Too many requests. Please wait and resend your request.")]
    TooManyRequests {
        /// Seconds until a request would be accepted (the `Retry-After` header).
        retry_after_secs: u64,
    },
    /// 456: the key's usage limit is reached.
    #[error("{0}")]
    QuotaExceeded(String),
    /// 503: not ready yet.
    #[error("{0}")]
    NotReady(String),
    /// 503: the database cannot be reached; `Retry-After` says when to try again.
    #[error(
        "The service is temporarily unavailable: its database cannot be reached. Please try again shortly."
    )]
    DatabaseUnavailable,
    /// 504: a backend (the translation engine) is unavailable or timed out; retry later.
    #[error("{0}")]
    Timeout(String),
    /// 414: the request URI is too long.
    #[error("{0}")]
    UriTooLong(String),
    /// 529: the engines' bounded queues are full; retry later.
    #[error("{0}")]
    Overloaded(String),
    /// 500: logged with details, answered generically.
    #[error("internal error: {0}")]
    Internal(String),
    /// 500 from a failure with a cause (a task that panicked, an object that
    /// could not be stored or read): logged with its source chain, answered
    /// generically.
    #[error("{context}")]
    Failed {
        /// What was being done.
        context: &'static str,
        /// Why it failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// 500 from the database, queue or object store: logged once, with its
    /// source chain and the request's trace id (the request span), answered
    /// generically.
    #[error("storage failed")]
    Storage(#[source] tolk_storage::StorageError),
}

impl ApiError {
    /// 400 with `message`, which names the parameter and what is wrong.
    pub fn bad(message: impl Into<String>) -> Self {
        Self::BadRequest(message.into())
    }

    /// 400 for the parameter at `field` (a name or a JSON pointer): `why`.
    pub fn bad_at(field: &str, why: &str) -> Self {
        Self::BadRequest(format!("{field}: {why}"))
    }

    /// 413 for `what` (a body, a file) over its `limit` of bytes: the one
    /// wording of every size limit.
    pub fn too_large(what: &str, limit: usize) -> Self {
        Self::TooLarge(format!(
            "{what} is too large: larger than the {limit} bytes accepted."
        ))
    }

    /// 500 for `source`, which failed while doing `context`.
    pub fn failed(
        context: &'static str,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self::Failed {
            context,
            source: source.into(),
        }
    }

    /// The status code of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::QuotaExceeded(_) => StatusCode::from_u16(456).unwrap_or(StatusCode::FORBIDDEN),
            Self::NotReady(_) | Self::DatabaseUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            Self::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
            Self::UriTooLong(_) => StatusCode::URI_TOO_LONG,
            Self::Overloaded(_) => {
                StatusCode::from_u16(529).unwrap_or(StatusCode::SERVICE_UNAVAILABLE)
            }
            Self::Internal(_) | Self::Failed { .. } | Self::Storage(_) => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        }
    }
}

/// Seconds a client is asked to wait when the database cannot be reached.
const DATABASE_RETRY_AFTER_SECS: u32 = 5;

/// Whether PostgreSQL refused a text it cannot store (SQLSTATE 22021, a NUL
/// character or an invalid byte sequence; 22P05, untranslatable): the client's
/// input, not a fault of ours. Inputs are checked at the edge
/// ([`crate::body::reject_nul`]); this is the safety net behind that.
fn unstorable_text(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.code().is_some_and(|c| c == "22021" || c == "22P05"))
}

fn unstorable_text_error() -> ApiError {
    ApiError::BadRequest(
        "Invalid text: a value contains a NUL character (U+0000) or bytes that are not valid UTF-8."
            .to_owned(),
    )
}

/// How an engine failure is answered: overload 529, timeouts and outages 504
/// (logged), an engine fault 500, anything else (an unsupported pair, a bad
/// code, markup too deep) the client's 400.
impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Overloaded(m) => {
                tracing::warn!(error = %m, "translation engine overloaded");
                Self::Overloaded(
                "Too many requests: the translation engines are overloaded. Please try again later."
                    .to_owned(),
            )
            }
            EngineError::Timeout(m) => {
                tracing::warn!(error = %m, "translation engine timed out");
                Self::Timeout(
                    "The translation engine did not answer in time. Please try again later."
                        .to_owned(),
                )
            }
            EngineError::Unavailable(m) => {
                tracing::warn!(error = %m, "translation engine unavailable");
                Self::Timeout(
                    "The translation engine is temporarily unavailable. Please try again later."
                        .to_owned(),
                )
            }
            EngineError::Failed(m) => Self::Internal(m),
            other => Self::BadRequest(other.to_string()),
        }
    }
}

/// How a pipeline failure is answered: a customisation that does not exist is
/// a 404, one that does not fit the request a 400; engines and storage as
/// their own errors.
impl From<PipelineError> for ApiError {
    fn from(e: PipelineError) -> Self {
        match e {
            PipelineError::Engine(e) => Self::from(e),
            PipelineError::Storage(e) => Self::from(e),
            PipelineError::GlossaryNotFound(id) => {
                Self::NotFound(format!("Glossary '{id}' not found."))
            }
            PipelineError::NoDictionary { id, from, to } => {
                crate::requests::no_dictionary(id, &from, &to)
            }
            PipelineError::GlossaryPair { from, to } => Self::BadRequest(format!(
                "Glossaries do not support the language pair {from}→{to}."
            )),
            PipelineError::StyleNotFound(id) => {
                Self::NotFound(format!("Style rule list '{id}' not found."))
            }
            PipelineError::MemoryNotFound(id) => {
                Self::NotFound(format!("Translation memory '{id}' not found."))
            }
            e @ PipelineError::StyleLanguage { .. } => Self::BadRequest(e.to_string()),
            e @ PipelineError::MemoryPair { .. } => Self::NotFound(e.to_string()),
            e @ PipelineError::Mismatch { .. } => Self::Internal(e.to_string()),
        }
    }
}

impl From<tolk_storage::StorageError> for ApiError {
    fn from(e: tolk_storage::StorageError) -> Self {
        if let tolk_storage::StorageError::Database(d) = &e
            && unstorable_text(d)
        {
            return unstorable_text_error();
        }
        if e.is_unavailable() {
            tracing::warn!(error = &e as &dyn std::error::Error, "database unavailable");
            return Self::DatabaseUnavailable;
        }
        Self::Storage(e)
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> Self {
        Self::from(tolk_storage::StorageError::Database(e))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let message = match &self {
            Self::Internal(detail) => {
                tracing::error!(error = %detail, "internal error");
                "Internal server error.".to_owned()
            }
            Self::Storage(e) => {
                tracing::error!(error = e as &dyn std::error::Error, "internal error");
                "Internal server error.".to_owned()
            }
            Self::Failed { .. } => {
                tracing::error!(error = &self as &dyn std::error::Error, "internal error");
                "Internal server error.".to_owned()
            }
            other => other.to_string(),
        };
        let mut res = (status, Json(json!({ "message": message }))).into_response();
        match self {
            Self::TooManyRequests { retry_after_secs } => {
                res.headers_mut().insert(
                    axum::http::header::RETRY_AFTER,
                    axum::http::HeaderValue::from(retry_after_secs.max(1)),
                );
            }
            Self::DatabaseUnavailable => {
                res.headers_mut().insert(
                    axum::http::header::RETRY_AFTER,
                    axum::http::HeaderValue::from(DATABASE_RETRY_AFTER_SECS),
                );
            }
            // Engines shed load for a moment only.
            Self::Overloaded(_) => {
                res.headers_mut().insert(
                    axum::http::header::RETRY_AFTER,
                    axum::http::HeaderValue::from_static("1"),
                );
            }
            _ => {}
        }
        res
    }
}

/// A JSON `{"message": …}` response with any status.
pub fn message(status: StatusCode, text: impl Into<String>) -> Response {
    (status, Json(json!({ "message": text.into() }))).into_response()
}

/// Largest error body [`json_errors`] reads to wrap it.
const WRAP_LIMIT: usize = 16 * 1024;

/// Makes every error answer JSON `{"message": …}`: responses with a 4xx or 5xx
/// status that are not JSON already (axum's own rejections: a missing multipart
/// boundary, duplicate query keys, a bad header, an oversized body; the
/// fallback's 404, a 405) get their text, or the status' reason, as the message.
pub async fn json_errors(res: Response) -> Response {
    let status = res.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return res;
    }
    let is_json = res
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            let ct = ct.trim_start();
            // The operator dashboard's pages answer errors in HTML.
            ct.starts_with("application/json") || ct.starts_with("text/html")
        });
    if is_json {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    let bytes = axum::body::to_bytes(body, WRAP_LIMIT)
        .await
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim();
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("Error").to_owned()
    } else {
        text.to_owned()
    };
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    parts.headers.insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    let body = serde_json::to_vec(&json!({ "message": message })).unwrap_or_default();
    Response::from_parts(parts, axum::body::Body::from(body))
}
