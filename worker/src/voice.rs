//! Handler of `voice-translate` jobs: source audio → decode (symphonia) →
//! 16 kHz → pocketsphinx transcript → for each target, translation through the
//! engines and, for audio targets, espeak-ng speech → result objects; then one
//! transaction completes the job and appends the speech_to_text usage entry.

use apalis::prelude::*;
use tolk_storage::StorageError;
use tolk_storage::queue::{self, VoiceTranslate};
use tolk_storage::usage::{self, UsageEvent};
use tolk_storage::voice_jobs::{self, Target, TargetResult, VoiceJob, status};
use tolk_voice::{VoiceError, asr, decode, resample, tts, voices, wav};

use crate::WorkerState;
use crate::job::{self, JobError, Tracked};

/// Longest audio a voice job accepts, in seconds.
pub const MAX_AUDIO_SECONDS: u32 = 3 * 3600;

/// The job handler registered with apalis.
pub async fn translate_voice(
    job: VoiceTranslate,
    state: Data<WorkerState>,
    task_id: TaskId,
    attempt: Attempt,
) -> Result<(), BoxDynError> {
    let span = tracing::info_span!(
        "translate_voice",
        voice_job = %job.job_id,
        trace_id = %job.trace_id,
        job_id = %task_id,
        attempt = attempt.current()
    );
    job::execute(&job, &state, &task_id, &attempt, span, run(&job, &state)).await
}

impl Tracked for VoiceTranslate {
    const MAX_ATTEMPTS: i32 = queue::VOICE_TRANSLATE_MAX_ATTEMPTS;
    const NOUN: &'static str = "voice job";

    fn queue(&self) -> &'static str {
        queue::VOICE_TRANSLATE
    }

    async fn attempts(&self, state: &WorkerState) -> Result<i32, StorageError> {
        Ok(voice_jobs::get(&state.db, self.job_id)
            .await?
            .map_or(0, |j| j.attempts))
    }

    async fn fail(&self, state: &WorkerState, message: &str) -> Result<(), StorageError> {
        voice_jobs::fail(&state.db, self.job_id, message).await
    }

    async fn retry(&self, state: &WorkerState, reason: &str) -> Result<(), StorageError> {
        voice_jobs::requeue(&state.db, self.job_id, reason).await
    }
}

async fn run(job: &VoiceTranslate, state: &WorkerState) -> Result<(), JobError> {
    if !voice_jobs::start(&state.db, job.job_id).await? {
        tracing::info!("voice job already finished; nothing to do");
        return Ok(());
    }
    let row = voice_jobs::get(&state.db, job.job_id)
        .await?
        .ok_or_else(|| JobError::Permanent("The job no longer exists.".to_owned()))?;
    let source_lang = row
        .source_language
        .clone()
        .unwrap_or_else(|| asr::DEFAULT_LANGUAGE.to_owned());
    if !state.recognizer.supports(&source_lang) {
        return Err(JobError::Permanent(format!(
            "Speech recognition of {source_lang} is not available (supported: {}).",
            state.recognizer.languages().join(", ")
        )));
    }
    let source = state.objects.get(&row.source_object).await?;
    let ext = row
        .source_name
        .rsplit_once('.')
        .map(|(_, e)| e.to_owned())
        .unwrap_or_default();
    let (speech, duration_ms) = tokio::task::spawn_blocking(move || {
        let d = decode::decode(&source, &ext, MAX_AUDIO_SECONDS)?;
        let ms = d.duration_ms();
        Ok::<_, VoiceError>((resample::resample(&d.samples, d.rate, asr::SAMPLE_RATE), ms))
    })
    .await
    .map_err(|e| JobError::Transient(format!("decoding task failed: {e}")))??;
    let transcript = state
        .recognizer
        .recognize_with_terms(
            &speech,
            &row.spoken_terms,
            row.keyword_threshold
                .unwrap_or(tolk_voice::asr::DEFAULT_TERM_THRESHOLD),
        )
        .await?;
    tracing::info!(
        duration_ms,
        words = transcript.split_whitespace().count(),
        "recognised"
    );

    let mut results = Vec::with_capacity(row.targets.len());
    let mut stored = 0i64;
    for (i, target) in row.targets.iter().enumerate() {
        let result = match produce(state, &row, &source_lang, &transcript, i, target).await {
            Ok(r) => r,
            Err(e) if e.is_permanent() => TargetResult {
                status: status::FAILED.to_owned(),
                error: Some(e.to_string()),
                ..Default::default()
            },
            Err(e) => return Err(e),
        };
        stored += result.bytes.unwrap_or(0);
        results.push(result);
    }

    let mut tx = state.db.begin().await.map_err(StorageError::from)?;
    let ms = i64::try_from(duration_ms).unwrap_or(i64::MAX);
    if voice_jobs::complete(&mut tx, row.id, &results, &transcript, ms, stored).await? {
        let id = row.id.to_string();
        usage::record(
            &mut tx,
            &UsageEvent {
                organization_id: row.organization_id,
                api_key_id: &row.api_key_id,
                kind: usage::kind::SPEECH_TO_TEXT,
                amount: ms,
                custom_tag: None,
                // Bills the job once, however often it runs.
                document_id: Some(&id),
            },
        )
        .await?;
    }
    tx.commit().await.map_err(StorageError::from)?;
    Ok(())
}

/// One target's result, stored in the object store.
async fn produce(
    state: &WorkerState,
    row: &VoiceJob,
    source_lang: &str,
    transcript: &str,
    index: usize,
    target: &Target,
) -> Result<TargetResult, JobError> {
    let text = if tolk_lang::same_language(&target.language, source_lang) || transcript.is_empty() {
        transcript.to_owned()
    } else {
        let res = state
            .pipeline()
            .translate_plain(
                &tolk_lang::deepl_base(source_lang),
                &target.language,
                vec![transcript.to_owned()],
            )
            .await?;
        res.texts.into_iter().next().unwrap_or_default()
    };
    let (bytes, content_type, ext) = match target.kind.as_str() {
        "text/plain" => (
            text.into_bytes(),
            "text/plain; charset=utf-8".to_owned(),
            "txt",
        ),
        kind => {
            let rate = match kind {
                "audio/pcm;encoding=s16le;rate=16000" => 16_000,
                "audio/pcm;encoding=s16le;rate=24000" => 24_000,
                other => {
                    return Err(JobError::Permanent(format!(
                        "Unsupported output type {other}."
                    )));
                }
            };
            if !text.chars().any(char::is_alphanumeric) {
                return Err(JobError::Permanent(
                    "No speech was recognised, so there is nothing to speak.".to_owned(),
                ));
            }
            let voice = voices::tts_voice_for_language(&target.language).ok_or_else(|| {
                JobError::Permanent(format!("No voice speaks {}.", target.language))
            })?;
            let pcm = state.espeak.synthesize(voice, &text).await?;
            let pcm = wav::to_i16(&resample::resample(
                &wav::to_f32(&pcm),
                tts::SAMPLE_RATE,
                rate,
            ));
            (wav::pcm_bytes(&pcm), kind.to_owned(), "pcm")
        }
    };
    let object = format!("voice/{}/result-{index}.{ext}", row.id);
    let size = bytes.len() as i64;
    state.objects.put(&object, bytes.into()).await?;
    Ok(TargetResult {
        status: status::COMPLETE.to_owned(),
        object: Some(object),
        content_type: Some(content_type),
        bytes: Some(size),
        error: None,
    })
}
