//! The scheduler's maintenance of every job kind: a voice or
//! translation-memory job whose queue job ended without finishing it (its
//! worker killed on every attempt) is failed with a message, never left in
//! `processing`; finished jobs past their retention go with their files.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::support::{Api, World};

/// Ends the queue job `job_id` as a worker killed on its every attempt
/// leaves it: failed with no attempt left.
async fn exhaust(db: &sqlx::PgPool, job_id: &str) -> Result<()> {
    let done = sqlx::query(
        r#"UPDATE apalis.jobs SET status = 'Failed', attempts = max_attempts,
               last_result = '{"Err": "the worker died"}'::jsonb, lock_by = NULL
           WHERE id = $1"#,
    )
    .bind(job_id)
    .execute(db)
    .await?;
    anyhow::ensure!(done.rows_affected() == 1, "no queue job {job_id}");
    Ok(())
}

/// Polls `path` until `done` holds of its body.
async fn poll(api: &Api, key: &str, path: &str, done: impl Fn(&Value) -> bool) -> Result<Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (code, body) = api.get(key, path).await?;
        if code == 200 && done(&body) {
            return Ok(body);
        }
        if Instant::now() > deadline {
            bail!("{path} answered {code}: {body}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A voice job uploaded, with no worker to run it.
async fn uploaded_voice_job(api: &Api, key: &str) -> Result<String> {
    let speech = crate::voice::tts(api, key, 101, "The house is big.").await?;
    let (code, created) = crate::voice::create_job(
        api,
        key,
        &json!({
            "source_file": {"name": "speech.wav", "content_type": "audio/wav",
                            "content_length": speech.len()},
            "parameters": {"source_language": "en"},
            "targets": [{"language": "es", "type": "text/plain"}],
        }),
    )
    .await?;
    anyhow::ensure!(code == 201, "{created}");
    let id = created["job_id"].as_str().context("job_id")?.to_owned();
    let url = created["upload_url"].as_str().context("upload_url")?;
    let signature = created["signature"].as_str().context("signature")?;
    let code = crate::voice::upload_to(url, Some(signature), speech).await?;
    anyhow::ensure!(
        code == 200 || code == 201 || code == 204,
        "upload answered {code}"
    );
    Ok(id)
}

#[tokio::test]
async fn a_voice_job_whose_worker_died_ends_failed() -> Result<()> {
    let mut world = World::new("lost_voice").await?;
    let key = world.create_key("lost-voice", false).await?;
    let api = world.start_api().await?;
    let id = uploaded_voice_job(&api, &key).await?;
    let db = world.db().await?;
    let uuid = uuid::Uuid::parse_str(&id)?;
    // As a worker leaves it when it dies mid-job.
    let job_id: String = sqlx::query_scalar(
        "UPDATE voice_jobs SET status = 'processing' WHERE id = $1 RETURNING queue_job_id",
    )
    .bind(uuid)
    .fetch_one(&db)
    .await?;
    exhaust(&db, &job_id).await?;
    world.spawn(&["scheduler", "--tick-secs", "1"], "scheduler")?;
    let path = format!("/v1/jobs/voice/translate/{id}");
    let body = poll(&api, &key, &path, |b| b["results"][0]["status"] == "failed").await?;
    let status: (String, Option<String>) =
        sqlx::query_as("SELECT status, error_message FROM voice_jobs WHERE id = $1")
            .bind(uuid)
            .fetch_one(&db)
            .await?;
    assert_eq!(status.0, "failed", "{body}");
    let message = status.1.unwrap_or_default();
    assert!(message.contains("ended without finishing"), "{message}");
    assert!(message.contains("the worker died"), "{message}");
    Ok(())
}

#[tokio::test]
async fn a_translation_memory_job_whose_worker_died_ends_failed() -> Result<()> {
    let mut world = World::new("lost_tm").await?;
    let key = world.create_key("lost-tm", false).await?;
    let api = world.start_api().await?;
    let tmx = crate::translation_memories::tmx_of(&[("The house", "La casa")], "es");
    let id = crate::translation_memories::import(&api, &key, "lost", tmx.as_bytes()).await?;
    let db = world.db().await?;
    let job_id: String =
        sqlx::query_scalar("SELECT queue_job_id FROM translation_memory_jobs WHERE id = $1")
            .bind(uuid::Uuid::parse_str(&id)?)
            .fetch_one(&db)
            .await?;
    exhaust(&db, &job_id).await?;
    world.spawn(&["scheduler", "--tick-secs", "1"], "scheduler")?;
    let path = format!("/v3/translation_memories/jobs/{id}");
    let body = poll(&api, &key, &path, |b| b["results"][0]["status"] == "failed").await?;
    let text = body.to_string();
    assert!(text.contains("ended without finishing"), "{body}");
    Ok(())
}

#[tokio::test]
async fn finished_voice_jobs_past_their_retention_go_with_their_files() -> Result<()> {
    let mut world = World::new("voice_retention").await?;
    let key = world.create_key("voice-retention", false).await?;
    let api = world.start_api().await?;
    world.start_worker("voice")?;
    let old = uploaded_voice_job(&api, &key).await?;
    let recent = uploaded_voice_job(&api, &key).await?;
    for id in [&old, &recent] {
        let done = crate::voice::wait_job(&api, &key, id).await?;
        assert_eq!(done["results"][0]["status"], "complete", "{done}");
    }
    let db = world.db().await?;
    let objects: Vec<String> = sqlx::query_scalar(
        "SELECT source_object FROM voice_jobs WHERE id = $1
         UNION ALL SELECT r ->> 'object' FROM voice_jobs, jsonb_array_elements(results) r
         WHERE id = $1",
    )
    .bind(uuid::Uuid::parse_str(&old)?)
    .fetch_all(&db)
    .await?;
    assert_eq!(objects.len(), 2, "{objects:?}");
    for object in &objects {
        assert!(
            std::path::Path::new(&world.object_store)
                .join(object)
                .exists(),
            "{object}"
        );
    }
    // Eight days later, for the old one (retention: seven days).
    sqlx::query("UPDATE voice_jobs SET updated_at = now() - interval '8 days' WHERE id = $1")
        .bind(uuid::Uuid::parse_str(&old)?)
        .execute(&db)
        .await?;
    world.spawn(&["scheduler", "--tick-secs", "1"], "scheduler")?;
    let deadline = Instant::now() + Duration::from_secs(60);
    while api
        .get(&key, &format!("/v1/jobs/voice/translate/{old}"))
        .await?
        .0
        != 404
    {
        anyhow::ensure!(Instant::now() < deadline, "the old job was never deleted");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for object in &objects {
        assert!(
            !std::path::Path::new(&world.object_store)
                .join(object)
                .exists(),
            "{object} left behind"
        );
    }
    let (code, body) = api
        .get(&key, &format!("/v1/jobs/voice/translate/{recent}"))
        .await?;
    assert_eq!(code, 200, "{body}");
    Ok(())
}

#[tokio::test]
async fn a_document_whose_worker_died_ends_in_error() -> Result<()> {
    let mut world = World::new("lost_document").await?;
    let key = world.create_key("lost-document", false).await?;
    let api = world.start_api().await?;
    let (id, document_key) = api
        .upload_ok(
            &key,
            "lost.txt",
            b"The house is big.".to_vec(),
            &[("target_lang", "ES"), ("source_lang", "EN")],
        )
        .await?;
    let db = world.db().await?;
    let job_id: String = sqlx::query_scalar("SELECT job_id FROM documents WHERE id = $1")
        .bind(&id)
        .fetch_one(&db)
        .await?;
    exhaust(&db, &job_id).await?;
    world.spawn(&["scheduler", "--tick-secs", "1"], "scheduler")?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (code, body) = api.status(&key, &id, &document_key).await?;
        assert_eq!(code, 200, "{body}");
        if body["status"] == "error" {
            let message = body["error_message"].as_str().unwrap_or_default();
            assert!(message.contains("ended without finishing"), "{body}");
            assert!(message.contains("the worker died"), "{body}");
            return Ok(());
        }
        anyhow::ensure!(Instant::now() < deadline, "still {body}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
