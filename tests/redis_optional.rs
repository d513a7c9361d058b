//! Redis is optional at run time: an API whose Redis is down starts and
//! serves, picks Redis up when it appears, and falls back to in-process rate
//! limits when it goes away, warning once rather than per request.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use reqwest::Method;
use serde_json::json;

use crate::support::{Api, World, call, free_port};

/// Sends `n` translations; every one must succeed.
async fn translate_all(api: &Api, key: &str, n: usize) -> Result<()> {
    let body = json!({"text": ["The dog runs."], "source_lang": "EN", "target_lang": "ES"});
    for _ in 0..n {
        let (code, answer) = call(api, key, Method::POST, "/v2/translate", Some(&body)).await?;
        if code != 200 {
            bail!("translate answered {code}: {answer}");
        }
    }
    Ok(())
}

/// Polls the log named `log` until it contains `needle`.
async fn wait_log(world: &World, log: &str, needle: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !world.log(log).contains(needle) {
        if Instant::now() > deadline {
            bail!("{needle:?} not in the log:\n{}", world.log(log));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

#[tokio::test]
async fn the_api_serves_without_redis_and_warns_once_when_it_goes_away() -> Result<()> {
    let port = free_port();
    let mut world = World::new("redis_optional").await?;
    world
        .extra_env
        .push(("REDIS_URL".into(), format!("redis://127.0.0.1:{port}")));
    let key = world.create_key("redis", false).await?;
    // Nothing listens on the Redis port: the API still comes up and serves.
    let api = world.start_api().await?;
    let log = format!("api-{}", api.direct.rsplit(':').next().context("API port")?);
    translate_all(&api, &key, 10).await?;

    // Redis appears: the limiter connects in the background.
    let mut redis = tokio::process::Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("redis-server (scripts/setup.sh installs redis-server)")?;
    wait_log(&world, &log, "connected to Redis").await?;
    translate_all(&api, &key, 10).await?;

    // Redis goes away under load: every request is still served, and the
    // failures make no new warning within the minute.
    redis.kill().await?;
    redis.wait().await?;
    translate_all(&api, &key, 50).await?;
    let text = world.log(&log);
    let warnings = text.matches("limiting in this process").count();
    assert_eq!(warnings, 1, "{text}");
    Ok(())
}
