//! Worker pools by job kind (`tolk worker --queues … --concurrency …`): a
//! worker runs only its kinds, a kind nobody runs waits and shows in
//! `/metrics`, and a worker for that kind then takes it.

use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::json;

use crate::support::{World, metric_value};

/// A documents-only worker translates documents and leaves a quality
/// evaluation waiting (no live worker for its queue in `/metrics`, the queue
/// named unserved by `/readyz`); a
/// quality worker started next takes it. A typo in `--queues` stops the
/// process with a message naming the known pools.
#[tokio::test]
async fn each_worker_runs_only_its_own_kinds_of_job() -> Result<()> {
    let mut world = World::new("worker_pools").await?;
    let key = world.create_key("pools", false).await?;
    let api = world.start_api().await?;
    let pid = world.spawn(&["worker", "--queues", "documnets"], "worker-typo")?;
    let status = world.wait_exit(pid, Duration::from_secs(30)).await?;
    assert!(!status.success(), "an unknown pool stops the worker");
    let log = std::fs::read_to_string(world.path("worker-typo.log"))?;
    assert!(log.contains("unknown queue \"documnets\""), "{log}");

    world.spawn(
        &[
            "worker",
            "--queues",
            "documents",
            "--concurrency",
            "documents=3",
        ],
        "worker-documents",
    )?;
    let poll = crate::quality::start_one(&api, &key).await?;
    api.small_document_done(&key).await?;
    // The document is done; the evaluation still waits, and nothing runs it.
    let (code, pending) = api.get(&key, &poll).await?;
    assert_eq!((code, &pending["status"]), (202, &json!("processing")));
    let loops = live_workers(&api, "translate-document").await?;
    assert!(loops >= 1.0);
    // Each live documents loop runs 3 jobs at once (`--concurrency documents=3`).
    let concurrency = metric(
        &api,
        "tolk_worker_concurrency{queue=\"translate-document\"} ",
    )
    .await?;
    assert_eq!(concurrency, 3.0 * loops);
    let (host, pid): (String, i32) = sqlx::query_as(
        "SELECT host, pid FROM worker_loops WHERE queue = 'translate-document' LIMIT 1",
    )
    .fetch_one(&world.db().await?)
    .await?;
    assert!(!host.is_empty() && pid > 0, "{host} {pid}");
    assert_eq!(live_workers(&api, "evaluate-quality").await?, 0.0);
    assert_eq!(live_workers(&api, "voice-translate").await?, 0.0);
    let ready: serde_json::Value = api
        .http
        .get(api.url("/readyz"))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(
        ready["unserved_queues"],
        json!(["evaluate-quality"]),
        "{ready}"
    );

    world.spawn(&["worker", "--queues", "quality"], "worker-quality")?;
    let done = crate::quality::wait_done(&api, &key, &poll).await?;
    assert_eq!(done["status"], "done", "{done}");
    Ok(())
}

/// The value of the `/metrics` line starting with `prefix` (labels included).
async fn metric(api: &crate::support::Api, prefix: &str) -> Result<f64> {
    let text = api.metrics_text().await?;
    metric_value(&text, prefix).context(format!("no {prefix} in {text}"))
}

/// `tolk_workers_live` of `queue`.
async fn live_workers(api: &crate::support::Api, queue: &str) -> Result<f64> {
    metric(api, &format!("tolk_workers_live{{queue=\"{queue}\"}} ")).await
}

/// Queue metrics per kind: a job waiting with no worker shows its age; a
/// finished job counts in `tolk_queue_jobs_finished_total` and in its run-time
/// histogram, and still does after the scheduler pruned its queue row.
#[tokio::test]
async fn queue_metrics_count_finished_jobs_across_pruning() -> Result<()> {
    let mut world = World::new("queue_metrics").await?;
    let key = world.create_key("metrics", false).await?;
    let api = world.start_api().await?;
    let (id, dk) = api
        .upload_ok(
            &key,
            "a.txt",
            b"The dog sleeps.".to_vec(),
            &[("target_lang", "ES")],
        )
        .await?;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let waited = metric(
        &api,
        "tolk_queue_oldest_waiting_seconds{queue=\"translate-document\"} ",
    )
    .await?;
    assert!(waited >= 1.0, "the waiting document's age: {waited}");
    world.start_worker("metrics")?;
    let st = api.wait(&key, &id, &dk, Duration::from_secs(120)).await?;
    assert_eq!(st.status, "done", "{}", st.body);
    let done = "tolk_queue_jobs_finished_total{queue=\"translate-document\",outcome=\"done\"} ";
    let all = "tolk_queue_job_run_seconds_bucket{queue=\"translate-document\",outcome=\"done\",le=\"+Inf\"} ";
    // The worker acknowledges just after the document row says done.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while metric(&api, done).await.unwrap_or(0.0) < 1.0 {
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "the job never counted"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(metric(&api, all).await?, 1.0);
    assert_eq!(
        metric(
            &api,
            "tolk_queue_oldest_waiting_seconds{queue=\"translate-document\"} "
        )
        .await?,
        0.0
    );
    // The scheduler prunes the finished row at once; the counts stay.
    world.spawn(
        &[
            "scheduler",
            "--tick-secs",
            "1",
            "--keep-done-jobs-secs",
            "0",
        ],
        "scheduler",
    )?;
    let db = world.db().await?;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let left: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM apalis.jobs WHERE job_type = 'translate-document'",
        )
        .fetch_one(&db)
        .await?;
        if left == 0 {
            break;
        }
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "the row was never pruned"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (minutes,): (i64,) = sqlx::query_as(
        "SELECT COALESCE(sum(jobs), 0)::int8 FROM queue_job_minutes
         WHERE queue = 'translate-document' AND outcome = 'done'",
    )
    .fetch_one(&db)
    .await?;
    assert_eq!(
        minutes, 1,
        "the pruned job is kept in its minute for the last hour"
    );
    assert_eq!(metric(&api, done).await?, 1.0);
    assert_eq!(metric(&api, all).await?, 1.0);
    Ok(())
}

/// A voice translation job of `audio` (English speech) to Spanish text,
/// uploaded; its id.
async fn voice_job(api: &crate::support::Api, key: &str, audio: &[u8]) -> Result<String> {
    let (code, created) = crate::voice::create_job(
        api,
        key,
        &json!({
            "source_file": {"name": "speech.wav", "content_type": "audio/wav", "content_length": audio.len()},
            "parameters": {"source_language": "en"},
            "targets": [{"language": "es", "type": "text/plain"}],
        }),
    )
    .await?;
    anyhow::ensure!(code == 201, "voice job answered {code}: {created}");
    let code = crate::voice::upload_to(
        created["upload_url"].as_str().context("upload_url")?,
        created["signature"].as_str(),
        audio.to_vec(),
    )
    .await?;
    anyhow::ensure!(code == 200, "upload answered {code}");
    Ok(created["job_id"].as_str().context("job_id")?.to_owned())
}

/// The scale-by-kind drill in its short form (the long one, with throughput
/// figures, is `scripts/pools_drill.py`): two documents-only workers and a
/// voice-only one share a mixed load; stopping the documents pool leaves
/// voice jobs flowing while documents wait, which `/metrics` and the
/// dashboard show; a documents worker added then takes the documents.
#[tokio::test]
async fn stopping_one_pool_leaves_the_other_kinds_flowing() -> Result<()> {
    let mut world = World::new("scale_by_kind").await?;
    let key = world.create_key("scale", false).await?;
    let admin = world.create_key("ops", true).await?;
    let api = world.start_api().await?;
    let documents = [
        world.spawn(&["worker", "--queues", "documents"], "worker-documents-a")?,
        world.spawn(&["worker", "--queues", "documents"], "worker-documents-b")?,
    ];
    world.spawn(&["worker", "--queues", "voice"], "worker-voice")?;
    let speech = crate::voice::tts(&api, &key, 101, "The house is big.").await?;

    // A mixed load: both pools serve their kinds.
    let voice = voice_job(&api, &key, &speech).await?;
    let mut uploads = Vec::new();
    for i in 0..4 {
        uploads.push(
            api.upload_ok(
                &key,
                &format!("d{i}.txt"),
                format!("The dog sleeps {i} times.").into_bytes(),
                &[("target_lang", "ES")],
            )
            .await?,
        );
    }
    for (id, dk) in &uploads {
        let st = api.wait(&key, id, dk, Duration::from_secs(120)).await?;
        assert_eq!(st.status, "done", "{}", st.body);
    }
    let done = crate::voice::wait_job(&api, &key, &voice).await?;
    assert_eq!(done["results"][0]["status"], "complete", "{done}");
    assert!(live_workers(&api, "translate-document").await? >= 2.0);

    // The documents pool stops (gracefully): documents wait, voice flows.
    for pid in documents {
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()?;
        assert!(status.success());
        world.wait_exit(pid, Duration::from_secs(60)).await?;
    }
    let (waiting, dk) = api
        .upload_ok(
            &key,
            "late.txt",
            b"The cat sleeps.".to_vec(),
            &[("target_lang", "ES")],
        )
        .await?;
    let voice = voice_job(&api, &key, &speech).await?;
    let done = crate::voice::wait_job(&api, &key, &voice).await?;
    assert_eq!(done["results"][0]["status"], "complete", "{done}");
    let (_, status) = api.status(&key, &waiting, &dk).await?;
    assert_eq!(status["status"], "queued", "{status}");
    // Once the stopped loops miss their heartbeats, the queue shows as unserved.
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    while live_workers(&api, "translate-document").await? > 0.0 {
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "the stopped documents loops still count as live"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(live_workers(&api, "voice-translate").await? >= 1.0);
    let page = api
        .http
        .get(format!("{}/admin/ui", api.direct))
        .basic_auth("ops", Some(&admin))
        .send()
        .await?
        .text()
        .await?;
    let row = page
        .split("<tr>")
        .find(|r| {
            r.contains("<th scope=\"row\">translate-document</th>") && r.contains("jobs wait")
        })
        .context("the dashboard does not show documents waiting with no worker")?;
    assert!(row.contains("0 (jobs wait)"), "{row}");

    // A documents worker added takes the waiting document.
    world.spawn(&["worker", "--queues", "documents"], "worker-documents-c")?;
    let st = api
        .wait(&key, &waiting, &dk, Duration::from_secs(120))
        .await?;
    assert_eq!(st.status, "done", "{}", st.body);
    Ok(())
}

/// A finished queue row is counted once: by the prune's watermark while it
/// is kept (a job failed for good stays for days), and not again when it is
/// deleted later; its minute is kept for the dashboard's last hour.
#[tokio::test]
async fn a_finished_row_is_counted_once_whether_kept_or_pruned() -> Result<()> {
    let mut world = World::new("counted_once").await?;
    let api = world.start_api().await?;
    let db = world.db().await?;
    // A job of ten minutes ago that failed for good, and a watermark an hour back.
    sqlx::query("UPDATE queue_stats_watermark SET counted_until = now() - interval '1 hour'")
        .execute(&db)
        .await?;
    sqlx::query(
        "INSERT INTO apalis.jobs (job, id, job_type, status, attempts, max_attempts, run_at,
                                  lock_at, done_at, last_result)
         VALUES ('\\x7b7d', '01JCOUNTEDONCE000000000000', 'import-tmx', 'Killed', 1, 5,
                 now() - interval '11 minutes', now() - interval '11 minutes',
                 now() - interval '10 minutes', '{\"Err\": \"gone\"}')",
    )
    .execute(&db)
    .await?;
    let failed = "tolk_queue_jobs_finished_total{queue=\"import-tmx\",outcome=\"failed\"} ";
    assert_eq!(
        metric(&api, failed).await?,
        1.0,
        "read live before it is counted"
    );

    let scheduler = world.spawn(&["scheduler", "--tick-secs", "1"], "scheduler-keeps")?;
    let counted = || async {
        let (jobs,): (i64,) = sqlx::query_as(
            "SELECT COALESCE(sum(jobs), 0)::int8 FROM queue_job_totals WHERE queue = 'import-tmx'",
        )
        .fetch_one(&db)
        .await?;
        anyhow::Ok(jobs)
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while counted().await? == 0 {
        anyhow::ensure!(std::time::Instant::now() < deadline, "never counted");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Kept, counted by the watermark: once, however many prunes pass.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(counted().await?, 1);
    assert_eq!(metric(&api, failed).await?, 1.0);
    let (minute,): (i64,) = sqlx::query_as(
        "SELECT COALESCE(sum(jobs), 0)::int8 FROM queue_job_minutes WHERE queue = 'import-tmx'",
    )
    .fetch_one(&db)
    .await?;
    assert_eq!(minute, 1);

    // Deleted later: not counted again.
    let status = std::process::Command::new("kill")
        .args(["-TERM", &scheduler.to_string()])
        .status()?;
    assert!(status.success());
    world.wait_exit(scheduler, Duration::from_secs(30)).await?;
    world.spawn(
        &[
            "scheduler",
            "--tick-secs",
            "1",
            "--keep-failed-jobs-hours",
            "0",
        ],
        "scheduler-prunes",
    )?;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (left,): (i64,) =
            sqlx::query_as("SELECT count(*) FROM apalis.jobs WHERE job_type = 'import-tmx'")
                .fetch_one(&db)
                .await?;
        if left == 0 {
            break;
        }
        anyhow::ensure!(std::time::Instant::now() < deadline, "never pruned");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(counted().await?, 1);
    assert_eq!(metric(&api, failed).await?, 1.0);
    Ok(())
}
