//! `tolk-bench quality`: quality evaluation throughput against translation
//! throughput of the same text, through the whole platform in this process
//! (API, worker, scheduler on a throwaway database, real Apertium EN→ES).
//!
//! 1. Translation: the sources (15–25 word sentences) go through
//!    `POST /v2/translate`, 50 texts per request, `--clients` concurrent
//!    clients → segments/s.
//! 2. Evaluation: `--jobs` jobs of `--segments` source/target pairs (the
//!    translations of step 1) are submitted to `POST /v1/quality-evaluation` at
//!    once and polled until done → segments/s, first submit to last done.
//! 3. The evaluator alone (`tolk_quality::evaluate`, one thread) on the same pairs.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use clap::Args;
use serde_json::{Value, json};

use crate::documents::{Platform, Text, start_platform_with};
use crate::translate::long_sentence;

/// Options of the quality benchmark.
#[derive(Debug, Args)]
pub struct QualityArgs {
    /// Evaluation jobs.
    #[arg(long, default_value_t = 4)]
    jobs: usize,
    /// Segments per job (the wire format allows up to 500).
    #[arg(long, default_value_t = 500)]
    segments: usize,
    /// Concurrent translation clients.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// Worker concurrency (jobs evaluated at once).
    #[arg(long, default_value_t = 2)]
    concurrency: usize,
    /// Apertium pipelines per pair (default: CPUs).
    #[arg(long)]
    pipelines: Option<usize>,
    /// Admin URL of the local PostgreSQL (a throwaway database is created and dropped).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432/postgres")]
    database_url: String,
    /// Apertium modes folder.
    #[arg(long, default_value = "/usr/share/apertium/modes")]
    modes: std::path::PathBuf,
}

const TEXTS_PER_REQUEST: usize = 50;

async fn translate_all(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    sources: &Arc<Vec<String>>,
    clients: usize,
) -> Result<Vec<String>> {
    let chunks: Vec<(usize, Vec<String>)> = sources
        .chunks(TEXTS_PER_REQUEST)
        .enumerate()
        .map(|(i, c)| (i, c.to_vec()))
        .collect();
    let queue = Arc::new(tokio::sync::Mutex::new(chunks));
    let mut tasks = Vec::new();
    for _ in 0..clients.max(1) {
        let (http, base, key, queue) =
            (http.clone(), base.to_owned(), key.to_owned(), queue.clone());
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::new();
            loop {
                let Some((i, texts)) = queue.lock().await.pop() else {
                    break;
                };
                let res = http
                    .post(format!("{base}/v2/translate"))
                    .header("Authorization", format!("DeepL-Auth-Key {key}"))
                    .json(&json!({"text": texts, "source_lang": "EN", "target_lang": "ES"}))
                    .send()
                    .await?;
                let body: Value = res.json().await?;
                let t: Vec<String> = body["translations"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|x| x["text"].as_str().unwrap_or_default().to_owned())
                            .collect()
                    })
                    .unwrap_or_default();
                if t.len() != texts.len() {
                    bail!("translate answered {body}");
                }
                out.push((i, t));
            }
            Ok::<_, anyhow::Error>(out)
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await??);
    }
    all.sort_by_key(|(i, _)| *i);
    Ok(all.into_iter().flat_map(|(_, t)| t).collect())
}

/// Runs the benchmark.
pub async fn run(args: QualityArgs) -> Result<()> {
    let work = workload(&args);
    let words: usize = work
        .sources
        .iter()
        .map(|s| s.split_whitespace().count())
        .sum();
    println!(
        "quality benchmark: {} jobs × {} segments = {} EN→ES segments, {words} words; {} translation clients, worker concurrency {}",
        args.jobs, work.per_job, work.total, args.clients, args.concurrency
    );
    let platform = start_platform_with(
        &args.database_url,
        &args.modes,
        args.pipelines,
        args.concurrency,
        "quality",
    )
    .await?;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(300))
        .build()?;
    let outcome = measure(&args, &platform, &http, &work).await;
    platform.shutdown().await?;
    outcome
}

/// The segments under test.
struct Workload {
    /// Segments in all.
    total: usize,
    /// Segments per evaluation job.
    per_job: usize,
    /// The source sentences.
    sources: Arc<Vec<String>>,
}

/// Generates the source sentences of `--jobs` jobs of `--segments` segments.
fn workload(args: &QualityArgs) -> Workload {
    let total = args.jobs.max(1) * args.segments.clamp(1, 500);
    let per_job = args.segments.clamp(1, 500);
    let mut gen_ = Text {
        state: 0x9E37_79B9_7F4A_7C15,
    };
    let sources: Arc<Vec<String>> =
        Arc::new((0..total).map(|_| long_sentence(&mut gen_)).collect());
    Workload {
        total,
        per_job,
        sources,
    }
}

/// What the three paths took, and what the evaluations found.
struct Timings {
    translate: Duration,
    evaluate: Duration,
    alone: Duration,
    /// Findings of the evaluation jobs.
    findings: usize,
    /// Of which Critical or Major.
    serious: usize,
    /// Findings of the evaluator alone.
    alone_findings: usize,
}

/// Translates the sources, evaluates the pairs through the platform and with
/// the evaluator alone, and prints the figures.
async fn measure(
    args: &QualityArgs,
    platform: &Platform,
    http: &reqwest::Client,
    work: &Workload,
) -> Result<()> {
    let t0 = Instant::now();
    let targets = translate_all(
        http,
        &platform.base,
        &platform.key,
        &work.sources,
        args.clients,
    )
    .await?;
    let translate = t0.elapsed();

    let t1 = Instant::now();
    let polls = submit_jobs(http, platform, args.jobs, work, &targets).await?;
    let (findings, serious) = wait_for_jobs(http, platform, &polls).await?;
    let evaluate = t1.elapsed();

    let opts = tolk_quality::Options::new("EN", "ES");
    let t2 = Instant::now();
    let mut alone_findings = 0usize;
    for (s, t) in work.sources.iter().zip(&targets) {
        alone_findings += std::hint::black_box(tolk_quality::evaluate(s, t, &opts)).len();
    }
    let alone = t2.elapsed();

    let timings = Timings {
        translate,
        evaluate,
        alone,
        findings,
        serious,
        alone_findings,
    };
    print_report(args, work, &targets, &timings);
    Ok(())
}

/// Submits the evaluation jobs (`jobs` of `work.per_job` source/target pairs);
/// returns their poll URLs.
async fn submit_jobs(
    http: &reqwest::Client,
    platform: &Platform,
    jobs: usize,
    work: &Workload,
    targets: &[String],
) -> Result<Vec<String>> {
    let per_job = work.per_job;
    let mut polls = Vec::new();
    for j in 0..jobs.max(1) {
        let segs: Vec<Value> = (j * per_job..(j + 1) * per_job)
            .map(|i| json!({"source": work.sources[i], "target": targets[i]}))
            .collect();
        let res = http
            .post(format!("{}/v1/quality-evaluation", platform.base))
            .header("Authorization", format!("DeepL-Auth-Key {}", platform.key))
            .json(&json!({"metadata": {"source_language": "en", "target_language": "es"}, "segments": segs}))
            .send()
            .await?;
        let body: Value = res.json().await?;
        let Some(url) = body["poll_url"].as_str() else {
            bail!("submit answered {body}");
        };
        polls.push(url.to_owned());
    }
    Ok(polls)
}

/// Polls each job until it is done; returns the findings and how many of
/// them are Critical or Major.
async fn wait_for_jobs(
    http: &reqwest::Client,
    platform: &Platform,
    polls: &[String],
) -> Result<(usize, usize)> {
    let mut findings = 0usize;
    let mut serious = 0usize;
    for url in polls {
        loop {
            let res = http
                .get(format!("{}{url}", platform.base))
                .header("Authorization", format!("DeepL-Auth-Key {}", platform.key))
                .send()
                .await?;
            let code = res.status().as_u16();
            let body: Value = res.json().await?;
            if code == 200 {
                if body["status"] != "done" {
                    bail!("evaluation failed: {body}");
                }
                for s in body["segments"].as_array().into_iter().flatten() {
                    for e in s["errors"].as_array().into_iter().flatten() {
                        findings += 1;
                        if e["severity"] != "Minor" {
                            serious += 1;
                        }
                    }
                }
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    Ok((findings, serious))
}

/// Prints the table of the three paths, the findings and a sample pair.
fn print_report(args: &QualityArgs, work: &Workload, targets: &[String], timings: &Timings) {
    let total = work.total;
    let rate = |d: Duration| total as f64 / d.as_secs_f64();
    println!();
    println!("| path | segments | seconds | segments/s | ratio to /v2/translate |");
    println!("|---|---|---|---|---|");
    println!(
        "| POST /v2/translate ({} texts/request, {} clients) | {total} | {:.2} | {:.0} | 1.00 |",
        TEXTS_PER_REQUEST,
        args.clients,
        timings.translate.as_secs_f64(),
        rate(timings.translate)
    );
    println!(
        "| POST /v1/quality-evaluation → worker → done ({} jobs) | {total} | {:.2} | {:.0} | {:.2} |",
        args.jobs,
        timings.evaluate.as_secs_f64(),
        rate(timings.evaluate),
        rate(timings.evaluate) / rate(timings.translate)
    );
    println!(
        "| tolk_quality::evaluate alone, 1 thread | {total} | {:.3} | {:.0} | {:.2} |",
        timings.alone.as_secs_f64(),
        rate(timings.alone),
        rate(timings.alone) / rate(timings.translate)
    );
    println!();
    println!(
        "findings on real Apertium output: {} ({} Critical/Major) over {total} segments (evaluator alone: {})",
        timings.findings, timings.serious, timings.alone_findings
    );
    if let (Some(s), Some(t)) = (work.sources.first(), targets.first()) {
        println!("sample: {s} → {t}");
    }
}
