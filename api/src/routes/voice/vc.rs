//! `POST /v1/vc/convert?voiceId=`: multipart part `file` (WAV, FLAC,
//! OGG/Vorbis or MP3) → the same speech in the target voice, as WAV.

use std::collections::HashMap;

use axum::extract::multipart::MultipartRejection;
use axum::extract::{Multipart, Query, State};
use axum::response::Response;
use bytes::Bytes;
use tolk_storage::limits::Meter;
use tolk_storage::usage::{self, UsageEvent};
use tolk_voice::voices::{self, VcVoice, VoiceLookup};
use tolk_voice::{convert, decode, resample, tts, wav};

use super::{VoiceAuth, voice_error};
use crate::body::multipart_error;
use crate::{ApiError, AppState};

/// The rate conversion works at and answers in.
pub const OUTPUT_RATE: u32 = tts::SAMPLE_RATE;

fn vc_voice(id: i64) -> Result<&'static VcVoice, ApiError> {
    match voices::vc_voice(id) {
        VoiceLookup::Found(v) => Ok(v),
        VoiceLookup::OtherKind => Err(ApiError::BadRequest(format!(
            "Voice {id} is a text-to-speech voice; choose one from GET /v1/vc/voices."
        ))),
        VoiceLookup::Unknown => Err(ApiError::NotFound(format!(
            "Voice {id} not found; choose one from GET /v1/vc/voices."
        ))),
    }
}

/// What a too large upload is called in its 413.
const AUDIO_FILE: &str = "The audio file";

/// The `file` part: (file name, bytes).
async fn read_file(mut multipart: Multipart, limit: usize) -> Result<(String, Bytes), ApiError> {
    let mut file = None;
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|e| multipart_error(e, AUDIO_FILE, limit))?
    {
        if field.name() == Some("file") {
            let name = field.file_name().unwrap_or_default().to_owned();
            let data = field
                .bytes()
                .await
                .map_err(|e| multipart_error(e, AUDIO_FILE, limit))?;
            file = Some((name, data));
        } else {
            // Drain other parts (their size counts against the limit too).
            field
                .bytes()
                .await
                .map_err(|e| multipart_error(e, AUDIO_FILE, limit))?;
        }
    }
    let (name, data) =
        file.ok_or_else(|| ApiError::BadRequest("Missing multipart part file.".to_owned()))?;
    if data.len() > limit {
        return Err(ApiError::too_large(AUDIO_FILE, limit));
    }
    if data.is_empty() {
        return Err(ApiError::BadRequest("The audio file is empty.".to_owned()));
    }
    Ok((name, data))
}

/// Decodes, converts and encodes; CPU-bound, run on a blocking thread.
/// Returns (WAV file, output duration ms, input duration ms).
pub fn convert_file(
    name: &str,
    data: &[u8],
    voice: &VcVoice,
    max_seconds: u32,
) -> Result<(Vec<u8>, u64, u64), tolk_voice::VoiceError> {
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or_default();
    let decoded = decode::decode(data, ext, max_seconds)?;
    let input_ms = decoded.duration_ms();
    let x = resample::resample(&decoded.samples, decoded.rate, OUTPUT_RATE);
    let y = convert::convert(&x, OUTPUT_RATE, voice)?;
    let pcm = wav::to_i16(&y);
    let file = wav::encode(&pcm, OUTPUT_RATE)?;
    Ok((file, wav::duration_ms(pcm.len(), OUTPUT_RATE), input_ms))
}

pub(super) async fn convert(
    State(state): State<AppState>,
    VoiceAuth(key): VoiceAuth,
    Query(query): Query<HashMap<String, String>>,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<Response, ApiError> {
    let voice = vc_voice(super::parse_voice_id(
        query.get("voiceId").map(String::as_str),
    )?)?;
    // 456 before any conversion once the key's speech-to-speech limit is
    // reached (the audio's length is known only after decoding: a conversion
    // admitted before that is billed in full).
    crate::limits::refuse_if_reached(&state, &key, Meter::SpeechToSpeech).await?;
    let multipart = multipart.map_err(|e| {
        ApiError::BadRequest(format!(
            "Send the audio as multipart/form-data with a part named file: {}",
            e.body_text()
        ))
    })?;
    let limit = state.voice.max_upload_bytes;
    let (name, data) = read_file(multipart, limit).await?;
    let max_seconds = state.voice.max_audio_seconds;
    let (file, duration_ms, input_ms) =
        tokio::task::spawn_blocking(move || convert_file(&name, &data, voice, max_seconds))
            .await
            .map_err(|e| ApiError::failed("the conversion task", e))?
            .map_err(voice_error)?;
    let mut conn = state.db.acquire().await?;
    usage::record(
        &mut conn,
        &UsageEvent {
            organization_id: key.organization_id,
            api_key_id: &key.key_id,
            kind: usage::kind::SPEECH_TO_SPEECH,
            amount: i64::try_from(input_ms).unwrap_or(i64::MAX),
            custom_tag: None,
            document_id: None,
        },
    )
    .await?;
    Ok(super::tts::wav_response(file, duration_ms))
}
