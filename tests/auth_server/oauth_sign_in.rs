//! Sign-in through a tenant's OpenID provider (`oauth_strat`): a real one,
//! node-oidc-provider (npm `oidc-provider`, installed by scripts/setup.sh into
//! TOLK_TEST_NODE), started by the test; the user signs in in headless
//! Chromium. The first sign-in creates the user, the second finds the same
//! one, a strategy whose `ensure_matching` the account fails lands on the
//! failure page. Without a browser: a callback whose `state` this browser
//! did not start is refused, and an unknown strategy is refused.

use fantoccini::Locator;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::*;
use crate::auth_browser::Driver;
use crate::support::node_packages;

/// node-oidc-provider, running until dropped.
pub struct Upstream {
    pub base: String,
    _child: Child,
}

/// Starts node-oidc-provider on `port` with one confidential client.
pub async fn start_upstream(
    world: &World,
    port: u16,
    client_id: &str,
    secret: &str,
    redirect_uris: &[String],
) -> Result<Upstream> {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/auth_server/oidc_provider.mjs");
    let log = std::fs::File::create(world.path("oidc-provider.log"))?;
    let client = serde_json::json!({
        "client_id": client_id,
        "client_secret": secret,
        "redirect_uris": redirect_uris,
    });
    let mut child = Command::new("node")
        .arg(&script)
        .env("TOLK_TEST_NODE", node_packages("oidc-provider")?)
        .env("OIDC_PORT", port.to_string())
        .env("OIDC_CLIENT", client.to_string())
        .env("NODE_ENV", "test")
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .kill_on_drop(true)
        .spawn()
        .context("node must be installed (scripts/setup.sh test installs nodejs and npm)")?;
    let stdout = child.stdout.take().context("stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let ready = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await? {
            if line.trim() == "ready" {
                return Ok::<bool, std::io::Error>(true);
            }
        }
        Ok(false)
    })
    .await;
    if !matches!(ready, Ok(Ok(true))) {
        bail!(
            "node-oidc-provider did not start: {}",
            std::fs::read_to_string(world.path("oidc-provider.log")).unwrap_or_default()
        );
    }
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(Upstream {
        base: format!("http://127.0.0.1:{port}"),
        _child: child,
    })
}

/// `tolk admin create-oauth-strategy` toward the upstream; its id.
async fn strategy(world: &World, upstream: &str, extra: &[&str]) -> Result<String> {
    let mut args = vec![
        "admin",
        "create-oauth-strategy",
        "--name",
        "Upstream OpenID",
        "--client-id",
        "tolk-e2e",
        "--client-secret",
        "upstream client secret",
        "--site",
        upstream,
        "--authorize-url",
        "/auth",
        "--token-url",
        "/token",
        "--raw-info-url",
        "/me",
        "--auth-scheme",
        "basic_auth",
        "--scope",
        "openid email profile",
    ];
    args.extend_from_slice(extra);
    let out = admin_json(world, &args).await?;
    Ok(out["id"].as_str().context("strategy id")?.to_owned())
}

/// Walks the browser through the provider's pages (sign-in as `login`, then
/// consent) until it leaves the provider; the URL it lands on.
async fn through_upstream(driver: &Driver, upstream: &str, login: &str) -> Result<String> {
    let b = driver.b();
    for _ in 0..10 {
        let url = b.current_url().await?.to_string();
        if !url.starts_with(upstream) {
            return Ok(url);
        }
        if let Ok(field) = b.find(Locator::Css("input[name=login]")).await {
            field.send_keys(login).await?;
            b.find(Locator::Css("input[name=password]"))
                .await?
                .send_keys("any password")
                .await?;
        }
        b.find(Locator::Css("button[type=submit]"))
            .await?
            .click()
            .await?;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    bail!(
        "the browser stayed at the identity provider: {}",
        b.current_url().await?
    )
}

/// The page's text (the JSON of /auth/authority, or the failure page).
async fn page_text(driver: &Driver) -> Result<String> {
    Ok(driver.b().find(Locator::Css("body")).await?.text().await?)
}

#[tokio::test]
async fn sign_in_through_an_openid_provider_creates_then_finds_the_user() -> Result<()> {
    let mut world = world_with_ann("oauth_sign_in").await?;
    let auth = start_auth(&mut world).await?;
    let port = free_port();
    let upstream_base = format!("http://127.0.0.1:{port}");
    let open = strategy(&world, &upstream_base, &[]).await?;
    let strict = strategy(
        &world,
        &upstream_base,
        &[
            "--ensure-matching",
            r#"{"email": ["@allowed\\.test$", "@also-allowed\\.test$"]}"#,
        ],
    )
    .await?;
    let callbacks: Vec<String> = [&open, &strict]
        .iter()
        .map(|id| auth.url(&format!("/auth/oauth2/callback/{id}")))
        .collect();
    let upstream = start_upstream(
        &world,
        port,
        "tolk-e2e",
        "upstream client secret",
        &callbacks,
    )
    .await?;

    let redis = redis::Client::open(
        std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into()),
    )?;
    let mut pubsub = redis
        .get_async_pubsub()
        .await
        .context("Redis must run (REDIS_URL)")?;
    pubsub.subscribe(&auth.channel).await?;

    let driver = Driver::start(&world).await?;
    let b = driver.b();
    // Through the login dispatcher, as a tenant's sign-in page links it.
    b.goto(&auth.url(&format!(
        "/auth/login?provider=oauth2&id={open}&continue=%2Fauth%2Fauthority"
    )))
    .await?;
    let landed = through_upstream(&driver, &upstream.base, "carla@example.org").await?;
    assert_eq!(landed, auth.url("/auth/authority"), "back at `continue`");
    let authority: Value = serde_json::from_str(&page_text(&driver).await?)?;
    assert_eq!(authority["session"], true, "{authority}");

    let db = world.db().await?;
    let (user_id, name, token): (String, String, Option<String>) = sqlx::query_as(
        "SELECT id, name, access_token FROM users WHERE email = 'carla@example.org'",
    )
    .fetch_one(&db)
    .await
    .context("the user was created")?;
    assert_eq!(name, "Name of carla@example.org");
    assert!(
        token
            .as_deref()
            .is_some_and(|t| t.starts_with("sealed:v1:session:")),
        "the provider's token is kept, sealed: {token:?}"
    );
    let lookups: Vec<(String, String)> =
        sqlx::query_as("SELECT provider, uid FROM user_auth_lookups WHERE user_id = $1")
            .bind(&user_id)
            .fetch_all(&db)
            .await?;
    assert_eq!(
        lookups,
        vec![(open.clone(), "subject-carla@example.org".to_owned())]
    );
    let event = tokio::time::timeout(Duration::from_secs(10), pubsub.on_message().next())
        .await
        .context("login event")?
        .context("pubsub closed")?;
    let event: Value = serde_json::from_str(&event.get_payload::<String>()?)?;
    assert_eq!(
        event,
        serde_json::json!({"user_id": user_id, "provider": "oauth2"})
    );

    // Signed out here, then in again through the provider: the same user.
    b.goto(&auth.url("/auth/logout?continue=%2Fauth%2Fauthority"))
        .await?;
    let authority: Value = serde_json::from_str(&page_text(&driver).await?)?;
    assert_eq!(authority["session"], false, "{authority}");
    b.goto(&auth.url(&format!(
        "/auth/oauth2?id={open}&continue=%2Fauth%2Fauthority"
    )))
    .await?;
    let landed = through_upstream(&driver, &upstream.base, "carla@example.org").await?;
    assert_eq!(landed, auth.url("/auth/authority"));
    let authority: Value = serde_json::from_str(&page_text(&driver).await?)?;
    assert_eq!(authority["session"], true, "{authority}");
    let users: i64 = sqlx::query_scalar("SELECT count(*) FROM users")
        .fetch_one(&db)
        .await?;
    assert_eq!(users, 2, "ann and carla, no second carla");
    let session_user: String = sqlx::query_scalar(
        "SELECT user_id FROM user_auth_lookups WHERE uid = 'subject-carla@example.org'",
    )
    .fetch_one(&db)
    .await?;
    assert_eq!(session_user, user_id);

    // The strict strategy refuses this account (its email matches none of the patterns).
    b.goto(&auth.url(&format!(
        "/auth/oauth2?id={strict}&continue=%2Fauth%2Fauthority"
    )))
    .await?;
    let landed = through_upstream(&driver, &upstream.base, "carla@example.org").await?;
    assert!(landed.starts_with(&auth.url("/auth/failure?")), "{landed}");
    let text = page_text(&driver).await?;
    assert!(
        text.contains("not allowed to sign in here (email does not match)"),
        "{text}"
    );
    let lookups: i64 =
        sqlx::query_scalar("SELECT count(*) FROM user_auth_lookups WHERE provider = $1")
            .bind(&strict)
            .fetch_one(&db)
            .await?;
    assert_eq!(lookups, 0, "a refused sign-in records nothing");
    driver.close().await?;
    Ok(())
}

#[tokio::test]
async fn the_callback_refuses_a_state_this_browser_did_not_start() -> Result<()> {
    let mut world = world_with_ann("oauth_state").await?;
    let auth = start_auth(&mut world).await?;
    let id = strategy(&world, "http://127.0.0.1:9", &[]).await?;
    let other = strategy(&world, "http://127.0.0.1:9", &["--domain", "other.example"]).await?;

    // The kickoff: to the provider with state and PKCE, the flow in a cookie.
    let res = auth
        .http
        .get(auth.url(&format!("/auth/oauth2?id={id}&continue=/after")))
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let location = res.headers()[LOCATION].to_str()?.to_owned();
    assert!(
        location.starts_with("http://127.0.0.1:9/auth?"),
        "{location}"
    );
    let q = query_of(&location);
    assert_eq!(q["code_challenge_method"], "S256");
    assert_eq!(
        q["redirect_uri"],
        auth.url(&format!("/auth/oauth2/callback/{id}"))
    );
    let flow = set_cookie(&res, "_coauth_flow").context("flow cookie")?;

    let refused = |res: &reqwest::Response| {
        let to = res
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let sets_session = res
            .headers()
            .get_all(reqwest::header::SET_COOKIE)
            .iter()
            .any(|v| {
                v.to_str()
                    .is_ok_and(|v| v.starts_with("_coauth_session=") && !v.contains("Max-Age=0"))
            });
        (res.status(), to.starts_with("/auth/failure?"), sets_session)
    };
    // Another state with this browser's flow, the right state without the
    // flow cookie (another browser), and the right state at another strategy.
    for (path, cookie, why) in [
        (
            format!("/auth/oauth2/callback/{id}?code=c&state=forged"),
            flow.clone(),
            "could not be matched",
        ),
        (
            format!("/auth/oauth2/callback/{id}?code=c&state={}", q["state"]),
            String::new(),
            "could not be matched",
        ),
        (
            format!("/auth/oauth2/callback/{other}?code=c&state={}", q["state"]),
            flow.clone(),
            "wrong method",
        ),
        (
            "/auth/oauth2/callback?code=c&state=forged".to_owned(),
            flow.clone(),
            "could not be matched",
        ),
    ] {
        let res = auth
            .http
            .get(auth.url(&path))
            .header(COOKIE, cookie)
            .send()
            .await?;
        assert_eq!(
            refused(&res),
            (StatusCode::SEE_OTHER, true, false),
            "{path}"
        );
        let to = res.headers()[LOCATION].to_str()?;
        let message = query_of(&auth.url(to))
            .get("message")
            .cloned()
            .unwrap_or_default();
        assert!(message.contains(why), "{path}: {message}");
    }
    // A provider's refusal is shown, not followed.
    let res = auth
        .http
        .get(auth.url(&format!(
            "/auth/oauth2/callback?error=access_denied&state={}",
            q["state"]
        )))
        .header(COOKIE, flow.clone())
        .send()
        .await?;
    assert_eq!(refused(&res), (StatusCode::SEE_OTHER, true, false));
    let page = auth
        .http
        .get(auth.url(res.headers()[LOCATION].to_str()?))
        .send()
        .await?;
    assert_eq!(page.status(), StatusCode::UNAUTHORIZED);
    assert!(page.text().await?.contains("access_denied"));
    // Unknown strategies, and another tenant's, do not start.
    for id in ["oauth_strat-unknown", other.as_str()] {
        let res = auth
            .http
            .get(auth.url(&format!("/auth/oauth2?id={id}")))
            .send()
            .await?;
        assert_eq!(res.status(), StatusCode::SEE_OTHER);
        assert!(
            res.headers()[LOCATION]
                .to_str()?
                .starts_with("/auth/failure?"),
            "{id}"
        );
    }
    Ok(())
}
