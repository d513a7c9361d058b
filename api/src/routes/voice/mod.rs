//! The voice service (`/v1`): voice lists, text to speech, voice conversion,
//! WebSocket streaming of text to speech, and voice translation jobs.
//!
//! Authentication is by the headers `X-Api-Key` (the whole key,
//! `{key_id}.{secret}`) and `X-Client-Key` or `X-Client-ID` (its key id); the
//! two must name the same active key of the key store. WebSockets
//! authenticate by their first message instead.

mod auth;
pub mod jobs;
mod pace;
mod stream;
mod tts;
mod vc;
mod voices;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use tolk_voice::asr::Recognizer;
use tolk_voice::tts::Espeak;

pub use auth::VoiceAuth;

use crate::AppState;

/// Largest JSON body of `POST /v1/tts/convert`.
pub const TTS_BODY_LIMIT: usize = 1024 * 1024;

/// Settings and engines of the voice service.
#[derive(Debug, Clone)]
pub struct VoiceSettings {
    /// Text to speech.
    pub espeak: Espeak,
    /// The `lame` program (MP3 output of streams with `format=mp3`).
    pub lame: std::path::PathBuf,
    /// Speech recognition (checked when a voice job is created).
    pub recognizer: Recognizer,
    /// Largest upload to `POST /v1/vc/convert` and to a voice job, in bytes.
    pub max_upload_bytes: usize,
    /// Longest audio accepted by voice conversion, in seconds.
    pub max_audio_seconds: u32,
    /// How long a duplex stream may sit idle (no client message, no audio
    /// sent) before it is closed with 4408.
    pub stream_idle: std::time::Duration,
    /// Public base URL of the API (`https://api.example.com`), used in the
    /// upload and download URLs of voice jobs; without it, the request's Host.
    pub public_url: Option<String>,
}

impl Default for VoiceSettings {
    fn default() -> Self {
        Self {
            espeak: Espeak::default(),
            lame: "lame".into(),
            recognizer: Recognizer::default(),
            max_upload_bytes: 20 * 1024 * 1024,
            max_audio_seconds: 600,
            stream_idle: std::time::Duration::from_secs(60),
            public_url: None,
        }
    }
}

/// Routes of the voice service; `upload_limit` bounds voice-conversion uploads.
pub fn router(upload_limit: usize) -> Router<AppState> {
    Router::new()
        .route("/v1/tts/voices", get(voices::tts_voices))
        .route("/v1/vc/voices", get(voices::vc_voices))
        .route(
            "/v1/tts/convert",
            post(tts::convert).layer(DefaultBodyLimit::max(TTS_BODY_LIMIT)),
        )
        .route(
            "/v1/vc/convert",
            post(vc::convert).layer(DefaultBodyLimit::max(upload_limit)),
        )
        .route("/v1/tts/stream/simplex/ws", get(stream::simplex))
        .route("/v1/tts/stream/duplex/ws", get(stream::duplex))
        .merge(jobs::router(upload_limit))
}

/// A `voiceId` value as an integer, or a 400 naming the problem.
fn parse_voice_id(raw: Option<&str>) -> Result<i64, crate::ApiError> {
    let raw = raw.ok_or_else(|| {
        crate::ApiError::BadRequest("Missing query parameter voiceId.".to_owned())
    })?;
    raw.trim().parse::<i64>().map_err(|_| {
        crate::ApiError::BadRequest(format!("voiceId must be an integer, got {raw:?}."))
    })
}

/// Maps an engine error to the API's.
fn voice_error(e: tolk_voice::VoiceError) -> crate::ApiError {
    if e.is_client_error() {
        crate::ApiError::BadRequest(e.to_string())
    } else {
        crate::ApiError::failed("speech processing", e)
    }
}
