//! `POST /v1/tts/convert`: JSON `{voiceId, text}` → a WAV file.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tolk_voice::voices::{self, TtsVoice, VoiceLookup};
use tolk_voice::{tts, wav};

use super::{VoiceAuth, voice_error};
use crate::{ApiError, AppState};

/// Resolves a TTS voice id: 404 when unknown, 400 when it is a conversion voice.
pub(super) fn tts_voice(id: i64) -> Result<&'static TtsVoice, ApiError> {
    match voices::tts_voice(id) {
        VoiceLookup::Found(v) => Ok(v),
        VoiceLookup::OtherKind => Err(ApiError::BadRequest(format!(
            "Voice {id} is a voice-conversion voice; choose one from GET /v1/tts/voices."
        ))),
        VoiceLookup::Unknown => Err(ApiError::NotFound(format!(
            "Voice {id} not found; choose one from GET /v1/tts/voices."
        ))),
    }
}

/// `{voiceId, text}` from a JSON body, with a message naming what is wrong.
fn parse_body(body: &[u8]) -> Result<(i64, String), ApiError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::BadRequest(format!("The body must be JSON: {e}")))?;
    let obj = value
        .as_object()
        .ok_or_else(|| ApiError::BadRequest("The body must be a JSON object.".to_owned()))?;
    let voice_id = match obj.get("voiceId") {
        None | Some(Value::Null) => {
            return Err(ApiError::BadRequest("Missing field voiceId.".to_owned()));
        }
        Some(v) => v
            .as_i64()
            .ok_or_else(|| ApiError::BadRequest("voiceId must be an integer.".to_owned()))?,
    };
    let text = match obj.get("text") {
        None | Some(Value::Null) => {
            return Err(ApiError::BadRequest("Missing field text.".to_owned()));
        }
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(ApiError::BadRequest("text must be a string.".to_owned())),
    };
    if text.trim().is_empty() {
        return Err(ApiError::BadRequest("text must not be empty.".to_owned()));
    }
    Ok((voice_id, text))
}

/// A WAV response with the headers the voice clients read.
pub(super) fn wav_response(file: Vec<u8>, duration_ms: u64) -> Response {
    let size = file.len();
    let mut res = file.into_response();
    let headers = res.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("audio/wav"));
    headers.insert("audio-duration-ms", HeaderValue::from(duration_ms));
    headers.insert("audio-size-bytes", HeaderValue::from(size as u64));
    res
}

pub(super) async fn convert(
    State(state): State<AppState>,
    _auth: VoiceAuth,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body.map_err(|e| {
        if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::TooLarge(format!(
                "The request body is larger than {} bytes; use the streaming endpoint for long texts.",
                super::TTS_BODY_LIMIT
            ))
        } else {
            ApiError::BadRequest(e.body_text())
        }
    })?;
    let (voice_id, text) = parse_body(&body)?;
    let voice = tts_voice(voice_id)?;
    let pcm = state
        .voice
        .espeak
        .synthesize(voice, &text)
        .await
        .map_err(voice_error)?;
    let file = wav::encode(&pcm, tts::SAMPLE_RATE).map_err(voice_error)?;
    Ok(wav_response(
        file,
        wav::duration_ms(pcm.len(), tts::SAMPLE_RATE),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_errors_name_the_field() {
        let msg = |b: &str| parse_body(b.as_bytes()).unwrap_err().to_string();
        assert!(msg("nope").contains("JSON"));
        assert!(msg("[1]").contains("object"));
        assert!(msg(r#"{"text":"hi"}"#).contains("voiceId"));
        assert!(msg(r#"{"voiceId":"101","text":"hi"}"#).contains("integer"));
        assert!(msg(r#"{"voiceId":101}"#).contains("text"));
        assert!(msg(r#"{"voiceId":101,"text":5}"#).contains("string"));
        assert!(msg(r#"{"voiceId":101,"text":"  "}"#).contains("empty"));
        assert_eq!(
            parse_body(br#"{"voiceId":101,"text":"hi"}"#).unwrap(),
            (101, "hi".to_owned())
        );
    }
}
