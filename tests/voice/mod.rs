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

mod jobs;
mod stream;
mod tts;

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

/// About `seconds` of English speech as text (espeak-ng speaks ~15 characters a second).
fn speech_text(seconds: usize) -> String {
    "The quick brown fox jumps over the lazy dog near the river bank. "
        .repeat(seconds * 15 / 65 + 1)
}
