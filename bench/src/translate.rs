//! `tolk-bench translate`: the same load against Tolk's `POST /v2/translate`
//! and against Apertium-APY (Debian's `apertium-apy`, started here), EN→ES
//! by default or any pair Tolk routes (`--pair ES:SL` goes through two
//! pivots: spa-eng, eng-hbs, hbs-slv; APY runs the same chain with
//! `/translateChain`):
//! N concurrent clients, each sending one 15–25 word sentence per request
//! in a loop for a fixed time. Prints requests/s, words/s, p50 and p99
//! latency for both and the ratios, plus the raw `apertium` command's batch
//! throughput on the same sentences.
//!
//! Tolk runs in this process (API only, its own throwaway database, the
//! real ledger and key checks on every request); APY runs as its own
//! process with as many pipelines per pair as there are CPUs. Both are
//! reached over loopback HTTP by the same client code.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use tolk_engine::{ApertiumConfig, Translator};
use tolk_storage::objects::Objects;

use crate::documents::{Text, apertium_run, raw_apertium_chain};
use tolk_storage::throwaway::ThrowawayDb;

/// Options of the translate benchmark.
#[derive(Debug, Args)]
pub struct TranslateArgs {
    /// Concurrent clients, one run per value.
    #[arg(long, value_delimiter = ',', default_value = "8,64")]
    clients: Vec<usize>,
    /// Seconds per run.
    #[arg(long, default_value_t = 30)]
    seconds: u64,
    /// Distinct sentences cycled through by the clients.
    #[arg(long, default_value_t = 2_000)]
    sentences: usize,
    /// Apertium pipelines per pair, for Tolk and APY alike (default: CPUs).
    #[arg(long)]
    pipelines: Option<usize>,
    /// Admin URL of the local PostgreSQL (a throwaway database is created and dropped).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432/postgres")]
    database_url: String,
    /// Apertium modes folder.
    #[arg(long, default_value = "/usr/share/apertium/modes")]
    modes: std::path::PathBuf,
    /// Only run against Tolk (skip APY).
    #[arg(long)]
    tolk_only: bool,
    /// Source and target, `SRC:TGT` (DeepL codes). A source other than
    /// English gets the English sentences translated into it first (by a
    /// direct pair from English).
    #[arg(long, default_value = "EN:ES")]
    pair: String,
}

/// The pair under test and the route both servers run.
#[derive(Clone)]
struct Pair {
    source: String,
    target: String,
    /// Apertium modes of the route, in order (`spa-eng`, `eng-hbs`, …).
    modes: Vec<String>,
}

impl Pair {
    /// The languages along the route as APY names them (`spa|eng|hbs|slv`).
    fn apy_chain(&self) -> String {
        let mut langs: Vec<&str> = Vec::new();
        for m in &self.modes {
            let (a, b) = m.split_once('-').unwrap_or((m, m));
            if langs.is_empty() {
                langs.push(a);
            }
            langs.push(b.split('_').next().unwrap_or(b));
        }
        langs.join("|")
    }
}

/// One 15–25 word sentence: two clauses of the documents benchmark's grammar.
pub(crate) fn long_sentence(t: &mut Text) -> String {
    loop {
        let a = t.sentence();
        let b = t.sentence();
        let b = b
            .strip_prefix("The ")
            .map_or_else(|| b.clone(), |rest| format!("the {rest}"));
        let s = format!("{}, and {b}", a.trim_end_matches('.'));
        let words = s.split_whitespace().count();
        if (15..=25).contains(&words) {
            return s;
        }
    }
}

/// Figures of one run.
struct Figures {
    requests: usize,
    errors: usize,
    words: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
}

impl Figures {
    fn rps(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }
    fn wps(&self) -> f64 {
        self.words as f64 / self.elapsed.as_secs_f64()
    }
    fn pct(&self, p: f64) -> Duration {
        if self.latencies.is_empty() {
            return Duration::ZERO;
        }
        let i = ((self.latencies.len() as f64 - 1.0) * p).round() as usize;
        self.latencies[i.min(self.latencies.len() - 1)]
    }
}

/// Which server a client talks to.
#[derive(Clone)]
enum Target {
    Tolk {
        url: String,
        key: String,
        pair: Pair,
    },
    Apy {
        url: String,
        pair: Pair,
    },
}

impl Target {
    async fn send(&self, http: &reqwest::Client, sentence: &str) -> Result<bool> {
        let res = match self {
            Self::Tolk { url, key, pair } => {
                http.post(format!("{url}/v2/translate"))
                    .header("Authorization", format!("DeepL-Auth-Key {key}"))
                    .json(&serde_json::json!({
                        "text": [sentence], "source_lang": pair.source, "target_lang": pair.target
                    }))
                    .send()
                    .await?
            }
            Self::Apy { url, pair } if pair.modes.len() == 1 => {
                http.post(format!("{url}/translate"))
                    .form(&[
                        ("langpair", pair.apy_chain().as_str()),
                        ("q", sentence),
                        ("markUnknown", "no"),
                        ("format", "txt"),
                    ])
                    .send()
                    .await?
            }
            Self::Apy { url, pair } => {
                // APY answers chains on GET only.
                let chain = pair.apy_chain();
                let url = reqwest::Url::parse_with_params(
                    &format!("{url}/translateChain"),
                    &[
                        ("langpairs", chain.as_str()),
                        ("q", sentence),
                        ("markUnknown", "no"),
                    ],
                )?;
                http.get(url).send().await?
            }
        };
        let ok = res.status().is_success();
        let body = res.bytes().await?;
        Ok(ok && !body.is_empty())
    }
}

/// `clients` loops for `duration`; every request's latency is kept.
async fn load(
    target: &Target,
    sentences: &Arc<Vec<String>>,
    clients: usize,
    duration: Duration,
) -> Result<Figures> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(clients)
        .timeout(Duration::from_secs(60))
        .build()?;
    let start = Instant::now();
    let deadline = start + duration;
    let mut tasks = Vec::with_capacity(clients);
    for c in 0..clients {
        let http = http.clone();
        let target = target.clone();
        let sentences = sentences.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let (mut words, mut errors) = (0usize, 0usize);
            let mut i = c * 7919;
            while Instant::now() < deadline {
                let s = &sentences[i % sentences.len()];
                i += 1;
                let t0 = Instant::now();
                match target.send(&http, s).await {
                    Ok(true) => {
                        lat.push(t0.elapsed());
                        words += s.split_whitespace().count();
                    }
                    _ => errors += 1,
                }
            }
            (lat, words, errors)
        }));
    }
    let mut f = Figures {
        requests: 0,
        errors: 0,
        words: 0,
        elapsed: Duration::ZERO,
        latencies: Vec::new(),
    };
    for t in tasks {
        let (lat, words, errors) = t.await?;
        f.requests += lat.len();
        f.latencies.extend(lat);
        f.words += words;
        f.errors += errors;
    }
    f.elapsed = start.elapsed();
    f.latencies.sort_unstable();
    Ok(f)
}

/// Tolk's API in this process, on a throwaway database.
struct Tolk {
    url: String,
    key: String,
    database: ThrowawayDb,
    stop: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

async fn start_tolk(args: &TranslateArgs, pipelines: usize) -> Result<Tolk> {
    let database = ThrowawayDb::create(
        &args.database_url,
        &format!("tolk_bench_translate_{}", std::process::id()),
    )
    .await?;
    let db = database.connect(10).await?;
    let org = tolk_storage::keys::ensure_organization(&db, "bench").await?;
    let key = tolk_storage::keys::create(&db, org, "bench", false)
        .await?
        .secret;
    let objects = Objects::open(
        &std::env::temp_dir()
            .join(&database.name)
            .join("objects")
            .display()
            .to_string(),
    )?;
    let translator = Arc::new(Translator::apertium(ApertiumConfig {
        modes_dir: args.modes.clone(),
        pipelines_per_pair: pipelines,
        ..ApertiumConfig::default()
    })?);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let (stop, mut rx) = tokio::sync::watch::channel(false);
    let state = crate::app::api_state(db, objects, translator, 1024 * 1024);
    let task = tokio::spawn(async move {
        let stopped = async move {
            let _ = rx.wait_for(|v| *v).await;
        };
        if let Err(e) = tolk_api::serve(listener, state, stopped).await {
            eprintln!("api: {e}");
        }
    });
    Ok(Tolk {
        url,
        key,
        database,
        stop,
        task,
    })
}

impl Tolk {
    async fn shutdown(self) -> Result<()> {
        let _ = self.stop.send(true);
        let _ = tokio::time::timeout(Duration::from_secs(10), self.task).await;
        self.database.drop_database().await?;
        let _ = std::fs::remove_dir_all(std::env::temp_dir().join(&self.database.name));
        Ok(())
    }
}

/// The pair of `--pair` and the route Tolk takes for it.
fn pair_of(modes_dir: &std::path::Path, pair: &str) -> Result<Pair> {
    let (source, target) = pair
        .split_once(':')
        .context("--pair is SRC:TGT, e.g. ES:SL")?;
    let translator = Translator::apertium(ApertiumConfig {
        modes_dir: modes_dir.to_owned(),
        pipelines_per_pair: 1,
        ..ApertiumConfig::default()
    })?;
    let modes = translator.route(source, target)?;
    Ok(Pair {
        source: source.to_ascii_uppercase(),
        target: target.to_ascii_uppercase(),
        modes,
    })
}

/// The English sentences, or their translation into the pair's source
/// language by a direct pair from English.
async fn in_source_language(
    args: &TranslateArgs,
    pair: &Pair,
    english: Vec<String>,
) -> Result<Vec<String>> {
    if pair.source.eq_ignore_ascii_case("EN") {
        return Ok(english);
    }
    let from_english = pair_of(&args.modes, &format!("EN:{}", pair.source))?;
    let [mode] = from_english.modes.as_slice() else {
        bail!(
            "no direct pair from English into {}: the benchmark cannot make its source text",
            pair.source
        );
    };
    let out = apertium_run(&format!("apertium -u {mode}"), english.join("\n") + "\n").await?;
    let lines: Vec<String> = String::from_utf8_lossy(&out)
        .lines()
        .map(str::to_owned)
        .collect();
    if lines.len() != english.len() {
        bail!(
            "apertium {mode} gave {} lines for {}",
            lines.len(),
            english.len()
        );
    }
    Ok(lines)
}

/// `apertium-apy` on a free loopback port (killed on drop).
struct Apy {
    child: tokio::process::Child,
    url: String,
    command: String,
}

async fn start_apy(modes: &std::path::Path, pipelines: usize) -> Result<Apy> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let dir = std::env::temp_dir().join(format!("tolk_bench_apy_{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let args = [
        "-p".to_owned(),
        port.to_string(),
        "-i".to_owned(),
        pipelines.to_string(),
        modes.display().to_string(),
    ];
    let child = tokio::process::Command::new("apertium-apy")
        .args(&args)
        .current_dir(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("apertium-apy must be installed (scripts/setup.sh installs it)")?;
    let apy = Apy {
        child,
        url: format!("http://127.0.0.1:{port}"),
        command: format!("apertium-apy {}", args.join(" ")),
    };
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(r) = http.get(format!("{}/listPairs", apy.url)).send().await
            && r.status().is_success()
        {
            return Ok(apy);
        }
        if Instant::now() > deadline {
            bail!("apertium-apy did not come up");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

impl Drop for Apy {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn row(name: &str, clients: usize, f: &Figures) {
    println!(
        "| {name} | {clients} | {} | {} | {:.0} | {:.0} | {:.1} | {:.1} |",
        f.requests,
        f.errors,
        f.rps(),
        f.wps(),
        ms(f.pct(0.5)),
        ms(f.pct(0.99))
    );
}

/// Runs the benchmark.
pub async fn run(args: TranslateArgs) -> Result<()> {
    let pipelines = args.pipelines.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
    });
    let (pair, sentences) = load_sentences(&args).await?;
    let words: usize = sentences.iter().map(|s| s.split_whitespace().count()).sum();
    println!(
        "translate benchmark: {}→{} (route {}), one sentence of 15–25 English words per request ({} distinct, {:.1} words on average), {}s per run, {pipelines} pipelines per pair",
        pair.source,
        pair.target,
        pair.modes.join(" → "),
        sentences.len(),
        words as f64 / sentences.len() as f64,
        args.seconds
    );
    let sentences = Arc::new(sentences);
    let duration = Duration::from_secs(args.seconds.max(1));

    let raw = measure_raw(&sentences, &pair, pipelines).await?;
    let setup = Setup {
        args: &args,
        pair: &pair,
        sentences: &sentences,
        pipelines,
        duration,
    };
    let results = measure_servers(&setup).await?;
    print_results(&setup, &results, &raw);
    Ok(())
}

/// The pair of `--pair` and the sentences in its source language.
async fn load_sentences(args: &TranslateArgs) -> Result<(Pair, Vec<String>)> {
    let mut gen_ = Text {
        state: 0x2545_F491_4F6C_DD1D,
    };
    let english: Vec<String> = (0..args.sentences.max(1))
        .map(|_| long_sentence(&mut gen_))
        .collect();
    let pair = pair_of(&args.modes, &args.pair)?;
    let sentences = in_source_language(args, &pair, english).await?;
    Ok((pair, sentences))
}

/// Raw apertium's batch throughput.
struct Raw {
    /// Words of the batch.
    words: usize,
    /// Words/s with one process.
    one_wps: f64,
    /// Words/s with one process per pipeline.
    many_wps: f64,
}

/// Raw apertium: the sentences as one batch (one per line, repeated up to
/// 100,000 words), 1 and N processes.
async fn measure_raw(sentences: &[String], pair: &Pair, pipelines: usize) -> Result<Raw> {
    let mut batch = String::new();
    let mut batch_words = 0;
    while batch_words < 100_000 {
        for s in sentences.iter() {
            batch.push_str(s);
            batch.push('\n');
            batch_words += s.split_whitespace().count();
        }
    }
    let raw1 = raw_apertium_chain(&batch, 1, &pair.modes).await?;
    let raw_n = raw_apertium_chain(&batch, pipelines, &pair.modes).await?;
    Ok(Raw {
        words: batch_words,
        one_wps: batch_words as f64 / raw1.as_secs_f64(),
        many_wps: batch_words as f64 / raw_n.as_secs_f64(),
    })
}

/// What the runs against the servers share.
struct Setup<'a> {
    args: &'a TranslateArgs,
    pair: &'a Pair,
    sentences: &'a Arc<Vec<String>>,
    pipelines: usize,
    duration: Duration,
}

/// Figures of one client count: Tolk's, and APY's unless `--tolk-only`.
type Results = Vec<(usize, Figures, Option<Figures>)>;

/// Starts Tolk (and APY unless `--tolk-only`), runs the load with each
/// client count against both after a warm-up, and stops them.
async fn measure_servers(setup: &Setup<'_>) -> Result<Results> {
    let Setup {
        args,
        pair,
        sentences,
        pipelines,
        duration,
    } = *setup;
    let tolk = start_tolk(args, pipelines).await?;
    let tolk_target = Target::Tolk {
        url: tolk.url.clone(),
        key: tolk.key.clone(),
        pair: pair.clone(),
    };
    let apy = if args.tolk_only {
        None
    } else {
        Some(start_apy(&args.modes, pipelines).await?)
    };
    if let Some(apy) = &apy {
        println!("APY: {}", apy.command);
    }

    let mut results = Vec::new();
    for &clients in &args.clients {
        // Warm-up (not counted): starts the pipelines of both.
        load(&tolk_target, sentences, clients, Duration::from_secs(2)).await?;
        let t = load(&tolk_target, sentences, clients, duration).await?;
        let a = match &apy {
            Some(apy) => {
                let target = Target::Apy {
                    url: apy.url.clone(),
                    pair: pair.clone(),
                };
                load(&target, sentences, clients, Duration::from_secs(2)).await?;
                Some(load(&target, sentences, clients, duration).await?)
            }
            None => None,
        };
        results.push((clients, t, a));
    }
    drop(apy);
    tolk.shutdown().await?;
    Ok(results)
}

/// Prints the table of the runs, raw apertium's throughput, the ratios and,
/// at 64 clients against APY, the targets.
fn print_results(setup: &Setup<'_>, results: &Results, raw: &Raw) {
    let (pair, pipelines) = (setup.pair, setup.pipelines);
    let (batch_words, raw1_wps, raw_n_wps) = (raw.words, raw.one_wps, raw.many_wps);
    println!();
    println!("| server | clients | requests | errors | req/s | words/s | p50 ms | p99 ms |");
    println!("|---|---|---|---|---|---|---|---|");
    for (clients, t, a) in results {
        row("Tolk /v2/translate", *clients, t);
        if let Some(a) = a {
            row(
                if pair.modes.len() == 1 {
                    "apertium-apy /translate"
                } else {
                    "apertium-apy /translateChain"
                },
                *clients,
                a,
            );
        }
    }
    println!();
    println!(
        "raw `apertium -u {}` batch ({batch_words} words, one sentence per line): 1 process {raw1_wps:.0} words/s, {pipelines} processes {raw_n_wps:.0} words/s",
        pair.modes.join(" | apertium -u ")
    );
    println!();
    println!(
        "| clients | Tolk/APY req/s | Tolk/APY p50 | Tolk words/s / raw apertium ({pipelines} processes) |"
    );
    println!("|---|---|---|---|");
    for (clients, t, a) in results {
        let (thr, p50) = match a {
            Some(a) => (
                format!("{:.2}×", t.rps() / a.rps()),
                format!("{:.2}×", ms(t.pct(0.5)) / ms(a.pct(0.5))),
            ),
            None => ("—".to_owned(), "—".to_owned()),
        };
        println!(
            "| {clients} | {thr} | {p50} | {:.0} % |",
            100.0 * t.wps() / raw_n_wps
        );
    }
    if let Some((clients, t, Some(a))) = results.iter().find(|(c, _, _)| *c == 64) {
        let thr = t.rps() / a.rps();
        let p50 = ms(t.pct(0.5)) / ms(a.pct(0.5));
        let raw = t.wps() / raw_n_wps;
        println!();
        println!(
            "targets at {clients} clients: throughput ≥ 3× APY: {thr:.2}× → {}; p50 ≤ 0.5× APY: {p50:.2}× → {}; words/s within 50 % of raw apertium: {:.0} % → {}",
            if thr >= 3.0 { "PASS" } else { "MISS" },
            if p50 <= 0.5 { "PASS" } else { "MISS" },
            100.0 * raw,
            if raw >= 0.5 { "PASS" } else { "MISS" }
        );
    }
}
