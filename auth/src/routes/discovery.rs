//! Discovery (OpenID Connect and RFC 8414: one document) and the JWKS.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::{Value, json};

use crate::{AuthState, context};

/// Scopes offered.
pub const SCOPES: [&str; 7] = [
    "public",
    "openid",
    "profile",
    "email",
    "offline_access",
    "translate",
    "voice",
];

/// The metadata document for the base URL the request was sent to.
pub fn document(base: &str) -> Value {
    json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/auth/authorize"),
        "token_endpoint": format!("{base}/auth/token"),
        "revocation_endpoint": format!("{base}/auth/revoke"),
        "registration_endpoint": format!("{base}/auth/register"),
        "userinfo_endpoint": format!("{base}/auth/userinfo"),
        "jwks_uri": format!("{base}/auth/oauth/discovery/keys"),
        "scopes_supported": SCOPES,
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": [
            "authorization_code",
            "client_credentials",
            "refresh_token",
            crate::routes::token::TOKEN_EXCHANGE,
        ],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
        "revocation_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
        "authorization_response_iss_parameter_supported": true,
        "client_id_metadata_document_supported": true,
        "id_token_signing_alg_values_supported": ["RS256"],
        "subject_types_supported": ["public"],
        "claims_supported": ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "name", "email"],
    })
}

/// `GET /.well-known/openid-configuration` and `/.well-known/oauth-authorization-server`.
pub async fn configuration(State(state): State<AuthState>, headers: HeaderMap) -> Json<Value> {
    Json(document(&context::base_url(
        &headers,
        state.config().production,
    )))
}

/// `GET /auth/oauth/discovery/keys`: the public signing key.
pub async fn jwks(State(state): State<AuthState>) -> Json<Value> {
    Json(serde_json::to_value(state.keys().jwks()).unwrap_or_default())
}
