//! `tolk-bench tmx`: TMX import throughput and the worker's peak memory, and
//! translation-memory lookup latency with a million units stored.
//!
//! 1. A TMX 1.4b file of `--units` EN→ES/DE units (generated sentences over a
//!    Zipf-distributed 6,000-word vocabulary, one unit in three with inline
//!    tags, notes, properties and a third language) is written to disk
//!    (≈ 300 bytes a unit).
//! 2. Import through the platform in this process (API, worker, scheduler):
//!    `POST /v3/translation_memories/import`, the file streamed to the upload
//!    URL, the job polled until completed → units/s from the end of the upload
//!    to completion; the process's peak RSS during the import (VmHWM after
//!    resetting it through /proc/self/clear_refs). A smaller import runs first
//!    (`--small-units`) so the two peaks show whether memory depends on size.
//! 3. Baseline: a raw `COPY` of the same rows (the same unit JSON, no TMX
//!    parsing, no upload, no queue) into another memory.
//! 4. Lookups: raw COPY up to `--lookup-units` units in one memory, then
//!    `--lookups` sequential lookups (a third exact sources, a third sources
//!    with one word changed, a third new sentences) through
//!    `tolk_storage::translation_memories::lookup` (exact index, then the units
//!    sharing the rarest words, ranked by pg_trgm similarity and scored in
//!    Rust) → p50/p99; baseline: the plain exact-match index query alone on
//!    the same texts.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::{Value, json};
use tolk_formats::tmx::{Header, Note, Prop, TmxWriter, Unit, Variant};
use tolk_storage::translation_memories::{self as memories, NewMemory, words as memory_words};
use uuid::Uuid;

use crate::documents::{Platform, start_platform_with};

/// Options of the TMX benchmark.
#[derive(Debug, Args)]
pub struct TmxArgs {
    /// Units of the imported TMX file.
    #[arg(long, default_value_t = 200_000)]
    units: usize,
    /// Units of the smaller import run first (peak memory comparison).
    #[arg(long, default_value_t = 50_000)]
    small_units: usize,
    /// Units stored for the lookup measurement.
    #[arg(long, default_value_t = 1_000_000)]
    lookup_units: usize,
    /// Lookups measured.
    #[arg(long, default_value_t = 3000)]
    lookups: usize,
    /// Lookup threshold.
    #[arg(long, default_value_t = 75)]
    threshold: u8,
    /// Admin URL of the local PostgreSQL (a throwaway database is created and dropped).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432/postgres")]
    database_url: String,
    /// Apertium modes folder.
    #[arg(long, default_value = "/usr/share/apertium/modes")]
    modes: std::path::PathBuf,
}

/// Zipf-distributed synthetic words and sentences (xorshift, deterministic).
struct Words {
    state: u64,
    vocab: Vec<String>,
    /// Cumulative weights of the vocabulary (rank^-1).
    cumulative: Vec<f64>,
}

const SYLLABLES: [&str; 40] = [
    "ka", "lo", "mi", "ten", "ra", "so", "vel", "an", "dor", "pi", "que", "sta", "no", "ber", "li",
    "ma", "tro", "ge", "fin", "ul", "com", "pre", "sul", "vi", "da", "ter", "mon", "es", "ri",
    "ca", "por", "den", "al", "zu", "hor", "ne", "ment", "tion", "ble", "ing",
];

impl Words {
    fn new(seed: u64, vocab_size: usize) -> Self {
        let mut w = Self {
            state: seed,
            vocab: Vec::with_capacity(vocab_size),
            cumulative: Vec::with_capacity(vocab_size),
        };
        let mut seen = std::collections::HashSet::new();
        while w.vocab.len() < vocab_size {
            let n = 1 + w.next(3);
            let word: String = (0..n).map(|_| SYLLABLES[w.next(SYLLABLES.len())]).collect();
            if seen.insert(word.clone()) {
                w.vocab.push(word);
            }
        }
        let mut total = 0.0;
        for rank in 1..=vocab_size {
            total += 1.0 / rank as f64;
            w.cumulative.push(total);
        }
        w
    }

    fn next(&mut self, n: usize) -> usize {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        (self.state % n as u64) as usize
    }

    fn word(&mut self) -> &str {
        let total = self.cumulative.last().copied().unwrap_or(1.0);
        let x = (self.next(1 << 30) as f64 / f64::from(1u32 << 30)) * total;
        let i = self.cumulative.partition_point(|c| *c < x);
        &self.vocab[i.min(self.vocab.len() - 1)]
    }

    /// A sentence of 8–20 words.
    fn sentence(&mut self) -> String {
        let n = 8 + self.next(13);
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            let w = self.word().to_owned();
            if i == 0 {
                let mut c = w.chars();
                if let Some(f) = c.next() {
                    s.extend(f.to_uppercase());
                    s.push_str(c.as_str());
                }
            } else {
                s.push_str(&w);
            }
        }
        s.push('.');
        s
    }
}

fn xml(s: &str) -> String {
    tolk_formats::tmx::escape_text(s).into_owned()
}

fn variant(lang: &str, text: &str, tagged: bool) -> Variant {
    let seg = if tagged {
        match text.split_once(' ') {
            Some((a, b)) => format!(
                "<bpt i=\"1\">&lt;b&gt;</bpt>{}<ept i=\"1\">&lt;/b&gt;</ept> {}<ph x=\"2\">&lt;br/&gt;</ph>",
                xml(a),
                xml(b)
            ),
            None => xml(text),
        }
    } else {
        xml(text)
    };
    Variant {
        lang: lang.to_owned(),
        seg,
        text: text.to_owned(),
        ..Variant::default()
    }
}

/// Unit `i` of the generated memory.
fn unit(words: &mut Words, i: usize) -> Unit {
    let en = words.sentence();
    let es: String = en
        .split(' ')
        .rev()
        .map(|w| format!("{w}o"))
        .collect::<Vec<_>>()
        .join(" ");
    let de: String = en.to_uppercase();
    let rich = i.is_multiple_of(3);
    Unit {
        line: 0,
        attrs: vec![("tuid".to_owned(), i.to_string())],
        notes: if rich {
            vec![Note {
                attrs: Vec::new(),
                text: format!("note {i}"),
            }]
        } else {
            Vec::new()
        },
        props: if rich {
            vec![Prop {
                attrs: vec![("type".to_owned(), "x-batch".to_owned())],
                text: (i / 1000).to_string(),
            }]
        } else {
            Vec::new()
        },
        variants: if rich {
            vec![
                variant("en-US", &en, true),
                variant("es-ES", &es, true),
                variant("de-DE", &de, false),
            ]
        } else {
            vec![variant("en-US", &en, false), variant("es-ES", &es, false)]
        },
    }
}

fn header() -> Header {
    Header {
        attrs: vec![
            ("creationtool".to_owned(), "tolk-bench".to_owned()),
            ("creationtoolversion".to_owned(), "1".to_owned()),
            ("segtype".to_owned(), "sentence".to_owned()),
            ("o-tmf".to_owned(), "tolk-bench".to_owned()),
            ("adminlang".to_owned(), "en-US".to_owned()),
            ("srclang".to_owned(), "en-US".to_owned()),
            ("datatype".to_owned(), "plaintext".to_owned()),
        ],
        ..Header::default()
    }
}

/// Writes `n` units to `path`; returns the file size.
fn write_tmx(path: &std::path::Path, n: usize, seed: u64) -> Result<u64> {
    let file = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let mut w = TmxWriter::start(file, &header())?;
    let mut words = Words::new(seed, 6000);
    for i in 0..n {
        w.write_unit(&unit(&mut words, i))?;
    }
    w.finish()?.flush()?;
    Ok(std::fs::metadata(path)?.len())
}

fn proc_status(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

fn reset_peak() {
    if let Err(e) = std::fs::write("/proc/self/clear_refs", "5") {
        eprintln!("cannot reset VmHWM ({e}); the peak below includes earlier work");
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

struct Imported {
    units: i64,
    processing: Duration,
    upload: Duration,
    rss_before_mb: f64,
    peak_mb: f64,
}

async fn import_through_platform(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    path: &std::path::Path,
    size: u64,
) -> Result<Imported> {
    let auth = format!("DeepL-Auth-Key {key}");
    let res = http
        .post(format!("{base}/v3/translation_memories/import"))
        .header("Authorization", &auth)
        .json(&json!({"source_file": {"file_name": "bench.tmx", "content_length": size}}))
        .send()
        .await?;
    let job: Value = res.json().await?;
    let id = job["job_id"].as_str().context("job_id")?.to_owned();
    let url = job["upload_url"].as_str().context("upload_url")?.to_owned();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rss_before = proc_status("VmRSS:").unwrap_or(0);
    reset_peak();
    let t0 = Instant::now();
    let file = tokio::fs::File::open(path).await?;
    let body =
        reqwest::Body::wrap_stream(tokio_util::io::ReaderStream::with_capacity(file, 256 << 10));
    let res = http.put(&url).body(body).send().await?;
    if !res.status().is_success() {
        bail!("upload answered {}", res.status());
    }
    let upload = t0.elapsed();
    let t1 = Instant::now();
    let status = loop {
        let res = http
            .get(format!("{base}/v3/translation_memories/jobs/{id}"))
            .header("Authorization", &auth)
            .send()
            .await?;
        let body: Value = res.json().await?;
        let st = body["results"][0]["status"].as_str().unwrap_or_default();
        if st == "completed" || st == "failed" {
            break body;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    let processing = t1.elapsed();
    let peak = proc_status("VmHWM:").unwrap_or(0);
    let result = &status["results"][0];
    if result["status"] != "completed" {
        bail!("import failed: {status}");
    }
    let memory = result["translation_memory_id"].as_str().context("id")?;
    let res = http
        .get(format!("{base}/v3/translation_memories/{memory}"))
        .header("Authorization", &auth)
        .send()
        .await?;
    let m: Value = res.json().await?;
    Ok(Imported {
        units: m["segment_count"].as_i64().unwrap_or(0),
        processing,
        upload,
        rss_before_mb: rss_before as f64 / 1024.0,
        peak_mb: peak as f64 / 1024.0,
    })
}

/// Raw COPY of units `from..to` of the generator into `memory`, one transaction.
async fn raw_copy(
    db: &sqlx::PgPool,
    memory: Uuid,
    words: &mut Words,
    from: usize,
    to: usize,
    samples: &mut Vec<(String, String)>,
) -> Result<Duration> {
    let t = Instant::now();
    let mut tx = db.begin().await?;
    let mut copy = tx.copy_in_raw(memories::COPY_UNITS).await?;
    let mut rows = Vec::with_capacity(1 << 21);
    for i in from..to {
        let u = unit(words, i);
        let src = u.variants[0].text.clone();
        let targets = match u.variants.get(2) {
            Some(de) => json!({"de": de.text, "es": u.variants[1].text}),
            None => json!({"es": u.variants[1].text}),
        }
        .to_string();
        let unit_json = serde_json::to_string(&u)?;
        if i.is_multiple_of(997) {
            samples.push((src.clone(), u.variants[1].text.clone()));
        }
        let hashes = memory_words::keys(&src);
        memories::copy_row(
            &mut rows, &memory, i as i32, &src, &targets, &unit_json, &hashes,
        );
        if rows.len() >= 1 << 20 {
            copy.send(std::mem::take(&mut rows)).await?;
        }
    }
    if !rows.is_empty() {
        copy.send(rows).await?;
    }
    copy.finish().await?;
    // Key frequencies of the whole memory so far (replaced), as the import does.
    sqlx::query("DELETE FROM translation_memory_words WHERE memory_id = $1")
        .bind(memory)
        .execute(&mut *tx)
        .await?;
    memories::count_keys(&mut tx, memory).await?;
    tx.commit().await?;
    Ok(t.elapsed())
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)].as_secs_f64() * 1000.0
}

/// Runs the benchmark.
pub async fn run(args: TmxArgs) -> Result<()> {
    println!(
        "tmx benchmark: import {} units (after {} units), lookups over {} units; load average {} at start",
        args.units,
        args.small_units,
        args.lookup_units,
        loadavg()
    );
    let platform = start_platform_with(&args.database_url, &args.modes, Some(1), 2, "tmx").await?;
    let outcome = measure(&args, &platform).await;
    platform.shutdown().await?;
    outcome
}

/// The measurements against a running platform: the imports and their
/// baseline, then the lookups.
async fn measure(args: &TmxArgs, platform: &Platform) -> Result<()> {
    let db = sqlx::PgPool::connect(&platform.database_url()?).await?;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(1800))
        .build()?;
    let dir = std::env::temp_dir().join(format!("tolk_bench_tmx_{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let files = write_files(&dir, args)?;

    let small = import_through_platform(
        &http,
        &platform.base,
        &platform.key,
        &files.small_path,
        files.small_size,
    )
    .await?;
    let big = import_through_platform(
        &http,
        &platform.base,
        &platform.key,
        &files.big_path,
        files.big_size,
    )
    .await?;
    if big.units != args.units as i64 || small.units != args.small_units as i64 {
        bail!("imported {} and {} units", small.units, big.units);
    }

    // Baseline: raw COPY of the same rows (same generator as the big file).
    let memory = create_raw_memory(&db).await?;
    let mut words = Words::new(0x5EED_0002, 6000);
    let mut samples = Vec::new();
    let raw = raw_copy(&db, memory, &mut words, 0, args.units, &mut samples).await?;
    print_imports(args, &files, [&small, &big], raw);

    measure_lookups(args, &db, memory, &mut words, &mut samples).await?;
    println!("\nload average {} at the end", loadavg());
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// The two generated TMX files and their sizes.
struct TmxFiles {
    small_path: PathBuf,
    big_path: PathBuf,
    small_size: u64,
    big_size: u64,
}

/// Writes the small and the big TMX file into `dir` and prints their sizes.
fn write_files(dir: &Path, args: &TmxArgs) -> Result<TmxFiles> {
    let small_path = dir.join("small.tmx");
    let big_path = dir.join("big.tmx");
    let t = Instant::now();
    let small_size = write_tmx(&small_path, args.small_units, 0x5EED_0001)?;
    let big_size = write_tmx(&big_path, args.units, 0x5EED_0002)?;
    println!(
        "generated {:.1} MB + {:.1} MB of TMX in {:.1} s",
        small_size as f64 / 1e6,
        big_size as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    Ok(TmxFiles {
        small_path,
        big_path,
        small_size,
        big_size,
    })
}

/// Creates the memory the raw COPY fills, in the platform's organization.
async fn create_raw_memory(db: &sqlx::PgPool) -> Result<Uuid> {
    let org: Uuid = sqlx::query_scalar("SELECT id FROM organizations LIMIT 1")
        .fetch_one(db)
        .await?;
    let memory = Uuid::new_v4();
    let mut conn = db.acquire().await?;
    memories::insert(
        &mut conn,
        &NewMemory {
            id: memory,
            organization_id: org,
            name: "raw".to_owned(),
            source_language: "en".to_owned(),
            header: json!({}),
        },
    )
    .await?;
    drop(conn);
    Ok(memory)
}

/// Prints the import table: the small and the big import (`imports`) against
/// the raw COPY of the big file's rows, which took `raw`.
fn print_imports(args: &TmxArgs, files: &TmxFiles, imports: [&Imported; 2], raw: Duration) {
    let [small, big] = imports;
    let rate = |n: usize, d: Duration| n as f64 / d.as_secs_f64();
    println!();
    println!(
        "| import path | units | MB | seconds | units/s | ratio to raw COPY | process RSS before → peak (MB) |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (label, imp, size) in [
        (
            "TMX job (upload → completed), small",
            small,
            files.small_size,
        ),
        ("TMX job (upload → completed)", big, files.big_size),
    ] {
        let n = imp.units as usize;
        let total = imp.upload + imp.processing;
        println!(
            "| {label} | {n} | {:.1} | {:.2} (upload {:.2}) | {:.0} | {:.2} | {:.0} → {:.0} |",
            size as f64 / 1e6,
            total.as_secs_f64(),
            imp.upload.as_secs_f64(),
            rate(n, total),
            rate(n, total) / rate(args.units, raw),
            imp.rss_before_mb,
            imp.peak_mb
        );
    }
    println!(
        "| raw COPY of the same rows (baseline) | {} | — | {:.2} | {:.0} | 1.00 | — |",
        args.units,
        raw.as_secs_f64(),
        rate(args.units, raw)
    );
}

/// Lookups over `--lookup-units` units in one memory: fills `memory` up by
/// COPY (continuing `words`, adding to `samples`), then times the memory
/// lookups and the plain exact-match query on the same texts and prints them.
async fn measure_lookups(
    args: &TmxArgs,
    db: &sqlx::PgPool,
    memory: Uuid,
    words: &mut Words,
    samples: &mut Vec<(String, String)>,
) -> Result<()> {
    if args.lookup_units > args.units {
        let more = raw_copy(db, memory, words, args.units, args.lookup_units, samples).await?;
        println!(
            "\nloaded {} more units by COPY in {:.1} s",
            args.lookup_units - args.units,
            more.as_secs_f64()
        );
    }
    sqlx::query("ANALYZE translation_memory_units")
        .execute(db)
        .await?;
    let stored: i64 =
        sqlx::query_scalar("SELECT count(*) FROM translation_memory_units WHERE memory_id = $1")
            .bind(memory)
            .fetch_one(db)
            .await?;
    let queries = lookup_queries(samples, args.lookups);
    let (tm_times, hits) = time_lookups(db, memory, &queries, args.threshold).await?;
    let exact_times = time_exact_matches(db, memory, &queries).await?;
    println!();
    println!(
        "lookups over {stored} stored units, threshold {}: {} exact, {} fuzzy, {} no match (of {})",
        args.threshold,
        hits[0],
        hits[1],
        hits[2],
        queries.len()
    );
    println!("| lookup | p50 ms | p90 ms | p99 ms | max ms |");
    println!("|---|---|---|---|---|");
    for (label, t) in [
        (
            "memory lookup (exact, then rare-bigram candidates, similarity, edit-distance score)",
            &tm_times,
        ),
        ("plain exact-match index query (baseline)", &exact_times),
    ] {
        println!(
            "| {label} | {:.2} | {:.2} | {:.2} | {:.2} |",
            percentile(t, 0.5),
            percentile(t, 0.9),
            percentile(t, 0.99),
            percentile(t, 1.0)
        );
    }
    Ok(())
}

/// `n` lookup texts: a third stored sources, a third stored sources with one
/// word changed, a third new sentences.
fn lookup_queries(samples: &[(String, String)], n: usize) -> Vec<String> {
    let mut gen_ = Words::new(0x5EED_0003, 6000);
    let mut queries = Vec::with_capacity(n);
    for i in 0..n {
        let (src, _) = &samples[(i * 7919) % samples.len()];
        let q = match i % 3 {
            0 => src.clone(),
            1 => {
                let mut w: Vec<String> = src.split(' ').map(str::to_owned).collect();
                let k = gen_.next(w.len());
                w[k] = gen_.word().to_owned();
                w.join(" ")
            }
            _ => gen_.sentence(),
        };
        queries.push(q);
    }
    queries
}

/// Times the memory lookup of each query (after a warm-up); returns the
/// sorted durations and the exact, fuzzy and missing counts.
async fn time_lookups(
    db: &sqlx::PgPool,
    memory: Uuid,
    queries: &[String],
    threshold: u8,
) -> Result<(Vec<Duration>, [usize; 3])> {
    // Warm-up.
    for q in queries.iter().take(50) {
        memories::lookup(db, memory, "es", q, threshold).await?;
    }
    let mut tm_times = Vec::with_capacity(queries.len());
    let mut hits = [0usize; 3];
    for q in queries {
        let t = Instant::now();
        let m = memories::lookup(db, memory, "es", q, threshold).await?;
        tm_times.push(t.elapsed());
        match m {
            Some(m) if m.score == 100 => hits[0] += 1,
            Some(_) => hits[1] += 1,
            None => hits[2] += 1,
        }
    }
    tm_times.sort();
    Ok((tm_times, hits))
}

/// Times the plain exact-match index query of each query (the baseline);
/// returns the sorted durations.
async fn time_exact_matches(
    db: &sqlx::PgPool,
    memory: Uuid,
    queries: &[String],
) -> Result<Vec<Duration>> {
    let mut exact_times = Vec::with_capacity(queries.len());
    for q in queries {
        let t = Instant::now();
        let _: Option<Option<String>> = sqlx::query_scalar(
            "SELECT targets ->> 'es' FROM translation_memory_units
                 WHERE memory_id = $1 AND md5(source_text) = md5($2) AND source_text = $2 LIMIT 1",
        )
        .bind(memory)
        .bind(q)
        .fetch_optional(db)
        .await?;
        exact_times.push(t.elapsed());
    }
    exact_times.sort();
    Ok(exact_times)
}
