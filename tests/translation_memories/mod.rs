//! Translation memories (`/v3/translation_memories`): TMX import and export jobs
//! through real API and worker processes, PostgreSQL (pg_trgm) and Apertium;
//! memory matches in `/v2/translate`.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use reqwest::Method;
use serde_json::{Value, json};
use tolk_formats::tmx::{Entry, Header, TmxReader, Unit};

use crate::support::{Api, World, call, python, translated_texts};

mod errors;
mod matches;
mod tmx;

/// Creates an import job and uploads `tmx` to its signed URL; returns the job id.
pub(crate) async fn import(api: &Api, key: &str, name: &str, tmx: &[u8]) -> Result<String> {
    let (code, job) = call(
        api,
        key,
        Method::POST,
        "/v3/translation_memories/import",
        Some(&json!({
            "source_file": {"file_name": format!("{name}.tmx"), "content_type": "application/xml",
                            "content_length": tmx.len()},
            "parameters": {"display_name": name},
        })),
    )
    .await?;
    if code != 202 {
        bail!("import answered {code}: {job}");
    }
    let id = job["job_id"].as_str().context("job_id")?.to_owned();
    let url = job["upload_url"].as_str().context("upload_url")?;
    job["expires_at"].as_str().context("expires_at")?;
    let (code, status) = call(
        api,
        key,
        Method::GET,
        &format!("/v3/translation_memories/jobs/{id}"),
        None,
    )
    .await?;
    assert_eq!(code, 200, "{status}");
    assert_eq!(status["results"][0]["status"], "awaiting_input", "{status}");
    assert_eq!(status["operation"], "import");
    // The signed URL needs no key.
    let res = api.http.put(url).body(tmx.to_vec()).send().await?;
    if res.status().as_u16() != 200 {
        bail!(
            "upload answered {}: {}",
            res.status(),
            res.text().await.unwrap_or_default()
        );
    }
    Ok(id)
}

/// Polls a job until it is completed, failed or expired; returns its body.
pub(crate) async fn wait_job(api: &Api, key: &str, id: &str) -> Result<Value> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (code, body) = call(
            api,
            key,
            Method::GET,
            &format!("/v3/translation_memories/jobs/{id}"),
            None,
        )
        .await?;
        if code != 200 {
            bail!("job status answered {code}: {body}");
        }
        let status = body["results"][0]["status"].as_str().unwrap_or_default();
        if matches!(status, "completed" | "failed" | "expired") {
            return Ok(body);
        }
        if Instant::now() > deadline {
            bail!("job {id} still {status}: {body}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Imports and waits for success; returns the new memory's id.
async fn import_ok(api: &Api, key: &str, name: &str, tmx: &[u8]) -> Result<(String, Value)> {
    let job = import(api, key, name, tmx).await?;
    let body = wait_job(api, key, &job).await?;
    let result = &body["results"][0];
    if result["status"] != "completed" {
        bail!("import {name} did not complete: {body}");
    }
    Ok((
        result["translation_memory_id"]
            .as_str()
            .context("translation_memory_id")?
            .to_owned(),
        body,
    ))
}

/// Header and units of a TMX document, as tolk-formats reads it.
fn read_tmx(bytes: &[u8]) -> Result<(Header, Vec<Unit>, usize)> {
    let mut r = TmxReader::new(bytes)?;
    let header = r.header().clone();
    let mut units = Vec::new();
    let mut skipped = 0;
    while let Some(e) = r.next_entry()? {
        match e {
            Entry::Unit(mut u) => {
                u.line = 0;
                units.push(u);
            }
            Entry::Skipped { .. } => skipped += 1,
        }
    }
    Ok((header, units, skipped))
}

pub(crate) fn tmx_of(units: &[(&str, &str)], lang: &str) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<tmx version=\"1.4\">\n<header creationtool=\"t\" creationtoolversion=\"1\" segtype=\"sentence\" o-tmf=\"t\" adminlang=\"en\" srclang=\"en\" datatype=\"plaintext\"/>\n<body>\n",
    );
    for (src, tgt) in units {
        s.push_str(&format!(
            "<tu><tuv xml:lang=\"en\"><seg>{src}</seg></tuv><tuv xml:lang=\"{lang}\"><seg>{tgt}</seg></tuv></tu>\n"
        ));
    }
    s.push_str("</body>\n</tmx>\n");
    s
}
