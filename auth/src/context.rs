//! What a request tells about where it was sent: host, base URL, authority.

use axum::http::HeaderMap;
use axum::http::header::{COOKIE, HOST};
use tolk_storage::auth::authorities::{self, Authority};

use crate::AuthState;
use crate::error::message;

/// The value of the request's cookie `name` (the first, across every
/// `Cookie` header), as sent.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned())
}

/// The request's host name, lowercased, without port (from `Host`).
pub fn host(headers: &HeaderMap) -> String {
    let raw = headers
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("localhost");
    host_of(raw)
}

/// Host name of a `host[:port]` authority string.
pub fn host_of(raw: &str) -> String {
    let raw = raw.trim();
    let h = if raw.starts_with('[') {
        raw.split_once(']').map_or(raw, |(h, _)| h).to_owned() + "]"
    } else {
        raw.rsplit_once(':')
            .filter(|(_, p)| p.bytes().all(|b| b.is_ascii_digit()))
            .map_or(raw, |(h, _)| h)
            .to_owned()
    };
    h.to_ascii_lowercase()
}

/// The service's base URL as the client sees it: `X-Forwarded-Proto` (else https
/// in production, http otherwise) and the `Host` header.
pub fn base_url(headers: &HeaderMap, production: bool) -> String {
    let scheme = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .map(|s| {
            s.split(',')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .filter(|s| s == "http" || s == "https")
        .unwrap_or_else(|| if production { "https" } else { "http" }.to_owned());
    let host = headers
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .filter(|h| {
            !h.is_empty()
                && h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
        })
        .unwrap_or("localhost");
    format!("{scheme}://{host}")
}

/// The authority serving this request, or a 404 response.
pub async fn authority(
    state: &AuthState,
    headers: &HeaderMap,
) -> Result<Authority, axum::response::Response> {
    let host = host(headers);
    match authorities::resolve(state.db(), &host).await {
        Ok(Some(a)) => Ok(a),
        Ok(None) => Err(message(
            axum::http::StatusCode::NOT_FOUND,
            format!("No authority serves the host {host}."),
        )),
        Err(e) => Err(axum::response::IntoResponse::into_response(
            crate::AuthError::from(e),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        assert_eq!(host_of("LocalHost:8080"), "localhost");
        assert_eq!(host_of("example.com"), "example.com");
        assert_eq!(host_of("[::1]:80"), "[::1]");
    }
}
