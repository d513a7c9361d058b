//! The auth service over real HTTP: a `tolk auth` process, PostgreSQL, Redis.
//! Sign-in and the login event, the code flow with PKCE and consent, refresh
//! rotation and replay, revocation, userinfo, discovery and JWKS, and the
//! security checks (code reuse, PKCE, redirect URIs, consent replay, tampered
//! cookies and tokens, the password grant, unknown resources), dynamic
//! client registration, client ID metadata documents.

use std::collections::HashMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures::StreamExt;
use reqwest::StatusCode;
use reqwest::header::{COOKIE, LOCATION};
use serde_json::Value;

use crate::support::{World, free_port};

mod api;
mod code_flow;
mod mcp_clients;
mod metadata_documents;
mod oauth_sign_in;
mod provider_tokens;
mod register;
mod saml_sign_in;
mod security;
mod signin;
mod token_exchange;

const SECRET: &str = "an e2e cookie session secret of more than 32 bytes";
pub const VERIFIER: &str = "e2e-verifier-0123456789-abcdefghijklmnopqrstuvwxyz";

pub fn challenge(verifier: &str) -> String {
    use sha2::Digest;
    URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()))
}

/// A running auth service and what the test registered in it.
pub struct Auth {
    pub base: String,
    pub http: reqwest::Client,
    pub channel: String,
}

impl Auth {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

/// Runs `tolk <args>` and parses its one JSON line.
pub async fn admin_json(world: &World, args: &[&str]) -> Result<Value> {
    let out = world
        .tolk(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .await?;
    if !out.status.success() {
        bail!("{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// Starts `tolk auth` on localhost:PORT with Redis and a fixed session secret.
/// A world whose `localhost` tenant has the user ann@example.com (password
/// `correct horse`).
pub async fn world_with_ann(tag: &str) -> Result<World> {
    let world = World::new(tag).await?;
    admin_json(
        &world,
        &[
            "admin",
            "create-user",
            "--email",
            "ann@example.com",
            "--password",
            "correct horse",
        ],
    )
    .await?;
    Ok(world)
}

/// Lets the auth services this world starts fetch client metadata documents
/// from the test's TLS server ([`metadata_documents::metadata_server`]): its
/// CA trusted and loopback addresses allowed, through the test-only settings.
pub fn trust_metadata_server(world: &mut World) {
    let ca = world.path("metadata").join("ca.pem");
    world.extra_env.push((
        "TOLK_TEST_CLIENT_METADATA_CA".into(),
        ca.display().to_string(),
    ));
    world
        .extra_env
        .push(("TOLK_TEST_CLIENT_METADATA_LOOPBACK".into(), "true".into()));
}

pub async fn start_auth(world: &mut World) -> Result<Auth> {
    let channel = format!("platform/auth/login/e2e-{}", uuid::Uuid::new_v4().simple());
    world.extra_env.push((
        "REDIS_URL".into(),
        std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into()),
    ));
    world
        .extra_env
        .push(("LOGIN_EVENTS_CHANNEL".into(), channel.clone()));
    world
        .extra_env
        .push(("COOKIE_SESSION_SECRET".into(), SECRET.into()));
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    world.spawn(
        &["auth", "--listen", &listen, "--no-migrate"],
        &format!("auth-{port}"),
    )?;
    let auth = Auth {
        base: format!("http://localhost:{port}"),
        http: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .build()?,
        channel,
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(r) = auth.http.get(auth.url("/auth/healthz")).send().await
            && r.status().is_success()
        {
            return Ok(auth);
        }
        if Instant::now() > deadline {
            bail!(
                "auth service did not come up: {}",
                world.log(&format!("auth-{port}"))
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `tolk up` listening on `127.0.0.1:{port}`, reached as
/// `http://{host}:{port}`, once both the API and the auth routes answer:
/// its pid and the client of its address.
pub async fn tolk_up(world: &mut World, port: u16, host: &str) -> Result<(u32, Auth)> {
    world
        .extra_env
        .push(("COOKIE_SESSION_SECRET".into(), SECRET.into()));
    let listen = format!("127.0.0.1:{port}");
    let up = world.spawn(&["up", "--listen", &listen, "--no-migrate"], "up")?;
    let auth = Auth {
        base: format!("http://{host}:{port}"),
        http: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(60))
            .build()?,
        channel: String::new(),
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let auth_up = auth.http.get(auth.url("/auth/healthz")).send().await;
        let api_up = auth.http.get(auth.url("/healthz")).send().await;
        if matches!((&auth_up, &api_up), (Ok(a), Ok(b)) if a.status().is_success() && b.status().is_success())
        {
            return Ok((up, auth));
        }
        if Instant::now() > deadline {
            bail!("tolk up did not come up: {}", world.log("up"));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The `_coauth_session=…` pair of a response's Set-Cookie headers.
fn session_cookie(res: &reqwest::Response) -> Option<(String, String)> {
    res.headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| {
            v.starts_with("_coauth_session=")
                && v.contains("Path=/auth")
                && !v.contains("Max-Age=0")
        })
        .map(|v| {
            let pair = v.split(';').next().unwrap_or("").to_owned();
            (pair, v.to_owned())
        })
}

/// The `name=value` pair of the response's `Set-Cookie` for cookie `name`.
pub fn set_cookie(res: &reqwest::Response, name: &str) -> Option<String> {
    res.headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| {
            v.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('='))
        })
        .and_then(|v| v.split(';').next())
        .map(str::to_owned)
}

/// Signs in; returns the `Cookie` header value.
pub async fn sign_in(auth: &Auth, email: &str, password: &str) -> Result<String> {
    let res = auth
        .http
        .post(auth.url("/auth/signin"))
        .json(&serde_json::json!({ "email": email, "password": password }))
        .send()
        .await?;
    if res.status() != StatusCode::ACCEPTED {
        bail!("signin answered {}", res.status());
    }
    Ok(session_cookie(&res).context("no session cookie")?.0)
}

/// The hidden inputs of a page's form.
fn hidden_fields(html: &str) -> HashMap<String, String> {
    let unescape = |s: &str| {
        s.replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
    };
    html.split("<input type=\"hidden\" ")
        .skip(1)
        .filter_map(|chunk| {
            let name = chunk.split("name=\"").nth(1)?.split('"').next()?;
            let value = chunk.split("value=\"").nth(1)?.split('"').next()?;
            Some((unescape(name), unescape(value)))
        })
        .collect()
}

pub fn query_of(location: &str) -> HashMap<String, String> {
    let url = reqwest::Url::parse(location).expect("absolute location");
    url.query_pairs().into_owned().collect()
}

pub fn jwt_payload(token: &str) -> Value {
    let part = token.split('.').nth(1).expect("a JWT");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).expect("base64url")).expect("json")
}

pub struct Client {
    pub uid: String,
    pub secret: Option<String>,
}

impl Client {
    /// The client `tolk admin create-app` printed.
    pub fn of(app: &Value) -> Result<Self> {
        Ok(Self {
            uid: app["uid"].as_str().context("uid")?.to_owned(),
            secret: app["secret"].as_str().map(str::to_owned),
        })
    }
}

impl Auth {
    /// GET `path` as JSON.
    pub async fn json(&self, path: &str) -> Result<Value> {
        Ok(self.http.get(self.url(path)).send().await?.json().await?)
    }
}

pub const REDIRECT: &str = "http://127.0.0.1/callback";

/// The scopes the tests' authorizations ask for.
const SCOPE: &str = "openid public translate offline_access";

fn authorize_url(auth: &Auth, client: &Client, extra: &[(&str, &str)]) -> String {
    authorize_url_for(auth, client, SCOPE, extra)
}

fn authorize_url_for(auth: &Auth, client: &Client, scope: &str, extra: &[(&str, &str)]) -> String {
    let mut url = reqwest::Url::parse(&auth.url("/auth/authorize")).expect("url");
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", &client.uid)
            .append_pair("redirect_uri", "http://127.0.0.1:53682/callback")
            .append_pair("scope", scope)
            .append_pair("state", "st-123")
            .append_pair("code_challenge", &challenge(VERIFIER))
            .append_pair("code_challenge_method", "S256");
        for (k, v) in extra {
            q.append_pair(k, v);
        }
    }
    url.to_string()
}

/// Authorize + consent: the code.
async fn get_code(auth: &Auth, client: &Client, cookie: &str) -> Result<String> {
    get_code_for(auth, client, cookie, SCOPE).await
}

/// Authorize + consent for `scope`: the code.
async fn get_code_for(auth: &Auth, client: &Client, cookie: &str, scope: &str) -> Result<String> {
    get_code_with(auth, client, cookie, scope, &[]).await
}

/// Authorize (with `extra` parameters) + consent for `scope`: the code.
async fn get_code_with(
    auth: &Auth,
    client: &Client,
    cookie: &str,
    scope: &str,
    extra: &[(&str, &str)],
) -> Result<String> {
    let res = auth
        .http
        .get(authorize_url_for(auth, client, scope, extra))
        .header(COOKIE, cookie)
        .send()
        .await?;
    if res.status() != StatusCode::OK {
        bail!("authorize answered {}", res.status());
    }
    let fields = hidden_fields(&res.text().await?);
    let mut form: Vec<(String, String)> = fields.into_iter().collect();
    form.push(("consent".into(), "allow".into()));
    let res = auth
        .http
        .post(auth.url("/auth/authorize"))
        .header(COOKIE, cookie)
        .form(&form)
        .send()
        .await?;
    if res.status() != StatusCode::FOUND {
        bail!("consent answered {}: {}", res.status(), res.text().await?);
    }
    let loc = res.headers()[LOCATION].to_str()?.to_owned();
    let q = query_of(&loc);
    q.get("code").cloned().context("no code in the redirect")
}

pub async fn token(
    auth: &Auth,
    client: &Client,
    form: &[(&str, &str)],
) -> Result<(StatusCode, Value)> {
    let mut body: Vec<(&str, &str)> = form.to_vec();
    body.push(("client_id", &client.uid));
    if let Some(s) = &client.secret {
        body.push(("client_secret", s));
    }
    let res = auth
        .http
        .post(auth.url("/auth/token"))
        .form(&body)
        .send()
        .await?;
    let status = res.status();
    Ok((status, res.json().await.unwrap_or(Value::Null)))
}

pub async fn userinfo(auth: &Auth, access: &str) -> Result<StatusCode> {
    Ok(auth
        .http
        .get(auth.url("/auth/userinfo"))
        .bearer_auth(access)
        .send()
        .await?
        .status())
}

async fn redeem(
    auth: &Auth,
    client: &Client,
    code: &str,
    verifier: &str,
) -> Result<(StatusCode, Value)> {
    token(
        auth,
        client,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", "http://127.0.0.1:53682/callback"),
            ("code_verifier", verifier),
        ],
    )
    .await
}

pub async fn setup() -> Result<(World, Auth, Client, Client)> {
    let mut world = World::new("auth").await?;
    admin_json(
        &world,
        &[
            "admin",
            "create-user",
            "--email",
            "Ann@Example.com",
            "--password",
            "correct horse",
            "--name",
            "Ann",
        ],
    )
    .await?;
    let public = admin_json(
        &world,
        &[
            "admin",
            "create-app",
            "--name",
            "CLI <tool>",
            "--redirect-uri",
            REDIRECT,
            "--scopes",
            "public openid profile email offline_access translate",
            "--public",
        ],
    )
    .await?;
    let confidential = admin_json(
        &world,
        &[
            "admin",
            "create-app",
            "--name",
            "Backend",
            "--redirect-uri",
            "https://app.example.com/cb",
            "--scopes",
            "public translate",
            "--skip-authorization",
        ],
    )
    .await?;
    let auth = start_auth(&mut world).await?;
    let public = Client {
        uid: public["uid"].as_str().context("uid")?.to_owned(),
        secret: None,
    };
    let confidential = Client {
        uid: confidential["uid"].as_str().context("uid")?.to_owned(),
        secret: Some(
            confidential["secret"]
                .as_str()
                .context("secret")?
                .to_owned(),
        ),
    };
    Ok((world, auth, public, confidential))
}
