//! Handler of `evaluate-quality` jobs: segments (from the job's row, or from the
//! object a document job wrote) → tolk-quality's checks (plus, when asked, a
//! back-translation through the engines) → a report object, then the row is
//! marked done.

use apalis::prelude::*;
use serde::{Deserialize, Serialize};
use tolk_quality::{Options, SegmentResult, Summary};
use tolk_storage::StorageError;
use tolk_storage::quality::{self, Evaluation};
use tolk_storage::queue::{self, EvaluateQuality};

use crate::WorkerState;
use crate::job::{self, JobError, Tracked};

/// The input of an evaluation, as stored in `quality_evaluations.request` (text
/// jobs) or in the object [`segments_object`] (document jobs).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct EvaluationInput {
    /// The pairs, in order.
    pub segments: Vec<Pair>,
    /// Glossary: source term → required target term.
    #[serde(default)]
    pub glossary: serde_json::Map<String, serde_json::Value>,
    /// Whether to back-translate the targets through the engines.
    #[serde(default)]
    pub back_translation: bool,
}

/// One source/target pair.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pair {
    /// Source text.
    pub source: String,
    /// Translation.
    pub target: String,
}

/// The stored report (the `done` answer without `job_id` and `status`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// One entry per segment, in order.
    pub segments: Vec<SegmentResult>,
    /// Aggregate.
    pub summary: Summary,
}

pub use tolk_storage::quality::{report_object, segments_object};

/// The job handler registered with apalis.
pub async fn evaluate_quality(
    job: EvaluateQuality,
    state: Data<WorkerState>,
    task_id: TaskId,
    attempt: Attempt,
) -> Result<(), BoxDynError> {
    let span = tracing::info_span!(
        "evaluate_quality",
        evaluation_id = %job.evaluation_id,
        trace_id = %job.trace_id,
        job_id = %task_id,
        attempt = attempt.current()
    );
    job::execute(&job, &state, &task_id, &attempt, span, run(&job, &state)).await
}

impl Tracked for EvaluateQuality {
    const MAX_ATTEMPTS: i32 = queue::EVALUATE_QUALITY_MAX_ATTEMPTS;
    const NOUN: &'static str = "evaluation";

    fn queue(&self) -> &'static str {
        queue::EVALUATE_QUALITY
    }

    async fn attempts(&self, state: &WorkerState) -> Result<i32, StorageError> {
        Ok(quality::get(&state.db, self.evaluation_id)
            .await?
            .map_or(0, |e| e.attempts))
    }

    async fn fail(&self, state: &WorkerState, message: &str) -> Result<(), StorageError> {
        quality::fail(&state.db, self.evaluation_id, message).await
    }

    async fn retry(&self, state: &WorkerState, _reason: &str) -> Result<(), StorageError> {
        quality::requeue(&state.db, self.evaluation_id).await
    }

    fn exhausted(runs: i32, message: &str) -> String {
        format!("The evaluation failed after {runs} attempts: {message}")
    }
}

async fn load_input(state: &WorkerState, e: &Evaluation) -> Result<EvaluationInput, JobError> {
    let value = if e.document_id.is_some() {
        let bytes = state.objects.get(&segments_object(e.id)).await?;
        serde_json::from_slice(&bytes)
            .map_err(|err| JobError::Permanent(format!("unreadable segments: {err}")))?
    } else {
        quality::request(&state.db, e.id)
            .await?
            .ok_or_else(|| JobError::Permanent("The evaluation has no segments.".to_owned()))?
    };
    serde_json::from_value(value)
        .map_err(|err| JobError::Permanent(format!("unreadable segments: {err}")))
}

async fn run(job: &EvaluateQuality, state: &WorkerState) -> Result<(), JobError> {
    if !quality::start(&state.db, job.evaluation_id).await? {
        tracing::info!("evaluation already finished; nothing to do");
        return Ok(());
    }
    let e = quality::get(&state.db, job.evaluation_id)
        .await?
        .ok_or_else(|| JobError::Permanent("The evaluation no longer exists.".to_owned()))?;
    let input = load_input(state, &e).await?;
    let back = if input.back_translation {
        Some(back_translate(state, &e, &input).await?)
    } else {
        None
    };
    let mut options = Options::new(&e.source_lang, &e.target_lang);
    options.glossary = input
        .glossary
        .iter()
        .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
        .collect();
    let report = tokio::task::spawn_blocking(move || evaluate_all(&input, &options, back))
        .await
        .map_err(|err| JobError::Transient(format!("evaluation task failed: {err}")))?;
    let bytes = serde_json::to_vec(&report)
        .map_err(|err| JobError::Permanent(format!("report serialization: {err}")))?;
    let object = report_object(e.id);
    state.objects.put(&object, bytes.into()).await?;
    quality::complete(&state.db, e.id, &object).await?;
    Ok(())
}

/// Runs the checks over every pair (and the back-translation hint when given).
pub fn evaluate_all(
    input: &EvaluationInput,
    options: &Options,
    back: Option<Vec<String>>,
) -> Report {
    let segments: Vec<SegmentResult> = input
        .segments
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut errors = tolk_quality::evaluate(&p.source, &p.target, options);
            if let Some(b) = back.as_ref().and_then(|b| b.get(i))
                && let Some(issue) = tolk_quality::back_translation_issue(&p.source, b)
            {
                errors.push(issue);
            }
            SegmentResult {
                segment_index: i,
                errors,
            }
        })
        .collect();
    let sources: Vec<&str> = input.segments.iter().map(|p| p.source.as_str()).collect();
    let summary = tolk_quality::summarize(&sources, &segments);
    Report { segments, summary }
}

async fn back_translate(
    state: &WorkerState,
    e: &Evaluation,
    input: &EvaluationInput,
) -> Result<Vec<String>, JobError> {
    let texts = input.segments.iter().map(|p| p.target.clone()).collect();
    let res = state
        .pipeline()
        .translate_plain(&e.target_lang, &e.source_lang, texts)
        .await?;
    Ok(res.texts)
}
