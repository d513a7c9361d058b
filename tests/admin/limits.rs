//! Character limits (456) and rate limits (429) across replicas, through Redis
//! or per process.

use super::*;

#[tokio::test]
async fn character_limit_holds_under_32_concurrent_requests_on_two_replicas() -> Result<()> {
    let mut world = World::new("limits").await?;
    let admin = world.create_key("admin", true).await?;
    let a = world.start_api().await?;
    let b = world.start_api().await?;
    let (key_id, key) = new_developer_key(&a, &admin, "limited").await?;

    const TEXT: &str = "I have a dog."; // 13 characters
    let size = chars(&[TEXT]);
    let admitted_max = 10;
    let limit = size * admitted_max + 5; // room for 10 requests, not 11
    let (code, body) = a
        .put(
            &admin,
            "/v2/admin/developer-keys/limits",
            &json!({"key_id": key_id, "characters": limit}),
        )
        .await?;
    assert_eq!(code, 200, "{body}");

    // 32 clients at once, alternating between the two replicas.
    let mut tasks = Vec::new();
    for i in 0..32 {
        let api = Api::new(if i % 2 == 0 {
            a.base.clone()
        } else {
            b.base.clone()
        });
        let key = key.clone();
        tasks.push(tokio::spawn(
            async move { api.en_es(&key, &[TEXT], None).await },
        ));
    }
    let mut ok = 0;
    let mut refused = 0;
    for t in tasks {
        let (code, body) = t.await??;
        match code {
            200 => ok += 1,
            456 => {
                assert!(message(&body).contains("limit"), "{body}");
                refused += 1;
            }
            other => bail!("unexpected {other}: {body}"),
        }
    }
    // The bound is 0: exactly the requests that fit were served.
    assert_eq!(ok, admitted_max, "{ok} served, {refused} refused");
    assert_eq!(refused, 32 - admitted_max);
    let db = world.db().await?;
    let (billed, entries): (i64, i64) = sqlx::query_as(
        "SELECT COALESCE(sum(amount), 0)::bigint, count(*) FROM usage_events WHERE api_key_id = $1",
    )
    .bind(&key_id)
    .fetch_one(&db)
    .await?;
    assert_eq!(entries, admitted_max);
    assert_eq!(billed, size * admitted_max);
    assert!(billed <= limit);
    let (holds,): (i64,) = sqlx::query_as("SELECT count(*) FROM usage_holds")
        .fetch_one(&db)
        .await?;
    assert_eq!(holds, 0, "every hold settled or released");

    // /v2/usage agrees; the next request still does not fit; a 5-character one does.
    let (_, usage) = b.get(&key, "/v2/usage").await?;
    assert_eq!(usage["character_count"], billed, "{usage}");
    assert_eq!(usage["character_limit"], limit, "{usage}");
    let (code, _) = a.en_es(&key, &[TEXT], None).await?;
    assert_eq!(code, 456);
    let (code, body) = b.en_es(&key, &["Hello"], None).await?;
    assert_eq!(code, 200, "{body}");
    // The limit is reached: even an empty request is refused, and so is a document.
    let (code, _) = a.en_es(&key, &[""], None).await?;
    assert_eq!(code, 456);
    let (code, body) = a
        .upload(
            &key,
            "a.txt",
            b"Hello world.".to_vec(),
            &[("target_lang", "ES")],
        )
        .await?;
    assert_eq!(code, 456, "{body}");
    // Raising the limit (through the admin API) lets requests through again, at once.
    let (code, _) = b
        .put(
            &admin,
            "/v2/admin/developer-keys/limits",
            &json!({"key_id": key_id, "characters": limit + size}),
        )
        .await?;
    assert_eq!(code, 200);
    let (code, body) = a.en_es(&key, &[TEXT], None).await?;
    assert_eq!(code, 200, "{body}");
    // Removing the limit (null) removes it.
    let (code, _) = b
        .put(
            &admin,
            "/v2/admin/developer-keys/limits",
            &json!({"key_id": key_id, "characters": null}),
        )
        .await?;
    assert_eq!(code, 200);
    let (code, _) = a.en_es(&key, &[TEXT, TEXT], None).await?;
    assert_eq!(code, 200);

    // The speech meters use the same reservation (no speech endpoint yet: the
    // storage API the voice service calls, 32 concurrent reservations).
    sqlx::query("UPDATE api_keys SET speech_to_text_milliseconds_limit = 10000 WHERE key_id = $1")
        .bind(&key_id)
        .execute(&db)
        .await?;
    let api_key = tolk_storage::keys::authenticate(&db, &key)
        .await?
        .context("key")?;
    let mut tasks = Vec::new();
    for _ in 0..32 {
        let db = db.clone();
        let api_key = api_key.clone();
        tasks.push(tokio::spawn(async move {
            let hold = tolk_storage::limits::reserve(
                &db,
                &api_key,
                tolk_storage::limits::Meter::SpeechToText,
                1500,
            )
            .await?;
            let Ok(hold) = hold else {
                return Ok::<_, anyhow::Error>(false);
            };
            tolk_storage::limits::settle(
                &db,
                hold,
                &tolk_storage::usage::UsageEvent {
                    organization_id: api_key.organization_id,
                    api_key_id: &api_key.key_id,
                    kind: tolk_storage::usage::kind::SPEECH_TO_TEXT,
                    amount: 1500,
                    custom_tag: None,
                    document_id: None,
                },
                true,
            )
            .await?;
            Ok(true)
        }));
    }
    let mut served = 0;
    for t in tasks {
        served += i32::from(t.await??);
    }
    assert_eq!(served, 6, "6 × 1500 ms fit in 10000 ms, 7 do not");
    Ok(())
}

#[tokio::test]
async fn rate_limits_are_shared_through_redis_or_kept_per_process() -> Result<()> {
    let mut world = World::new("rate_limits").await?;
    let key = world.create_key("client", false).await?;
    world.extra_env = vec![
        ("TOLK_RATE_LIMIT_PER_SECOND".to_owned(), "0.2".to_owned()),
        ("TOLK_RATE_LIMIT_BURST".to_owned(), "3".to_owned()),
        ("REDIS_URL".to_owned(), "redis://127.0.0.1:6379".to_owned()),
    ];
    let a = world.start_api().await?;
    let b = world.start_api().await?;
    // Burst of 3 on replica A, then replica B refuses the 4th: the bucket is shared.
    for _ in 0..3 {
        let (code, body) = a.get(&key, "/v2/usage").await?;
        assert_eq!(code, 200, "{body}");
    }
    let Answer {
        code,
        headers,
        body,
        ..
    } = exchange(&b, &key, reqwest::Method::GET, "/v2/usage", None).await?;
    assert_eq!(code, 429, "{body}");
    assert!(message(&body).contains("Too many requests"), "{body}");
    let retry: u64 = headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .context("Retry-After")?;
    assert!((1..=5).contains(&retry), "Retry-After {retry}");
    // Translation is limited too (the same bucket).
    let (code, _) = a.en_es(&key, &["Hello"], None).await?;
    assert_eq!(code, 429);
    // Another key is not affected.
    let other = world.create_key("other", false).await?;
    let (code, _) = b.get(&other, "/v2/usage").await?;
    assert_eq!(code, 200);
    // After Retry-After, the key may send again.
    tokio::time::sleep(Duration::from_secs(retry)).await;
    let (code, body) = b.get(&key, "/v2/usage").await?;
    assert_eq!(code, 200, "{body}");

    // Without Redis: a warning at start, and each process limits on its own.
    world.extra_env[2].1 = String::new();
    let lone = world.start_api().await?;
    let port = lone
        .direct
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_owned();
    let log = world.log(&format!("api-{port}"));
    assert!(log.contains("REDIS_URL is not set"), "{log}");
    let fresh = world.create_key("fresh", false).await?;
    for _ in 0..3 {
        let (code, _) = lone.get(&fresh, "/v2/usage").await?;
        assert_eq!(code, 200);
    }
    let (code, _) = lone.get(&fresh, "/v2/usage").await?;
    assert_eq!(code, 429);
    // The shared replicas never saw this key's requests.
    let (code, _) = a.get(&fresh, "/v2/usage").await?;
    assert_eq!(code, 200);
    Ok(())
}
