//! Errors: OAuth errors (`{"error", "error_description"}`, RFC 6749 §5.2) on the
//! OAuth endpoints, `{"message"}` elsewhere.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// An internal failure of the auth service.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The database failed.
    #[error("storage: {0}")]
    Storage(#[from] tolk_storage::StorageError),
    /// The signing key is missing or unusable.
    #[error("signing key: {0}")]
    Key(String),
    /// The session secret is unusable.
    #[error("session secret: {0}")]
    SessionSecret(String),
    /// The keys sealing provider tokens are unusable, or sealing failed.
    #[error("provider token keys: {0}")]
    TokenKeys(String),
    /// A token could not be signed.
    #[error("signing a token: {0}")]
    Sign(#[from] jsonwebtoken::errors::Error),
    /// bcrypt failed (a malformed digest counts as a wrong password, not this).
    #[error("password hashing: {0}")]
    Password(String),
    /// The legacy API key validation at PLATFORM_URI did not answer usably.
    #[error("API key validation at PLATFORM_URI failed: {0}")]
    LegacyKeys(String),
    /// The HTTP client toward identity providers could not be built.
    #[error("HTTP client: {0}")]
    Outbound(#[source] reqwest::Error),
    /// Anything else.
    #[error("{0}")]
    Internal(String),
}

impl IntoResponse for AuthError {
    fn into_response(self) -> Response {
        match &self {
            Self::LegacyKeys(_) => {
                tracing::warn!(error = %self, "legacy API key validation");
                message(StatusCode::BAD_GATEWAY, self.to_string())
            }
            _ => {
                tracing::error!(error = %self, "auth service internal error");
                message(StatusCode::INTERNAL_SERVER_ERROR, "Internal server error.")
            }
        }
    }
}

/// A JSON `{"message": …}` response.
pub fn message(status: StatusCode, text: impl Into<String>) -> Response {
    (status, Json(json!({ "message": text.into() }))).into_response()
}

/// An OAuth error answered as JSON by the token, revocation and userinfo endpoints.
#[derive(Debug, Clone)]
pub struct OAuthError {
    /// HTTP status.
    pub status: StatusCode,
    /// The RFC 6749 error code.
    pub error: &'static str,
    /// Human description.
    pub description: String,
    /// `Retry-After` seconds (429 answers).
    pub retry_after: Option<String>,
}

impl OAuthError {
    /// 400 with `error`.
    pub fn bad(error: &'static str, description: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            error,
            description: description.into(),
            retry_after: None,
        }
    }
    /// 429 `too_many_requests` with `Retry-After` after `wait`.
    pub fn too_many(description: impl Into<String>, wait: std::time::Duration) -> Self {
        Self {
            status: StatusCode::TOO_MANY_REQUESTS,
            error: "too_many_requests",
            description: description.into(),
            retry_after: Some(crate::throttle::retry_after(wait)),
        }
    }
    /// 400 invalid_request.
    pub fn invalid_request(d: impl Into<String>) -> Self {
        Self::bad("invalid_request", d)
    }
    /// 400 invalid_grant.
    pub fn invalid_grant(d: impl Into<String>) -> Self {
        Self::bad("invalid_grant", d)
    }
    /// 401 invalid_client (with `WWW-Authenticate`).
    pub fn invalid_client(d: impl Into<String>) -> Self {
        Self {
            status: StatusCode::UNAUTHORIZED,
            error: "invalid_client",
            description: d.into(),
            retry_after: None,
        }
    }
    /// 401 invalid_token (userinfo).
    pub fn invalid_token(d: impl Into<String>) -> Self {
        Self {
            status: StatusCode::UNAUTHORIZED,
            error: "invalid_token",
            description: d.into(),
            retry_after: None,
        }
    }
    /// 500 server_error (details logged).
    pub fn server(e: impl std::fmt::Display) -> Self {
        tracing::error!(error = %e, "auth service internal error");
        Self {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            error: "server_error",
            description: "Internal server error.".to_owned(),
            retry_after: None,
        }
    }
}

impl From<tolk_storage::StorageError> for OAuthError {
    fn from(e: tolk_storage::StorageError) -> Self {
        Self::server(e)
    }
}

impl From<AuthError> for OAuthError {
    fn from(e: AuthError) -> Self {
        Self::server(e)
    }
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        let mut res = (
            self.status,
            Json(json!({ "error": self.error, "error_description": self.description })),
        )
            .into_response();
        let h = res.headers_mut();
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        h.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
        if let Some(v) = self
            .retry_after
            .as_deref()
            .and_then(|s| HeaderValue::from_str(s).ok())
        {
            h.insert(header::RETRY_AFTER, v);
        }
        if self.status == StatusCode::UNAUTHORIZED {
            let value = format!("Bearer realm=\"tolk\", error=\"{}\"", self.error);
            if let Ok(v) = HeaderValue::from_str(&value) {
                h.insert(header::WWW_AUTHENTICATE, v);
            }
        }
        res
    }
}
