//! Sign-in: the session cookie, the login event, and sessions that time out.

use super::*;

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

/// Login CSRF: another site's page cannot sign a browser in (its Origin or
/// Sec-Fetch-Site gives it away), nor post a text/plain body; the service's
/// own origin can.
#[tokio::test]
async fn cross_site_and_text_plain_sign_ins_are_refused() -> Result<()> {
    let (_world, auth, _, _) = setup().await?;
    let body = "email=ann%40example.com&password=correct+horse";
    let post = |content_type: &'static str| {
        auth.http
            .post(auth.url("/auth/signin"))
            .header(reqwest::header::CONTENT_TYPE, content_type)
            .body(body)
    };
    let res = post("application/x-www-form-urlencoded")
        .header("Origin", "https://evil.example")
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    assert!(session_cookie(&res).is_none());
    let res = post("application/x-www-form-urlencoded")
        .header("Sec-Fetch-Site", "cross-site")
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    let res = post("application/x-www-form-urlencoded")
        .header("Origin", "null")
        .header("Sec-Fetch-Site", "cross-site")
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);
    let res = post("text/plain").send().await?;
    assert_eq!(res.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let message: Value = res.json().await?;
    assert!(message["message"].is_string(), "{message}");
    // The service's own page.
    let own = auth.base.clone();
    let res = post("application/x-www-form-urlencoded")
        .header("Origin", own)
        .header("Sec-Fetch-Site", "same-origin")
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::ACCEPTED);
    assert!(session_cookie(&res).is_some());
    Ok(())
}

/// Password and secret guessing is throttled: after five wrong passwords from
/// one address the right one is refused with 429 and `Retry-After` (another
/// account from there still signs in); after ten wrong client secrets the
/// right secret is refused too.
#[tokio::test]
async fn guessing_passwords_and_client_secrets_is_throttled() -> Result<()> {
    let (world, auth, _, confidential) = setup().await?;
    admin_json(
        &world,
        &[
            "admin",
            "create-user",
            "--email",
            "bob@example.com",
            "--password",
            "bob pw",
        ],
    )
    .await?;
    let attempt = |password: &'static str, email: &'static str| {
        auth.http
            .post(auth.url("/auth/signin"))
            .form(&[("email", email), ("password", password)])
            .send()
    };
    for _ in 0..5 {
        let res = attempt("wrong", "ann@example.com").await?;
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    }
    let res = attempt("correct horse", "ann@example.com").await?;
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    let wait: u64 = res.headers()["retry-after"].to_str()?.parse()?;
    assert!((1..=60).contains(&wait), "{wait}");
    assert!(session_cookie(&res).is_none());
    let res = attempt("bob pw", "bob@example.com").await?;
    assert_eq!(
        res.status(),
        StatusCode::ACCEPTED,
        "another account is not locked"
    );

    let secret = confidential.secret.clone().context("secret")?;
    let wrong = Client {
        uid: confidential.uid.clone(),
        secret: Some("not the secret".into()),
    };
    for _ in 0..10 {
        let (status, body) = token(&auth, &wrong, &[("grant_type", "client_credentials")]).await?;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    }
    let right = Client {
        uid: confidential.uid.clone(),
        secret: Some(secret),
    };
    let res = auth
        .http
        .post(auth.url("/auth/token"))
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", right.uid.as_str()),
            ("client_secret", right.secret.as_deref().unwrap_or_default()),
        ])
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(res.headers().contains_key("retry-after"));
    let body: Value = res.json().await?;
    assert_eq!(body["error"], "too_many_requests");
    Ok(())
}

/// `prompt=login` and `max_age` make a signed-in user sign in again (the
/// sign-in page shows its form, the request comes back and goes on);
/// `prompt=consent` shows the consent page even to a first-party app.
#[tokio::test]
async fn prompt_login_max_age_and_prompt_consent_are_honoured() -> Result<()> {
    let (_world, auth, public, confidential) = setup().await?;
    let cookie = sign_in(&auth, "ann@example.com", "correct horse").await?;
    let get = |url: String, cookie: String| {
        auth.http
            .get(if url.starts_with("http") {
                url
            } else {
                auth.url(&url)
            })
            .header(COOKIE, cookie)
            .send()
    };
    // A recent sign-in satisfies max_age=3600: the consent page.
    let res = get(
        authorize_url(&auth, &public, &[("max_age", "3600")]),
        cookie.clone(),
    )
    .await?;
    assert_eq!(res.status(), StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    for extra in [("prompt", "login"), ("max_age", "0")] {
        let res = get(authorize_url(&auth, &public, &[extra]), cookie.clone()).await?;
        assert_eq!(res.status(), StatusCode::SEE_OTHER, "{extra:?}");
        let login = res.headers()[LOCATION].to_str()?.to_owned();
        assert!(login.starts_with("/auth/login?"), "{login}");
        // The sign-in page shows its form although a session exists.
        let page = get(login.clone(), cookie.clone()).await?;
        assert_eq!(page.status(), StatusCode::OK, "{extra:?}");
        let back = query_of(&auth.url(&login))["continue"].clone();
        assert!(!back.contains("prompt=login"), "{back}");
        // The old session does not satisfy the returning request; a new one does.
        let res = get(back.clone(), cookie.clone()).await?;
        assert_eq!(res.status(), StatusCode::SEE_OTHER, "{extra:?}: {back}");
        let fresh = sign_in(&auth, "ann@example.com", "correct horse").await?;
        let res = get(back, fresh).await?;
        assert_eq!(res.status(), StatusCode::OK, "{extra:?}: the consent page");
    }
    // prompt=consent: a first-party (skip_authorization) app gets the page too.
    let first_party = |prompt: Option<&str>| {
        let mut url = reqwest::Url::parse(&auth.url("/auth/authorize")).expect("url");
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &confidential.uid)
            .append_pair("redirect_uri", "https://app.example.com/cb")
            .append_pair("scope", "public")
            .append_pair("state", "s");
        if let Some(p) = prompt {
            url.query_pairs_mut().append_pair("prompt", p);
        }
        url.to_string()
    };
    let fresh = sign_in(&auth, "ann@example.com", "correct horse").await?;
    let res = get(first_party(None), fresh.clone()).await?;
    assert_eq!(
        res.status(),
        StatusCode::FOUND,
        "first party: straight to a code"
    );
    let res = get(first_party(Some("consent")), fresh).await?;
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "prompt=consent: the consent page"
    );
    Ok(())
}
