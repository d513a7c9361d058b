//! `tolk-bench glossary`: what a glossary costs `POST /v2/translate`, with the
//! API's glossary cache (`TOLK_GLOSSARY_CACHE_MB`, the default) and without
//! it (every request loads and indexes the entries), against the same request
//! without a glossary. Two API servers in this process share one throwaway
//! database and one Apertium translator (EN→ES); requests alternate between
//! the configurations so that machine noise hits them alike.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::{Value, json};
use tolk_engine::{ApertiumConfig, Translator};
use tolk_pipeline::GlossaryCache;
use tolk_storage::objects::Objects;

use tolk_storage::throwaway::ThrowawayDb;

/// Options of the glossary benchmark.
#[derive(Debug, Args)]
pub struct GlossaryArgs {
    /// Glossary sizes (entries), comma-separated.
    #[arg(long, default_value = "100,10000,100000", value_delimiter = ',')]
    sizes: Vec<usize>,
    /// Requests per configuration and size.
    #[arg(long, default_value_t = 200)]
    requests: usize,
    /// Admin URL of the local PostgreSQL (a throwaway database is created and dropped).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432/postgres")]
    database_url: String,
    /// Apertium modes folder.
    #[arg(long, default_value = "/usr/share/apertium/modes")]
    modes: std::path::PathBuf,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// One translate request; its latency.
async fn one(http: &reqwest::Client, base: &str, auth: &str, body: &Value) -> Result<Duration> {
    let start = Instant::now();
    let res = http
        .post(format!("{base}/v2/translate"))
        .header("Authorization", auth)
        .json(body)
        .send()
        .await?;
    let code = res.status().as_u16();
    let text = res.text().await?;
    let took = start.elapsed();
    if code != 200 {
        bail!("translate answered {code}: {text}");
    }
    if body.get("glossary_id").is_some() && !text.contains("michi") {
        bail!("the glossary term is missing: {text}");
    }
    Ok(took)
}

/// Runs the benchmark.
pub async fn run(args: GlossaryArgs) -> Result<()> {
    let database = ThrowawayDb::create(
        &args.database_url,
        &format!("tolk_bench_glossary_{}", std::process::id()),
    )
    .await?;
    let outcome = async {
        let db = database.connect(10).await?;
        let org = tolk_storage::keys::ensure_organization(&db, "bench").await?;
        let key = tolk_storage::keys::create(&db, org, "bench", false).await?.secret;
        let dir = std::env::temp_dir().join(&database.name);
        let objects = Objects::open(&dir.join("objects").display().to_string())?;
        let translator = Arc::new(Translator::apertium(ApertiumConfig {
            modes_dir: args.modes.clone(),
            ..ApertiumConfig::default()
        })?);
        let (stop, rx) = tokio::sync::watch::channel(false);
        let cached = crate::app::serve(
            crate::app::api_state(db.clone(), objects.clone(), translator.clone(), 1 << 20),
            rx.clone(),
        )
        .await?;
        let uncached = crate::app::serve(
            tolk_api::AppState {
                glossary_cache: Arc::new(GlossaryCache::new(0)),
                ..crate::app::api_state(db.clone(), objects, translator, 1 << 20)
            },
            rx,
        )
        .await?;
        let http = reqwest::Client::new();
        let auth = format!("DeepL-Auth-Key {key}");
        println!(
            "glossary benchmark: POST /v2/translate, one EN→ES sentence per request, {} sequential requests per configuration, alternating",
            args.requests
        );
        println!(
            "{:>8} | {:>22} | {:>22} | {:>22} | {:>9}",
            "entries", "no glossary p50/p99 ms", "cache p50/p99 ms", "no cache p50/p99 ms", "p50 ratio"
        );
        for &size in &args.sizes {
            // Entries: "cat" plus generated terms that never occur in the text.
            let mut entries = String::from("cat\tmichi\n");
            for i in 0..size.saturating_sub(1) {
                entries.push_str(&format!("term{i} word{i}\ttérmino{i} palabra{i}\n"));
            }
            let created: Value = http
                .post(format!("{cached}/v3/glossaries"))
                .header("Authorization", &auth)
                .json(&json!({"name": format!("g{size}"), "dictionaries": [
                    {"source_lang": "en", "target_lang": "es", "entries": entries}]}))
                .send()
                .await?
                .json()
                .await?;
            let id = created["glossary_id"]
                .as_str()
                .with_context(|| format!("glossary not created: {created}"))?
                .to_owned();
            let text = "The black cat sleeps in the warm house of the old man.";
            let plain = json!({"text": [text], "source_lang": "EN", "target_lang": "ES"});
            let with = json!({"text": [text], "source_lang": "EN", "target_lang": "ES", "glossary_id": id});
            // Warm up every path (and fill the cache).
            for _ in 0..3 {
                one(&http, &cached, &auth, &plain).await?;
                one(&http, &cached, &auth, &with).await?;
                one(&http, &uncached, &auth, &with).await?;
            }
            let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..args.requests {
                a.push(one(&http, &cached, &auth, &plain).await?);
                b.push(one(&http, &cached, &auth, &with).await?);
                c.push(one(&http, &uncached, &auth, &with).await?);
            }
            for v in [&mut a, &mut b, &mut c] {
                v.sort();
            }
            let (a50, b50, c50) = (percentile(&a, 0.5), percentile(&b, 0.5), percentile(&c, 0.5));
            println!(
                "{size:>8} | {:>10.2} / {:>9.2} | {:>10.2} / {:>9.2} | {:>10.2} / {:>9.2} | {:>8.1}x",
                ms(a50),
                ms(percentile(&a, 0.99)),
                ms(b50),
                ms(percentile(&b, 0.99)),
                ms(c50),
                ms(percentile(&c, 0.99)),
                ms(c50) / ms(b50).max(1e-9)
            );
        }
        println!("p50 ratio = without cache / with cache; the cached path costs one version query per request over the no-glossary request");
        let _ = stop.send(true);
        tokio::time::sleep(Duration::from_millis(200)).await;
        db.close().await;
        let _ = std::fs::remove_dir_all(&dir);
        anyhow::Ok(())
    }
    .await;
    database.drop_database().await?;
    outcome
}
