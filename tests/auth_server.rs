//! The auth service over real HTTP: a `tolk auth` process, PostgreSQL, Redis.
//! Sign-in and the login event, the code flow with PKCE and consent, refresh
//! rotation and replay, revocation, userinfo, discovery and JWKS, and the
//! security checks (code reuse, PKCE, redirect URIs, consent replay, tampered
//! cookies and tokens, the password grant, unknown resources).

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

pub const REDIRECT: &str = "http://127.0.0.1/callback";

fn authorize_url(auth: &Auth, client: &Client, extra: &[(&str, &str)]) -> String {
    let mut url = reqwest::Url::parse(&auth.url("/auth/authorize")).expect("url");
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", &client.uid)
            .append_pair("redirect_uri", "http://127.0.0.1:53682/callback")
            .append_pair("scope", "openid public translate offline_access")
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
    let res = auth
        .http
        .get(authorize_url(auth, client, &[]))
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

#[tokio::test]
async fn signin_session_cookie_and_login_event() -> Result<()> {
    let (world, auth, _, _) = setup().await?;
    let redis = redis::Client::open(
        std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into()),
    )?;
    let mut pubsub = redis
        .get_async_pubsub()
        .await
        .context("Redis must run (REDIS_URL)")?;
    pubsub.subscribe(&auth.channel).await?;

    // Wrong password: 401, no cookie, no event.
    let res = auth
        .http
        .post(auth.url("/auth/signin"))
        .form(&[("email", "ann@example.com"), ("password", "wrong")])
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert!(session_cookie(&res).is_none());

    let res = auth
        .http
        .post(auth.url("/auth/signin"))
        .form(&[("email", "ann@example.com"), ("password", "correct horse")])
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::ACCEPTED);
    let (_, set) = session_cookie(&res).context("session cookie")?;
    for attr in ["Path=/auth", "HttpOnly", "SameSite=Lax", "Max-Age=86400"] {
        assert!(set.contains(attr), "{set} lacks {attr}");
    }
    assert!(
        !set.contains("Secure"),
        "not Secure outside production: {set}"
    );
    let legacy_cleared = res
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .any(|v| v.to_str().unwrap_or("").contains("Path=/; Max-Age=0"));
    assert!(legacy_cleared, "signing in expires a legacy Path=/ cookie");

    let mut messages = pubsub.on_message();
    let msg = tokio::time::timeout(Duration::from_secs(5), messages.next())
        .await
        .context("no login event within 5 s")?
        .context("stream ended")?;
    let payload: Value = serde_json::from_str(&msg.get_payload::<String>()?)?;
    let db = world.db().await?;
    let uid: String = sqlx::query_scalar("SELECT id FROM users WHERE email = 'Ann@Example.com'")
        .fetch_one(&db)
        .await?;
    assert_eq!(
        payload,
        serde_json::json!({ "user_id": uid, "provider": "internal" })
    );

    // The authority sees the session; the health probe answers without it.
    let cookie = format!(
        "_coauth_session={}",
        set.split(';')
            .next()
            .unwrap_or("")
            .trim_start_matches("_coauth_session=")
    );
    let a: Value = auth
        .http
        .get(auth.url("/auth/authority"))
        .header(COOKIE, &cookie)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(a["session"], true);
    assert_eq!(a["domain"], "localhost");
    let probe = auth
        .http
        .get(auth.url("/auth/authority?health"))
        .send()
        .await?;
    assert_eq!(probe.status(), StatusCode::OK);
    Ok(())
}

#[tokio::test]
async fn code_flow_pkce_refresh_rotation_revoke_userinfo() -> Result<()> {
    let (_world, auth, public, _) = setup().await?;

    // Without a session: off to the login page, coming back afterwards.
    let res = auth
        .http
        .get(authorize_url(&auth, &public, &[]))
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let loc = res.headers()[LOCATION].to_str()?.to_owned();
    assert!(
        loc.starts_with("/auth/login?continue=%2Fauth%2Fauthorize"),
        "{loc}"
    );

    let cookie = sign_in(&auth, "ann@example.com", "correct horse").await?;

    // The consent page: no framing, escaped client name.
    let res = auth
        .http
        .get(authorize_url(&auth, &public, &[]))
        .header(COOKIE, &cookie)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["x-frame-options"], "DENY");
    let csp = res.headers()["content-security-policy"]
        .to_str()?
        .to_owned();
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    let html = res.text().await?;
    assert!(html.contains("CLI &lt;tool&gt;") && !html.contains("CLI <tool>"));
    let fields = hidden_fields(&html);
    assert!(fields.contains_key("consent_token"));

    // A consent form replayed for another request re-renders the page.
    let mut tampered: Vec<(String, String)> = fields.clone().into_iter().collect();
    for (k, v) in &mut tampered {
        if k == "state" {
            *v = "another".into();
        }
    }
    tampered.push(("consent".into(), "allow".into()));
    let res = auth
        .http
        .post(auth.url("/auth/authorize"))
        .header(COOKIE, &cookie)
        .form(&tampered)
        .send()
        .await?;
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "a replayed consent form issues no code"
    );
    // ... or for another session (another sign-in of the same user).
    let other_cookie = sign_in(&auth, "ann@example.com", "correct horse").await?;
    let mut form: Vec<(String, String)> = fields.clone().into_iter().collect();
    form.push(("consent".into(), "allow".into()));
    let res = auth
        .http
        .post(auth.url("/auth/authorize"))
        .header(COOKIE, &other_cookie)
        .form(&form)
        .send()
        .await?;
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "a consent token of another session issues no code"
    );
    // A GET with consent=allow does not approve either.
    let res = auth
        .http
        .get(authorize_url(
            &auth,
            &public,
            &[
                ("consent", "allow"),
                ("consent_token", &fields["consent_token"]),
            ],
        ))
        .header(COOKIE, &cookie)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::OK);

    // The real approval: a code, the state and iss (RFC 9207).
    let res = auth
        .http
        .post(auth.url("/auth/authorize"))
        .header(COOKIE, &cookie)
        .form(&form)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::FOUND);
    let loc = res.headers()[LOCATION].to_str()?.to_owned();
    assert!(loc.starts_with("http://127.0.0.1:53682/callback?"), "{loc}");
    let q = query_of(&loc);
    assert_eq!(q["state"], "st-123");
    assert_eq!(q["iss"], auth.base);
    let code = q["code"].clone();

    // PKCE verifier mismatch.
    let (status, body) = redeem(
        &auth,
        &public,
        &code,
        "x-wrong-verifier-0123456789-abcdefghijklmnopqrstuv",
    )
    .await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );

    // A fresh code, redeemed properly.
    let code = get_code(&auth, &public, &cookie).await?;
    let (status, tokens) = redeem(&auth, &public, &code, VERIFIER).await?;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let access = tokens["access_token"]
        .as_str()
        .context("access_token")?
        .to_owned();
    let refresh = tokens["refresh_token"]
        .as_str()
        .context("refresh_token")?
        .to_owned();
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 7200);
    let claims = jwt_payload(&access);
    assert_eq!(claims["iss"], "POS");
    assert_eq!(claims["aud"], "localhost");
    assert_eq!(
        claims["scope"],
        serde_json::json!(["openid", "public", "translate", "offline_access"])
    );
    assert_eq!(
        claims["u"],
        serde_json::json!({ "n": "Ann", "e": "ann@example.com", "p": 0, "r": [] })
    );
    assert_eq!(
        claims["exp"].as_i64().unwrap_or(0) - claims["iat"].as_i64().unwrap_or(0),
        7200
    );
    assert!(claims["sub"].as_str().unwrap_or("").starts_with("user-"));

    // The signatures check out against the published JWKS.
    let disco: Value = auth
        .http
        .get(auth.url("/.well-known/openid-configuration"))
        .send()
        .await?
        .json()
        .await?;
    let disco2: Value = auth
        .http
        .get(auth.url("/.well-known/oauth-authorization-server"))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(disco, disco2);
    assert_eq!(disco["issuer"], auth.base);
    assert_eq!(
        disco["code_challenge_methods_supported"],
        serde_json::json!(["S256"])
    );
    let jwks: jsonwebtoken::jwk::JwkSet = auth
        .http
        .get(disco["jwks_uri"].as_str().context("jwks_uri")?)
        .send()
        .await?
        .json()
        .await?;
    let key = jsonwebtoken::DecodingKey::from_jwk(&jwks.keys[0])?;
    let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    v.set_audience(&[public.uid.as_str()]);
    v.set_issuer(&[auth.base.as_str()]);
    let id =
        jsonwebtoken::decode::<Value>(tokens["id_token"].as_str().context("id_token")?, &key, &v)?;
    assert_eq!(id.claims["email"], "ann@example.com");
    let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    v.set_audience(&["localhost"]);
    v.set_issuer(&["POS"]);
    jsonwebtoken::decode::<Value>(&access, &key, &v)?;

    // userinfo: Bearer required.
    assert_eq!(userinfo(&auth, &access).await?, StatusCode::OK);
    let info: Value = auth
        .http
        .get(auth.url("/auth/oauth/userinfo"))
        .bearer_auth(&access)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(info["email"], "ann@example.com");
    let res = auth.http.get(auth.url("/auth/userinfo")).send().await?;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert!(res.headers().contains_key("www-authenticate"));
    // A tampered token fails.
    let mut parts: Vec<&str> = access.split('.').collect();
    let forged = URL_SAFE_NO_PAD.encode(serde_json::to_vec(
        &serde_json::json!({"sub": "user-evil", "iss": "POS", "iat": 1, "exp": 9999999999_i64}),
    )?);
    parts[1] = &forged;
    assert_eq!(
        userinfo(&auth, &parts.join(".")).await?,
        StatusCode::UNAUTHORIZED
    );

    // Code reuse: refused, and the tokens issued from it are revoked.
    let (status, body) = redeem(&auth, &public, &code, VERIFIER).await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    assert_eq!(userinfo(&auth, &access).await?, StatusCode::UNAUTHORIZED);
    let (status, _) = token(
        &auth,
        &public,
        &[("grant_type", "refresh_token"), ("refresh_token", &refresh)],
    )
    .await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // Refresh rotation through the legacy alias path, then replay detection.
    let code = get_code(&auth, &public, &cookie).await?;
    let (_, t1) = redeem(&auth, &public, &code, VERIFIER).await?;
    let r1 = t1["refresh_token"].as_str().context("rt1")?.to_owned();
    let res = auth
        .http
        .post(auth.url("/auth/oauth/token"))
        .form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", r1.as_str()),
            ("client_id", public.uid.as_str()),
        ])
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["cache-control"], "no-store");
    let t2: Value = res.json().await?;
    let r2 = t2["refresh_token"].as_str().context("rt2")?.to_owned();
    let a2 = t2["access_token"].as_str().context("at2")?.to_owned();
    assert_ne!(r1, r2);
    assert_eq!(userinfo(&auth, &a2).await?, StatusCode::OK);
    // A narrower scope is fine, a wider one is not.
    let (status, body) = token(
        &auth,
        &public,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &r2),
            ("scope", "public email"),
        ],
    )
    .await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_scope"))
    );
    // Replaying r1 revokes the family: r2 and a2 die too.
    let (status, body) = token(
        &auth,
        &public,
        &[("grant_type", "refresh_token"), ("refresh_token", &r1)],
    )
    .await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    assert_eq!(userinfo(&auth, &a2).await?, StatusCode::UNAUTHORIZED);
    let (status, _) = token(
        &auth,
        &public,
        &[("grant_type", "refresh_token"), ("refresh_token", &r2)],
    )
    .await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // Revocation (RFC 7009): the access token stops working; unknown tokens are 200 too.
    let code = get_code(&auth, &public, &cookie).await?;
    let (_, t3) = redeem(&auth, &public, &code, VERIFIER).await?;
    let a3 = t3["access_token"].as_str().context("at3")?.to_owned();
    let res = auth
        .http
        .post(auth.url("/auth/revoke"))
        .form(&[("token", a3.as_str()), ("client_id", public.uid.as_str())])
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(userinfo(&auth, &a3).await?, StatusCode::UNAUTHORIZED);
    let res = auth
        .http
        .post(auth.url("/auth/oauth/revoke"))
        .form(&[("token", "nonsense"), ("client_id", public.uid.as_str())])
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::OK);

    // Logout with a Bearer: the token is revoked, logged_out_at stamped, the session ends.
    let code = get_code(&auth, &public, &cookie).await?;
    let (_, t4) = redeem(&auth, &public, &code, VERIFIER).await?;
    let a4 = t4["access_token"].as_str().context("at4")?.to_owned();
    let res = auth
        .http
        .get(auth.url("/auth/logout"))
        .header(COOKIE, &cookie)
        .bearer_auth(&a4)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(userinfo(&auth, &a4).await?, StatusCode::UNAUTHORIZED);
    let res = auth
        .http
        .get(authorize_url(&auth, &public, &[]))
        .header(COOKIE, &cookie)
        .send()
        .await?;
    assert_eq!(
        res.status(),
        StatusCode::SEE_OTHER,
        "the old session no longer authorizes"
    );
    Ok(())
}

#[tokio::test]
async fn security_errors() -> Result<()> {
    let (_world, auth, public, confidential) = setup().await?;
    let cookie = sign_in(&auth, "ann@example.com", "correct horse").await?;

    // The password grant, unknown grants.
    for grant in ["password", "urn:example:unknown"] {
        let (status, body) = token(
            &auth,
            &confidential,
            &[
                ("grant_type", grant),
                ("username", "ann@example.com"),
                ("password", "correct horse"),
            ],
        )
        .await?;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("unsupported_grant_type")),
            "{grant}"
        );
    }
    // client_credentials: works, a wrong secret is invalid_client, a public client may not.
    let (status, body) = token(
        &auth,
        &confidential,
        &[("grant_type", "client_credentials"), ("scope", "translate")],
    )
    .await?;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.get("refresh_token").is_none());
    let res = auth
        .http
        .post(auth.url("/auth/token"))
        .basic_auth(&confidential.uid, Some("wrong"))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert!(res.headers().contains_key("www-authenticate"));
    assert_eq!(res.json::<Value>().await?["error"], "invalid_client");
    let (status, body) = token(&auth, &public, &[("grant_type", "client_credentials")]).await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("unauthorized_client"))
    );
    // An unknown resource: invalid_target at the token endpoint and at authorize.
    let (status, body) = token(
        &auth,
        &confidential,
        &[
            ("grant_type", "client_credentials"),
            ("resource", "https://evil.example/api"),
        ],
    )
    .await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_target"))
    );
    let res = auth
        .http
        .get(authorize_url(
            &auth,
            &public,
            &[("resource", "https://evil.example/mcp")],
        ))
        .header(COOKIE, &cookie)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::FOUND);
    let q = query_of(res.headers()[LOCATION].to_str()?);
    assert_eq!(q["error"], "invalid_target");
    assert_eq!(q["iss"], auth.base);
    let res = auth
        .http
        .get(authorize_url(
            &auth,
            &public,
            &[("resource", &auth.url("/mcp"))],
        ))
        .header(COOKIE, &cookie)
        .send()
        .await?;
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "a resource on the authority is fine"
    );
    // Garbage codes: invalid_grant, never 500.
    let (status, body) = redeem(&auth, &public, "not-a-code", VERIFIER).await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );

    // Redirect URIs not registered / open-redirect attempts: an error page, no redirect.
    for bad in [
        "https://evil.example/callback",
        "http://127.0.0.1:53682/callback/../evil",
        "http://127.0.0.1:53682/other",
        "http://localhost:53682/callback",
        "http://127.0.0.1@evil.example/callback",
        "http://127.0.0.1:53682/callback#frag",
        "javascript:alert(1)",
    ] {
        let mut url = reqwest::Url::parse(&auth.url("/auth/authorize"))?;
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &public.uid)
            .append_pair("redirect_uri", bad)
            .append_pair("code_challenge", &challenge(VERIFIER))
            .append_pair("code_challenge_method", "S256");
        let res = auth.http.get(url).header(COOKIE, &cookie).send().await?;
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{bad}");
        assert!(res.headers().get(LOCATION).is_none(), "{bad}");
        assert!(res.text().await?.contains("<h1>"), "an HTML error page");
    }
    // Unknown client: error page.
    let res = auth
        .http
        .get(auth.url("/auth/authorize?response_type=code&client_id=nope"))
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);

    // PKCE: required for a public client; plain refused.
    for extra in [
        vec![("code_challenge", "")],
        vec![("code_challenge_method", "plain")],
    ] {
        let mut url = reqwest::Url::parse(&auth.url("/auth/authorize"))?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &public.uid)
                .append_pair("redirect_uri", REDIRECT)
                .append_pair("state", "s");
            if extra[0].0 == "code_challenge_method" {
                q.append_pair("code_challenge", &challenge(VERIFIER));
            }
            for (k, v) in &extra {
                q.append_pair(k, v);
            }
        }
        let res = auth.http.get(url).header(COOKIE, &cookie).send().await?;
        assert_eq!(res.status(), StatusCode::FOUND, "{extra:?}");
        let q = query_of(res.headers()[LOCATION].to_str()?);
        assert_eq!(q["error"], "invalid_request", "{extra:?}");
        assert_eq!(q["state"], "s");
    }

    // A tampered session cookie is no session.
    let (name, value) = cookie.split_once('=').context("cookie")?;
    let mut bytes = value.as_bytes().to_vec();
    let i = bytes.len() / 2;
    bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
    let tampered = format!("{name}={}", String::from_utf8(bytes)?);
    let res = auth
        .http
        .get(authorize_url(&auth, &public, &[]))
        .header(COOKIE, &tampered)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    // A legacy `_coauth_session` (Path=/, another format) beside ours still works.
    let both = format!("_coauth_session=BAh7B0kiD3Nlc3Npb25faWQGOgZFVEkiJTk4--0123abcd; {cookie}");
    let res = auth
        .http
        .get(authorize_url(&auth, &public, &[]))
        .header(COOKIE, &both)
        .send()
        .await?;
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "signed in despite the legacy cookie"
    );

    // An expired JWT (signed with the same development key) is refused.
    let keys =
        jsonwebtoken::EncodingKey::from_rsa_pem(include_bytes!("../auth/src/tokens/dev_key.pem"))?;
    let now = chrono::Utc::now().timestamp();
    let expired = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256),
        &serde_json::json!({"iss": "POS", "iat": now - 9000, "exp": now - 1800, "jti": uuid::Uuid::new_v4().to_string(), "aud": "localhost", "scope": ["public"], "sub": "user-x", "u": {"n": "", "e": "", "p": 0, "r": []}}),
        &keys,
    )?;
    assert_eq!(userinfo(&auth, &expired).await?, StatusCode::UNAUTHORIZED);
    Ok(())
}

#[tokio::test]
async fn api_accepts_bearer_tokens_by_scope() -> Result<()> {
    let (mut world, auth, _, confidential) = setup().await?;
    let api = world.start_api().await?;
    let (_, with) = token(
        &auth,
        &confidential,
        &[("grant_type", "client_credentials"), ("scope", "translate")],
    )
    .await?;
    let (_, without) = token(
        &auth,
        &confidential,
        &[("grant_type", "client_credentials"), ("scope", "public")],
    )
    .await?;
    let usage = |t: &str| {
        api.http
            .get(api.url("/v2/usage"))
            .bearer_auth(t.to_owned())
            .send()
    };
    let res = usage(with["access_token"].as_str().context("at")?).await?;
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "a translate-scoped token is accepted"
    );
    let res = usage(without["access_token"].as_str().context("at")?).await?;
    assert_eq!(
        res.status(),
        StatusCode::FORBIDDEN,
        "a token without the translate scope is not"
    );
    let res = usage("garbage.token.here").await?;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    // The DeepL key path is unchanged.
    let key = world.create_key("k", false).await?;
    let res = api
        .keyed(reqwest::Method::GET, "/v2/usage", &key)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::OK);
    // The auth service knows the same key store: X-API-Key, query and cookie.
    for req in [
        auth.http
            .get(auth.url("/auth/authority"))
            .header("X-API-Key", &key),
        auth.http
            .get(auth.url(&format!("/auth/authority?api-key={key}"))),
        auth.http
            .get(auth.url("/auth/authority"))
            .header(COOKIE, format!("api-key={key}")),
    ] {
        let a: Value = req.send().await?.json().await?;
        assert_eq!(a["token_valid"], true);
    }
    let a: Value = auth
        .http
        .get(auth.url("/auth/authority"))
        .header("X-API-Key", format!("{key}x"))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(a["token_valid"], false);
    Ok(())
}

#[tokio::test]
async fn scheduler_prunes_expired_codes_and_tokens() -> Result<()> {
    let (mut world, auth, public, confidential) = setup().await?;
    let cookie = sign_in(&auth, "ann@example.com", "correct horse").await?;
    let old_code = get_code(&auth, &public, &cookie).await?;
    let _fresh_code = get_code(&auth, &public, &cookie).await?;
    let mut jtis = Vec::new();
    for _ in 0..2 {
        let (status, body) = token(
            &auth,
            &confidential,
            &[("grant_type", "client_credentials"), ("scope", "translate")],
        )
        .await?;
        assert_eq!(status, StatusCode::OK, "{body}");
        let access = body["access_token"].as_str().context("access_token")?;
        jtis.push(uuid::Uuid::parse_str(
            jwt_payload(access)["jti"].as_str().context("jti")?,
        )?);
    }
    let db = world.db().await?;
    // One code and one token expired two days ago (kept a day for reuse checks).
    let digest = tolk_storage::auth::digest(&old_code);
    let aged = sqlx::query(
        "UPDATE oauth_codes SET expires_at = now() - interval '2 days' WHERE code_digest = $1",
    )
    .bind(&digest)
    .execute(&db)
    .await?;
    assert_eq!(aged.rows_affected(), 1, "codes are stored as hex SHA-256");
    sqlx::query(
        "UPDATE oauth_tokens SET expires_at = now() - interval '2 days', \
         refresh_expires_at = NULL WHERE jti = $1",
    )
    .bind(jtis[0])
    .execute(&db)
    .await?;
    let count = |sql: &'static str| {
        let db = db.clone();
        async move { anyhow::Ok(sqlx::query_scalar::<_, i64>(sql).fetch_one(&db).await?) }
    };
    assert_eq!(count("SELECT count(*) FROM oauth_codes").await?, 2);
    assert_eq!(count("SELECT count(*) FROM oauth_tokens").await?, 2);

    world.spawn(&["scheduler", "--tick-secs", "1"], "scheduler")?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let codes = count("SELECT count(*) FROM oauth_codes").await?;
        let tokens = count("SELECT count(*) FROM oauth_tokens").await?;
        if codes == 1 && tokens == 1 {
            break;
        }
        if Instant::now() > deadline {
            bail!(
                "not pruned after 30 s: {codes} codes, {tokens} tokens; {}",
                world.log("scheduler")
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let left: uuid::Uuid = sqlx::query_scalar("SELECT jti FROM oauth_tokens")
        .fetch_one(&db)
        .await?;
    assert_eq!(left, jtis[1], "the live token stays");
    let gone: i64 = sqlx::query_scalar("SELECT count(*) FROM oauth_codes WHERE code_digest = $1")
        .bind(&digest)
        .fetch_one(&db)
        .await?;
    assert_eq!(gone, 0, "the expired code went");
    Ok(())
}

/// A stand-in for the earlier platform's key inspection at PLATFORM_URI: a real
/// HTTP server answering by the presented key (good, bad, slow, broken).
async fn legacy_platform() -> Result<(String, std::sync::Arc<std::sync::Mutex<Vec<String>>>)> {
    use axum::http::{HeaderMap, StatusCode as S};
    let seen: std::sync::Arc<std::sync::Mutex<Vec<String>>> = Default::default();
    let record = seen.clone();
    let app = axum::Router::new().route(
        "/api/engine/v2/api_keys/inspect",
        axum::routing::get(move |headers: HeaderMap| {
            let record = record.clone();
            async move {
                let key = headers
                    .get("x-api-key")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_owned();
                record.lock().expect("lock").push(key.clone());
                match key.as_str() {
                    "legacy-id.good" => (
                        S::OK,
                        axum::Json(serde_json::json!({"id": "legacy-id", "owner": "legacy"})),
                    ),
                    "legacy-id.slow" => {
                        tokio::time::sleep(Duration::from_secs(8)).await;
                        (S::OK, axum::Json(serde_json::json!({})))
                    }
                    "legacy-id.broken" => (
                        S::INTERNAL_SERVER_ERROR,
                        axum::Json(serde_json::json!({"error": "down"})),
                    ),
                    _ => (
                        S::UNAUTHORIZED,
                        axum::Json(serde_json::json!({"error": "unknown key"})),
                    ),
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok((base, seen))
}

#[tokio::test]
async fn api_keys_fall_back_to_the_legacy_platform() -> Result<()> {
    let (platform, seen) = legacy_platform().await?;
    let mut world = World::new("auth").await?;
    // An authority (created with the application).
    admin_json(
        &world,
        &[
            "admin",
            "create-app",
            "--name",
            "Backend",
            "--redirect-uri",
            "https://app.example.com/cb",
        ],
    )
    .await?;
    let local = world.create_key("local", false).await?;
    world
        .extra_env
        .push(("PLATFORM_URI".into(), format!("{platform}/")));
    let auth = start_auth(&mut world).await?;
    let authority = |key: String| {
        let http = auth.http.clone();
        let url = auth.url("/auth/authority");
        async move {
            let res = http.get(url).header("X-API-Key", key).send().await?;
            let status = res.status();
            let body: Value = res.json().await?;
            anyhow::Ok((status, body))
        }
    };

    // A key of our own store: the platform is not asked.
    let (status, body) = authority(local.clone()).await?;
    assert_eq!(
        (status, &body["token_valid"]),
        (StatusCode::OK, &Value::Bool(true))
    );
    assert!(
        seen.lock().expect("lock").is_empty(),
        "local keys stay local"
    );

    // A key the platform vouches for.
    let (status, body) = authority("legacy-id.good".into()).await?;
    assert_eq!(
        (status, &body["token_valid"]),
        (StatusCode::OK, &Value::Bool(true))
    );
    // One it refuses (401): not valid, no error.
    let (status, body) = authority("legacy-id.bad".into()).await?;
    assert_eq!(
        (status, &body["token_valid"]),
        (StatusCode::OK, &Value::Bool(false))
    );
    // A platform error: a 502 that says what failed.
    let (status, body) = authority("legacy-id.broken".into()).await?;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    let msg = body["message"].as_str().unwrap_or_default();
    assert!(msg.contains("PLATFORM_URI") && msg.contains("500"), "{msg}");
    // A platform that does not answer: a 502 after the 5 s timeout, not a hang.
    let t = Instant::now();
    let (status, body) = authority("legacy-id.slow".into()).await?;
    let waited = t.elapsed();
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    let msg = body["message"].as_str().unwrap_or_default();
    assert!(msg.contains("did not answer within 5s"), "{msg}");
    assert!(
        waited >= Duration::from_secs(4) && waited < Duration::from_secs(8),
        "{waited:?}"
    );
    // A key without the {id}.{secret} shape is not sent anywhere.
    let (_, body) = authority("no-dot-here".into()).await?;
    assert_eq!(body["token_valid"], false);
    assert_eq!(
        *seen.lock().expect("lock"),
        [
            "legacy-id.good",
            "legacy-id.bad",
            "legacy-id.broken",
            "legacy-id.slow"
        ],
        "the platform saw each presented key once, in X-API-Key"
    );
    // The service still answers after the timeout.
    let (status, _) = authority(local).await?;
    assert_eq!(status, StatusCode::OK);
    Ok(())
}

/// Whether the cookie is a live session: GET /auth/authority reports it.
async fn has_session(auth: &Auth, cookie: &str) -> Result<bool> {
    let body: Value = auth
        .http
        .get(auth.url("/auth/authority"))
        .header(COOKIE, cookie)
        .send()
        .await?
        .json()
        .await?;
    body["session"].as_bool().context("session")
}

async fn sign_in_max_age(auth: &Auth) -> Result<(String, String)> {
    let res = auth
        .http
        .post(auth.url("/auth/signin"))
        .json(&serde_json::json!({"email": "ann@example.com", "password": "correct horse"}))
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::ACCEPTED);
    let (pair, set) = session_cookie(&res).context("session cookie")?;
    let max_age = set
        .split(';')
        .find_map(|a| a.trim().strip_prefix("Max-Age="))
        .context("Max-Age")?
        .to_owned();
    Ok((pair, max_age))
}

#[tokio::test]
async fn sessions_time_out() -> Result<()> {
    let mut world = World::new("auth").await?;
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
    world
        .extra_env
        .push(("SESSION_TIMEOUT_MINUTES".into(), "1".into()));
    let auth = start_auth(&mut world).await?;

    // SESSION_TIMEOUT_MINUTES sets the cookie's age ...
    let (short, max_age) = sign_in_max_age(&auth).await?;
    assert_eq!(max_age, "60");
    assert!(has_session(&auth, &short).await?);
    // ... and the authority's internals.session_timeout wins over it.
    let db = world.db().await?;
    sqlx::query("UPDATE authorities SET internals = internals || '{\"session_timeout\": 3}'")
        .execute(&db)
        .await?;
    let (long, max_age) = sign_in_max_age(&auth).await?;
    assert_eq!(max_age, "180");

    // A client that ignores Max-Age and sends the cookie after the timeout has no
    // session: the expiry sealed inside the cookie is checked by the server.
    tokio::time::sleep(Duration::from_secs(62)).await;
    assert!(
        !has_session(&auth, &short).await?,
        "a 1-minute session is over after 62 s"
    );
    assert!(has_session(&auth, &long).await?, "a 3-minute one is not");
    let res = auth
        .http
        .get(auth.url("/auth/login?continue=%2Fauth%2Fhealthz"))
        .header(COOKIE, &short)
        .send()
        .await?;
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "the sign-in page again, not a pass-through"
    );
    Ok(())
}

#[tokio::test]
async fn tolk_up_serves_auth_and_the_api_together() -> Result<()> {
    let mut world = World::new("auth").await?;
    let app = admin_json(
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
        ],
    )
    .await?;
    let client = Client {
        uid: app["uid"].as_str().context("uid")?.to_owned(),
        secret: app["secret"].as_str().map(str::to_owned),
    };
    world
        .extra_env
        .push(("COOKIE_SESSION_SECRET".into(), SECRET.into()));
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let up = world.spawn(&["up", "--listen", &listen, "--no-migrate"], "up")?;
    let auth = Auth {
        base: format!("http://{listen}"),
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
            break;
        }
        if Instant::now() > deadline {
            bail!("tolk up did not come up: {}", world.log("up"));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // One address: discovery, a token from /auth, the token on /v2.
    let meta: Value = auth
        .http
        .get(auth.url("/.well-known/openid-configuration"))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(meta["token_endpoint"], auth.url("/auth/token"));
    let (status, body) = token(
        &auth,
        &client,
        &[("grant_type", "client_credentials"), ("scope", "translate")],
    )
    .await?;
    assert_eq!(status, StatusCode::OK, "{body}");
    let access = body["access_token"].as_str().context("access_token")?;
    let res = auth
        .http
        .post(auth.url("/v2/translate"))
        .bearer_auth(access)
        .json(
            &serde_json::json!({"text": ["Hello world"], "source_lang": "EN", "target_lang": "ES"}),
        )
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::OK);
    let out: Value = res.json().await?;
    let text = out["translations"][0]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("Hola"), "{out}");
    let res = auth
        .http
        .get(auth.url("/v2/usage"))
        .bearer_auth(access)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::OK);
    let usage: Value = res.json().await?;
    assert_eq!(usage["character_count"], 11, "{usage}");
    // The voice service needs the voice scope.
    let res = auth
        .http
        .get(auth.url("/v1/tts/voices"))
        .bearer_auth(access)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    // Revoked at /auth: refused at /v2 at once.
    let res = auth
        .http
        .post(auth.url("/auth/revoke"))
        .form(&[
            ("token", access),
            ("client_id", &client.uid),
            ("client_secret", client.secret.as_deref().unwrap_or("")),
        ])
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::OK);
    let res = auth
        .http
        .get(auth.url("/v2/usage"))
        .bearer_auth(access)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);

    // SIGTERM stops all of it (API, auth, worker, scheduler) cleanly.
    std::process::Command::new("kill")
        .args(["-TERM", &up.to_string()])
        .status()?;
    let status = world.wait_exit(up, Duration::from_secs(30)).await?;
    assert!(status.success(), "tolk up exited with {status}");
    Ok(())
}
