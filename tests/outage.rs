//! The database goes away under a running platform: a test's own PostgreSQL
//! server is restarted mid-load and then stopped for a while under `tolk api`
//! and two `tolk worker` processes (down for 60 s). Requests during the outage get a quick 503;
//! afterwards every job of every kind completes, once, billed once, and no
//! process exits.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use reqwest::Method;
use serde_json::json;

use crate::pg_server::PgServer;
use crate::support::{Api, World, call, metric_value};

/// How long the database stays down (long enough that every worker loop's
/// fetch, ack or heartbeat fails: apalis ends a worker at the first one).
const OUTAGE: Duration = Duration::from_secs(60);

/// Sentences for documents that take a moment to translate.
fn document(i: usize) -> Vec<u8> {
    let mut text = String::new();
    for j in 0..40 {
        text.push_str(&format!(
            "The dog number {i} runs in the park with the children. The house {j} has a large garden.\n\n"
        ));
    }
    text.into_bytes()
}

/// Waits for a document to be done (errors and timeouts fail the test).
async fn wait_document(api: &Api, key: &str, id: &str, doc_key: &str) -> Result<()> {
    let status = api.wait(key, id, doc_key, Duration::from_secs(180)).await?;
    if status.status != "done" {
        bail!("document {id} ended in {}: {}", status.status, status.body);
    }
    Ok(())
}

#[tokio::test]
async fn every_job_kind_completes_across_a_database_restart_and_outage() -> Result<()> {
    let pg = PgServer::start()?;
    let mut world = World::new_on("outage", &pg.admin_url()).await?;
    world
        .extra_env
        .push(("TOLK_WORKER_HEARTBEAT_SECS".into(), "1".into()));
    let key = world.create_key("outage", false).await?;
    let (api, api_pid) = world.start_api_process().await?;
    let workers = [world.start_worker("a")?, world.start_worker("b")?];
    // A memory to export later, imported while all is well.
    let tmx = crate::translation_memories::tmx_of(&[("The cat sleeps.", "El gato duerme.")], "es");
    let first_import =
        crate::translation_memories::import(&api, &key, "before", tmx.as_bytes()).await?;
    let body = crate::translation_memories::wait_job(&api, &key, &first_import).await?;
    let memory = body["results"][0]["translation_memory_id"]
        .as_str()
        .with_context(|| format!("import before the outage: {body}"))?
        .to_owned();
    let speech = crate::voice::tts(&api, &key, 101, "I would like a cup of coffee please.").await?;

    // Documents in flight while the database restarts.
    let mut documents = Vec::new();
    for i in 0..6 {
        documents.push(
            api.upload_ok(
                &key,
                &format!("before-{i}.txt"),
                document(i),
                &[("target_lang", "ES"), ("source_lang", "EN")],
            )
            .await?,
        );
    }
    pg.restart(Duration::from_secs(3)).await?;

    // The outage: requests get a quick 503 with Retry-After and a JSON message.
    pg.stop()?;
    let asked = Instant::now();
    let (code, body) = api
        .upload(
            &key,
            "during.txt",
            b"The dog runs.".to_vec(),
            &[("target_lang", "ES"), ("source_lang", "EN")],
        )
        .await?;
    // Well before the 10 s the pool used to wait (TOLK_DB_ACQUIRE_TIMEOUT_MS
    // is 1.5 s); the bound leaves room for a loaded machine.
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(code, 503, "{body}");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("database")),
        "{body}"
    );
    let res = api
        .keyed(reqwest::Method::POST, "/v2/translate", &key)
        .json(&json!({"text": ["The dog runs."], "target_lang": "ES"}))
        .send()
        .await?;
    assert_eq!(res.status().as_u16(), 503);
    assert!(res.headers().contains_key("retry-after"));
    let asked = Instant::now();
    let ready = api.http.get(api.url("/readyz")).send().await?;
    assert_eq!(ready.status().as_u16(), 503);
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "{:?}",
        asked.elapsed()
    );
    let live = api.http.get(api.url("/healthz")).send().await?;
    assert_eq!(live.status().as_u16(), 200);
    tokio::time::sleep(OUTAGE).await;
    pg.start_again()?;

    // After the outage: one job of every kind, and more documents.
    let ready_by = Instant::now() + Duration::from_secs(10);
    while api.http.get(api.url("/readyz")).send().await?.status() != 200 {
        if Instant::now() > ready_by {
            bail!(
                "/readyz not 200 10 s after the database came back; server log:\n{}",
                pg.log()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for i in 6..9 {
        documents.push(
            api.upload_ok(
                &key,
                &format!("after-{i}.txt"),
                document(i),
                &[("target_lang", "ES"), ("source_lang", "EN")],
            )
            .await?,
        );
    }
    let import_after =
        crate::translation_memories::import(&api, &key, "after", tmx.as_bytes()).await?;
    let (code, export) = call(
        &api,
        &key,
        Method::POST,
        &format!("/v3/translation_memories/{memory}/export"),
        None,
    )
    .await?;
    assert_eq!(code, 202, "{export}");
    let export_job = export["job_id"].as_str().context("job_id")?.to_owned();
    let (code, evaluation) = call(
        &api,
        &key,
        Method::POST,
        "/v1/quality-evaluation",
        Some(&json!({
            "metadata": {"source_language": "en", "target_language": "es"},
            "segments": [{"source": "The dog runs.", "target": "El perro corre."}],
        })),
    )
    .await?;
    assert_eq!(code, 202, "{evaluation}");
    let evaluation_id = evaluation["job_id"]
        .as_str()
        .with_context(|| format!("job_id in {evaluation}"))?
        .to_owned();
    let (code, voice) = crate::voice::create_job(
        &api,
        &key,
        &json!({
            "source_file": {"name": "speech.wav", "content_type": "audio/wav", "content_length": speech.len()},
            "parameters": {"source_language": "en"},
            "targets": [{"language": "es", "type": "text/plain"}],
        }),
    )
    .await?;
    assert_eq!(code, 201, "{voice}");
    let uploaded = crate::voice::upload_to(
        voice["upload_url"].as_str().context("upload_url")?,
        voice["signature"].as_str(),
        speech.clone(),
    )
    .await?;
    assert_eq!(uploaded, 200);

    for (id, doc_key) in &documents {
        wait_document(&api, &key, id, doc_key).await?;
    }
    let imported = crate::translation_memories::wait_job(&api, &key, &import_after).await?;
    assert_eq!(imported["results"][0]["status"], "completed", "{imported}");
    let exported = crate::translation_memories::wait_job(&api, &key, &export_job).await?;
    assert_eq!(exported["results"][0]["status"], "completed", "{exported}");
    let evaluated = crate::quality::wait_done(
        &api,
        &key,
        &format!("/v1/quality-evaluation/{evaluation_id}"),
    )
    .await?;
    assert_eq!(evaluated["status"], "done", "{evaluated}");
    let voiced =
        crate::voice::wait_job(&api, &key, voice["job_id"].as_str().context("job_id")?).await?;
    assert_eq!(voiced["results"][0]["status"], "complete", "{voiced}");

    // Each document billed once; no queue row ran twice to completion.
    let db = world.db().await?;
    for (id, _) in &documents {
        let entries: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM usage_events WHERE document_id = $1 AND amount > 0",
        )
        .bind(id)
        .fetch_one(&db)
        .await?;
        assert_eq!(entries, 1, "document {id} billed {entries} times");
    }
    // No process exited; every queue has both workers' loops live again (and
    // recorded with their concurrency), and the restarts are counted.
    assert!(world.is_running(api_pid), "the API exited");
    for pid in workers {
        assert!(
            world.is_running(pid),
            "worker {pid} exited: {}",
            world.log("worker-a")
        );
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = api.metrics_text().await?;
        // Two loops a queue, each running 2 jobs at once (`start_worker`),
        // recorded again after the outage.
        let all_live = tolk_storage::queue::QUEUES.iter().all(|q| {
            metric_value(&text, &format!("tolk_workers_live{{queue=\"{q}\"}}")) == Some(2.0)
                && metric_value(&text, &format!("tolk_worker_concurrency{{queue=\"{q}\"}}"))
                    == Some(4.0)
        });
        let restarts = metric_value(
            &text,
            "tolk_worker_loop_restarts_total{queue=\"translate-document\"}",
        )
        .unwrap_or(0.0);
        if all_live && restarts >= 1.0 {
            break;
        }
        if Instant::now() > deadline {
            bail!("loops not live again, or restarts not counted:\n{text}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    drop(world);
    drop(pg);
    Ok(())
}
