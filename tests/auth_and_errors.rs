//! Authentication, validation errors, not-ready downloads, trace ids, health, metrics.

use anyhow::Result;

use crate::support::World;

#[tokio::test]
async fn keys_validation_not_ready_trace_ids_and_metrics() -> Result<()> {
    let mut world = World::new("errors").await?;
    let key = world.create_key("client", false).await?;
    let (key_id, secret) = key.split_once('.').expect("key is {key_id}.{secret}");
    assert_eq!(key_id.len(), 32);
    assert!(secret.len() >= 32 && !key.contains('\n'));
    let other_org_key = {
        let out = world
            .tolk(&[
                "admin",
                "create-key",
                "--label",
                "other",
                "--organization",
                "other",
            ])
            .output()
            .await?;
        String::from_utf8(out.stdout)?.trim().to_owned()
    };
    // Only the digest is stored.
    let db = world.db().await?;
    let digest: String = sqlx::query_scalar("SELECT digest FROM api_keys WHERE key_id = $1")
        .bind(key_id)
        .fetch_one(&db)
        .await?;
    assert_eq!(digest, tolk_storage::keys::digest(key_id, secret));
    assert!(!digest.contains(secret));

    let api = world.start_api().await?; // no worker: documents stay queued

    // Missing, malformed and wrong keys → 403 with a JSON message.
    let res = api.http.post(api.url("/v2/document")).send().await?;
    assert_eq!(res.status(), 403);
    let body: serde_json::Value = res.json().await?;
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("DeepL-Auth-Key")
    );
    for bad in [
        format!("{key_id}.wrong"),
        "nonsense".to_owned(),
        format!("{key}x"),
    ] {
        let (code, body) = api
            .upload(&bad, "a.txt", b"x".to_vec(), &[("target_lang", "ES")])
            .await?;
        assert_eq!(code, 403, "{bad}: {body}");
    }

    // Validation → 400 naming the problem.
    let (code, body) = api
        .upload(&key, "a.exe", b"MZ".to_vec(), &[("target_lang", "ES")])
        .await?;
    assert_eq!(code, 400);
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("file extension"),
        "{body}"
    );
    let (code, body) = api.upload(&key, "a.txt", b"hi".to_vec(), &[]).await?;
    assert_eq!(code, 400);
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("target_lang"),
        "{body}"
    );
    let (code, body) = api
        .upload(&key, "a.txt", b"hi".to_vec(), &[("target_lang", "XX")])
        .await?;
    assert_eq!(code, 400);
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("target_lang"),
        "{body}"
    );
    let (code, body) = api
        .upload(
            &key,
            "a.txt",
            b"hi".to_vec(),
            &[("target_lang", "ES"), ("glossary_id", "g1")],
        )
        .await?;
    assert_eq!(
        code, 400,
        "an option we cannot honour must not be ignored: {body}"
    );

    // Queued document: status queued; download → 503; wrong key or org → 404.
    let (id, dk) = api
        .upload_ok(
            &key,
            "a.txt",
            b"The dog runs.".to_vec(),
            &[("target_lang", "ES")],
        )
        .await?;
    let (code, body) = api.status(&key, &id, &dk).await?;
    assert_eq!(code, 200);
    assert_eq!(body["status"], "queued");
    assert_eq!(body["document_id"], id.as_str());
    let (code, _, body) = api.download(&key, &id, &dk).await?;
    assert_eq!(code, 503, "{}", String::from_utf8_lossy(&body));
    let wrong_dk = "0".repeat(64);
    assert_eq!(api.status(&key, &id, &wrong_dk).await?.0, 404);
    assert_eq!(api.status(&other_org_key, &id, &dk).await?.0, 404);
    assert_eq!(api.status(&key, &"A".repeat(32), &dk).await?.0, 404);

    // The document row and its queue job were written together (with the
    // document as idempotency key, and a bounded number of attempts).
    let (job_status, idem, max_attempts): (String, Option<String>, i32) = sqlx::query_as(
        "SELECT j.status, j.idempotency_key, j.max_attempts FROM documents d JOIN apalis.jobs j ON j.id = d.job_id WHERE d.id = $1",
    )
    .bind(&id)
    .fetch_one(&db)
    .await?;
    assert_eq!(job_status, "Pending");
    assert_eq!(idem.as_deref(), Some(format!("document:{id}").as_str()));
    assert_eq!(max_attempts, 5);

    // X-Trace-ID: generated, or propagated; also on errors; stored on the document.
    let res = api.http.get(api.url("/healthz")).send().await?;
    assert_eq!(res.status(), 200);
    assert!(!res.headers()["x-trace-id"].is_empty());
    let res = api
        .http
        .post(api.url("/v2/document"))
        .header("X-Trace-ID", "abc123trace")
        .send()
        .await?;
    assert_eq!(res.headers()["x-trace-id"], "abc123trace");
    let res = api
        .keyed(reqwest::Method::POST, "/v2/document", &key)
        .header("X-Trace-ID", "feedface01")
        .multipart(
            reqwest::multipart::Form::new()
                .text("target_lang", "ES")
                .part(
                    "file",
                    reqwest::multipart::Part::bytes(b"Hello".to_vec()).file_name("t.txt"),
                ),
        )
        .send()
        .await?;
    assert_eq!(res.status(), 200);
    let traced: serde_json::Value = res.json().await?;
    let trace: String = sqlx::query_scalar("SELECT trace_id FROM documents WHERE id = $1")
        .bind(traced["document_id"].as_str().unwrap_or_default())
        .fetch_one(&db)
        .await?;
    assert_eq!(trace, "feedface01");

    // Metrics: queue depth counts the two queued jobs.
    let text = api
        .http
        .get(api.url("/metrics"))
        .send()
        .await?
        .text()
        .await?;
    assert!(
        text.contains("tolk_queue_depth{queue=\"translate-document\"} 2"),
        "{text}"
    );
    assert!(
        text.contains("tolk_documents{state=\"queued\"} 2"),
        "{text}"
    );
    assert!(text.contains("tolk_job_duration_seconds_bucket"), "{text}");

    // Unknown route: JSON 404.
    let res = api.http.get(api.url("/nope")).send().await?;
    assert_eq!(res.status(), 404);
    assert!(res.json::<serde_json::Value>().await?["message"].is_string());
    Ok(())
}
