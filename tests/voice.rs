//! The voice service end to end: voice lists, text to speech with espeak-ng,
//! voice conversion (duration kept, F0 moved toward the profile, measured with
//! the independent McLeod detector of the pitch-detection crate), WAV/FLAC/
//! OGG/MP3 input, WebSocket streams with a real client, and bad input.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use futures::{SinkExt, StreamExt};
use pitch_detection::detector::PitchDetector;
use pitch_detection::detector::mcleod::McLeodDetector;
use reqwest::multipart;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::support::{Api, World};

/// The voice headers of a key `{key_id}.{secret}`.
fn headers(key: &str) -> [(&'static str, String); 2] {
    let client = key.split_once('.').map(|(id, _)| id).unwrap_or(key);
    [
        ("X-Api-Key", key.to_owned()),
        ("X-Client-Key", client.to_owned()),
    ]
}

async fn get_json(api: &Api, key: &str, path: &str) -> Result<(u16, Value)> {
    let mut req = api.http.get(api.url(path));
    for (k, v) in headers(key) {
        req = req.header(k, v);
    }
    let res = req.send().await?;
    Ok((
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    ))
}

struct Audio {
    code: u16,
    headers: reqwest::header::HeaderMap,
    body: Vec<u8>,
}

impl Audio {
    fn message(&self) -> String {
        serde_json::from_slice::<Value>(&self.body)
            .ok()
            .and_then(|v| v["message"].as_str().map(str::to_owned))
            .unwrap_or_default()
    }
}

async fn tts_raw(api: &Api, key: &str, body: reqwest::Body, json_type: bool) -> Result<Audio> {
    // A fresh client: an answer to an oversize body leaves that connection unusable.
    let mut req = fresh_client().post(api.url("/v1/tts/convert")).body(body);
    if json_type {
        req = req.header("Content-Type", "application/json");
    }
    for (k, v) in headers(key) {
        req = req.header(k, v);
    }
    let res = req.send().await?;
    Ok(Audio {
        code: res.status().as_u16(),
        headers: res.headers().clone(),
        body: res.bytes().await?.to_vec(),
    })
}

pub(crate) async fn tts(api: &Api, key: &str, voice: i64, text: &str) -> Result<Vec<u8>> {
    let body = json!({"voiceId": voice, "text": text}).to_string();
    let a = tts_raw(api, key, body.into(), true).await?;
    if a.code != 200 {
        bail!("tts answered {}: {}", a.code, a.message());
    }
    Ok(a.body)
}

async fn vc(api: &Api, key: &str, voice: &str, filename: &str, data: Vec<u8>) -> Result<Audio> {
    let form = multipart::Form::new().part(
        "file",
        multipart::Part::bytes(data).file_name(filename.to_owned()),
    );
    let mut req = fresh_client()
        .post(api.url(&format!("/v1/vc/convert?voiceId={voice}")))
        .multipart(form);
    for (k, v) in headers(key) {
        req = req.header(k, v);
    }
    let res = req.send().await?;
    Ok(Audio {
        code: res.status().as_u16(),
        headers: res.headers().clone(),
        body: res.bytes().await?.to_vec(),
    })
}

fn fresh_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap_or_default()
}

/// (samples as f64, rate) of a WAV file.
fn read_wav(bytes: &[u8]) -> Result<(Vec<f64>, u32)> {
    let mut r = hound::WavReader::new(std::io::Cursor::new(bytes))?;
    let spec = r.spec();
    if spec.channels != 1 || spec.bits_per_sample != 16 {
        bail!("expected 16-bit mono, got {spec:?}");
    }
    let samples = r
        .samples::<i16>()
        .map(|s| s.map(|v| f64::from(v) / 32768.0))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((samples, spec.sample_rate))
}

/// Median F0 in Hz over voiced frames, by McLeod's method (pitch-detection crate).
fn median_f0(samples: &[f64], rate: u32) -> Option<f64> {
    const SIZE: usize = 2048;
    let mut detector = McLeodDetector::<f64>::new(SIZE, SIZE / 2);
    let mut found = Vec::new();
    let mut start = 0;
    while start + SIZE <= samples.len() {
        if let Some(p) = detector.get_pitch(&samples[start..start + SIZE], rate as usize, 2.0, 0.7)
            && (60.0..500.0).contains(&p.frequency)
        {
            found.push(p.frequency);
        }
        start += SIZE / 4;
    }
    if found.len() < 5 {
        return None;
    }
    found.sort_by(f64::total_cmp);
    Some(found[found.len() / 2])
}

/// Runs an encoder CLI from `input` to a new file with `ext`; returns its bytes.
async fn encode_with(
    world: &World,
    program: &str,
    args: &[&str],
    input: &[u8],
    ext: &str,
) -> Result<Vec<u8>> {
    let src = world.path("source.wav");
    std::fs::write(&src, input)?;
    let dst = world.path(&format!("source.{ext}"));
    let mut cmd = tokio::process::Command::new(program);
    for a in args {
        match *a {
            "IN" => cmd.arg(&src),
            "OUT" => cmd.arg(&dst),
            other => cmd.arg(other),
        };
    }
    let out = cmd
        .output()
        .await
        .with_context(|| format!("{program} must be installed (scripts/setup.sh)"))?;
    if !out.status.success() {
        bail!("{program} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(std::fs::read(&dst)?)
}

const SENTENCE: &str =
    "The quick brown fox jumps over the lazy dog. Speech synthesis should sound natural.";

#[tokio::test]
async fn voices_tts_and_voice_conversion() -> Result<()> {
    let mut world = World::new("voice").await?;
    world
        .extra_env
        .push(("TOLK_MAX_VOICE_UPLOAD_BYTES".into(), "1500000".into()));
    let key = world.create_key("voice", false).await?;
    let api = world.start_api().await?;

    // Voice lists: arrays of {id, name, description}, ids disjoint.
    let (code, tts_list) = get_json(&api, &key, "/v1/tts/voices").await?;
    assert_eq!(code, 200, "{tts_list}");
    let (code, vc_list) = get_json(&api, &key, "/v1/vc/voices").await?;
    assert_eq!(code, 200, "{vc_list}");
    let ids = |v: &Value| -> Vec<i64> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x["id"].as_i64())
            .collect()
    };
    let (tts_ids, vc_ids) = (ids(&tts_list), ids(&vc_list));
    assert!(tts_ids.len() >= 10 && vc_ids.len() >= 4);
    assert!(tts_ids.iter().all(|i| !vc_ids.contains(i)));
    assert!(tts_list[0]["name"].is_string() && tts_list[0]["description"].is_string());

    // Authentication: both headers, same key; X-Client-ID also accepted.
    let client_id = key.split_once('.').map(|(a, _)| a).unwrap_or_default();
    for (api_key, client) in [
        (None, Some(client_id.to_owned())),
        (Some(key.clone()), None),
        (Some(key.clone()), Some("0".repeat(32))),
        (
            Some(format!("{client_id}.wrong")),
            Some(client_id.to_owned()),
        ),
    ] {
        let mut req = api.http.get(api.url("/v1/tts/voices"));
        if let Some(k) = api_key {
            req = req.header("X-Api-Key", k);
        }
        if let Some(c) = client {
            req = req.header("X-Client-Key", c);
        }
        let res = req.send().await?;
        assert_eq!(res.status(), 403);
        let body: Value = res.json().await?;
        assert!(
            body["message"]
                .as_str()
                .unwrap_or_default()
                .contains("X-Api-Key")
        );
    }
    let res = api
        .http
        .get(api.url("/v1/vc/voices"))
        .header("x-api-key", &key)
        .header("X-Client-ID", client_id)
        .send()
        .await?;
    assert_eq!(res.status(), 200);

    // Text to speech: a 16-bit mono WAV with the three headers.
    let a = tts_raw(
        &api,
        &key,
        json!({"voiceId": 101, "text": SENTENCE}).to_string().into(),
        true,
    )
    .await?;
    assert_eq!(a.code, 200, "{}", a.message());
    assert_eq!(a.headers["content-type"], "audio/wav");
    assert_eq!(
        a.headers["audio-size-bytes"].to_str()?,
        a.body.len().to_string()
    );
    let (speech, rate) = read_wav(&a.body)?;
    assert_eq!(rate, 22050);
    let secs = speech.len() as f64 / f64::from(rate);
    let header_ms: f64 = a.headers["audio-duration-ms"].to_str()?.parse()?;
    assert!(
        (header_ms / 1000.0 - secs).abs() < 0.01,
        "{header_ms} ms vs {secs} s"
    );
    assert!((3.0..12.0).contains(&secs), "{secs} s");

    // Bad TTS requests.
    for (body, code, words) in [
        (json!({"voiceId": 101}).to_string(), 400, "text"),
        (
            json!({"voiceId": 101, "text": ""}).to_string(),
            400,
            "empty",
        ),
        (
            json!({"voiceId": 101, "text": 7}).to_string(),
            400,
            "string",
        ),
        (
            json!({"voiceId": "101", "text": "hi"}).to_string(),
            400,
            "integer",
        ),
        (json!({"text": "hi"}).to_string(), 400, "voiceId"),
        (
            json!({"voiceId": 203, "text": "hi"}).to_string(),
            400,
            "voice-conversion",
        ),
        (
            json!({"voiceId": 999, "text": "hi"}).to_string(),
            404,
            "not found",
        ),
        ("{not json".to_owned(), 400, "JSON"),
        (
            json!({"voiceId": 101, "text": "x".repeat(2 << 20)}).to_string(),
            413,
            "larger",
        ),
    ] {
        let a = tts_raw(&api, &key, body.clone().into(), true).await?;
        assert_eq!(
            a.code,
            code,
            "{}: {}",
            &body[..body.len().min(60)],
            a.message()
        );
        assert!(a.message().contains(words), "{}: {}", words, a.message());
    }

    // Voice conversion: duration kept, F0 moved to the profile.
    let source_f0 = median_f0(&speech, rate).context("no F0 in the TTS output")?;
    for (voice, target) in [(204, 240.0), (201, 85.0)] {
        let a = vc(&api, &key, &voice.to_string(), "speech.wav", a.body.clone()).await?;
        assert_eq!(a.code, 200, "{}", a.message());
        assert_eq!(a.headers["content-type"], "audio/wav");
        let (out, out_rate) = read_wav(&a.body)?;
        let out_secs = out.len() as f64 / f64::from(out_rate);
        assert!(
            (out_secs / secs - 1.0).abs() < 0.05,
            "{voice}: {out_secs} s vs {secs} s"
        );
        let f0 = median_f0(&out, out_rate).context("no F0 in the converted audio")?;
        assert!(
            (f0 - target).abs() < (source_f0 - target).abs() * 0.5,
            "voice {voice}: F0 {source_f0:.0} Hz → {f0:.0} Hz, target {target} Hz"
        );
        assert!(
            (f0 / target - 1.0).abs() < 0.15,
            "voice {voice}: {f0:.0} Hz vs {target} Hz"
        );
    }

    // FLAC, OGG/Vorbis and MP3 input.
    let flac = encode_with(
        &world,
        "flac",
        &["-s", "-f", "-o", "OUT", "IN"],
        &a.body,
        "flac",
    )
    .await?;
    let ogg = encode_with(&world, "oggenc", &["-Q", "-o", "OUT", "IN"], &a.body, "ogg").await?;
    let mp3 = encode_with(
        &world,
        "lame",
        &["--quiet", "-b", "64", "IN", "OUT"],
        &a.body,
        "mp3",
    )
    .await?;
    for (name, data) in [
        ("speech.flac", flac),
        ("speech.ogg", ogg),
        ("speech.mp3", mp3),
    ] {
        let r = vc(&api, &key, "203", name, data).await?;
        assert_eq!(r.code, 200, "{name}: {}", r.message());
        let (out, out_rate) = read_wav(&r.body)?;
        let out_secs = out.len() as f64 / f64::from(out_rate);
        assert!(
            (out_secs / secs - 1.0).abs() < 0.05,
            "{name}: {out_secs} s vs {secs} s"
        );
        let f0 = median_f0(&out, out_rate).context("no F0")?;
        assert!((f0 / 190.0 - 1.0).abs() < 0.15, "{name}: {f0:.0} Hz");
    }

    // Bad conversions.
    let silent = silent_wav();
    let mut truncated = a.body.clone();
    truncated.truncate(40);
    for (voice, name, data, code, words) in [
        (
            "203",
            "x.wav",
            b"definitely not audio".to_vec(),
            400,
            "not audio",
        ),
        ("203", "x.wav", silent.clone(), 400, "silent"),
        ("203", "x.wav", truncated, 400, "audio"),
        ("203", "x.wav", Vec::new(), 400, "empty"),
        ("101", "x.wav", a.body.clone(), 400, "text-to-speech"),
        ("999", "x.wav", a.body.clone(), 404, "not found"),
        ("abc", "x.wav", a.body.clone(), 400, "integer"),
        ("203", "x.wav", vec![1u8; 1_600_000], 413, "larger"),
    ] {
        let r = vc(&api, &key, voice, name, data).await?;
        assert_eq!(r.code, code, "{voice} {words}: {}", r.message());
        assert!(r.message().contains(words), "{words}: {}", r.message());
    }
    let res = api
        .http
        .post(api.url("/v1/vc/convert?voiceId=203"))
        .header("X-Api-Key", &key)
        .header("X-Client-Key", client_id)
        .multipart(multipart::Form::new().text("other", "x"))
        .send()
        .await?;
    assert_eq!(res.status(), 400);
    let res = api
        .http
        .post(api.url("/v1/vc/convert"))
        .header("X-Api-Key", &key)
        .header("X-Client-Key", client_id)
        .multipart(multipart::Form::new().part("file", multipart::Part::bytes(a.body.clone())))
        .send()
        .await?;
    assert_eq!(res.status(), 400);

    // Conversions are in the ledger (milliseconds of input).
    let db = world.db().await?;
    let enough = |ms: &i64| *ms as f64 >= secs * 1000.0 * 5.0 * 0.95;
    let ms = crate::support::billed_settled(&db, "speech_to_speech_milliseconds", enough).await?;
    assert!(enough(&ms), "{ms} ms recorded");
    Ok(())
}

fn silent_wav() -> Vec<u8> {
    let mut cursor = std::io::Cursor::new(Vec::new());
    {
        let mut w = hound::WavWriter::new(
            &mut cursor,
            hound::WavSpec {
                channels: 1,
                sample_rate: 16000,
                bits_per_sample: 16,
                sample_format: hound::SampleFormat::Int,
            },
        )
        .expect("wav writer");
        for _ in 0..16000 {
            w.write_sample(0i16).expect("sample");
        }
        w.finalize().expect("finalize");
    }
    cursor.into_inner()
}

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// What a stream session delivered.
#[derive(Debug, Default)]
struct Received {
    /// Binary frames, in order.
    frames: Vec<Vec<u8>>,
    /// Non-binary data frames (must stay empty).
    texts: Vec<String>,
    /// The server's close code and reason.
    close: Option<(u16, String)>,
}

impl Received {
    /// PCM after the header frame.
    fn pcm(&self) -> Vec<u8> {
        self.frames.iter().skip(1).flatten().copied().collect()
    }
}

async fn connect(api: &Api, kind: &str, query: &str) -> Result<Ws> {
    let url = format!(
        "{}/v1/tts/stream/{kind}/ws?{query}",
        api.base.replacen("http", "ws", 1)
    );
    let (ws, _) = tokio_tungstenite::connect_async(url).await?;
    Ok(ws)
}

async fn send(ws: &mut Ws, v: Value) -> Result<()> {
    ws.send(Message::Text(v.to_string().into())).await?;
    Ok(())
}

fn auth_msg(key: &str) -> Value {
    let client = key.split_once('.').map(|(id, _)| id).unwrap_or(key);
    json!({"type": "authApiKey", "clientKey": client, "apiKey": key})
}

/// Reads until the server closes (or the connection ends).
async fn receive_all(ws: &mut Ws) -> Result<Received> {
    let mut got = Received::default();
    let read = async {
        while let Some(msg) = ws.next().await {
            match msg? {
                Message::Binary(b) => got.frames.push(b.to_vec()),
                Message::Text(t) => got.texts.push(t.to_string()),
                Message::Close(frame) => {
                    got.close = Some(
                        frame
                            .map(|f| (u16::from(f.code), f.reason.to_string()))
                            .unwrap_or((1005, String::new())),
                    );
                }
                _ => {}
            }
        }
        anyhow::Ok(())
    };
    tokio::time::timeout(Duration::from_secs(60), read)
        .await
        .context("the server neither finished nor closed")??;
    Ok(got)
}

/// Pearson correlation of two signals over their common length.
fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    if n == 0 {
        return 0.0;
    }
    let (a, b) = (&a[..n], &b[..n]);
    let mean = |x: &[f64]| x.iter().sum::<f64>() / n as f64;
    let (ma, mb) = (mean(a), mean(b));
    let (mut ab, mut aa, mut bb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        ab += (x - ma) * (y - mb);
        aa += (x - ma) * (x - ma);
        bb += (y - mb) * (y - mb);
    }
    if aa == 0.0 || bb == 0.0 {
        return 0.0;
    }
    ab / (aa.sqrt() * bb.sqrt())
}

/// The raw PCM of /v1/tts/convert for `text`.
async fn tts_pcm(api: &Api, key: &str, voice: i64, text: &str) -> Result<Vec<u8>> {
    let wav = tts(api, key, voice, text).await?;
    Ok(wav[44..].to_vec())
}

fn check_header(frame: &[u8], rate: u32) {
    assert_eq!(frame.len(), 44, "first frame is the WAV header");
    assert_eq!(&frame[0..4], b"RIFF");
    assert_eq!(&frame[8..12], b"WAVE");
    assert_eq!(u16::from_le_bytes([frame[22], frame[23]]), 1);
    assert_eq!(
        u32::from_le_bytes([frame[24], frame[25], frame[26], frame[27]]),
        rate
    );
    assert_eq!(u16::from_le_bytes([frame[34], frame[35]]), 16);
}

#[tokio::test]
async fn tts_streams_simplex_and_duplex() -> Result<()> {
    let mut world = World::new("voicews").await?;
    let key = world.create_key("voice", false).await?;
    let api = world.start_api().await?;
    let (a, b, c) = (
        "The first sentence comes first.",
        "Then a second one follows it!",
        "And a third closes the stream?",
    );

    // Simplex: header frame, then exactly the PCM of the same sentences, in
    // order, then a close 1000 sent by the server.
    let mut ws = connect(&api, "simplex", "voiceId=102").await?;
    send(&mut ws, auth_msg(&key)).await?;
    send(
        &mut ws,
        json!({"type": "convert", "text": format!("{a} {b} {c}")}),
    )
    .await?;
    let got = receive_all(&mut ws).await?;
    assert_eq!(
        got.close.as_ref().map(|c| c.0),
        Some(1000),
        "{:?}",
        got.close
    );
    assert!(got.texts.is_empty(), "only binary frames: {:?}", got.texts);
    check_header(&got.frames[0], 22050);
    assert!(got.frames.len() > 4, "audio comes in several frames");
    let mut expected = Vec::new();
    let mut bounds = Vec::new();
    for s in [a, b, c] {
        expected.extend(tts_pcm(&api, &key, 102, s).await?);
        bounds.push(expected.len());
    }
    let pcm = got.pcm();
    assert_eq!(
        pcm.len(),
        expected.len(),
        "the stream carries as many samples as the three sentences"
    );
    // Each sentence's stretch of the stream is that sentence's speech, in order.
    // Compared by correlation, not byte for byte: the voice's breath noise
    // (espeak-ng 1.51 `rand()`) made two cold CI runs differ from the reference by
    // a few samples of the same speech, lengths equal.
    let samples = |b: &[u8]| -> Vec<f64> {
        b.chunks_exact(2)
            .map(|c| f64::from(i16::from_le_bytes([c[0], c[1]])))
            .collect()
    };
    let starts: Vec<usize> = std::iter::once(0).chain(bounds.iter().copied()).collect();
    let references: Vec<Vec<f64>> = starts
        .windows(2)
        .map(|w| samples(&expected[w[0]..w[1]]))
        .collect();
    for (i, w) in starts.windows(2).enumerate() {
        let streamed = samples(&pcm[w[0]..w[1]]);
        let own = correlation(&streamed, &references[i]);
        assert!(
            own > 0.98,
            "sentence {i} of the stream is its own speech: correlation {own:.4} (first byte difference at {:?}, frame sizes {:?})",
            pcm.iter().zip(&expected).position(|(x, y)| x != y),
            got.frames.iter().map(Vec::len).collect::<Vec<_>>()
        );
        for (j, other) in references.iter().enumerate() {
            if j != i {
                let c = correlation(&streamed, other);
                assert!(
                    c < own - 0.3,
                    "sentence {i} is not sentence {j}'s speech: {c:.3} vs {own:.3}"
                );
            }
        }
    }

    // Resampled to sr=44100: header says so, twice the samples.
    let mut ws = connect(
        &api,
        "simplex",
        "voiceId=102&format=wav&sr=44100&voiceType=system",
    )
    .await?;
    send(&mut ws, auth_msg(&key)).await?;
    send(&mut ws, json!({"type": "convert", "text": a})).await?;
    let got = receive_all(&mut ws).await?;
    assert_eq!(got.close.as_ref().map(|c| c.0), Some(1000));
    check_header(&got.frames[0], 44100);
    let single = tts_pcm(&api, &key, 102, a).await?.len() as f64;
    assert!((got.pcm().len() as f64 / single - 2.0).abs() < 0.01);

    // format=mp3: an MP3 stream (lame) that decodes to the same length of speech.
    let mut ws = connect(&api, "simplex", "voiceId=102&format=mp3&sr=44100").await?;
    send(&mut ws, auth_msg(&key)).await?;
    send(
        &mut ws,
        json!({"type": "convert", "text": format!("{a} {b}")}),
    )
    .await?;
    let got = receive_all(&mut ws).await?;
    assert_eq!(
        got.close.as_ref().map(|c| c.0),
        Some(1000),
        "{:?}",
        got.close
    );
    let mp3: Vec<u8> = got.frames.iter().flatten().copied().collect();
    assert!(
        mp3.len() > 1000 && mp3[0] == 0xFF && mp3[1] & 0xE0 == 0xE0,
        "MP3 frame sync"
    );
    let mp3_path = world.path("stream.mp3");
    std::fs::write(&mp3_path, &mp3)?;
    let wav_path = world.path("stream-decoded.wav");
    let out = tokio::process::Command::new("lame")
        .args(["--quiet", "--decode"])
        .arg(&mp3_path)
        .arg(&wav_path)
        .output()
        .await?;
    assert!(out.status.success());
    let (decoded, decoded_rate) = read_wav(&std::fs::read(&wav_path)?)?;
    assert_eq!(decoded_rate, 44100);
    let spoken = (tts_pcm(&api, &key, 102, a).await?.len()
        + tts_pcm(&api, &key, 102, b).await?.len()) as f64
        / 2.0
        / 22050.0;
    let mp3_secs = decoded.len() as f64 / 44100.0;
    assert!(
        (mp3_secs / spoken - 1.0).abs() < 0.1,
        "{mp3_secs} s vs {spoken} s"
    );

    // Duplex, two sessions at once: each gets its own texts, in order, then
    // close → the server flushes and closes with 1000.
    let duplex = |texts: Vec<&'static str>| {
        let key = key.clone();
        let api = Api::new(api.base.clone());
        async move {
            let mut ws = connect(&api, "duplex", "voiceId=101").await?;
            send(&mut ws, auth_msg(&key)).await?;
            for t in &texts {
                send(&mut ws, json!({"type": "convert", "text": t})).await?;
            }
            send(&mut ws, json!({"type": "close"})).await?;
            let got = receive_all(&mut ws).await?;
            let mut expected = Vec::new();
            for t in &texts {
                expected.extend(tts_pcm(&api, &key, 101, t).await?);
            }
            anyhow::Ok((got, expected))
        }
    };
    let (one, two) = tokio::join!(duplex(vec![a, b, c]), duplex(vec![c, a]));
    for (got, expected) in [one?, two?] {
        assert_eq!(
            got.close.as_ref().map(|c| c.0),
            Some(1000),
            "{:?}",
            got.close
        );
        check_header(&got.frames[0], 22050);
        assert!(got.texts.is_empty());
        assert!(
            got.pcm() == expected,
            "duplex audio in order ({} vs {} bytes)",
            got.pcm().len(),
            expected.len()
        );
    }

    // Duplex: frames flow back while the client keeps the stream open.
    let mut ws = connect(&api, "duplex", "voiceId=101").await?;
    send(&mut ws, auth_msg(&key)).await?;
    send(&mut ws, json!({"type": "convert", "text": a})).await?;
    let first = tokio::time::timeout(Duration::from_secs(10), ws.next()).await?;
    assert!(matches!(first, Some(Ok(Message::Binary(_)))), "{first:?}");
    // The client may also just drop the connection.
    drop(ws);

    // Errors: a non-1000 close with a reason.
    let other = world.create_key("other", false).await?;
    let other_client = other
        .split_once('.')
        .map(|(id, _)| id.to_owned())
        .unwrap_or_default();
    let cases: Vec<(&str, &str, Vec<Value>, u16, &str)> = vec![
        (
            "simplex",
            "voiceId=101",
            vec![json!({"type": "authApiKey", "clientKey": other_client, "apiKey": key})],
            1008,
            "Authentication",
        ),
        (
            "simplex",
            "voiceId=101",
            vec![json!({"type": "authApiKey", "clientKey": "x", "apiKey": "x.y"})],
            1008,
            "Authentication",
        ),
        (
            "duplex",
            "voiceId=101",
            vec![json!({"type": "convert", "text": "hi"})],
            4400,
            "authApiKey",
        ),
        (
            "duplex",
            "voiceId=101",
            vec![auth_msg(&key), json!({"type": "shout"})],
            4400,
            "Unknown message",
        ),
        (
            "simplex",
            "voiceId=101",
            vec![auth_msg(&key), json!({"type": "close"})],
            4400,
            "convert",
        ),
        (
            "duplex",
            "voiceId=101",
            vec![auth_msg(&key), json!({"type": "convert", "text": ""})],
            4400,
            "non-empty",
        ),
        (
            "duplex",
            "voiceId=101",
            vec![auth_msg(&key), auth_msg(&key)],
            4400,
            "authenticated",
        ),
        (
            "simplex",
            "voiceId=999",
            vec![auth_msg(&key)],
            4404,
            "not found",
        ),
        (
            "simplex",
            "voiceId=203",
            vec![auth_msg(&key)],
            4400,
            "voice-conversion",
        ),
        ("simplex", "", vec![auth_msg(&key)], 4400, "voiceId"),
        (
            "simplex",
            "voiceId=101&sr=8000",
            vec![auth_msg(&key)],
            4400,
            "sr",
        ),
    ];
    for (kind, query, msgs, code, words) in cases {
        let mut ws = connect(&api, kind, query).await?;
        for m in msgs {
            // The server may already have closed; a failed send is fine.
            let _ = send(&mut ws, m).await;
        }
        let got = receive_all(&mut ws).await?;
        let (c, reason) = got.close.clone().unwrap_or_default();
        assert_eq!(c, code, "{kind}?{query}: {:?}", got.close);
        assert!(reason.contains(words), "{kind}?{query}: {reason}");
        assert!(got.frames.is_empty());
    }
    // Bad JSON.
    let mut ws = connect(&api, "duplex", "voiceId=101").await?;
    send(&mut ws, auth_msg(&key)).await?;
    ws.send(Message::Text("{oops".into())).await?;
    let got = receive_all(&mut ws).await?;
    assert_eq!(got.close.map(|c| c.0), Some(4400));

    // The API is still healthy after all of that.
    let (code, _) = get_json(&api, &key, "/v1/tts/voices").await?;
    assert_eq!(code, 200);
    Ok(())
}

pub(crate) async fn create_job(api: &Api, key: &str, body: &Value) -> Result<(u16, Value)> {
    let res = api
        .keyed(reqwest::Method::POST, "/v1/jobs/voice/translate", key)
        .json(body)
        .send()
        .await?;
    Ok((
        res.status().as_u16(),
        res.json().await.unwrap_or(Value::Null),
    ))
}

pub(crate) async fn upload_to(url: &str, signature: Option<&str>, data: Vec<u8>) -> Result<u16> {
    let mut req = fresh_client()
        .put(url)
        .header("Content-Type", "application/octet-stream")
        .body(data);
    if let Some(s) = signature {
        req = req.header("Authorization", format!("DeepL-Signature {s}"));
    }
    Ok(req.send().await?.status().as_u16())
}

/// Polls until no result is pending, uploaded or processing.
pub(crate) async fn wait_job(api: &Api, key: &str, id: &str) -> Result<Value> {
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        let (code, body) = api
            .get(key, &format!("/v1/jobs/voice/translate/{}", id))
            .await?;
        if code != 200 {
            bail!("status answered {code}: {body}");
        }
        let done = body["results"].as_array().is_some_and(|r| {
            r.iter().all(|x| {
                matches!(
                    x["status"].as_str(),
                    Some("complete" | "failed" | "downloaded")
                )
            })
        });
        if done {
            return Ok(body);
        }
        if std::time::Instant::now() > deadline {
            bail!("job {id} not done: {body}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn voice_translation_jobs_on_the_queue() -> Result<()> {
    let mut world = World::new("voicejob").await?;
    let key = world.create_key("voice", false).await?;
    let other = {
        let out = world
            .tolk(&[
                "admin",
                "create-key",
                "--label",
                "o",
                "--organization",
                "other",
            ])
            .output()
            .await?;
        String::from_utf8(out.stdout)?.trim().to_owned()
    };
    let api = world.start_api().await?;
    world.start_worker("voice")?;

    // Real speech: espeak-ng through our own TTS endpoint.
    let speech = tts(&api, &key, 101, "I would like a cup of coffee please.").await?;
    let (samples, rate) = read_wav(&speech)?;
    let speech_ms = samples.len() as i64 * 1000 / i64::from(rate);

    let targets = json!([
        {"language": "en", "type": "text/plain"},
        {"language": "es", "type": "text/plain"},
        {"language": "es", "type": "audio/pcm;encoding=s16le;rate=16000"},
        {"language": "ES", "type": "audio/wav"},
    ]);
    let request = json!({
        "source_file": {"name": "speech.wav", "content_type": "audio/wav", "content_length": speech.len()},
        "parameters": {"source_language": "en"},
        "targets": targets,
    });
    let (code, created) = create_job(&api, &key, &request).await?;
    assert_eq!(code, 201, "{created}");
    let id = created["job_id"].as_str().context("job_id")?.to_owned();
    assert!(uuid::Uuid::parse_str(&id).is_ok());
    let upload_url = created["upload_url"]
        .as_str()
        .context("upload_url")?
        .to_owned();
    let signature = created["signature"]
        .as_str()
        .context("signature")?
        .to_owned();

    // Before the upload: pending, and only for this organization.
    let (code, body) = api
        .get(&key, &format!("/v1/jobs/voice/translate/{}", &id))
        .await?;
    assert_eq!(code, 200);
    assert_eq!(
        body["results"],
        json!([{"status": "pending"}, {"status": "pending"}, {"status": "pending"}, {"status": "pending"}])
    );
    assert_eq!(body["product"], "voice");
    assert_eq!(body["targets"][3]["type"], "audio/wav");
    assert_eq!(
        api.get(&other, &format!("/v1/jobs/voice/translate/{}", &id))
            .await?
            .0,
        404
    );
    assert_eq!(
        api.get(
            &key,
            &format!(
                "/v1/jobs/voice/translate/{}",
                "a74d88fb-ed2a-4943-a664-a4512398b994"
            )
        )
        .await?
        .0,
        404
    );

    // The upload needs the signature.
    assert_eq!(upload_to(&upload_url, None, speech.clone()).await?, 403);
    assert_eq!(
        upload_to(&upload_url, Some("1.abc"), speech.clone()).await?,
        403
    );
    assert_eq!(
        upload_to(&upload_url, Some(&signature), speech.clone()).await?,
        200
    );
    assert_eq!(
        upload_to(&upload_url, Some(&signature), speech.clone()).await?,
        400
    );

    let done = wait_job(&api, &key, &id).await?;
    let results = done["results"].as_array().context("results")?;
    assert_eq!(results.len(), 4);
    let mut outputs = Vec::new();
    for r in results {
        assert_eq!(r["status"], "complete", "{done}");
        let url = r["download_url"].as_str().context("download_url")?;
        let sig = r["signature"].as_str().context("signature")?;
        let res = fresh_client().get(url).send().await?;
        assert_eq!(res.status(), 403, "a download needs its signature");
        let res = fresh_client()
            .get(url)
            .header("Authorization", format!("DeepL-Signature {sig}"))
            .send()
            .await?;
        assert_eq!(res.status(), 200);
        let ct = res.headers()["content-type"].to_str()?.to_owned();
        outputs.push((ct, res.bytes().await?.to_vec()));
    }
    // Recognition heard the key words; translation made Spanish of them.
    let transcript = String::from_utf8(outputs[0].1.clone())?;
    assert!(outputs[0].0.starts_with("text/plain"));
    assert!(
        transcript.contains("coffee") && transcript.contains("cup"),
        "{transcript}"
    );
    let spanish = String::from_utf8(outputs[1].1.clone())?.to_lowercase();
    assert!(
        spanish.contains("café") || spanish.contains("cafe"),
        "{spanish}"
    );
    assert!(spanish.contains("taza"), "{spanish}");
    // Spanish speech: raw 16 kHz PCM, and a WAV file.
    assert_eq!(outputs[2].0, "audio/pcm;encoding=s16le;rate=16000");
    let pcm_secs = outputs[2].1.len() as f64 / 2.0 / 16000.0;
    assert!((1.0..10.0).contains(&pcm_secs), "{pcm_secs} s");
    let (es, es_rate) = read_wav(&outputs[3].1)?;
    assert_eq!(outputs[3].0, "audio/wav");
    assert!((es.len() as f64 / f64::from(es_rate) / pcm_secs - 1.0).abs() < 0.02);
    // Downloaded results say so.
    let (_, after) = api
        .get(&key, &format!("/v1/jobs/voice/translate/{}", &id))
        .await?;
    assert_eq!(after["results"][0]["status"], "downloaded");
    assert!(after["usage"]["storage_used"].as_i64().unwrap_or(0) > speech.len() as i64);

    // The ledger has the recognised milliseconds, once.
    let db = world.db().await?;
    let billed: Vec<i64> = sqlx::query_scalar(
        "SELECT amount FROM usage_events WHERE kind = 'speech_to_text_milliseconds' AND document_id = $1",
    )
    .bind(&id)
    .fetch_all(&db)
    .await?;
    assert_eq!(billed, [speech_ms]);

    // Corrupt audio: the job fails with a message, per target.
    let (code, created) = create_job(
        &api,
        &key,
        &json!({
            "source_file": {"name": "x.mp3", "content_type": "audio/mpeg", "content_length": 100},
            "targets": [{"language": "es", "type": "text/plain"}],
        }),
    )
    .await?;
    assert_eq!(code, 201, "{created}");
    let bad_id = created["job_id"].as_str().context("job_id")?.to_owned();
    let code = upload_to(
        created["upload_url"].as_str().context("url")?,
        created["signature"].as_str(),
        b"this is not audio at all".to_vec(),
    )
    .await?;
    assert_eq!(code, 200);
    let failed = wait_job(&api, &key, &bad_id).await?;
    assert_eq!(failed["results"][0]["status"], "failed");
    assert!(
        failed["results"][0]["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("audio"),
        "{failed}"
    );

    // Bad requests.
    let file = json!({"name": "a.wav", "content_type": "audio/wav", "content_length": 1000});
    for (body, code, words) in [
        (
            json!({"source_file": file, "parameters": {"source_language": "de"}, "targets": [{"language": "es", "type": "text/plain"}]}),
            400,
            "speech recognition",
        ),
        (
            json!({"source_file": file, "targets": [{"language": "es", "type": "audio/opus"}]}),
            400,
            "not produced",
        ),
        (
            json!({"source_file": file, "targets": [{"language": "es", "type": "audio/nonsense"}]}),
            400,
            "/targets/0/type",
        ),
        (json!({"source_file": file, "targets": []}), 400, "/targets"),
        (
            json!({"source_file": file, "targets": [{"language": "xx", "type": "text/plain"}]}),
            400,
            "/targets/0/language",
        ),
        (
            json!({"targets": [{"language": "es", "type": "text/plain"}]}),
            400,
            "/source_file",
        ),
        (
            json!({"source_file": {"name": "a.wav", "content_type": "video/mp4", "content_length": 5}, "targets": [{"language": "es", "type": "text/plain"}]}),
            400,
            "content_type",
        ),
        (
            json!({"source_file": {"name": "a.wav", "content_type": "audio/wav", "content_length": 900_000_000}, "targets": [{"language": "es", "type": "text/plain"}]}),
            413,
            "content_length",
        ),
    ] {
        let (c, b) = create_job(&api, &key, &body).await?;
        assert_eq!(c, code, "{body}: {b}");
        assert!(
            b["message"].as_str().unwrap_or_default().contains(words),
            "{words}: {b}"
        );
    }
    let res = api
        .http
        .post(api.url("/v1/jobs/voice/translate"))
        .json(&request)
        .send()
        .await?;
    assert_eq!(res.status(), 403);
    Ok(())
}

#[tokio::test]
async fn voice_jobs_upload_straight_to_an_s3_bucket() -> Result<()> {
    let mut world = World::new("voices3").await?;
    let server = crate::s3::start_s3(&world).await?;
    world.extra_env = crate::s3::s3_env(&server);
    world.object_store = format!("s3://{}", crate::s3::BUCKET);
    let key = world.create_key("voice", false).await?;
    let api = world.start_api().await?;
    world.start_worker("voice")?;

    let speech = tts(&api, &key, 101, "I would like a cup of coffee please.").await?;
    let res = api
        .keyed(reqwest::Method::POST, "/v1/jobs/voice/translate?include=signed_url", &key)
        .json(&json!({
            "source_file": {"name": "speech.wav", "content_type": "audio/wav", "content_length": speech.len()},
            "targets": [{"language": "en", "type": "text/plain"}],
        }))
        .send()
        .await?;
    assert_eq!(res.status(), 201);
    let created: Value = res.json().await?;
    let id = created["job_id"].as_str().context("job_id")?.to_owned();
    let direct = created["signed_upload_url"]
        .as_str()
        .context("signed_upload_url")?;
    assert!(direct.starts_with(&server.endpoint), "{direct}");
    assert!(direct.contains("X-Amz-Signature"), "{direct}");

    // The client uploads to the bucket itself, without any header.
    let res = fresh_client()
        .put(direct)
        .body(speech.clone())
        .send()
        .await?;
    assert!(res.status().is_success(), "{}", res.status());

    // Status calls notice the object, enqueue the job, and report the result.
    let done = wait_job(&api, &key, &id).await?;
    assert_eq!(done["results"][0]["status"], "complete", "{done}");
    let res = api
        .keyed(
            reqwest::Method::GET,
            &format!("/v1/jobs/voice/translate/{id}?include=signed_url"),
            &key,
        )
        .send()
        .await?;
    let body: Value = res.json().await?;
    let url = body["results"][0]["signed_download_url"]
        .as_str()
        .context("signed_download_url")?;
    assert!(url.starts_with(&server.endpoint), "{url}");
    let text = fresh_client().get(url).send().await?.text().await?;
    assert!(text.contains("coffee"), "{text}");
    Ok(())
}

/// About `seconds` of English speech as text (espeak-ng speaks ~15 characters a second).
fn speech_text(seconds: usize) -> String {
    "The quick brown fox jumps over the lazy dog near the river bank. "
        .repeat(seconds * 15 / 65 + 1)
}

#[tokio::test]
async fn long_text_to_speech_streams_within_the_audio_limit() -> Result<()> {
    let mut world = World::new("tts_long").await?;
    world
        .extra_env
        .push(("TOLK_MAX_VOICE_SECONDS".into(), "100".into()));
    let key = world.create_key("tts", false).await?;
    let api = world.start_api().await?;

    // Longer than 30 s: streamed behind a streaming WAV header, no size headers.
    let body = json!({"voiceId": 101, "text": speech_text(60)}).to_string();
    let a = tts_raw(&api, &key, body.into(), true).await?;
    assert_eq!(a.code, 200, "{}", a.message());
    assert_eq!(a.headers["content-type"], "audio/wav");
    assert!(!a.headers.contains_key("audio-size-bytes"));
    assert_eq!(&a.body[..4], b"RIFF");
    assert_eq!(&a.body[36..40], b"data");
    let pcm_secs = (a.body.len() - 44) as f64 / 2.0 / 22050.0;
    assert!((30.0..100.0).contains(&pcm_secs), "{pcm_secs} s");
    let samples: Vec<i16> = a.body[44..]
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect();
    assert!(samples.iter().any(|s| s.unsigned_abs() > 1000), "silent");

    // A text that cannot fit the limit: 413 before any synthesis.
    let body = json!({"voiceId": 101, "text": "word ".repeat(700)}).to_string();
    let a = tts_raw(&api, &key, body.into(), true).await?;
    assert_eq!(a.code, 413);
    assert!(a.message().contains("100 seconds"), "{}", a.message());

    // Speech that passes the estimate but outgrows the limit while streaming:
    // the stream ends in an error, never a WAV that looks complete.
    let body = json!({"voiceId": 101, "text": speech_text(160)}).to_string();
    let mut req = fresh_client()
        .post(api.url("/v1/tts/convert"))
        .header("Content-Type", "application/json")
        .body(body);
    for (k, v) in headers(&key) {
        req = req.header(k, v);
    }
    let res = req.send().await?;
    assert_eq!(res.status(), 200);
    assert!(
        res.bytes().await.is_err(),
        "a truncated stream must not end cleanly"
    );
    Ok(())
}

/// A world with an API for the stream tests; `env` adds settings.
async fn stream_world(tag: &str, env: &[(&str, &str)]) -> Result<(World, Api, String)> {
    let mut world = World::new(tag).await?;
    for (k, v) in env {
        world.extra_env.push(((*k).into(), (*v).into()));
    }
    let key = world.create_key("stream", false).await?;
    let api = world.start_api().await?;
    Ok((world, api, key))
}

/// The first binary frame of a stream (the WAV header).
async fn first_binary(ws: &mut Ws) -> Result<()> {
    while let Some(msg) = ws.next().await {
        if let Message::Binary(_) = msg? {
            return Ok(());
        }
    }
    bail!("the stream ended before any audio")
}

#[tokio::test]
async fn a_stream_answers_pings_while_it_sends_audio() -> Result<()> {
    let (_world, api, key) = stream_world("tts_ping", &[]).await?;
    let mut ws = connect(&api, "simplex", "voiceId=101").await?;
    send(&mut ws, auth_msg(&key)).await?;
    send(
        &mut ws,
        json!({"type": "convert", "text": speech_text(300)}),
    )
    .await?;
    first_binary(&mut ws).await?;
    ws.send(Message::Ping(b"are you there".to_vec().into()))
        .await?;
    let (mut pong_at, mut frames, mut close) = (None, 0usize, None);
    while let Some(msg) = ws.next().await {
        match msg? {
            Message::Binary(_) => frames += 1,
            Message::Pong(p) if p.as_ref() == b"are you there" => pong_at = Some(frames),
            Message::Close(f) => close = f.map(|f| u16::from(f.code)),
            _ => {}
        }
    }
    let pong_at = pong_at.context("the ping was never answered")?;
    assert!(
        pong_at < frames,
        "pong after frame {pong_at} of {frames}: not while streaming"
    );
    assert_eq!(close, Some(1000));
    Ok(())
}

#[tokio::test]
async fn a_client_close_stops_the_stream_at_once() -> Result<()> {
    let (_world, api, key) = stream_world("tts_client_close", &[]).await?;
    let mut ws = connect(&api, "duplex", "voiceId=101").await?;
    send(&mut ws, auth_msg(&key)).await?;
    // About ten minutes of speech: 26 MB of PCM if it all came.
    send(
        &mut ws,
        json!({"type": "convert", "text": speech_text(600)}),
    )
    .await?;
    first_binary(&mut ws).await?;
    ws.send(Message::Close(None)).await?;
    let got = receive_all(&mut ws).await?;
    let seconds = got.frames.iter().map(Vec::len).sum::<usize>() as f64 / 2.0 / 22050.0;
    assert!(
        seconds < 300.0,
        "{seconds} s of audio after the client closed"
    );
    Ok(())
}

#[tokio::test]
async fn an_idle_duplex_stream_is_closed() -> Result<()> {
    let (_world, api, key) =
        stream_world("tts_idle", &[("TOLK_VOICE_STREAM_IDLE_SECS", "1")]).await?;
    let mut ws = connect(&api, "duplex", "voiceId=101").await?;
    send(&mut ws, auth_msg(&key)).await?;
    let got = receive_all(&mut ws).await?;
    let (code, reason) = got.close.context("no close frame")?;
    assert_eq!(code, 4408, "{reason}");
    assert!(reason.contains("idle"), "{reason}");
    Ok(())
}

/// A client frame: FIN, `opcode`, masked as clients must.
fn client_frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mask = [0x12u8, 0x34, 0x56, 0x78];
    let mut out = vec![0x80 | opcode];
    match payload.len() {
        n if n < 126 => out.push(0x80 | n as u8),
        n if n <= 0xFFFF => {
            out.push(0x80 | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(0x80 | 127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(&mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out
}

#[tokio::test]
async fn an_oversized_stream_message_is_closed_with_1009() -> Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (_world, api, key) = stream_world("tts_too_big", &[]).await?;
    // A bare client, so the test reads the server's close even while its own
    // oversized message is cut off.
    let addr = api.base.trim_start_matches("http://").to_owned();
    let mut conn = tokio::net::TcpStream::connect(&addr).await?;
    conn.write_all(
        format!(
            "GET /v1/tts/stream/duplex/ws?voiceId=101 HTTP/1.1\r\nHost: {addr}\r\n\
             Upgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .as_bytes(),
    )
    .await?;
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut b = [0u8; 1];
        if conn.read(&mut b).await? == 0 {
            bail!("no upgrade answer: {}", String::from_utf8_lossy(&head));
        }
        head.push(b[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 101"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    conn.write_all(&client_frame(0x1, auth_msg(&key).to_string().as_bytes()))
        .await?;
    // The header of a 17 MiB text message, and its first bytes.
    let mut big = client_frame(0x1, &[]);
    big.truncate(1);
    big.push(0x80 | 127);
    big.extend_from_slice(&(17u64 << 20).to_be_bytes());
    big.extend_from_slice(&[0, 0, 0, 0]);
    big.extend_from_slice(&[b'a'; 4096]);
    conn.write_all(&big).await?;
    let mut frames = Vec::new();
    let read = async {
        let mut buf = vec![0u8; 4096];
        loop {
            let n = conn.read(&mut buf).await?;
            if n == 0 {
                return anyhow::Ok(());
            }
            frames.extend_from_slice(&buf[..n]);
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(10), read).await;
    // The server's frames are unmasked: find the close frame (opcode 8).
    let mut at = 0;
    let mut close = None;
    while at + 2 <= frames.len() {
        let (opcode, len) = (frames[at] & 0x0F, usize::from(frames[at + 1] & 0x7F));
        let (start, len) = match len {
            126 if at + 4 <= frames.len() => (
                at + 4,
                usize::from(u16::from_be_bytes([frames[at + 2], frames[at + 3]])),
            ),
            127 => break,
            n => (at + 2, n),
        };
        if opcode == 8 && start + 2 <= frames.len() {
            close = Some(u16::from_be_bytes([frames[start], frames[start + 1]]));
        }
        at = start + len;
    }
    assert_eq!(close, Some(1009), "server frames: {frames:?}");
    Ok(())
}
