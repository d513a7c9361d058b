//! Token exchange (RFC 8693) against a test issuer laid out like Microsoft
//! Entra ID: per-tenant discovery documents (v2.0 and v1), a key set, and a
//! token endpoint answering on-behalf-of requests. The happy path (user
//! created, Graph token fetched and kept, a second exchange finds the same
//! user without asking again), an existing user found by email, then each of
//! the five rules broken on its own: every refusal is `400 invalid_grant`
//! without the reason.

use std::sync::{Arc, Mutex};

use axum::extract::{Form, Path as UrlPath};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;

use super::*;

const TENANT: &str = "6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9";
const OTHER_TENANT: &str = "0a1b2c3d-4e5f-4607-8819-2a3b4c5d6e7f";
const CLIENT: &str = "11111111-2222-4333-8444-555555555555";

/// An RSA key made by openssl: its PEM and its JWKS entry's kid.
struct Key {
    encoding: EncodingKey,
    kid: String,
    jwks: Value,
}

fn rsa_key(world: &World, name: &str) -> Result<Key> {
    let path = world.path(name);
    let status = std::process::Command::new("openssl")
        .args([
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
            "-out",
        ])
        .arg(&path)
        .stderr(Stdio::null())
        .status()
        .context("openssl must be installed")?;
    anyhow::ensure!(status.success(), "openssl genpkey failed");
    let pem = std::fs::read(&path)?;
    let keys = tolk_auth::tokens::SigningKeys::from_pem(&pem, false)?;
    Ok(Key {
        encoding: EncodingKey::from_rsa_pem(&pem)?,
        kid: keys.kid.clone(),
        jwks: serde_json::to_value(keys.jwks())?,
    })
}

/// The test issuer: what it serves and the on-behalf-of requests it saw.
struct Issuer {
    base: String,
    obo: Arc<Mutex<Vec<HashMap<String, String>>>>,
}

impl Issuer {
    fn v2(&self, tenant: &str) -> String {
        format!("{}/{tenant}/v2.0", self.base)
    }
    fn v1(&self, tenant: &str) -> String {
        format!("{}/sts/{tenant}/", self.base)
    }
}

/// Serves, for every tenant: discovery (v2.0 and v1 issuers), the key set
/// (`tenant_key` for the tenants, `evil_key` for the tenant "evil"), and a
/// token endpoint granting on-behalf-of tokens (refused for oid "no-graph").
async fn start_issuer(tenant_key: &Key, evil_key: &Key) -> Result<Issuer> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://127.0.0.1:{}", listener.local_addr()?.port());
    let obo: Arc<Mutex<Vec<HashMap<String, String>>>> = Arc::default();
    let (b1, b2) = (base.clone(), base.clone());
    let (good, evil) = (tenant_key.jwks.clone(), evil_key.jwks.clone());
    let seen = obo.clone();
    let app = axum::Router::new()
        .route(
            "/{tenant}/v2.0/.well-known/openid-configuration",
            axum::routing::get(move |UrlPath(t): UrlPath<String>| async move {
                axum::Json(json!({"issuer": format!("{b1}/{t}/v2.0"),
                                  "jwks_uri": format!("{b1}/{t}/discovery/v2.0/keys")}))
            }),
        )
        .route(
            "/{tenant}/.well-known/openid-configuration",
            axum::routing::get(move |UrlPath(t): UrlPath<String>| async move {
                axum::Json(json!({"issuer": format!("{b2}/sts/{t}/"),
                                  "jwks_uri": format!("{b2}/{t}/discovery/v2.0/keys")}))
            }),
        )
        .route(
            "/{tenant}/discovery/v2.0/keys",
            axum::routing::get(move |UrlPath(t): UrlPath<String>| async move {
                axum::Json(if t == "evil" { evil } else { good })
            }),
        )
        .route(
            "/{tenant}/oauth2/v2.0/token",
            axum::routing::post(move |Form(f): Form<HashMap<String, String>>| {
                let seen = seen.clone();
                async move {
                    let assertion = f.get("assertion").cloned().unwrap_or_default();
                    let oid = jwt_payload(&assertion)["oid"]
                        .as_str()
                        .unwrap_or("")
                        .to_owned();
                    seen.lock().expect("lock").push(f);
                    if oid == "no-graph" {
                        return (
                            StatusCode::BAD_REQUEST,
                            axum::Json(json!({"error": "invalid_grant"})),
                        );
                    }
                    (
                        StatusCode::OK,
                        axum::Json(json!({
                        "access_token": format!("graph-token-of-{oid}"),
                        "token_type": "Bearer", "expires_in": 3600})),
                    )
                }
            }),
        );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(Issuer { base, obo })
}

fn sign(key: &Key, claims: &Value) -> Result<String> {
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(key.kid.clone());
    Ok(jsonwebtoken::encode(&header, claims, &key.encoding)?)
}

/// A delegated user token of the tenant for our client.
fn claims(issuer: &Issuer, oid: &str, email: &str) -> Value {
    let now = chrono::Utc::now().timestamp();
    json!({
        "aud": format!("api://{CLIENT}"),
        "iss": issuer.v2(TENANT),
        "tid": TENANT,
        "oid": oid,
        "scp": "access_as_user",
        "upn": email,
        "name": format!("Name of {email}"),
        "iat": now, "nbf": now, "exp": now + 3600,
    })
}

async fn exchange(
    auth: &Auth,
    client: &Client,
    subject: &str,
    host: Option<&str>,
) -> Result<(StatusCode, Value)> {
    let mut form = vec![
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:token-exchange",
        ),
        ("subject_token", subject),
        (
            "subject_token_type",
            "urn:ietf:params:oauth:token-type:access_token",
        ),
        ("client_id", client.uid.as_str()),
    ];
    if let Some(s) = &client.secret {
        form.push(("client_secret", s));
    }
    let mut req = auth.http.post(auth.url("/auth/token")).form(&form);
    if let Some(h) = host {
        req = req.header(reqwest::header::HOST, h);
    }
    let res = req.send().await?;
    let status = res.status();
    Ok((status, res.json().await.unwrap_or(Value::Null)))
}

/// The platform with an Entra-like issuer: a single-tenant strategy for
/// this authority and a multi-tenant one for `other.example`, both
/// requiring a contoso mail.
struct Exchange {
    world: World,
    auth: Auth,
    backend: Client,
    tenant_key: Key,
    evil_key: Key,
    issuer: Issuer,
}

impl Exchange {
    async fn start() -> Result<Exchange> {
        let (world, auth, _public, backend) = setup().await?;
        let tenant_key = rsa_key(&world, "tenant.pem")?;
        let evil_key = rsa_key(&world, "evil.pem")?;
        let issuer = start_issuer(&tenant_key, &evil_key).await?;
        let tenant_url = |t: &str, what: &str| format!("{}/{t}/oauth2/v2.0/{what}", issuer.base);
        for (domain, tenant) in [("localhost", TENANT), ("other.example", "common")] {
            admin_json(
                &world,
                &[
                    "admin",
                    "create-oauth-strategy",
                    "--name",
                    "Entra",
                    "--client-id",
                    CLIENT,
                    "--client-secret",
                    "obo secret",
                    "--authorize-url",
                    &tenant_url(tenant, "authorize"),
                    "--token-url",
                    &tenant_url(tenant, "token"),
                    "--ensure-matching",
                    r#"{"mail": ["@contoso\\.test$"]}"#,
                    "--domain",
                    domain,
                ],
            )
            .await?;
        }
        Ok(Exchange {
            world,
            auth,
            backend,
            tenant_key,
            evil_key,
            issuer,
        })
    }

    /// A delegated user token of the tenant for our client, signed.
    fn token(&self, oid: &str, email: &str) -> Result<String> {
        sign(&self.tenant_key, &claims(&self.issuer, oid, email))
    }
}

/// A delegated user token is exchanged for ours (advertised in discovery):
/// a new user, a Graph token fetched on its behalf and kept sealed; a second
/// exchange (v1 issuer form) finds the same user and does not ask again.
#[tokio::test]
async fn a_user_token_is_exchanged_for_ours_with_the_graph_token_kept_sealed() -> Result<()> {
    let Exchange {
        world,
        auth,
        backend,
        tenant_key,
        issuer,
        ..
    } = Exchange::start().await?;
    let discovery = auth.json("/.well-known/openid-configuration").await?;
    assert!(
        discovery["grant_types_supported"]
            .as_array()
            .is_some_and(|g| g.contains(&json!("urn:ietf:params:oauth:grant-type:token-exchange"))),
        "{discovery}"
    );

    let good = sign(
        &tenant_key,
        &claims(&issuer, "oid-dana", "dana@contoso.test"),
    )?;
    let (status, body) = exchange(&auth, &backend, &good, None).await?;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["issued_token_type"],
        "urn:ietf:params:oauth:token-type:access_token"
    );
    assert!(body["refresh_token"].is_string(), "a token pair: {body}");
    let access = jwt_payload(body["access_token"].as_str().context("access token")?);
    assert_eq!(access["u"]["e"], "dana@contoso.test");
    assert_eq!(access["aud"], "localhost");
    assert_eq!(
        userinfo(&auth, body["access_token"].as_str().unwrap_or("")).await?,
        StatusCode::OK
    );
    let db = world.db().await?;
    let (user_id, graph): (String, Option<String>) =
        sqlx::query_as("SELECT id, access_token FROM users WHERE email = 'dana@contoso.test'")
            .fetch_one(&db)
            .await?;
    assert_eq!(access["sub"], json!(user_id));
    // Kept sealed: no trace of the Graph token at rest.
    let graph = graph.context("the Graph token is kept")?;
    assert!(
        graph.starts_with("sealed:v1:session:") && !graph.contains("graph-token"),
        "{graph}"
    );
    {
        let obo = issuer.obo.lock().expect("lock");
        assert_eq!(obo.len(), 1);
        assert_eq!(
            obo[0]["grant_type"],
            "urn:ietf:params:oauth:grant-type:jwt-bearer"
        );
        assert_eq!(obo[0]["requested_token_use"], "on_behalf_of");
        assert_eq!(obo[0]["assertion"], good);
        assert_eq!(obo[0]["client_secret"], "obo secret");
    }
    // Again (v1 issuer form this time): the same user, the kept Graph token is not asked again.
    let mut v1 = claims(&issuer, "oid-dana", "dana@contoso.test");
    v1["iss"] = json!(issuer.v1(TENANT));
    let (status, body) = exchange(&auth, &backend, &sign(&tenant_key, &v1)?, None).await?;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        jwt_payload(body["access_token"].as_str().unwrap_or(""))["sub"],
        json!(user_id)
    );
    assert_eq!(issuer.obo.lock().expect("lock").len(), 1);
    Ok(())
}

/// An existing user is found by email (and linked); a failing
/// on-behalf-of request is tolerated: no Graph token is kept.
#[tokio::test]
async fn an_existing_user_is_found_by_email_and_a_refused_graph_token_tolerated() -> Result<()> {
    let e = Exchange::start().await?;
    let (world, auth, backend, issuer) = (&e.world, &e.auth, &e.backend, &e.issuer);
    let db = world.db().await?;
    let frank = admin_json(
        world,
        &[
            "admin",
            "create-user",
            "--email",
            "frank@contoso.test",
            "--password",
            "pw",
        ],
    )
    .await?;
    let (status, body) = exchange(
        auth,
        backend,
        &sign(
            &e.tenant_key,
            &claims(issuer, "no-graph", "frank@contoso.test"),
        )?,
        None,
    )
    .await?;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        jwt_payload(body["access_token"].as_str().unwrap_or(""))["sub"],
        frank["id"]
    );
    assert_eq!(
        issuer.obo.lock().expect("lock").len(),
        1,
        "asked, and refused"
    );
    let graph: Option<String> =
        sqlx::query_scalar("SELECT access_token FROM users WHERE email = 'frank@contoso.test'")
            .fetch_one(&db)
            .await?;
    assert_eq!(graph, None);
    Ok(())
}

/// Each of the five rules broken on its own (the authority's strategy,
/// audience, issuer and key, tenant and token kind, the strategy's
/// matching), and a token that is no JWT: `400 invalid_grant` without the
/// reason, no user created, the reason in the log.
#[tokio::test]
async fn each_broken_rule_is_refused_with_invalid_grant_and_logged() -> Result<()> {
    let e = Exchange::start().await?;
    let (world, auth, backend, issuer) = (&e.world, &e.auth, &e.backend, &e.issuer);
    let (tenant_key, evil_key) = (&e.tenant_key, &e.evil_key);
    let db = world.db().await?;
    let users_before: i64 = sqlx::query_scalar("SELECT count(*) FROM users")
        .fetch_one(&db)
        .await?;
    let good = e.token("oid-dana", "dana@contoso.test")?;
    let other = admin_json(
        world,
        &[
            "admin",
            "create-app",
            "--name",
            "Other tenant's backend",
            "--redirect-uri",
            "https://other.example/cb",
            "--scopes",
            "public",
            "--domain",
            "other.example",
        ],
    )
    .await?;
    let other_backend = Client::of(&other)?;
    let mut refusals: Vec<(&str, String, Option<&str>)> = Vec::new();
    // 1. The authority's only strategy is multi-tenant (`common`).
    refusals.push(("multi-tenant strategy", good.clone(), Some("other.example")));
    // 2. Another audience.
    let mut c = claims(issuer, "oid-dana", "dana@contoso.test");
    c["aud"] = json!("api://someone-else");
    refusals.push(("audience", sign(tenant_key, &c)?, None));
    // 3a. Another tenant's issuer; 3b. the right issuer, signed by a key not
    // in its set; 3c. an issuer of its own that publishes the signing key.
    let mut c = claims(issuer, "oid-dana", "dana@contoso.test");
    c["iss"] = json!(issuer.v2(OTHER_TENANT));
    refusals.push(("issuer", sign(tenant_key, &c)?, None));
    refusals.push((
        "foreign key",
        sign(evil_key, &claims(issuer, "oid-dana", "dana@contoso.test"))?,
        None,
    ));
    let mut c = claims(issuer, "oid-dana", "dana@contoso.test");
    c["iss"] = json!(issuer.v2("evil"));
    refusals.push(("self-published key", sign(evil_key, &c)?, None));
    // 4a. tid of another tenant; 4b. expired; 4c. application-only token.
    let mut c = claims(issuer, "oid-dana", "dana@contoso.test");
    c["tid"] = json!(OTHER_TENANT);
    refusals.push(("tenant", sign(tenant_key, &c)?, None));
    let mut c = claims(issuer, "oid-dana", "dana@contoso.test");
    c["exp"] = json!(chrono::Utc::now().timestamp() - 600);
    refusals.push(("expired", sign(tenant_key, &c)?, None));
    let mut c = claims(issuer, "oid-app", "dana@contoso.test");
    c.as_object_mut().context("object")?.remove("scp");
    c["roles"] = json!(["Translate.All"]);
    refusals.push(("application token", sign(tenant_key, &c)?, None));
    // 5. ensure_matching on the Graph-named claims (mail).
    refusals.push((
        "ensure_matching",
        sign(tenant_key, &claims(issuer, "oid-eve", "eve@elsewhere.test"))?,
        None,
    ));
    refusals.push(("not a JWT", "opaque-token".to_owned(), None));
    for (rule, token, host) in refusals {
        let client = if host.is_some() {
            &other_backend
        } else {
            backend
        };
        let (status, body) = exchange(auth, client, &token, host).await?;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{rule}: {body}");
        assert_eq!(body["error"], "invalid_grant", "{rule}: {body}");
        assert_eq!(
            body["error_description"], "The subject token was not accepted.",
            "{rule}: the reason is logged, not returned"
        );
    }
    let users: i64 = sqlx::query_scalar("SELECT count(*) FROM users")
        .fetch_one(&db)
        .await?;
    assert_eq!(users, users_before, "no refused token created a user");
    let log = world.log(&format!(
        "auth-{}",
        auth.base.rsplit(':').next().unwrap_or("")
    ));
    for reason in [
        "no single-tenant identity-provider strategy",
        "audience",
        "not the issuer of tenant",
        "not in the tenant's key set",
        "not a delegated user token",
        "mail does not match",
    ] {
        assert!(log.contains(reason), "the log names the reason `{reason}`");
    }
    Ok(())
}
