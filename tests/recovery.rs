//! A worker killed with SIGKILL in the middle of a long document loses nothing:
//! another worker picks the job up and finishes it, once.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use crate::support::World;

/// About 60,000 words of English in many paragraphs.
fn long_text() -> String {
    let sentences = [
        "The dog runs in the park with the children.",
        "The cat sleeps in the house near the window.",
        "The city has many people and the streets are busy.",
        "The water of the river is cold in the winter.",
        "The teacher reads a book to the students every morning.",
    ];
    let mut text = String::new();
    for i in 0..1_200 {
        for s in sentences {
            text.push_str(s);
            text.push(' ');
        }
        text.push_str(&format!("Paragraph {i}.\n\n"));
    }
    text
}

/// Waits until the document is being translated (progress above 0).
async fn wait_translating(world: &World, db: &sqlx::PgPool, id: &str, log: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (status, progress): (String, f32) =
            sqlx::query_as("SELECT status, progress FROM documents WHERE id = $1")
                .bind(id)
                .fetch_one(db)
                .await?;
        if status == "translating" && progress > 0.0 {
            return Ok(());
        }
        if status == "done" {
            bail!("the document finished before the worker could be stopped; make it longer");
        }
        if Instant::now() > deadline {
            bail!("the worker never started translating: {}", world.log(log));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn sigterm_lets_the_running_job_finish_and_releases_the_rest() -> Result<()> {
    let mut world = World::new("sigterm").await?;
    let key = world.create_key("sigterm", false).await?;
    let api = world.start_api().await?;
    let worker = world.spawn(&["worker", "--concurrency", "1"], "worker-term")?;
    let (id, dk) = api
        .upload_ok(
            &key,
            "long.txt",
            long_text().into_bytes(),
            &[("target_lang", "ES"), ("source_lang", "EN")],
        )
        .await?;
    let (next, next_key) = api
        .upload_ok(
            &key,
            "next.txt",
            b"The cat sleeps.".to_vec(),
            &[("target_lang", "ES"), ("source_lang", "EN")],
        )
        .await?;
    let db = world.db().await?;
    wait_translating(&world, &db, &id, "worker-term").await?;
    let rc = std::process::Command::new("kill")
        .args(["-TERM", &worker.to_string()])
        .status()?;
    assert!(rc.success());
    let status = world.wait_exit(worker, Duration::from_secs(60)).await?;
    assert!(
        status.success(),
        "worker exited with {status}: {}",
        world.log("worker-term")
    );
    // The running job was finished before the exit, not abandoned.
    let (code, body) = api.status(&key, &id, &dk).await?;
    assert_eq!(code, 200);
    assert_eq!(body["status"], "done", "{body}");
    // The other job was not started, and is done by the next worker.
    world.start_worker("after")?;
    let st = api
        .wait(&key, &next, &next_key, Duration::from_secs(120))
        .await?;
    assert_eq!(st.status, "done", "{}", st.body);
    Ok(())
}

#[tokio::test]
async fn killed_worker_mid_job_loses_nothing() -> Result<()> {
    let mut world = World::new("kill").await?;
    world
        .extra_env
        .push(("TOLK_WORKER_HEARTBEAT_SECS".into(), "1".into()));
    let key = world.create_key("kill", false).await?;
    let api = world.start_api().await?;
    // The scheduler sweeps jobs of dead workers too.
    world.spawn(&["scheduler", "--tick-secs", "1"], "scheduler")?;
    let victim = world.start_worker("victim")?;
    let (id, dk) = api
        .upload_ok(
            &key,
            "long.txt",
            long_text().into_bytes(),
            &[("target_lang", "ES"), ("source_lang", "EN")],
        )
        .await?;

    // Wait until the victim is translating, then SIGKILL it.
    let db = world.db().await?;
    wait_translating(&world, &db, &id, "worker-victim").await?;
    let rc = std::process::Command::new("kill")
        .args(["-9", &victim.to_string()])
        .status()?;
    assert!(rc.success());
    let locked_by: Option<String> = sqlx::query_scalar(
        "SELECT j.lock_by FROM documents d JOIN apalis.jobs j ON j.id = d.job_id WHERE d.id = $1",
    )
    .bind(&id)
    .fetch_one(&db)
    .await?;
    assert!(
        locked_by.is_some(),
        "the job was locked by the killed worker"
    );

    // A new worker (with a new, unique name) takes over.
    world.start_worker("rescuer")?;
    let st = api.wait(&key, &id, &dk, Duration::from_secs(300)).await?;
    assert_eq!(st.status, "done", "{}", st.body);
    let (_, _, bytes) = api.download(&key, &id, &dk).await?;
    let out = String::from_utf8(bytes)?;
    assert!(out.contains("perro"));
    assert_eq!(
        out.matches("\n\n").count(),
        1_200,
        "every paragraph is in the result"
    );

    // Ran to completion once: one usage entry, two runs recorded (killed + rescued).
    let (entries, attempts): (i64, i32) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM usage_events WHERE document_id = $1), attempts FROM documents WHERE id = $1",
    )
    .bind(&id)
    .fetch_one(&db)
    .await?;
    assert_eq!(entries, 1);
    assert_eq!(attempts, 2, "one killed run and one complete run");
    // The queue row reaches Done too (apalis acknowledges in batches, so wait a little).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let job_status: String = sqlx::query_scalar(
            "SELECT j.status FROM documents d JOIN apalis.jobs j ON j.id = d.job_id WHERE d.id = $1",
        )
        .bind(&id)
        .fetch_one(&db)
        .await?;
        if job_status == "Done" {
            break;
        }
        if Instant::now() > deadline {
            bail!("queue row still {job_status}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(())
}

/// `apalis.jobs.lock_by` has no foreign key (migration 20261123000002): a job
/// locked under a name with no worker row (its row deleted, or never written)
/// is released by the scheduler's sweep and runs.
#[tokio::test]
async fn a_job_locked_by_a_vanished_worker_is_released() -> Result<()> {
    let mut world = World::new("ghost").await?;
    let key = world.create_key("ghost", false).await?;
    let api = world.start_api().await?;
    let (id, dk) = api
        .upload_ok(
            &key,
            "ghost.txt",
            b"The dog sleeps.".to_vec(),
            &[("target_lang", "ES"), ("source_lang", "EN")],
        )
        .await?;
    let db = world.db().await?;
    let locked = sqlx::query(
        "UPDATE apalis.jobs SET status = 'Queued', lock_by = 'ghost-worker', lock_at = now()
         WHERE id = (SELECT job_id FROM documents WHERE id = $1) AND status = 'Pending'",
    )
    .bind(&id)
    .execute(&db)
    .await?;
    assert_eq!(locked.rows_affected(), 1, "the job was pending, now locked");
    world.start_worker("alive")?;
    world.spawn(&["scheduler", "--tick-secs", "1"], "scheduler")?;
    let st = api.wait(&key, &id, &dk, Duration::from_secs(120)).await?;
    assert_eq!(st.status, "done", "{}", st.body);
    let (_, _, bytes) = api.download(&key, &id, &dk).await?;
    assert!(String::from_utf8(bytes)?.contains("perro"));
    Ok(())
}
