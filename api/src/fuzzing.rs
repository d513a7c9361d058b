//! The API's parsers of client bytes, reachable from the fuzz targets
//! (`fuzz/`, `scripts/fuzz.sh`). Each takes raw bytes as a client sends them
//! and must end in `Ok` or an [`ApiError`] (a 4xx), never panic or hang.

use axum::body::Body;
use axum::extract::{FromRequest, Multipart, Request};
use axum::http::header::CONTENT_TYPE;

use crate::ApiError;

/// The request parameters of `/v2/translate` and `/v2/write/*` from a JSON
/// (`json`) or form body.
pub fn params(bytes: &[u8], json: bool) -> Result<(), ApiError> {
    crate::params::Params::parse(bytes, json).map(|_| ())
}

/// A JSON body as the JSON-only operations read it: an object, with no NUL in
/// any string.
pub fn json_body(bytes: &[u8]) -> Result<(), ApiError> {
    let value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::BadRequest(format!("Invalid JSON body: {e}")))?;
    crate::body::reject_nul(&value)
}

/// A document upload's multipart body with `content_type` (its boundary), read
/// as `POST /v2/document` reads it, with uploads up to `limit` bytes.
pub async fn upload(content_type: &str, body: Vec<u8>, limit: usize) -> Result<(), ApiError> {
    let request = Request::builder()
        .method("POST")
        .header(CONTENT_TYPE, content_type)
        .body(Body::from(body))
        .map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let multipart = Multipart::from_request(request, &())
        .await
        .map_err(|e| ApiError::BadRequest(e.body_text()))?;
    crate::routes::documents::read_upload(multipart, limit)
        .await
        .map(|_| ())
}
