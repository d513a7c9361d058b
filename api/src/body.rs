//! Request bodies that DeepL accepts either as JSON or as
//! `application/x-www-form-urlencoded`.

use axum::extract::{FromRequest, Request};
use axum::http::header::CONTENT_TYPE;
use serde::de::DeserializeOwned;

use crate::ApiError;

/// Largest JSON/form body these endpoints read.
const LIMIT: usize = 128 * 1024;

/// A body parsed from JSON or from a form, by its Content-Type (form when absent).
#[derive(Debug)]
pub struct JsonOrForm<T>(pub T);

impl<S, T> FromRequest<S> for JsonOrForm<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        let is_json = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|ct| {
                ct.trim_start()
                    .to_ascii_lowercase()
                    .starts_with("application/json")
            })
            .unwrap_or(false);
        let bytes = axum::body::to_bytes(req.into_body(), LIMIT)
            .await
            .map_err(|_| ApiError::TooLarge("Request body too large.".to_owned()))?;
        let parsed = if is_json {
            serde_json::from_slice(&bytes)
                .map_err(|e| ApiError::BadRequest(format!("Invalid JSON body: {e}")))
        } else {
            serde_urlencoded::from_bytes(&bytes)
                .map_err(|e| ApiError::BadRequest(format!("Invalid form body: {e}")))
        }?;
        Ok(Self(parsed))
    }
}
