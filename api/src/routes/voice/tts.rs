//! `POST /v1/tts/convert`: JSON `{voiceId, text}` → a WAV file.
//!
//! Memory stays bounded whatever the text: the first [`BUFFER_SECONDS`] of
//! audio are held, so a short answer is one WAV file with its exact sizes (and
//! the `Audio-Duration-Ms`/`Audio-Size-Bytes` headers); longer audio is
//! streamed as it is synthesised, behind a streaming WAV header (sizes unknown,
//! as the WebSocket streams send it). Audio longer than the voice service's
//! `max_audio_seconds` is refused: with 413 before any byte is sent when the
//! text is too long for it or the limit is reached while buffering, and by
//! ending the stream with an error when a stream reaches it.
//!
//! The text's characters are billed as `text_to_speech_characters`, against
//! the key's character limit: 456 before synthesis when they do not fit in
//! what remains of it; nothing is billed when the synthesis fails before the
//! answer starts.

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tolk_storage::limits::Meter;
use tolk_storage::usage;
use tolk_voice::voices::{self, TtsVoice, VoiceLookup};
use tolk_voice::{tts, wav};

use super::{VoiceAuth, voice_error};
use crate::limits::Charge;
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

/// Audio held before the answer starts streaming.
pub const BUFFER_SECONDS: u32 = 30;
/// Characters espeak-ng speaks per second at most (its fastest voices speak
/// about 20): a text longer than this many per allowed second is refused
/// before synthesis.
const MAX_CHARS_PER_SECOND: usize = 30;

fn too_long(max_seconds: u32) -> ApiError {
    ApiError::TooLarge(format!(
        "The text is too long: /v1/tts/convert produces at most {max_seconds} seconds of audio; \
         use the streaming endpoint for long texts."
    ))
}

/// Reserves the characters of a text to speak against `key`'s character
/// limit (456 when they do not fit).
pub(super) async fn charge(
    state: &AppState,
    key: &tolk_storage::keys::ApiKey,
    text: &str,
) -> Result<Charge, ApiError> {
    let chars = i64::try_from(text.chars().count()).unwrap_or(i64::MAX);
    Charge::reserve(
        state,
        key,
        Meter::Characters,
        chars,
        usage::kind::TEXT_TO_SPEECH,
        None,
    )
    .await
}

pub(super) async fn convert(
    State(state): State<AppState>,
    VoiceAuth(key): VoiceAuth,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body.map_err(|e| {
        crate::body::bytes_error(
            e,
            "The request body (use the streaming endpoint for long texts)",
            super::TTS_BODY_LIMIT,
        )
    })?;
    let (voice_id, text) = parse_body(&body)?;
    let voice = tts_voice(voice_id)?;
    let max_seconds = state.voice.max_audio_seconds.max(1);
    if text.chars().count() > max_seconds as usize * MAX_CHARS_PER_SECOND {
        return Err(too_long(max_seconds));
    }
    let charge = charge(&state, &key, &text).await?;
    let max_samples = max_seconds as usize * tts::SAMPLE_RATE as usize;
    let buffer_samples = BUFFER_SECONDS as usize * tts::SAMPLE_RATE as usize;
    let mut speech = state
        .voice
        .espeak
        .start(voice, &text)
        .map_err(voice_error)?;
    let mut head: Vec<i16> = Vec::new();
    while head.len() < buffer_samples {
        match speech.next_chunk().await.map_err(voice_error)? {
            Some(chunk) => head.extend_from_slice(&chunk),
            None => {
                if head.len() > max_samples {
                    return Err(too_long(max_seconds));
                }
                let file = wav::encode(&head, tts::SAMPLE_RATE).map_err(voice_error)?;
                charge.settle(&state).await?;
                return Ok(wav_response(
                    file,
                    wav::duration_ms(head.len(), tts::SAMPLE_RATE),
                ));
            }
        }
    }
    if head.len() > max_samples {
        return Err(too_long(max_seconds));
    }
    // The answer starts: the text is billed.
    charge.settle(&state).await?;
    // Long audio: the header and what is buffered, then the rest as it comes.
    let mut first = wav::streaming_header(tts::SAMPLE_RATE).to_vec();
    first.extend_from_slice(&wav::pcm_bytes(&head));
    let sent = head.len();
    // The state is `None` after an error: the next poll ends the stream.
    let rest = futures::stream::unfold(Some((speech, sent)), move |state| async move {
        let (mut speech, sent) = state?;
        match speech.next_chunk().await {
            Ok(Some(chunk)) if sent + chunk.len() > max_samples => {
                tracing::warn!(max_seconds, "text to speech stopped at the audio limit");
                Some((
                    Err(std::io::Error::other("the audio limit was reached")),
                    None,
                ))
            }
            Ok(Some(chunk)) => {
                let sent = sent + chunk.len();
                Some((
                    Ok(Bytes::from(wav::pcm_bytes(&chunk))),
                    Some((speech, sent)),
                ))
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(error = %e, "text to speech failed while streaming");
                Some((Err(std::io::Error::other(e.to_string())), None))
            }
        }
    });
    let body = futures::StreamExt::chain(
        futures::stream::once(std::future::ready(Ok::<_, std::io::Error>(Bytes::from(
            first,
        )))),
        rest,
    );
    let mut res = Body::from_stream(body).into_response();
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("audio/wav"));
    Ok(res)
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
