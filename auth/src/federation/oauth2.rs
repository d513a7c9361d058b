//! The client side of an `oauth_strat`'s authorization code flow: the
//! provider's authorization URL (with `state` and a PKCE S256 challenge:
//! providers that do not know PKCE ignore it), the code redeemed at its token
//! endpoint, and the user's profile read at `raw_info_url` (or, without one,
//! the claims of the ID token the token endpoint returned).

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tolk_storage::auth::oauth_strategies::OauthStrategy;
use tolk_storage::auth::users;
use url::Url;

use super::FederationError;
use super::flow::Flow;
use crate::outbound::{ReadError, read_json};
use crate::{AuthState, sealing};

/// Largest answer read from a provider.
pub const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// Parameters of ours the strategy's `authorize_params` cannot replace.
const OURS: &[&str] = &[
    "response_type",
    "client_id",
    "redirect_uri",
    "state",
    "code_challenge",
    "code_challenge_method",
];

/// `url` when absolute, else joined to `site`.
pub fn endpoint(site: &str, url: &str) -> Result<Url, FederationError> {
    let url = url.trim();
    Url::parse(url)
        .or_else(|_| {
            let base = Url::parse(site.trim())?;
            base.join(url)
        })
        .map_err(|_| FederationError::Config(format!("{url:?} is not a URL (site {site:?})")))
        .and_then(|u| match u.scheme() {
            "https" | "http" => Ok(u),
            other => Err(FederationError::Config(format!(
                "{other} URLs are not supported"
            ))),
        })
}

/// Where to send the browser: the provider's authorization endpoint with
/// our client id, the flow's redirect URI, `state` and PKCE challenge, the
/// strategy's scope and extra parameters.
pub fn authorize_url(strategy: &OauthStrategy, flow: &Flow) -> Result<Url, FederationError> {
    let mut url = endpoint(&strategy.site, &strategy.authorize_url)?;
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(flow.verifier.as_bytes()));
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", &strategy.client_id)
            .append_pair("redirect_uri", &flow.redirect_uri)
            .append_pair("state", &flow.state)
            .append_pair("code_challenge", &challenge)
            .append_pair("code_challenge_method", "S256");
        if !strategy.scope.trim().is_empty() {
            q.append_pair("scope", strategy.scope.trim());
        }
        if let Some(extra) = strategy.authorize_params.as_object() {
            for (k, v) in extra {
                if OURS.contains(&k.as_str()) || (k == "scope" && !strategy.scope.trim().is_empty())
                {
                    continue;
                }
                match v {
                    Value::String(s) => q.append_pair(k, s),
                    Value::Number(_) | Value::Bool(_) => q.append_pair(k, &v.to_string()),
                    _ => continue,
                };
            }
        }
    }
    Ok(url)
}

fn unreadable(what: &str, e: ReadError) -> FederationError {
    FederationError::Provider(format!(
        "the identity provider's {what} could not be read: {e}"
    ))
}

/// The provider's `error` code of a refusal, if it is a plain token.
fn error_code(body: &Value) -> String {
    body.get("error")
        .and_then(Value::as_str)
        .filter(|e| e.len() <= 64 && e.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .unwrap_or("no reason given")
        .to_owned()
}

/// Authenticates a token request as the strategy says (`basic_auth`, or the
/// id and secret in the request: `request_body`, the default).
pub fn client_auth(
    strategy: &OauthStrategy,
    form: &mut Vec<(&'static str, String)>,
) -> Option<String> {
    let basic = strategy
        .auth_scheme
        .trim()
        .eq_ignore_ascii_case("basic_auth")
        && !strategy.client_secret.is_empty();
    if basic {
        let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let pair = format!(
            "{}:{}",
            enc(&strategy.client_id),
            enc(&strategy.client_secret)
        );
        return Some(format!("Basic {}", STANDARD.encode(pair)));
    }
    form.push(("client_id", strategy.client_id.clone()));
    if !strategy.client_secret.is_empty() {
        form.push(("client_secret", strategy.client_secret.clone()));
    }
    None
}

/// Sends a token-endpoint request of `form` the way the strategy says
/// (`token_method`, `auth_scheme`); the JSON answer, or the refusal's code.
pub async fn token_request(
    http: &reqwest::Client,
    strategy: &OauthStrategy,
    mut form: Vec<(&'static str, String)>,
) -> Result<Value, FederationError> {
    let mut url = endpoint(&strategy.site, &strategy.token_url)?;
    let authorization = client_auth(strategy, &mut form);
    let req = if strategy.token_method.trim().eq_ignore_ascii_case("get") {
        url.query_pairs_mut()
            .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())));
        http.get(url)
    } else {
        http.post(url).form(&form)
    };
    let req = req.header(reqwest::header::ACCEPT, "application/json");
    let req = match authorization {
        Some(a) => req.header(reqwest::header::AUTHORIZATION, a),
        None => req,
    };
    let res = req.send().await.map_err(|e| {
        tracing::warn!(strategy = %strategy.id, error = %e, "token endpoint unreachable");
        FederationError::Provider("the identity provider's token endpoint did not answer".into())
    })?;
    let status = res.status();
    let body = read_json(res, MAX_ANSWER_BYTES)
        .await
        .map_err(|e| unreadable("token answer", e))?;
    if !status.is_success() {
        return Err(FederationError::Provider(format!(
            "the identity provider refused the token request ({})",
            error_code(&body)
        )));
    }
    if body.get("access_token").and_then(Value::as_str).is_none() {
        return Err(FederationError::Provider(
            "the identity provider's token answer has no access_token".into(),
        ));
    }
    Ok(body)
}

/// Redeems the authorization `code` of `flow` (with its PKCE verifier).
pub async fn redeem(
    http: &reqwest::Client,
    strategy: &OauthStrategy,
    code: &str,
    flow: &Flow,
) -> Result<Value, FederationError> {
    let form = vec![
        ("grant_type", "authorization_code".to_owned()),
        ("code", code.to_owned()),
        ("redirect_uri", flow.redirect_uri.clone()),
        ("code_verifier", flow.verifier.clone()),
    ];
    token_request(http, strategy, form).await
}

/// The claims of a JWT, unverified: only for an ID token received straight
/// from the provider's token endpoint (OpenID Connect Core §3.1.3.7).
fn jwt_claims(token: &str) -> Option<Value> {
    let payload = token.split('.').nth(1)?;
    let bytes = URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    serde_json::from_slice::<Value>(&bytes)
        .ok()
        .filter(Value::is_object)
}

/// The user's profile: `raw_info_url` read with the access token, or the ID
/// token's claims when the strategy has no such URL.
pub async fn profile(
    http: &reqwest::Client,
    strategy: &OauthStrategy,
    credentials: &Value,
) -> Result<Value, FederationError> {
    if strategy.raw_info_url.trim().is_empty() {
        return Ok(credentials
            .get("id_token")
            .and_then(Value::as_str)
            .and_then(jwt_claims)
            .unwrap_or_else(|| Value::Object(Default::default())));
    }
    let url = endpoint(&strategy.site, &strategy.raw_info_url)?;
    let access = credentials
        .get("access_token")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let res = http
        .get(url)
        .bearer_auth(access)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| {
            tracing::warn!(strategy = %strategy.id, error = %e, "profile endpoint unreachable");
            FederationError::Provider("the identity provider's profile did not arrive".into())
        })?;
    let status = res.status();
    let body = read_json(res, MAX_ANSWER_BYTES)
        .await
        .map_err(|e| unreadable("profile", e))?;
    if !status.is_success() || !body.is_object() {
        return Err(FederationError::Provider(format!(
            "the identity provider's profile endpoint answered {status}"
        )));
    }
    Ok(body)
}

/// When the access token of a token answer expires (`expires_in` seconds).
pub fn expires_at(credentials: &Value) -> Option<chrono::DateTime<chrono::Utc>> {
    let secs = credentials.get("expires_in").and_then(|v| {
        v.as_i64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
    })?;
    Some(chrono::Utc::now() + chrono::Duration::seconds(secs.clamp(0, 10 * 365 * 86_400)))
}

/// Keeps the provider's tokens of a token `answer` for the user, sealed at
/// rest ([`crate::sealing`]): the access token, the refresh token when one
/// came (an earlier one is kept otherwise), and when the access token
/// expires.
pub async fn keep_tokens(
    state: &AuthState,
    user_id: &str,
    answer: &Value,
) -> Result<(), FederationError> {
    let seal = |column: &str| {
        answer
            .get(column)
            .and_then(Value::as_str)
            .map(|token| {
                state
                    .token_keys()
                    .seal(token, &sealing::place(user_id, column))
                    .map_err(|e| FederationError::Config(e.to_string()))
            })
            .transpose()
    };
    let access = seal(sealing::ACCESS_TOKEN)?.unwrap_or_default();
    let refresh = seal(sealing::REFRESH_TOKEN)?;
    users::store_provider_tokens(
        state.db(),
        user_id,
        &access,
        refresh.as_deref(),
        expires_at(answer),
    )
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn strategy() -> OauthStrategy {
        OauthStrategy {
            id: "oauth_strat-1".into(),
            authority_id: uuid::Uuid::nil(),
            settings: tolk_storage::auth::oauth_strategies::OauthSettings {
                name: "IdP".into(),
                client_id: "tolk app".into(),
                client_secret: "s3cret:x".into(),
                info_mappings: json!({}),
                authorize_params: json!({"prompt": "select_account", "state": "evil", "max_age": 60}),
                ensure_matching: json!({}),
                site: "https://idp.example/tenant/".into(),
                authorize_url: "oauth2/authorize".into(),
                token_method: "post".into(),
                auth_scheme: "basic_auth".into(),
                token_url: "https://login.example/t/token".into(),
                scope: "openid email".into(),
                raw_info_url: String::new(),
            },
        }
    }

    #[test]
    fn the_authorization_url_carries_state_pkce_and_extra_parameters() {
        let s = strategy();
        let flow = Flow::new(
            "oauth2",
            &s.id,
            "https://tolk/auth/oauth2/callback/x".into(),
            None,
        );
        let url = authorize_url(&s, &flow).expect("url");
        assert!(
            url.as_str()
                .starts_with("https://idp.example/tenant/oauth2/authorize?")
        );
        let q: std::collections::HashMap<String, String> = url.query_pairs().into_owned().collect();
        assert_eq!(
            q["state"], flow.state,
            "authorize_params cannot replace state"
        );
        assert_eq!(q["client_id"], "tolk app");
        assert_eq!(q["code_challenge_method"], "S256");
        assert!(crate::pkce::verify_s256(
            &flow.verifier,
            &q["code_challenge"]
        ));
        assert_eq!(q["prompt"], "select_account");
        assert_eq!(q["max_age"], "60");
        assert_eq!(q["scope"], "openid email");
        assert!(endpoint("", "/relative").is_err());
        assert!(endpoint("", "file:///etc/passwd").is_err());
    }

    #[test]
    fn basic_auth_encodes_the_pair_and_request_body_puts_it_in_the_form() {
        let mut s = strategy();
        let mut form = Vec::new();
        let header = client_auth(&s, &mut form).expect("basic");
        let decoded = STANDARD
            .decode(header.trim_start_matches("Basic "))
            .expect("base64");
        assert_eq!(decoded, b"tolk+app:s3cret%3Ax");
        assert!(form.is_empty());
        s.settings.auth_scheme = "request_body".into();
        assert_eq!(client_auth(&s, &mut form), None);
        assert_eq!(form.len(), 2);
    }

    #[test]
    fn id_token_claims_and_expiry() {
        let payload = URL_SAFE_NO_PAD.encode(br#"{"sub":"u1","email":"a@b.c"}"#);
        let claims = jwt_claims(&format!("h.{payload}.s")).expect("claims");
        assert_eq!(claims["sub"], "u1");
        assert_eq!(jwt_claims("not a jwt"), None);
        assert!(expires_at(&json!({"expires_in": 3600})).is_some());
        assert!(expires_at(&json!({"expires_in": "60"})).is_some());
        assert!(expires_at(&json!({})).is_none());
        assert_eq!(
            error_code(&json!({"error": "invalid_grant"})),
            "invalid_grant"
        );
        assert_eq!(error_code(&json!({"error": "<script>"})), "no reason given");
    }
}
