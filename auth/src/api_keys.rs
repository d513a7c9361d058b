//! API keys on the auth service: `X-API-Key` (or the `api-key` query parameter
//! or cookie) holding `{id}.{secret}`, checked against the translation API's own
//! key store (HMAC-SHA512, constant time). Unknown keys may be checked by the
//! earlier platform at `PLATFORM_URI` (a real HTTP call with a timeout).

use std::time::Duration;

use axum::http::HeaderMap;
use tolk_storage::PgPool;
use tolk_storage::keys::{self, ApiKey};

use crate::AuthError;

/// The legacy validation path under `PLATFORM_URI`.
pub const LEGACY_INSPECT_PATH: &str = "/api/engine/v2/api_keys/inspect";
/// Longest legacy validation call.
pub const LEGACY_TIMEOUT: Duration = Duration::from_secs(5);

/// Who an API key is.
#[derive(Debug, Clone)]
pub enum KeyIdentity {
    /// A key of our store.
    Local(ApiKey),
    /// A key the platform at `PLATFORM_URI` vouched for, with what it answered.
    Legacy(serde_json::Value),
}

/// The presented key: header `X-API-Key`, query `api-key`, or cookie `api-key`.
pub fn presented(headers: &HeaderMap, query: Option<&str>) -> Option<String> {
    if let Some(v) = headers.get("x-api-key").and_then(|v| v.to_str().ok()) {
        return Some(v.trim().to_owned());
    }
    if let Some(q) = query
        && let Ok(pairs) = serde_urlencoded::from_str::<Vec<(String, String)>>(q)
        && let Some((_, v)) = pairs.into_iter().find(|(k, _)| k == "api-key")
    {
        return Some(v);
    }
    crate::context::cookie(headers, "api-key")
}

/// Checks API keys.
#[derive(Debug, Clone)]
pub struct ApiKeyAuth {
    platform_uri: Option<String>,
    http: reqwest::Client,
}

impl ApiKeyAuth {
    /// With the legacy validation when `platform_uri` is set.
    pub fn new(platform_uri: Option<String>) -> Self {
        let http = reqwest::Client::builder()
            .timeout(LEGACY_TIMEOUT)
            .connect_timeout(Duration::from_secs(3))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Self {
            platform_uri: platform_uri
                .map(|u| u.trim_end_matches('/').to_owned())
                .filter(|u| !u.is_empty()),
            http,
        }
    }

    /// The key's identity, `None` when it is wrong; an error only when the
    /// legacy platform could not be asked.
    pub async fn authenticate(
        &self,
        pool: &PgPool,
        presented: &str,
    ) -> Result<Option<KeyIdentity>, AuthError> {
        if let Some(k) = keys::authenticate(pool, presented).await? {
            return Ok(Some(KeyIdentity::Local(k)));
        }
        let Some(base) = &self.platform_uri else {
            return Ok(None);
        };
        let (id, secret) = match presented.split_once('.') {
            Some((i, s)) if !i.is_empty() && !s.is_empty() => (i, s),
            _ => return Ok(None),
        };
        let _ = (id, secret);
        let url = format!("{base}{LEGACY_INSPECT_PATH}");
        let res = self
            .http
            .get(&url)
            .header("X-API-Key", presented)
            .header("Accept", "application/json")
            .send()
            .await
            .map_err(|e| {
                // The address and the transport's words go to the log only:
                // the answer must not reveal where the platform lives.
                tracing::warn!(%url, error = %e, "legacy API key validation request failed");
                AuthError::LegacyKeys(if e.is_timeout() {
                    format!(
                        "the platform did not answer within {}s",
                        LEGACY_TIMEOUT.as_secs()
                    )
                } else if e.is_connect() {
                    "the platform could not be reached".to_owned()
                } else {
                    "the request to the platform failed".to_owned()
                })
            })?;
        let status = res.status();
        if status.is_success() {
            let body = res.json::<serde_json::Value>().await.unwrap_or_default();
            return Ok(Some(KeyIdentity::Legacy(body)));
        }
        if matches!(status.as_u16(), 401 | 403 | 404) {
            return Ok(None);
        }
        tracing::warn!(%url, %status, "legacy API key validation answered an error");
        Err(AuthError::LegacyKeys(format!(
            "the platform answered {status}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use axum::http::header::COOKIE;

    #[test]
    fn header_query_and_cookie() {
        let mut h = HeaderMap::new();
        assert_eq!(
            presented(&h, Some("a=1&api-key=k.s")).as_deref(),
            Some("k.s")
        );
        h.insert(COOKIE, HeaderValue::from_static("x=1; api-key=c.s"));
        assert_eq!(presented(&h, None).as_deref(), Some("c.s"));
        h.insert("x-api-key", HeaderValue::from_static("h.s"));
        assert_eq!(presented(&h, Some("api-key=k.s")).as_deref(), Some("h.s"));
    }
}
