//! The API's side of auth: bearer tokens by scope, API keys that fall back to
//! the legacy platform, the scheduler's pruning, and `tolk up` serving auth and
//! the API together.

use super::*;

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
    // With a second tenant, a token is good only on its own tenant's host
    // (as at userinfo): sent to another tenant's host, refused.
    admin_json(
        &world,
        &[
            "admin",
            "create-user",
            "--email",
            "zed@other.example",
            "--password",
            "pw",
            "--domain",
            "other.example",
        ],
    )
    .await?;
    let translate_token = with["access_token"].as_str().context("at")?.to_owned();
    let at_host = |host: &'static str| {
        api.http
            .get(api.url("/v2/usage"))
            .header(reqwest::header::HOST, host)
            .bearer_auth(translate_token.clone())
            .send()
    };
    assert_eq!(at_host("localhost").await?.status(), StatusCode::OK);
    assert_eq!(
        at_host("other.example").await?.status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        at_host("unknown.example").await?.status(),
        StatusCode::FORBIDDEN
    );
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
    // ... without the platform's address.
    assert!(!msg.contains("127.0.0.1") && !msg.contains("http"), "{msg}");
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

#[tokio::test]
async fn tolk_up_serves_auth_beside_the_api() -> Result<()> {
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
    let client = Client::of(&app)?;
    let port = free_port();
    let (up, auth) = tolk_up(&mut world, port, "127.0.0.1").await?;

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

/// The voice routes (`/v1/tts`, `/v1/vc`) take an access token with the
/// `voice` scope, as docs/auth.md says; a token without it is refused.
#[tokio::test]
async fn voice_routes_accept_bearer_tokens_with_the_voice_scope() -> Result<()> {
    let (mut world, auth, _, _) = setup().await?;
    let api = world.start_api().await?;
    let app = admin_json(
        &world,
        &[
            "admin",
            "create-app",
            "--name",
            "Voice app",
            "--redirect-uri",
            REDIRECT,
            "--scopes",
            "voice translate",
        ],
    )
    .await?;
    let client = Client::of(&app)?;
    let mut tokens = Vec::new();
    for scope in ["voice", "translate"] {
        let (status, body) = token(
            &auth,
            &client,
            &[("grant_type", "client_credentials"), ("scope", scope)],
        )
        .await?;
        assert_eq!(status, StatusCode::OK, "{body}");
        tokens.push(body["access_token"].as_str().context("at")?.to_owned());
    }
    for path in ["/v1/tts/voices", "/v1/vc/voices"] {
        let res = api
            .http
            .get(api.url(path))
            .bearer_auth(&tokens[0])
            .send()
            .await?;
        assert_eq!(res.status(), StatusCode::OK, "{path} with a voice token");
        let voices: Value = res.json().await?;
        assert!(voices.as_array().is_some_and(|v| !v.is_empty()), "{voices}");
        let res = api
            .http
            .get(api.url(path))
            .bearer_auth(&tokens[1])
            .send()
            .await?;
        assert_eq!(
            res.status(),
            StatusCode::FORBIDDEN,
            "{path} with a translate token"
        );
    }
    Ok(())
}
