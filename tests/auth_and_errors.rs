//! Authentication, validation errors, not-ready downloads, trace ids, health, metrics.

use anyhow::Result;

use crate::support::{Api, World};

/// A world with a client key and an API process (no worker: documents stay queued).
async fn client(tag: &str) -> Result<(World, Api, String)> {
    let mut world = World::new(tag).await?;
    let key = world.create_key("client", false).await?;
    let api = world.start_api().await?;
    Ok((world, api, key))
}

/// Uploads `a.txt` ("The dog runs.") to Spanish; returns (document_id, document_key).
async fn queued_document(api: &Api, key: &str) -> Result<(String, String)> {
    api.upload_ok(
        key,
        "a.txt",
        b"The dog runs.".to_vec(),
        &[("target_lang", "ES")],
    )
    .await
}

#[tokio::test]
async fn a_created_key_is_a_key_id_and_a_secret() -> Result<()> {
    let world = World::new("errors_key_format").await?;
    let key = world.create_key("client", false).await?;
    let (key_id, secret) = key.split_once('.').expect("key is {key_id}.{secret}");
    assert_eq!(key_id.len(), 32);
    assert!(secret.len() >= 32 && !key.contains('\n'));
    Ok(())
}

/// Only the digest is stored.
#[tokio::test]
async fn only_the_digest_of_a_key_is_stored() -> Result<()> {
    let world = World::new("errors_key_digest").await?;
    let key = world.create_key("client", false).await?;
    let (key_id, secret) = key.split_once('.').expect("key is {key_id}.{secret}");
    let db = world.db().await?;
    let digest: String = sqlx::query_scalar("SELECT digest FROM api_keys WHERE key_id = $1")
        .bind(key_id)
        .fetch_one(&db)
        .await?;
    assert_eq!(digest, tolk_storage::keys::digest(key_id, secret));
    assert!(!digest.contains(secret));
    Ok(())
}

/// Missing, malformed and wrong keys → 403 with a JSON message.
#[tokio::test]
async fn missing_malformed_and_wrong_keys_are_refused_with_403() -> Result<()> {
    let (_world, api, key) = client("errors_bad_keys").await?;
    let (key_id, _) = key.split_once('.').expect("key is {key_id}.{secret}");
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
    Ok(())
}

/// Validation → 400 naming the problem.
#[tokio::test]
async fn an_invalid_upload_is_refused_with_400_naming_the_problem() -> Result<()> {
    let (_world, api, key) = client("errors_validation").await?;
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
    Ok(())
}

#[tokio::test]
async fn a_document_without_a_worker_stays_queued() -> Result<()> {
    let (_world, api, key) = client("errors_queued").await?;
    let (id, dk) = queued_document(&api, &key).await?;
    let (code, body) = api.status(&key, &id, &dk).await?;
    assert_eq!(code, 200);
    assert_eq!(body["status"], "queued");
    assert_eq!(body["document_id"], id.as_str());
    Ok(())
}

#[tokio::test]
async fn downloading_a_queued_document_answers_503() -> Result<()> {
    let (_world, api, key) = client("errors_not_ready").await?;
    let (id, dk) = queued_document(&api, &key).await?;
    let (code, _, body) = api.download(&key, &id, &dk).await?;
    assert_eq!(code, 503, "{}", String::from_utf8_lossy(&body));
    Ok(())
}

/// A wrong document key, another organization or an unknown id → 404.
#[tokio::test]
async fn a_document_is_not_found_with_a_wrong_document_key_or_organization() -> Result<()> {
    let (world, api, key) = client("errors_not_found").await?;
    let other_org_key = world.create_key_in("other").await?;
    let (id, dk) = queued_document(&api, &key).await?;
    let wrong_dk = "0".repeat(64);
    assert_eq!(api.status(&key, &id, &wrong_dk).await?.0, 404);
    assert_eq!(api.status(&other_org_key, &id, &dk).await?.0, 404);
    assert_eq!(api.status(&key, &"A".repeat(32), &dk).await?.0, 404);
    Ok(())
}

/// The document row and its queue job are written together (with the document
/// as idempotency key, and a bounded number of attempts).
#[tokio::test]
async fn an_upload_writes_its_queue_job_keyed_by_the_document() -> Result<()> {
    let (world, api, key) = client("errors_job_row").await?;
    let (id, _) = queued_document(&api, &key).await?;
    let db = world.db().await?;
    let (job_status, idem, max_attempts): (String, Option<String>, i32) = sqlx::query_as(
        "SELECT j.status, j.idempotency_key, j.max_attempts FROM documents d JOIN apalis.jobs j ON j.id = d.job_id WHERE d.id = $1",
    )
    .bind(&id)
    .fetch_one(&db)
    .await?;
    assert_eq!(job_status, "Pending");
    assert_eq!(idem.as_deref(), Some(format!("document:{id}").as_str()));
    assert_eq!(max_attempts, 5);
    Ok(())
}

/// X-Trace-ID is generated when none is sent.
#[tokio::test]
async fn a_trace_id_is_generated_when_none_is_sent() -> Result<()> {
    let (_world, api, _key) = client("errors_trace_generated").await?;
    let res = api.http.get(api.url("/healthz")).send().await?;
    assert_eq!(res.status(), 200);
    assert!(!res.headers()["x-trace-id"].is_empty());
    Ok(())
}

/// A sent X-Trace-ID is propagated, also on errors.
#[tokio::test]
async fn a_sent_trace_id_is_propagated_even_on_errors() -> Result<()> {
    let (_world, api, _key) = client("errors_trace_propagated").await?;
    let res = api
        .http
        .post(api.url("/v2/document"))
        .header("X-Trace-ID", "abc123trace")
        .send()
        .await?;
    assert_eq!(res.headers()["x-trace-id"], "abc123trace");
    Ok(())
}

/// A sent X-Trace-ID is stored on the document.
#[tokio::test]
async fn a_sent_trace_id_is_stored_on_the_document() -> Result<()> {
    let (world, api, key) = client("errors_trace_stored").await?;
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
    let db = world.db().await?;
    let trace: String = sqlx::query_scalar("SELECT trace_id FROM documents WHERE id = $1")
        .bind(traced["document_id"].as_str().unwrap_or_default())
        .fetch_one(&db)
        .await?;
    assert_eq!(trace, "feedface01");
    Ok(())
}

/// Metrics: queue depth and the document gauge count the two queued jobs (the
/// refused uploads queue nothing).
#[tokio::test]
async fn metrics_count_the_queued_jobs() -> Result<()> {
    let (_world, api, key) = client("errors_metrics").await?;
    for (bad_key, name, fields) in [
        ("nonsense", "a.txt", &[("target_lang", "ES")][..]),
        (key.as_str(), "a.exe", &[("target_lang", "ES")][..]),
        (key.as_str(), "a.txt", &[][..]),
        (
            key.as_str(),
            "a.txt",
            &[("target_lang", "ES"), ("glossary_id", "g1")][..],
        ),
    ] {
        let (code, body) = api.upload(bad_key, name, b"hi".to_vec(), fields).await?;
        anyhow::ensure!(code == 403 || code == 400, "{name}: {code} {body}");
    }
    queued_document(&api, &key).await?;
    queued_document(&api, &key).await?;
    let text = api.metrics_text().await?;
    assert!(
        text.contains("tolk_queue_depth{queue=\"translate-document\"} 2"),
        "{text}"
    );
    assert!(
        text.contains("tolk_documents{state=\"queued\"} 2"),
        "{text}"
    );
    assert!(text.contains("tolk_job_duration_seconds_bucket"), "{text}");
    Ok(())
}

/// Unknown route: JSON 404.
#[tokio::test]
async fn an_unknown_route_answers_a_json_404() -> Result<()> {
    let (_world, api, _key) = client("errors_unknown_route").await?;
    let res = api.http.get(api.url("/nope")).send().await?;
    assert_eq!(res.status(), 404);
    assert!(res.json::<serde_json::Value>().await?["message"].is_string());
    Ok(())
}

/// The polls of voice jobs and quality evaluations answer a missing or wrong
/// key with 401, as their operations document (403 elsewhere, DeepL's word).
#[tokio::test]
async fn job_polls_without_a_valid_key_answer_401() -> Result<()> {
    let (_world, api, _key) = client("polls_401").await?;
    let id = "f3a8c5e1-9b7d-4e62-a1c4-8f5d2b6e3c19";
    let voice = format!("/v1/jobs/voice/translate/{id}");
    let quality = format!("{}/v1/quality-evaluation/{id}", api.direct);
    for auth in [None, Some("DeepL-Auth-Key 0000.wrong")] {
        // Through the conformance proxy: 401 is documented for this poll.
        let mut req = api.http.get(api.url(&voice));
        if let Some(a) = auth {
            req = req.header("Authorization", a);
        }
        let res = req.send().await?;
        assert_eq!(res.status().as_u16(), 401, "{voice} with {auth:?}");
        let body: serde_json::Value = res.json().await?;
        assert!(body["message"].is_string(), "{body}");
        // The quality poll documents neither 401 nor 403: asked directly.
        let mut req = api.http.get(&quality);
        if let Some(a) = auth {
            req = req.header("Authorization", a);
        }
        assert_eq!(req.send().await?.status().as_u16(), 401, "{quality}");
    }
    // Other operations keep DeepL's 403.
    let res = api.http.get(api.url("/v2/usage")).send().await?;
    assert_eq!(res.status().as_u16(), 403);
    Ok(())
}
