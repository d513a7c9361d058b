//! Token exchange (RFC 8693): a user's access token from the tenant's
//! identity provider (Microsoft Entra ID and its sovereign clouds, or any
//! provider laid out the same way) for a token pair of ours.
//!
//! The subject token is accepted only when all of these hold:
//! 1. an `oauth_strat` of the authority has a single-tenant token or
//!    authorization URL (`…/{tenant}/oauth2/…`, not `common`,
//!    `organizations` or `consumers`);
//! 2. its `aud` is that strategy's client id, `api://{client_id}` or
//!    `api://{authority domain}/{client_id}`;
//! 3. its `iss` is exactly the issuer of that tenant's discovery document
//!    (v2.0 or v1 form) and it is RS256-signed by a key of that document's
//!    key set (never anything the token names itself);
//! 4. its `tid` is the tenant, it has not expired, and it is delegated
//!    (`scp` and `oid`), not an application-only token;
//! 5. the strategy's `ensure_matching` passes on the claims named as
//!    Microsoft Graph names them (`id`, `mail`, `userPrincipalName`, …).
//!
//! The user is then resolved as a sign-in through that strategy would, and
//! a Graph token is fetched on the user's behalf (OAuth 2.0 on-behalf-of)
//! when none is stored: a failure there is logged and tolerated. Every
//! refusal is a [`Refusal`], whose reason the caller logs and does not
//! return.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;
use tolk_storage::auth::authorities::Authority;
use tolk_storage::auth::oauth_strategies::{self, OauthStrategy};
use tolk_storage::auth::users::{self, User};
use url::Url;

use super::identity::{self, Identity};
use super::{FederationError, oauth2};
use crate::AuthState;
use crate::outbound::read_json;

/// The token type of RFC 8693 access tokens (`subject_token_type`, `issued_token_type`).
pub const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";

/// How long discovery documents and key sets are kept (a key missing from
/// a kept set fetches it again).
const CACHE_TIME: Duration = Duration::from_secs(600);

/// Tenants that name a class of accounts, not one tenant.
const MULTI_TENANT: &[&str] = &["common", "organizations", "consumers"];

/// Why a subject token was refused (logged, never returned).
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// One of the five rules failed.
    #[error("{0}")]
    Rule(String),
    /// The provider's documents could not be read.
    #[error("identity provider: {0}")]
    Provider(String),
    /// The database or a lookup failed.
    #[error(transparent)]
    Federation(#[from] FederationError),
}

fn rule(why: impl Into<String>) -> Refusal {
    Refusal::Rule(why.into())
}

/// A tenant-specific identity provider of a strategy: the URL up to the
/// tenant segment, and the tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant {
    /// `scheme://host[:port]` of the provider.
    pub origin: String,
    /// The tenant id or domain of the URL.
    pub tenant: String,
}

impl Tenant {
    /// The tenant of a token or authorization URL laid out as
    /// `{origin}/{tenant}/oauth2[/v2.0]/{token|authorize}`, unless the tenant
    /// is `common`, `organizations` or `consumers`.
    pub fn of_url(url: &Url) -> Option<Self> {
        let segments: Vec<&str> = url.path_segments()?.filter(|s| !s.is_empty()).collect();
        let (tenant, rest) = segments.split_first()?;
        let tail_ok = match rest {
            ["oauth2", last] | ["oauth2", "v2.0", last] => {
                matches!(*last, "token" | "authorize")
            }
            _ => false,
        };
        let tenant = tenant.to_ascii_lowercase();
        if !tail_ok || MULTI_TENANT.contains(&tenant.as_str()) {
            return None;
        }
        Some(Self {
            origin: url.origin().ascii_serialization(),
            tenant,
        })
    }

    /// The strategy's tenant, from its token URL or else its authorization URL.
    pub fn of_strategy(s: &OauthStrategy) -> Option<Self> {
        [&s.token_url, &s.authorize_url]
            .iter()
            .filter_map(|u| oauth2::endpoint(&s.site, u).ok())
            .find_map(|u| Self::of_url(&u))
    }

    /// Discovery documents: v2.0, then v1.
    fn discovery_urls(&self) -> [String; 2] {
        [
            format!(
                "{}/{}/v2.0/.well-known/openid-configuration",
                self.origin, self.tenant
            ),
            format!(
                "{}/{}/.well-known/openid-configuration",
                self.origin, self.tenant
            ),
        ]
    }
}

/// Discovery documents and key sets recently read, by URL.
#[derive(Debug, Default)]
pub struct DocumentCache {
    entries: Mutex<HashMap<String, (Instant, Value)>>,
}

impl DocumentCache {
    fn get(&self, url: &str) -> Option<Value> {
        let entries = self.entries.lock().ok()?;
        entries
            .get(url)
            .filter(|(at, _)| at.elapsed() < CACHE_TIME)
            .map(|(_, v)| v.clone())
    }

    fn put(&self, url: &str, v: &Value) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.retain(|_, (at, _)| at.elapsed() < CACHE_TIME);
            entries.insert(url.to_owned(), (Instant::now(), v.clone()));
        }
    }

    fn forget(&self, url: &str) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.remove(url);
        }
    }
}

/// A JSON object at `url` (kept [`CACHE_TIME`] unless `fresh`).
async fn document(state: &AuthState, url: &str, fresh: bool) -> Result<Value, Refusal> {
    let cache = state.provider_documents();
    if !fresh && let Some(v) = cache.get(url) {
        return Ok(v);
    }
    let res = state
        .outbound()
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| Refusal::Provider(format!("{url}: {e}")))?;
    if !res.status().is_success() {
        return Err(Refusal::Provider(format!(
            "{url} answered {}",
            res.status()
        )));
    }
    let v = read_json(res, oauth2::MAX_ANSWER_BYTES)
        .await
        .map_err(|e| Refusal::Provider(format!("{url}: {e}")))?;
    if !v.is_object() {
        return Err(Refusal::Provider(format!("{url} is not a JSON object")));
    }
    cache.put(url, &v);
    Ok(v)
}

/// The claims of a JWT before any check (to pick the strategy; nothing is
/// trusted from them until the signature is verified).
fn unverified_claims(token: &str) -> Result<Value, Refusal> {
    use base64::Engine;
    let payload = token
        .split('.')
        .nth(1)
        .ok_or_else(|| rule("the subject token is not a JWT"))?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .map_err(|_| rule("the subject token is not a JWT"))?;
    serde_json::from_slice::<Value>(&bytes)
        .ok()
        .filter(Value::is_object)
        .ok_or_else(|| rule("the subject token's claims are not a JSON object"))
}

/// Rule 2: the audiences a token for `strategy` may carry.
pub fn audience_matches(aud: &Value, client_id: &str, authority_domain: &str) -> bool {
    let ok = |a: &str| {
        a == client_id
            || a == format!("api://{client_id}")
            || a.eq_ignore_ascii_case(&format!("api://{authority_domain}/{client_id}"))
    };
    match aud {
        Value::String(a) => ok(a),
        Value::Array(items) => items.iter().filter_map(Value::as_str).any(ok),
        _ => false,
    }
}

/// Rule 5's input: the token's claims under Microsoft Graph `/me` names.
pub fn graph_profile(claims: &Value) -> Value {
    let s = |k: &str| claims.get(k).and_then(Value::as_str).map(str::to_owned);
    let upn = s("upn")
        .or_else(|| s("preferred_username"))
        .or_else(|| s("unique_name"));
    let mut me = serde_json::Map::new();
    for (name, value) in [
        ("id", s("oid")),
        (
            "mail",
            s("email").or_else(|| upn.clone().filter(|u| u.contains('@'))),
        ),
        ("userPrincipalName", upn),
        ("displayName", s("name")),
        ("givenName", s("given_name")),
        ("surname", s("family_name")),
        ("tenantId", s("tid")),
    ] {
        if let Some(v) = value {
            me.insert(name.to_owned(), Value::String(v));
        }
    }
    if let Some(roles) = claims.get("roles") {
        me.insert("roles".to_owned(), roles.clone());
    }
    if let Some(groups) = claims.get("groups") {
        me.insert("groups".to_owned(), groups.clone());
    }
    Value::Object(me)
}

/// Rule 3: the signature, by a key of the discovery document's key set, and
/// the claims' issuer and times. Returns the verified claims and the tenant
/// id the issuer names.
async fn verify(
    state: &AuthState,
    tenant: &Tenant,
    token: &str,
    token_iss: &str,
) -> Result<Value, Refusal> {
    let header = jsonwebtoken::decode_header(token)
        .map_err(|e| rule(format!("the subject token's header: {e}")))?;
    if header.alg != Algorithm::RS256 {
        return Err(rule(format!(
            "the subject token is signed with {:?}, not RS256",
            header.alg
        )));
    }
    let kid = header
        .kid
        .ok_or_else(|| rule("the subject token names no key (kid)"))?;
    let mut issuer_doc = None;
    for url in tenant.discovery_urls() {
        let doc = match document(state, &url, false).await {
            Ok(d) => d,
            Err(e) => {
                tracing::debug!(error = %e, "discovery document");
                continue;
            }
        };
        if doc.get("issuer").and_then(Value::as_str) == Some(token_iss) {
            issuer_doc = Some(doc);
            break;
        }
    }
    let doc = issuer_doc.ok_or_else(|| {
        rule(format!(
            "the subject token's issuer {token_iss} is not the issuer of tenant {}",
            tenant.tenant
        ))
    })?;
    let jwks_uri = doc
        .get("jwks_uri")
        .and_then(Value::as_str)
        .ok_or_else(|| Refusal::Provider("the discovery document has no jwks_uri".into()))?
        .to_owned();
    let mut keys = document(state, &jwks_uri, false).await?;
    let mut jwk = find_key(&keys, &kid);
    if jwk.is_none() {
        // Keys roll over: read the set again once before refusing.
        state.provider_documents().forget(&jwks_uri);
        keys = document(state, &jwks_uri, true).await?;
        jwk = find_key(&keys, &kid);
    }
    let jwk = jwk.ok_or_else(|| rule("the subject token's key is not in the tenant's key set"))?;
    let key = DecodingKey::from_jwk(&jwk).map_err(|e| rule(format!("the tenant's key: {e}")))?;
    let mut validation = Validation::new(Algorithm::RS256);
    validation.set_issuer(&[token_iss]);
    validation.set_required_spec_claims(&["exp", "iss", "aud"]);
    validation.validate_aud = false; // rule 2, checked by the caller
    validation.validate_nbf = true;
    validation.leeway = 60;
    jsonwebtoken::decode::<Value>(token, &key, &validation)
        .map(|d| d.claims)
        .map_err(|e| rule(format!("the subject token: {e}")))
}

fn find_key(keys: &Value, kid: &str) -> Option<jsonwebtoken::jwk::Jwk> {
    let set: JwkSet = serde_json::from_value(keys.clone()).ok()?;
    set.find(kid).cloned()
}

/// The tenant id an issuer names (`…/{tid}/v2.0` or `https://sts…/{tid}/`).
fn issuer_names_tenant(issuer: &str, tid: &str) -> bool {
    Url::parse(issuer).is_ok_and(|u| {
        u.path_segments()
            .is_some_and(|mut s| s.any(|seg| seg.eq_ignore_ascii_case(tid)))
    })
}

/// The user a subject token stands for, and the strategy that accepted it.
pub async fn exchange(
    state: &AuthState,
    authority: &Authority,
    subject_token: &str,
) -> Result<(User, OauthStrategy), Refusal> {
    let unverified = unverified_claims(subject_token)?;
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let aud = unverified.get("aud").cloned().unwrap_or(Value::Null);
    let tid = text(&unverified, "tid").ok_or_else(|| rule("the subject token has no tid"))?;
    let iss = text(&unverified, "iss").ok_or_else(|| rule("the subject token has no iss"))?;
    // Rules 1 and 2: a single-tenant strategy whose client the token is for.
    let strategies = oauth_strategies::of_authority(state.db(), authority.id)
        .await
        .map_err(FederationError::from)?;
    let anchored: Vec<(OauthStrategy, Tenant)> = strategies
        .into_iter()
        .filter_map(|s| Tenant::of_strategy(&s).map(|t| (s, t)))
        .collect();
    if anchored.is_empty() {
        return Err(rule(
            "no single-tenant identity-provider strategy on this authority",
        ));
    }
    let (strategy, tenant) = anchored
        .into_iter()
        .find(|(s, _)| audience_matches(&aud, &s.client_id, &authority.domain))
        .ok_or_else(|| {
            rule(format!(
                "the subject token's audience {aud} is not a strategy's client"
            ))
        })?;
    // Rule 3: issuer and signature from the tenant's own documents.
    let claims = verify(state, &tenant, subject_token, &iss).await?;
    // Rule 4: tenant, delegated token.
    let tid_ok = claims.get("tid").and_then(Value::as_str) == Some(tid.as_str())
        && issuer_names_tenant(&iss, &tid)
        && (tenant.tenant.eq_ignore_ascii_case(&tid) || !looks_like_guid(&tenant.tenant));
    if !tid_ok {
        return Err(rule(format!(
            "the subject token's tenant {tid} is not {}",
            tenant.tenant
        )));
    }
    let scp = text(&claims, "scp").filter(|s| !s.trim().is_empty());
    let oid = text(&claims, "oid").filter(|s| !s.trim().is_empty());
    let (Some(_), Some(oid)) = (scp, oid) else {
        return Err(rule(
            "the subject token is not a delegated user token (scp and oid)",
        ));
    };
    // Rule 5.
    let me = graph_profile(&claims);
    identity::ensure_matching(&strategy.ensure_matching, &me).map_err(|e| rule(e.to_string()))?;
    let who = Identity {
        uid: oid,
        email: text(&me, "mail"),
        name: text(&me, "displayName").unwrap_or_default(),
        email_unverified: false,
    };
    let user = identity::resolve_user(state.db(), authority.id, &strategy.id, &who).await?;
    on_behalf_of(state, &strategy, &user, subject_token).await;
    Ok((user, strategy))
}

fn looks_like_guid(s: &str) -> bool {
    uuid::Uuid::parse_str(s).is_ok()
}

/// Scope of the on-behalf-of request when the strategy names none.
const GRAPH_SCOPE: &str = "https://graph.microsoft.com/.default";

/// A provider (Graph) token for the user through OAuth 2.0 on-behalf-of,
/// unless a live one is stored. Failures are logged and tolerated.
async fn on_behalf_of(state: &AuthState, strategy: &OauthStrategy, user: &User, assertion: &str) {
    match users::has_live_provider_token(state.db(), &user.id).await {
        Ok(true) => return,
        Ok(false) => {}
        Err(e) => {
            tracing::warn!(error = %e, "reading the user's provider token");
            return;
        }
    }
    let scope = if strategy.scope.trim().is_empty() {
        GRAPH_SCOPE.to_owned()
    } else {
        strategy.scope.trim().to_owned()
    };
    let form = vec![
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned(),
        ),
        ("assertion", assertion.to_owned()),
        ("requested_token_use", "on_behalf_of".to_owned()),
        ("scope", scope),
    ];
    let answer = match oauth2::token_request(state.outbound(), strategy, form).await {
        Ok(a) => a,
        Err(e) => {
            tracing::warn!(strategy = %strategy.id, user_id = %user.id, error = %e,
                "on-behalf-of token not obtained (the exchange goes on)");
            return;
        }
    };
    if let Err(e) = oauth2::keep_tokens(state, &user.id, &answer).await {
        tracing::warn!(user_id = %user.id, error = %e, "storing the on-behalf-of token");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_tenant_specific_urls_anchor_an_exchange() {
        let t = |u: &str| Tenant::of_url(&Url::parse(u).expect("url"));
        let tenant = t("https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/oauth2/v2.0/token")
            .expect("tenant");
        assert_eq!(tenant.origin, "https://login.microsoftonline.com");
        assert_eq!(
            tenant.discovery_urls()[0],
            "https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0/.well-known/openid-configuration"
        );
        assert!(
            t("https://login.microsoftonline.us/contoso.onmicrosoft.com/oauth2/authorize")
                .is_some()
        );
        assert!(t("https://login.partner.microsoftonline.cn/x/oauth2/v2.0/authorize").is_some());
        for multi in ["common", "organizations", "consumers", "Common"] {
            assert!(
                t(&format!(
                    "https://login.microsoftonline.com/{multi}/oauth2/v2.0/token"
                ))
                .is_none()
            );
        }
        assert!(t("https://idp.example/oauth/token").is_none());
        assert!(t("https://idp.example/t/oauth2/v2.0/userinfo").is_none());
    }

    #[test]
    fn audiences_and_graph_names() {
        let aud = |v: Value| audience_matches(&v, "c1", "tolk.example");
        assert!(aud(json!("c1")));
        assert!(aud(json!("api://c1")));
        assert!(aud(json!("api://tolk.example/c1")));
        assert!(aud(json!(["other", "api://c1"])));
        assert!(!aud(json!("api://evil.example/c1")));
        assert!(!aud(json!("c2")));
        assert!(!aud(Value::Null));
        let me = graph_profile(
            &json!({"oid": "o1", "upn": "ann@contoso.com", "name": "Ann",
                                       "tid": "t1"}),
        );
        assert_eq!(me["id"], "o1");
        assert_eq!(me["mail"], "ann@contoso.com");
        assert_eq!(me["userPrincipalName"], "ann@contoso.com");
        assert_eq!(me["displayName"], "Ann");
        assert!(issuer_names_tenant("https://sts.windows.net/t1/", "t1"));
        assert!(issuer_names_tenant(
            "https://login.microsoftonline.com/t1/v2.0",
            "t1"
        ));
        assert!(!issuer_names_tenant(
            "https://login.microsoftonline.com/t2/v2.0",
            "t1"
        ));
    }
}
