//! `tolk-bench documents [--format docx|pptx|xlsx|odt|pdf|…]`: the same generated
//! English text (≥ 100,000 words in ≥ 50 files by default) translated to
//! Spanish
//!
//! 1. by the raw `apertium eng-spa` command (the baseline: one process pipeline
//!    over the plain text, and as many in parallel as the platform's pipelines), and
//! 2. through the whole platform, in this process: HTTP upload → PostgreSQL queue →
//!    worker (formats + Apertium pipelines) → object store → status polling,
//!
//! printing words/second for each and the platform/raw ratio (target ≥ 80 %;
//! ≥ 50 % for PDF, whose pages are laid out again, with pages/s; for PNG
//! pictures the baseline is bare tesseract reading them, and the target
//! ≥ 80 % of it at the worker's concurrency);
//! then the filter's peak memory for one file (see [`memory`]).

use std::io::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use tokio::io::AsyncWriteExt;
use tolk_engine::{ApertiumConfig, Translator};
use tolk_storage::objects::Objects;

use tolk_storage::throwaway::ThrowawayDb;

mod files;
pub(crate) mod memory;

pub use files::Format;

/// Options of the documents benchmark.
#[derive(Debug, Args)]
pub struct DocumentsArgs {
    /// The format of the files.
    #[arg(long, value_enum, default_value_t = Format::Docx)]
    format: Format,
    /// Number of files.
    #[arg(long, default_value_t = 50)]
    docs: usize,
    /// Words per file.
    #[arg(long, default_value_t = 2_100)]
    words_per_doc: usize,
    /// Jobs the in-process worker runs at once.
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
    /// Rounds of (raw 1 process, raw in parallel, platform), run one after the
    /// other; the verdict uses the median of the rounds' platform/raw ratios, so
    /// a slow moment of the machine does not decide it alone.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Only measure the filter's peak memory (no platform, no engines).
    #[arg(long)]
    memory_only: bool,
}

const SUBJECTS: [&str; 12] = [
    "The dog",
    "The cat",
    "The teacher",
    "The child",
    "The doctor",
    "The city",
    "The family",
    "The student",
    "The farmer",
    "The woman",
    "The man",
    "The government",
];
const VERBS: [&str; 10] = [
    "sees", "buys", "needs", "finds", "wants", "likes", "opens", "reads", "sells", "visits",
];
const OBJECTS: [&str; 12] = [
    "a big house",
    "the old book",
    "a new car",
    "the green tree",
    "a small garden",
    "the long letter",
    "a cold river",
    "the white door",
    "a good school",
    "the red apple",
    "a beautiful picture",
    "the quiet street",
];
const TAILS: [&str; 8] = [
    "every morning",
    "in the summer",
    "near the station",
    "with the friends",
    "after the meeting",
    "before the dinner",
    "in the village",
    "on the weekend",
];

/// Deterministic pseudo-random sentences (xorshift), so every run uses the same text.
pub(crate) struct Text {
    pub(crate) state: u64,
}

impl Text {
    fn next(&mut self, n: usize) -> usize {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        (self.state % n as u64) as usize
    }

    pub(crate) fn sentence(&mut self) -> String {
        format!(
            "{} {} {} {}.",
            SUBJECTS[self.next(SUBJECTS.len())],
            VERBS[self.next(VERBS.len())],
            OBJECTS[self.next(OBJECTS.len())],
            TAILS[self.next(TAILS.len())]
        )
    }

    /// Paragraphs of about 40 words until `words` words.
    fn paragraphs(&mut self, words: usize) -> Vec<String> {
        let mut paras = Vec::new();
        let mut total = 0;
        while total < words {
            let mut p = String::new();
            while p.split_whitespace().count() < 40 {
                if !p.is_empty() {
                    p.push(' ');
                }
                p.push_str(&self.sentence());
            }
            total += p.split_whitespace().count();
            paras.push(p);
        }
        paras
    }
}

/// Runs `apertium -u eng-spa` over `text` in `parallel` processes (the text split in
/// equal parts); returns the wall time.
pub(crate) async fn raw_apertium(text: &str, parallel: usize) -> Result<Duration> {
    raw_apertium_chain(text, parallel, &["eng-spa".to_owned()]).await
}

/// [`raw_apertium`] through a chain of modes (`apertium -u a | apertium -u b
/// | …`, one shell pipeline per process), the way a pivot route runs.
pub(crate) async fn raw_apertium_chain(
    text: &str,
    parallel: usize,
    modes: &[String],
) -> Result<Duration> {
    let lines: Vec<&str> = text.lines().collect();
    let per = lines.len().div_ceil(parallel.max(1));
    let parts: Vec<String> = lines
        .chunks(per.max(1))
        .map(|c| c.join("\n") + "\n")
        .collect();
    let pipeline = modes
        .iter()
        .map(|m| format!("apertium -u {m}"))
        .collect::<Vec<_>>()
        .join(" | ");
    let start = Instant::now();
    let mut tasks = Vec::new();
    for part in parts {
        let pipeline = pipeline.clone();
        tasks.push(tokio::spawn(async move {
            let out = apertium_run(&pipeline, part).await?;
            if out.is_empty() {
                bail!("apertium failed");
            }
            Ok::<usize, anyhow::Error>(out.len())
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok(start.elapsed())
}

/// Runs the shell `pipeline` of apertium commands over `input`; its stdout.
pub(crate) async fn apertium_run(pipeline: &str, input: String) -> Result<Vec<u8>> {
    let mut child = tokio::process::Command::new("sh")
        .args(["-c", pipeline])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .context("the apertium command must be installed (scripts/setup.sh)")?;
    let mut stdin = child.stdin.take().context("stdin")?;
    let writer = tokio::spawn(async move {
        let r = stdin.write_all(input.as_bytes()).await;
        drop(stdin);
        r
    });
    let out = child.wait_with_output().await?;
    writer.await??;
    if !out.status.success() {
        bail!("{pipeline} failed ({})", out.status);
    }
    Ok(out.stdout)
}

/// The platform in this process: API on a loopback port, one worker, a scheduler.
pub(crate) struct Platform {
    pub(crate) base: String,
    pub(crate) key: String,
    database: ThrowawayDb,
    dir: std::path::PathBuf,
    stop: tokio::sync::watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

async fn start_platform(args: &DocumentsArgs) -> Result<Platform> {
    start_platform_with(
        &args.database_url,
        &args.modes,
        args.pipelines,
        args.concurrency,
        "docs",
    )
    .await
}

/// The platform on a throwaway database `tolk_bench_{tag}_{pid}`.
pub(crate) async fn start_platform_with(
    database_url: &str,
    modes: &std::path::Path,
    pipelines: Option<usize>,
    concurrency: usize,
    tag: &str,
) -> Result<Platform> {
    let database = ThrowawayDb::create(
        database_url,
        &format!("tolk_bench_{tag}_{}", std::process::id()),
    )
    .await?;
    let db = database.connect(10).await?;
    let org = tolk_storage::keys::ensure_organization(&db, "bench").await?;
    let key = tolk_storage::keys::create(&db, org, "bench", false)
        .await?
        .secret;
    let dir = std::env::temp_dir().join(&database.name);
    let objects = Objects::open(&dir.join("objects").display().to_string())?;
    let mut config = ApertiumConfig {
        modes_dir: modes.to_owned(),
        ..ApertiumConfig::default()
    };
    if let Some(n) = pipelines {
        config.pipelines_per_pair = n.max(1);
    }
    let translator = Arc::new(Translator::apertium(config)?);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let (stop, rx) = tokio::sync::watch::channel(false);
    let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|v| *v).await;
    };
    let api_state = crate::app::api_state(
        db.clone(),
        objects.clone(),
        translator.clone(),
        64 * 1024 * 1024,
    );
    let mut tasks = Vec::new();
    let r = rx.clone();
    tasks.push(tokio::spawn(async move {
        if let Err(e) = tolk_api::serve(listener, api_state, stopped(r)).await {
            eprintln!("api: {e}");
        }
    }));
    let worker_state = tolk_worker::WorkerState {
        db: db.clone(),
        objects: objects.clone(),
        translator,
        espeak: Default::default(),
        recognizer: Default::default(),
        office: Default::default(),
        fonts: Default::default(),
        ocr: Default::default(),
    };
    let worker_config = tolk_worker::WorkerConfig {
        concurrency: concurrency.max(1),
        ..Default::default()
    };
    let r = rx.clone();
    tasks.push(tokio::spawn(async move {
        tolk_worker::run(worker_config, worker_state, stopped(r)).await;
    }));
    let r = rx.clone();
    tasks.push(tokio::spawn(async move {
        tolk_scheduler::run(
            tolk_scheduler::SchedulerConfig::default(),
            db,
            objects,
            stopped(r),
        )
        .await;
    }));
    Ok(Platform {
        base,
        key,
        database,
        dir,
        stop,
        tasks,
    })
}

impl Platform {
    /// URL of the platform's throwaway database.
    pub(crate) fn database_url(&self) -> Result<String> {
        Ok(self.database.url()?)
    }

    /// Stops everything and drops the database.
    pub(crate) async fn shutdown(self) -> Result<()> {
        let _ = self.stop.send(true);
        for t in self.tasks {
            let _ = tokio::time::timeout(Duration::from_secs(40), t).await;
        }
        self.database.drop_database().await?;
        let _ = std::fs::remove_dir_all(&self.dir);
        Ok(())
    }
}

/// Uploads every document, polls until all are done; returns the wall time.
async fn through_platform(p: &Platform, docs: &[Vec<u8>], format: Format) -> Result<Duration> {
    let http = reqwest::Client::new();
    let auth = format!("DeepL-Auth-Key {}", p.key);
    let start = Instant::now();
    let mut handles = Vec::new();
    for (i, d) in docs.iter().enumerate() {
        let form = reqwest::multipart::Form::new()
            .text("target_lang", "ES")
            .text("source_lang", "EN")
            .part(
                "file",
                reqwest::multipart::Part::bytes(d.clone())
                    .file_name(format!("doc{i}.{}", format.extension())),
            );
        let res = http
            .post(format!("{}/v2/document", p.base))
            .header("Authorization", &auth)
            .multipart(form)
            .send()
            .await?;
        if !res.status().is_success() {
            bail!("upload answered {}: {}", res.status(), res.text().await?);
        }
        let v: serde_json::Value = res.json().await?;
        handles.push((
            v["document_id"].as_str().context("document_id")?.to_owned(),
            v["document_key"]
                .as_str()
                .context("document_key")?
                .to_owned(),
        ));
    }
    let mut pending = handles;
    while !pending.is_empty() {
        let mut still = Vec::new();
        for (id, key) in pending {
            let res = http
                .post(format!("{}/v2/document/{id}", p.base))
                .header("Authorization", &auth)
                .form(&[("document_key", &key)])
                .send()
                .await?;
            let v: serde_json::Value = res.json().await?;
            match v["status"].as_str() {
                Some("done") => {}
                Some("error") => bail!("document {id} failed: {v}"),
                _ => still.push((id, key)),
            }
        }
        pending = still;
        if !pending.is_empty() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    Ok(start.elapsed())
}

/// Bare tesseract reading every picture of `docs` (`tesseract FILE stdout
/// -l eng tsv`), `parallel` at a time: with its own threads alone, one
/// thread each when several run (as the worker runs it).
async fn raw_tesseract(docs: &[Vec<u8>], parallel: usize) -> Result<Duration> {
    let dir = std::env::temp_dir().join(format!("tolk-bench-ocr-{}", std::process::id()));
    tokio::fs::create_dir_all(&dir).await?;
    let mut paths = Vec::new();
    for (i, doc) in docs.iter().enumerate() {
        let path = dir.join(format!("page{i}.png"));
        tokio::fs::write(&path, doc).await?;
        paths.push(path);
    }
    let queue = Arc::new(std::sync::Mutex::new(paths));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..parallel.max(1) {
        let queue = queue.clone();
        tasks.push(tokio::spawn(async move {
            loop {
                let Some(path) = queue.lock().map_err(|_| anyhow::anyhow!("queue"))?.pop() else {
                    return Ok::<(), anyhow::Error>(());
                };
                let mut command = tokio::process::Command::new("tesseract");
                command.arg(&path).args(["stdout", "-l", "eng", "tsv"]);
                if parallel > 1 {
                    command.env("OMP_THREAD_LIMIT", "1");
                }
                let out = command
                    .output()
                    .await
                    .context("tesseract (tesseract-ocr)")?;
                if !out.status.success() || out.stdout.is_empty() {
                    bail!("tesseract failed on {}", path.display());
                }
            }
        }));
    }
    for t in tasks {
        t.await??;
    }
    let elapsed = start.elapsed();
    let _ = tokio::fs::remove_dir_all(&dir).await;
    Ok(elapsed)
}

/// The median of `v` (the mean of the two middle values for an even count).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Runs the benchmark and prints the figures.
pub async fn run(args: DocumentsArgs) -> Result<()> {
    let mut text_gen = Text {
        state: 0x9E37_79B9_7F4A_7C15,
    };
    let mut all_text = String::new();
    let mut all_paragraphs = Vec::new();
    let mut docs = Vec::new();
    let mut words = 0usize;
    for _ in 0..args.docs {
        let paras = text_gen.paragraphs(args.words_per_doc);
        words += paras
            .iter()
            .map(|p| p.split_whitespace().count())
            .sum::<usize>();
        for p in &paras {
            all_text.push_str(p);
            all_text.push('\n');
        }
        docs.push(args.format.build(&paras)?);
        all_paragraphs.extend(paras);
    }
    if args.memory_only {
        return memory::report(args.format, &all_paragraphs);
    }
    let pipelines = args.pipelines.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
    });
    println!(
        "documents benchmark: {} {} files, {words} words, EN→ES, {pipelines} pipelines, worker concurrency {}",
        docs.len(),
        args.format.extension(),
        args.concurrency
    );

    let platform = start_platform(&args).await?;
    // Warm-up: one small document starts the pipelines (not timed).
    let warm = args.format.build(&text_gen.paragraphs(50))?;
    if let Err(e) = through_platform(&platform, &[warm], args.format).await {
        platform.shutdown().await?;
        return Err(e);
    }
    let mut rounds = Vec::new();
    for _ in 0..args.rounds.max(1) {
        // Pictures: the baseline is reading them with bare tesseract.
        let (raw1, raw_n) = match args.format {
            Format::Png => (
                raw_tesseract(&docs, 1).await?,
                raw_tesseract(&docs, args.concurrency).await?,
            ),
            _ => (
                raw_apertium(&all_text, 1).await?,
                raw_apertium(&all_text, pipelines).await?,
            ),
        };
        let plat = match through_platform(&platform, &docs, args.format).await {
            Ok(d) => d,
            Err(e) => {
                platform.shutdown().await?;
                return Err(e);
            }
        };
        rounds.push((raw1, raw_n, plat));
    }
    platform.shutdown().await?;

    let wps = |d: Duration| words as f64 / d.as_secs_f64();
    println!();
    println!(
        "| round | raw 1 process s (words/s) | raw {pipelines} in parallel s (words/s) | Tolk upload → done s (words/s) | Tolk / raw 1 | Tolk / raw {pipelines} |"
    );
    println!("|---|---|---|---|---|---|");
    let mut ratios = Vec::new();
    let mut ratios_n = Vec::new();
    for (i, (raw1, raw_n, plat)) in rounds.iter().enumerate() {
        let r1 = wps(*plat) / wps(*raw1);
        let rn = wps(*plat) / wps(*raw_n);
        ratios.push(r1);
        ratios_n.push(rn);
        println!(
            "| {} | {:.2} ({:.0}) | {:.2} ({:.0}) | {:.2} ({:.0}) | {:.0} % | {:.0} % |",
            i + 1,
            raw1.as_secs_f64(),
            wps(*raw1),
            raw_n.as_secs_f64(),
            wps(*raw_n),
            plat.as_secs_f64(),
            wps(*plat),
            100.0 * r1,
            100.0 * rn
        );
    }
    let ratio = median(&mut ratios);
    let ratio_n = median(&mut ratios_n);
    println!();
    println!(
        "median of {} rounds: platform / raw 1 process {:.0} %, platform / raw {pipelines} in parallel {:.0} %",
        rounds.len(),
        100.0 * ratio,
        100.0 * ratio_n
    );
    // A PDF is laid out again page by page: half the raw engine's pace.
    let target = if args.format == Format::Pdf { 0.5 } else { 0.8 };
    if matches!(args.format, Format::Pdf | Format::Png) {
        let pages: usize = match args.format {
            Format::Png => docs.len(),
            _ => docs
                .iter()
                .map(|d| lopdf::Document::load_mem(d).map(|d| d.get_pages().len()))
                .sum::<Result<usize, _>>()?,
        };
        let mut pace: Vec<f64> = rounds
            .iter()
            .map(|(_, _, plat)| pages as f64 / plat.as_secs_f64())
            .collect();
        println!(
            "{pages} pages: platform {:.1} pages/s (median)",
            median(&mut pace)
        );
    }
    // Pictures: against tesseract run as the worker runs it (one thread
    // each, as many at once); alone with its own threads it is far slower.
    let (verdict, against) = match args.format {
        Format::Png => (
            ratio_n,
            format!("{} in parallel, one thread each", args.concurrency),
        ),
        _ => (ratio, "1 process".to_owned()),
    };
    println!(
        "target: platform ≥ {:.0} % of the raw engine ({against}, median): {:.0} % → {}",
        100.0 * target,
        100.0 * verdict,
        if verdict >= target { "PASS" } else { "MISS" }
    );
    if args.format != Format::Png {
        memory::report(args.format, &all_paragraphs)?;
    }
    std::io::stdout().flush()?;
    Ok(())
}
