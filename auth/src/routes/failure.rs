//! `GET /auth/failure`: where failed sign-ins (and, later, OAuth and SAML callbacks) land.

use axum::extract::Query;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use crate::pages;

/// Query of the failure page.
#[derive(Debug, Deserialize)]
pub struct FailureQuery {
    /// What went wrong (shown escaped).
    pub message: Option<String>,
    /// The strategy that failed, if any.
    pub strategy: Option<String>,
}

/// The failure page (401).
pub async fn failure(Query(q): Query<FailureQuery>) -> Response {
    let mut text = q
        .message
        .filter(|m| !m.is_empty())
        .map(|m| m.chars().take(300).collect::<String>())
        .unwrap_or_else(|| "Sign-in did not succeed.".to_owned());
    if let Some(s) = q.strategy.filter(|s| !s.is_empty()) {
        text.push_str(&format!(
            " (sign-in method: {})",
            s.chars().take(100).collect::<String>()
        ));
    }
    pages::error(StatusCode::UNAUTHORIZED, "Sign-in failed", &text)
}
