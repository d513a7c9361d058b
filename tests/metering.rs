//! Request metering with batched ledger writes (the platform's default,
//! `tolk_storage::usage_appender`): an API process holds its requests' ledger
//! entries for up to its batch delay, writes them before answering a usage
//! read, and writes what it still holds when it stops gracefully.

use std::time::Duration;

use anyhow::Result;
use serde_json::json;

use crate::support::{Api, World, call};

/// Entries of `tag`: (count, sum of amounts).
async fn tagged(db: &sqlx::PgPool, tag: &str) -> Result<(i64, i64)> {
    Ok(sqlx::query_as(
        "SELECT count(*), COALESCE(sum(amount), 0)::bigint FROM usage_events WHERE custom_tag = $1",
    )
    .bind(tag)
    .fetch_one(db)
    .await?)
}

/// Translates `text` EN → ES with the reporting tag `batched`; returns the
/// characters billed.
async fn translate_tagged(api: &Api, key: &str, text: &str) -> Result<i64> {
    let res = api
        .keyed(reqwest::Method::POST, "/v2/translate", key)
        .header("X-DeepL-Reporting-Tag", "batched")
        .json(&json!({"text": [text], "source_lang": "EN", "target_lang": "ES"}))
        .send()
        .await?;
    assert_eq!(res.status().as_u16(), 200);
    Ok(text.chars().count() as i64)
}

#[tokio::test]
async fn batched_entries_are_written_before_usage_reads_and_at_a_graceful_stop() -> Result<()> {
    let mut world = World::new("metering").await?;
    let key = world.create_key("metered", false).await?;
    // A batch delay far longer than the test: entries reach the ledger only
    // when something asks for them.
    world
        .extra_env
        .push(("TOLK_LEDGER_BATCH_MS".to_owned(), "600000".to_owned()));
    let (api, pid) = world.start_api_process().await?;
    let db = world.db().await?;

    let texts = [
        "The house is big.",
        "The dog sees the cat.",
        "Good morning.",
    ];
    let mut billed = 0_i64;
    for t in texts {
        billed += translate_tagged(&api, &key, t).await?;
    }
    // Answered, and held by the appender.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        tagged(&db, "batched").await?,
        (0, 0),
        "written before its delay"
    );

    // A usage read writes this process's entries first.
    let (code, body) = call(&api, &key, reqwest::Method::GET, "/v2/usage", None).await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["character_count"], billed, "{body}");
    assert_eq!(tagged(&db, "batched").await?, (3, billed));

    // Two more, then SIGTERM: the graceful stop writes them before exiting.
    for t in ["The city needs a good school.", "Thank you."] {
        billed += translate_tagged(&api, &key, t).await?;
    }
    assert_eq!(tagged(&db, "batched").await?, (3, billed - 39));
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()?;
    assert!(status.success());
    let exit = world.wait_exit(pid, Duration::from_secs(20)).await?;
    assert!(exit.success(), "the API exited with {exit}");
    assert_eq!(
        tagged(&db, "batched").await?,
        (5, billed),
        "written at the stop, once"
    );
    Ok(())
}
