//! Developer-key administration, the usage ledger and its rollup, limits (456),
//! analytics and rate limits (429), against real `tolk` processes, PostgreSQL,
//! Redis and Apertium.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::support::{Answer, Api, World, call, exchange, message};

mod analytics;
mod dashboard;
mod dashboard_sign_in;
mod keys;
mod limits;

/// Characters as the spec counts them (Unicode scalar values).
fn chars(texts: &[&str]) -> i64 {
    texts.iter().map(|t| t.chars().count() as i64).sum()
}

/// Creates a developer key through the admin API; returns (key_id, credential).
async fn new_developer_key(api: &Api, admin: &str, label: &str) -> Result<(String, String)> {
    let (code, body) = api
        .post(admin, "/v2/admin/developer-keys", &json!({"label": label}))
        .await?;
    if code != 200 {
        bail!("create key answered {code}: {body}");
    }
    Ok((
        body["key_id"].as_str().context("key_id")?.to_owned(),
        body["key"].as_str().context("key")?.to_owned(),
    ))
}

/// Runs a scheduler until the rollup has every ledger entry, then stops it.
async fn roll_up_everything(world: &mut World) -> Result<()> {
    let pid = world.spawn(&["scheduler", "--tick-secs", "1"], "scheduler")?;
    let db = world.db().await?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (left,): (i64,) = sqlx::query_as(
            "SELECT count(*) FROM usage_events e, usage_rollup_state s WHERE e.tx >= s.watermark",
        )
        .fetch_one(&db)
        .await?;
        if left == 0 {
            break;
        }
        if Instant::now() > deadline {
            bail!("{left} ledger entries not rolled up after 30 s");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    nix_kill(pid);
    world.wait_exit(pid, Duration::from_secs(20)).await?;
    Ok(())
}

fn nix_kill(pid: u32) {
    let _ = std::process::Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status();
}
