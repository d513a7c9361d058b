//! Authentication: `Authorization: DeepL-Auth-Key {key_id}.{secret}`, or
//! `Authorization: Bearer {jwt}` from the auth service when its scope allows the
//! route (`voice` for the voice service, `translate` for the rest). A Bearer
//! token's usage is carried by a key of its own (`oauth-{sub}`) in the
//! organization of the token's authority.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use tolk_storage::keys::{self, ApiKey};

use crate::{ApiError, AppState};
use tolk_storage::rate_limit::Decision;

pub(crate) const SCHEME: &str = "DeepL-Auth-Key ";

/// The message of every authentication failure (the DeepL wording).
pub const FAILED: &str =
    "Authorization failed. Please supply a valid `DeepL-Auth-Key` via the `Authorization` header.";

/// The 403 message of a developer key on an admin operation.
pub const ADMIN_REQUIRED: &str = "This operation requires an admin API key.";

/// Operations (method, path prefix) whose interface documents 401, not 403,
/// for a missing or wrong key: the polls of voice jobs and quality
/// evaluations.
const UNAUTHORIZED_WHERE: &[(&str, &str)] = &[
    ("GET", "/v1/jobs/voice/translate/"),
    ("GET", "/v1/quality-evaluation/"),
];

/// The answer to a request without a valid key: 403 with DeepL's words, or
/// 401 where the operation documents it ([`UNAUTHORIZED_WHERE`]).
fn refused(parts: &Parts) -> ApiError {
    let (method, path) = (parts.method.as_str(), parts.uri.path());
    if UNAUTHORIZED_WHERE
        .iter()
        .any(|(m, prefix)| *m == method && path.starts_with(prefix))
    {
        ApiError::Unauthorized(FAILED.to_owned())
    } else {
        ApiError::Forbidden(FAILED.to_owned())
    }
}

/// An authenticated, active key, within its rate limit (else 429).
#[derive(Debug, Clone)]
pub struct AuthKey(pub ApiKey);

/// An authenticated, active admin key (a developer key → 403).
#[derive(Debug, Clone)]
pub struct AdminKey(pub ApiKey);

impl FromRequestParts<AppState> for AdminKey {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let AuthKey(key) = AuthKey::from_request_parts(parts, state).await?;
        if !key.is_admin {
            return Err(ApiError::Forbidden(ADMIN_REQUIRED.to_owned()));
        }
        Ok(Self(key))
    }
}

impl FromRequestParts<AppState> for AuthKey {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let header = authorization(parts);
        let found = match (
            header.strip_prefix(SCHEME),
            bearer_token(header),
            &state.bearer,
        ) {
            (Some(presented), _, _) => keys::authenticate(&state.db, presented).await?,
            (None, Some(token), Some(verifier)) => {
                let host = tolk_auth::context::host(&parts.headers);
                bearer_key(state, verifier, token, parts.uri.path(), &host).await?
            }
            _ => return Err(refused(parts)),
        };
        match found {
            Some(key) => {
                tracing::Span::current().record("key_id", key.key_id.as_str());
                if let Decision::Deny(wait) = state.rate_limiter.check(&key.key_id).await {
                    return Err(ApiError::TooManyRequests {
                        retry_after_secs: wait.as_secs() + u64::from(wait.subsec_nanos() > 0),
                    });
                }
                Ok(Self(key))
            }
            None => Err(refused(parts)),
        }
    }
}

/// The request's `Authorization` header ("" when absent or not text).
pub(crate) fn authorization(parts: &Parts) -> &str {
    parts
        .headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// The token of `Authorization: Bearer …`.
pub(crate) fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// The scope a route needs from a Bearer token.
pub fn scope_for_path(path: &str) -> &'static str {
    if path.starts_with("/v1/tts") || path.starts_with("/v1/vc") || path.starts_with("/v1/jobs") {
        "voice"
    } else {
        "translate"
    }
}

/// Whether a resource path names this API (RFC 8707): its root or one of its
/// versioned interfaces (`https://host/`, `https://host/v2`). A token asked
/// for another resource of the authority (an MCP server at `/mcp`) is not
/// accepted here.
fn api_resource(path: &str) -> bool {
    let path = path.trim_end_matches('/');
    path.is_empty()
        || ["/v1", "/v2", "/v3"].iter().any(|v| {
            path.strip_prefix(v)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
}

/// The key standing for a valid, live Bearer token with the route's scope,
/// issued by the authority serving `host` (a token of another tenant is
/// refused, as userinfo refuses it).
async fn bearer_key(
    state: &AppState,
    verifier: &tolk_auth::tokens::Verifier,
    token: &str,
    path: &str,
    host: &str,
) -> Result<Option<ApiKey>, ApiError> {
    let scope = scope_for_path(path);
    let found = bearer_identity(state, verifier, token, host, |c| c.has_scope(scope)).await?;
    Ok(found.map(|(_, key)| key))
}

/// The claims of a valid, live Bearer token issued by the authority serving
/// `host` whose claims `admit` accepts, and the key carrying its usage
/// (`oauth-{sub}` in the authority's organization; made on first use, after
/// every check).
pub(crate) async fn bearer_identity(
    state: &AppState,
    verifier: &tolk_auth::tokens::Verifier,
    token: &str,
    host: &str,
    admit: impl FnOnce(&tolk_auth::tokens::AccessClaims) -> bool,
) -> Result<Option<(tolk_auth::tokens::AccessClaims, ApiKey)>, tolk_storage::StorageError> {
    let Ok(claims) = verifier.verify(token) else {
        return Ok(None);
    };
    let tenant = tolk_storage::auth::authorities::resolve(&state.db, host).await?;
    let Some(tenant) = tenant.filter(|a| claims.aud.admits(&a.domain, api_resource)) else {
        return Ok(None);
    };
    if !admit(&claims) {
        return Ok(None);
    }
    let jti = uuid::Uuid::parse_str(&claims.jti).ok();
    if !tolk_storage::auth::tokens::access_token_live(&state.db, jti, Some(&claims.sub), claims.iat)
        .await?
    {
        return Ok(None);
    }
    let label = if claims.u.e.is_empty() {
        format!("OAuth: {}", claims.sub)
    } else {
        format!("OAuth: {}", claims.u.e)
    };
    let key = keys::bearer_key(
        &state.db,
        &format!("oauth-{}", claims.sub),
        &tenant.domain,
        &label,
    )
    .await?;
    Ok(key.map(|key| (claims, key)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_is_its_root_and_versioned_paths() {
        for own in ["", "/", "/v2", "/v2/", "/v3/glossaries", "/v1"] {
            assert!(api_resource(own), "{own}");
        }
        for other in ["/mcp", "/v22", "/auth", "/mcp/v2"] {
            assert!(!api_resource(other), "{other}");
        }
    }

    #[test]
    fn bearer_tokens_are_read_from_any_header_value() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer  abc "), Some("abc"));
        assert_eq!(bearer_token("Bearer "), None);
        assert_eq!(bearer_token("DeepL-Auth-Key abc"), None);
        // Multi-byte characters where a scheme would end: no panic, no token.
        assert_eq!(bearer_token("ééééé"), None);
        assert_eq!(bearer_token("Bearéé x"), None);
    }

    #[test]
    fn scopes_by_route() {
        assert_eq!(scope_for_path("/v1/tts/stream"), "voice");
        assert_eq!(scope_for_path("/v1/jobs/x"), "voice");
        assert_eq!(scope_for_path("/v2/translate"), "translate");
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("DeepL-Auth-Key abc"), None);
    }
}
