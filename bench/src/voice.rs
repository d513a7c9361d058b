//! `tolk-bench voice`: real-time factors (seconds of audio per second of wall
//! time) of text to speech, voice conversion and the voice translation job,
//! and time to the first audio frame of the simplex stream — all through the
//! platform (API, queue and worker in this process, on a throwaway database),
//! each printed beside the same figure for the bare `espeak-ng` command on the
//! same text.

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio_tungstenite::tungstenite::Message;
use tolk_engine::{ApertiumConfig, Translator};
use tolk_storage::objects::Objects;
use tolk_voice::voices::{TtsVoice, VoiceLookup};

use tolk_storage::throwaway::ThrowawayDb;

/// Options of the voice benchmark.
#[derive(Debug, Args)]
pub struct VoiceArgs {
    /// Sentences of the benchmark text.
    #[arg(long, default_value_t = 12)]
    sentences: usize,
    /// Repetitions of each timed operation.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Simplex sessions for the first-frame latency.
    #[arg(long, default_value_t = 50)]
    sessions: usize,
    /// Admin URL of the local PostgreSQL (a throwaway database is created and dropped).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432/postgres")]
    database_url: String,
}

const SENTENCES: [&str; 6] = [
    "The weather was pleasant when the train arrived at the station.",
    "Many people were waiting on the platform with their bags.",
    "A small child pointed at the engine and laughed.",
    "The conductor checked every ticket with great care.",
    "Outside the window the fields were green and wide.",
    "Everyone hoped to reach the city before the evening.",
];

/// The TTS voice the benchmark uses (and whose settings the bare command gets).
const VOICE: i64 = 101;
/// The voice-conversion profile the benchmark converts to.
const VC_VOICE: i64 = 204;

struct Platform {
    base: String,
    key: String,
    database: ThrowawayDb,
    dir: std::path::PathBuf,
    stop: tokio::sync::watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

async fn start_platform(args: &VoiceArgs) -> Result<Platform> {
    let database = ThrowawayDb::create(
        &args.database_url,
        &format!("tolk_bench_voice_{}", std::process::id()),
    )
    .await?;
    let db = database.connect(10).await?;
    let org = tolk_storage::keys::ensure_organization(&db, "bench").await?;
    let key = tolk_storage::keys::create(&db, org, "bench", false)
        .await?
        .secret;
    let dir = std::env::temp_dir().join(&database.name);
    let objects = Objects::open(&dir.join("objects").display().to_string())?;
    let translator = Arc::new(Translator::apertium(ApertiumConfig::default())?);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let (stop, rx) = tokio::sync::watch::channel(false);
    let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|v| *v).await;
    };
    let api_state = tolk_api::AppState {
        voice: tolk_api::routes::voice::VoiceSettings {
            max_upload_bytes: 64 * 1024 * 1024,
            ..Default::default()
        },
        ..crate::app::api_state(
            db.clone(),
            objects.clone(),
            translator.clone(),
            64 * 1024 * 1024,
        )
    };
    let mut tasks = Vec::new();
    let r = rx.clone();
    tasks.push(tokio::spawn(async move {
        if let Err(e) = tolk_api::serve(listener, api_state, stopped(r)).await {
            eprintln!("api: {e}");
        }
    }));
    let worker_state = tolk_worker::WorkerState {
        db,
        objects,
        translator,
        espeak: Default::default(),
        recognizer: Default::default(),
        office: Default::default(),
        fonts: Default::default(),
        ocr: Default::default(),
    };
    let r = rx.clone();
    tasks.push(tokio::spawn(async move {
        tolk_worker::run(
            tolk_worker::WorkerConfig::default(),
            worker_state,
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
    async fn shutdown(self) -> Result<()> {
        let _ = self.stop.send(true);
        for t in self.tasks {
            let _ = tokio::time::timeout(Duration::from_secs(40), t).await;
        }
        self.database.drop_database().await?;
        let _ = std::fs::remove_dir_all(&self.dir);
        Ok(())
    }

    fn client_key(&self) -> &str {
        self.key
            .split_once('.')
            .map(|(a, _)| a)
            .unwrap_or(&self.key)
    }
}

fn voice() -> Result<&'static TtsVoice> {
    match tolk_voice::voices::tts_voice(VOICE) {
        VoiceLookup::Found(v) => Ok(v),
        _ => bail!("no voice {VOICE}"),
    }
}

fn espeak_command(text: &str) -> Result<tokio::process::Command> {
    let v = voice()?;
    let mut cmd = tokio::process::Command::new("espeak-ng");
    cmd.arg("--stdout")
        .args([
            "-v",
            v.espeak,
            "-p",
            &v.pitch.to_string(),
            "-s",
            &v.rate.to_string(),
        ])
        .arg(text)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    Ok(cmd)
}

/// Bare espeak-ng: (wall time, seconds of audio) of one run.
async fn bare_espeak(text: &str) -> Result<(Duration, f64)> {
    let start = Instant::now();
    let out = espeak_command(text)?.output().await?;
    let wall = start.elapsed();
    let samples = out.stdout.len().saturating_sub(44) / 2;
    Ok((wall, samples as f64 / 22050.0))
}

/// Bare espeak-ng: time until the first PCM bytes after the header.
async fn bare_first_audio(text: &str) -> Result<Duration> {
    let start = Instant::now();
    let mut child = espeak_command(text)?.spawn()?;
    let mut out = child.stdout.take().context("stdout")?;
    let mut buf = vec![0u8; 4096];
    let mut got = 0;
    while got <= 44 {
        let n = out.read(&mut buf).await?;
        if n == 0 {
            bail!("espeak-ng ended without audio");
        }
        got += n;
    }
    let t = start.elapsed();
    let _ = child.kill().await;
    Ok(t)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(i).copied().unwrap_or(f64::NAN)
}

async fn tts(p: &Platform, http: &reqwest::Client, text: &str) -> Result<(Duration, Vec<u8>, f64)> {
    let start = Instant::now();
    let res = http
        .post(format!("{}/v1/tts/convert", p.base))
        .header("X-Api-Key", &p.key)
        .header("X-Client-Key", p.client_key())
        .json(&json!({"voiceId": VOICE, "text": text}))
        .send()
        .await?;
    if !res.status().is_success() {
        bail!("tts answered {}", res.status());
    }
    let ms: f64 = res.headers()["audio-duration-ms"].to_str()?.parse()?;
    let body = res.bytes().await?.to_vec();
    Ok((start.elapsed(), body, ms / 1000.0))
}

async fn vc(p: &Platform, http: &reqwest::Client, wav: &[u8]) -> Result<(Duration, f64)> {
    let start = Instant::now();
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(wav.to_vec()).file_name("speech.wav"),
    );
    let res = http
        .post(format!("{}/v1/vc/convert?voiceId={VC_VOICE}", p.base))
        .header("X-Api-Key", &p.key)
        .header("X-Client-Key", p.client_key())
        .multipart(form)
        .send()
        .await?;
    if !res.status().is_success() {
        bail!(
            "vc answered {}: {}",
            res.status(),
            res.text().await.unwrap_or_default()
        );
    }
    let ms: f64 = res.headers()["audio-duration-ms"].to_str()?.parse()?;
    let _ = res.bytes().await?;
    Ok((start.elapsed(), ms / 1000.0))
}

/// Create, upload, wait: the job's wall time.
async fn voice_job(p: &Platform, http: &reqwest::Client, wav: &[u8]) -> Result<Duration> {
    let auth = format!("DeepL-Auth-Key {}", p.key);
    let start = Instant::now();
    let created: Value = http
        .post(format!("{}/v1/jobs/voice/translate", p.base))
        .header("Authorization", &auth)
        .json(&json!({
            "source_file": {"name": "speech.wav", "content_type": "audio/wav", "content_length": wav.len()},
            "parameters": {"source_language": "en"},
            "targets": [{"language": "es", "type": "text/plain"}, {"language": "es", "type": "audio/wav"}],
        }))
        .send()
        .await?
        .json()
        .await?;
    let url = created["upload_url"].as_str().context("upload_url")?;
    let sig = created["signature"].as_str().context("signature")?;
    let id = created["job_id"].as_str().context("job_id")?;
    let res = http
        .put(url)
        .header("Authorization", format!("DeepL-Signature {sig}"))
        .body(wav.to_vec())
        .send()
        .await?;
    if !res.status().is_success() {
        bail!("upload answered {}", res.status());
    }
    loop {
        let st: Value = http
            .get(format!("{}/v1/jobs/voice/translate/{id}", p.base))
            .header("Authorization", &auth)
            .send()
            .await?
            .json()
            .await?;
        let results = st["results"].as_array().context("results")?;
        if results.iter().all(|r| r["status"] == "complete") {
            return Ok(start.elapsed());
        }
        if results.iter().any(|r| r["status"] == "failed") {
            bail!("voice job failed: {st}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// One simplex session: (first binary frame, first PCM frame) after the connect started.
async fn simplex_first_frame(p: &Platform, text: &str) -> Result<(Duration, Duration)> {
    let url = format!(
        "{}/v1/tts/stream/simplex/ws?voiceId={VOICE}",
        p.base.replacen("http", "ws", 1)
    );
    let start = Instant::now();
    // TCP_NODELAY, as browsers and the SDKs' WebSocket stacks do: with Nagle the
    // convert message would wait for the ACK of authApiKey (a 40 ms delayed ACK).
    let (mut ws, _) = tokio_tungstenite::connect_async_with_config(url, None, true).await?;
    ws.send(Message::Text(
        json!({"type": "authApiKey", "clientKey": p.client_key(), "apiKey": p.key})
            .to_string()
            .into(),
    ))
    .await?;
    ws.send(Message::Text(
        json!({"type": "convert", "text": text}).to_string().into(),
    ))
    .await?;
    let mut first = None;
    let mut first_pcm = None;
    while let Some(msg) = ws.next().await {
        match msg? {
            Message::Binary(_) if first.is_none() => first = Some(start.elapsed()),
            Message::Binary(_) if first_pcm.is_none() => first_pcm = Some(start.elapsed()),
            Message::Close(_) => break,
            _ => {}
        }
    }
    match (first, first_pcm) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => bail!("the stream sent no audio"),
    }
}

/// Runs the benchmark and prints the figures.
pub async fn run(args: VoiceArgs) -> Result<()> {
    let text: String = (0..args.sentences.max(1))
        .map(|i| SENTENCES[i % SENTENCES.len()])
        .collect::<Vec<_>>()
        .join(" ");
    let p = start_platform(&args).await?;
    let result = measure(&args, &p, &text).await;
    p.shutdown().await?;
    result
}

async fn measure(args: &VoiceArgs, p: &Platform, text: &str) -> Result<()> {
    let http = reqwest::Client::new();
    let runs = args.runs.max(1);
    println!(
        "voice benchmark: {} sentences, {} runs each, voice {VOICE} (espeak-ng {}), {} CPUs",
        args.sentences,
        runs,
        voice()?.espeak,
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    );

    // Warm up both paths.
    bare_espeak(text).await?;
    let (_, wav, audio_s) = tts(p, &http, text).await?;
    println!(
        "text: {} characters → {audio_s:.1} s of speech",
        text.chars().count()
    );

    let mut bare = Vec::new();
    let mut ours = Vec::new();
    for _ in 0..runs {
        let (wall, secs) = bare_espeak(text).await?;
        bare.push(secs / wall.as_secs_f64());
        let (wall, _, secs) = tts(p, &http, text).await?;
        ours.push(secs / wall.as_secs_f64());
    }
    let (bare_rtf, tts_rtf) = (median(bare), median(ours));
    println!(
        "\nreal-time factor (audio seconds per wall second, median of {runs}; higher is faster)"
    );
    println!("  bare espeak-ng command          {bare_rtf:8.1}×");
    println!(
        "  POST /v1/tts/convert            {tts_rtf:8.1}×   ({:.0} % of bare; target ≥ 20×)",
        100.0 * tts_rtf / bare_rtf
    );

    let mut vcs = Vec::new();
    for _ in 0..runs {
        let (wall, secs) = vc(p, &http, &wav).await?;
        vcs.push(secs / wall.as_secs_f64());
    }
    let vc_rtf = median(vcs);
    println!(
        "  POST /v1/vc/convert             {vc_rtf:8.1}×   ({:.0} % of bare espeak-ng; target ≥ 20×)",
        100.0 * vc_rtf / bare_rtf
    );

    // The library conversion alone (no HTTP, no decoding), for the split.
    let decoded = tolk_voice::decode::decode(&wav, "wav", 3600)?;
    let VoiceLookup::Found(profile) = tolk_voice::voices::vc_voice(VC_VOICE) else {
        bail!("no VC voice {VC_VOICE}");
    };
    let start = Instant::now();
    tolk_voice::convert::convert(&decoded.samples, decoded.rate, profile)?;
    let lib_rtf = audio_s / start.elapsed().as_secs_f64();
    println!("    (TD-PSOLA alone, in process   {lib_rtf:8.1}×)");

    let mut jobs = Vec::new();
    for _ in 0..runs.min(3) {
        let wall = voice_job(p, &http, &wav).await?;
        jobs.push(audio_s / wall.as_secs_f64());
    }
    let job_rtf = median(jobs);
    println!("  voice job (recognise, translate, speak; upload to complete)");
    println!(
        "                                  {job_rtf:8.1}×   ({:.1} % of bare espeak-ng)",
        100.0 * job_rtf / bare_rtf
    );
    // The recogniser alone, for the split.
    let x16 = tolk_voice::resample::resample(
        &decoded.samples,
        decoded.rate,
        tolk_voice::asr::SAMPLE_RATE,
    );
    let start = Instant::now();
    tolk_voice::asr::Recognizer::default()
        .recognize(&x16)
        .await?;
    println!(
        "    (bare pocketsphinx run         {:8.1}×)",
        audio_s / start.elapsed().as_secs_f64()
    );

    let first_sentence = SENTENCES[0];
    let sessions = args.sessions.max(1);
    let mut bare_first = Vec::new();
    let mut header = Vec::new();
    let mut pcm = Vec::new();
    simplex_first_frame(p, first_sentence).await?;
    for _ in 0..sessions {
        bare_first.push(bare_first_audio(text).await?.as_secs_f64() * 1000.0);
        let (h, a) = simplex_first_frame(p, text).await?;
        header.push(h.as_secs_f64() * 1000.0);
        pcm.push(a.as_secs_f64() * 1000.0);
    }
    println!(
        "\ntime to first audio, ms ({sessions} sessions on the {}-sentence text; p50 / p90)",
        args.sentences
    );
    println!(
        "  bare espeak-ng (first PCM byte) {:6.1} / {:6.1}",
        percentile(bare_first.clone(), 0.5),
        percentile(bare_first, 0.9)
    );
    println!(
        "  simplex stream, header frame    {:6.1} / {:6.1}",
        percentile(header.clone(), 0.5),
        percentile(header, 0.9)
    );
    println!(
        "  simplex stream, first PCM frame {:6.1} / {:6.1}   (target p50 < 150 ms; connect + auth + convert included)",
        percentile(pcm.clone(), 0.5),
        percentile(pcm, 0.9)
    );
    Ok(())
}
