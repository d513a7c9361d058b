//! The one job-outcome policy every handler goes through.
//!
//! A handler's `run` returns a typed outcome: done, a permanent failure (the
//! input can never succeed) or a transient one (worth retrying). [`execute`]
//! logs the start, runs it and decides, as River's executor does:
//!
//! - done: logged with the elapsed time; apalis acknowledges the job;
//! - permanent: the job's public state row ends in error with the message;
//!   apalis gets an `AbortError` (no retry);
//! - transient: while runs remain (the state row's attempts, or apalis', the
//!   larger), the queue row's next run moves [`queue::backoff`] into the future
//!   and the state row goes back to waiting with the reason; once they run
//!   out, the row ends in error saying how many attempts were made.
//!
//! What differs between job kinds (their state table, their words, their
//! attempt budget) is a [`Tracked`] implementation beside each handler.

use std::future::Future;
use std::time::Instant;

use apalis::prelude::{AbortError, Attempt, BoxDynError, TaskId};
use tolk_engine::EngineError;
use tolk_formats::FormatError;
use tolk_pipeline::PipelineError;
use tolk_storage::StorageError;
use tolk_storage::queue;
use tolk_voice::VoiceError;
use tracing::Instrument;

use crate::WorkerState;

/// Why a run of a job failed. Errors of the crates below keep their type
/// (and so their source chain, logged once by the policy); whether they are
/// worth a retry is [`JobError::is_permanent`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum JobError {
    /// The input or request can never succeed: the job's row ends in error.
    #[error("{0}")]
    Permanent(String),
    /// Worth retrying (a dependency that failed for now).
    #[error("{0}")]
    Transient(String),
    /// The database, queue or object store failed: transient.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The document cannot be read or written: permanent.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The engines failed: transient when [`EngineError::is_transient`].
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// Audio or a speech engine failed: permanent for bad audio.
    #[error(transparent)]
    Voice(#[from] VoiceError),
    /// The translation pipeline failed: transient when
    /// [`PipelineError::is_transient`].
    #[error(transparent)]
    Pipeline(PipelineError),
    /// LibreOffice could not make the delivered format: permanent.
    #[error("The translated document could not be converted: {0}")]
    Office(#[from] crate::office::OfficeError),
}

/// A pipeline failure in a job's words: what the upload referred to and is
/// gone now is said so; engines and storage keep their own variants.
impl From<PipelineError> for JobError {
    fn from(e: PipelineError) -> Self {
        match e {
            PipelineError::Engine(e) => Self::Engine(e),
            PipelineError::Storage(e) => Self::Storage(e),
            PipelineError::GlossaryNotFound(id) => {
                Self::Permanent(format!("The glossary {id} no longer exists."))
            }
            PipelineError::NoDictionary { id, from, to } => Self::Permanent(format!(
                "The glossary {id} no longer has a dictionary for {from}→{to}."
            )),
            PipelineError::StyleNotFound(id) => {
                Self::Permanent(format!("The style rule list {id} no longer exists."))
            }
            PipelineError::MemoryNotFound(id) => {
                Self::Permanent(format!("The translation memory {id} no longer exists."))
            }
            other => Self::Pipeline(other),
        }
    }
}

impl JobError {
    /// Whether no retry can succeed.
    pub(crate) fn is_permanent(&self) -> bool {
        match self {
            Self::Permanent(_) | Self::Format(_) | Self::Office(_) => true,
            Self::Transient(_) | Self::Storage(_) => false,
            Self::Engine(e) => !e.is_transient(),
            Self::Voice(e) => e.is_client_error(),
            Self::Pipeline(e) => !e.is_transient(),
        }
    }
}

/// A job kind's public state row, as the policy records outcomes in it.
pub(crate) trait Tracked: Sync {
    /// Runs at most, the first included.
    const MAX_ATTEMPTS: i32;
    /// What the job is called in log lines ("document", "voice job"…).
    const NOUN: &'static str;

    /// The queue (the `kind` of log lines).
    fn queue(&self) -> &'static str;

    /// Runs recorded on the state row so far (0 when the row is gone).
    fn attempts(
        &self,
        state: &WorkerState,
    ) -> impl Future<Output = Result<i32, StorageError>> + Send;

    /// Ends the state row in error with `message`.
    fn fail(
        &self,
        state: &WorkerState,
        message: &str,
    ) -> impl Future<Output = Result<(), StorageError>> + Send;

    /// Puts the state row back to waiting after a transient failure (`reason`).
    fn retry(
        &self,
        state: &WorkerState,
        reason: &str,
    ) -> impl Future<Output = Result<(), StorageError>> + Send;

    /// The row's error once the attempts ran out.
    fn exhausted(runs: i32, message: &str) -> String {
        format!("The job failed after {runs} attempts: {message}")
    }
}

/// Runs one job: logs its start within `span`, awaits `run`, and records the
/// outcome by the policy of the module documentation.
pub(crate) async fn execute<T: Tracked>(
    job: &T,
    state: &WorkerState,
    task_id: &TaskId,
    attempt: &Attempt,
    span: tracing::Span,
    run: impl Future<Output = Result<(), JobError>>,
) -> Result<(), BoxDynError> {
    span.in_scope(|| tracing::info!(kind = job.queue(), "job started"));
    let started = Instant::now();
    let outcome = run.instrument(span.clone()).await;
    conclude(job, state, task_id, attempt, outcome, started)
        .instrument(span)
        .await
}

async fn conclude<T: Tracked>(
    job: &T,
    state: &WorkerState,
    task_id: &TaskId,
    attempt: &Attempt,
    outcome: Result<(), JobError>,
    started: Instant,
) -> Result<(), BoxDynError> {
    match outcome {
        Ok(()) => {
            tracing::info!(
                elapsed_ms = started.elapsed().as_millis() as u64,
                "{} done",
                T::NOUN
            );
            Ok(())
        }
        Err(e) if e.is_permanent() => {
            tracing::warn!(error = &e as &dyn std::error::Error, "{} failed", T::NOUN);
            let msg = e.to_string();
            job.fail(state, &msg).await?;
            Err(AbortError::new(msg).into())
        }
        Err(e) => {
            let msg = e.to_string();
            let runs = job
                .attempts(state)
                .await?
                .max(i32::try_from(attempt.current()).unwrap_or(i32::MAX));
            let Some(delay) = retry_after(runs, T::MAX_ATTEMPTS) else {
                tracing::error!(
                    error = &e as &dyn std::error::Error,
                    runs,
                    "{} failed after retries",
                    T::NOUN
                );
                let text = T::exhausted(runs, &msg);
                job.fail(state, &text).await?;
                return Err(AbortError::new(text).into());
            };
            tracing::warn!(
                error = &e as &dyn std::error::Error,
                runs,
                retry_in_s = delay.as_secs(),
                "transient failure, will retry"
            );
            queue::schedule_retry(&state.db, &task_id.to_string(), delay).await?;
            job.retry(state, &format!("Retrying after: {msg}")).await?;
            Err(msg.into())
        }
    }
}

/// After a transient failure of run `runs` (1-based) of a job allowed
/// `max_attempts` runs: the wait before the next run, or `None` when no run is
/// left.
fn retry_after(runs: i32, max_attempts: i32) -> Option<std::time::Duration> {
    (runs < max_attempts).then(|| queue::backoff(u32::try_from(runs.max(1)).unwrap_or(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transient_failures_back_off_until_the_attempts_run_out() {
        let secs = |runs| retry_after(runs, 5).map(|d| d.as_secs());
        assert_eq!(secs(0), Some(2));
        assert_eq!(secs(1), Some(2));
        assert_eq!(secs(2), Some(4));
        assert_eq!(secs(4), Some(16));
        assert_eq!(secs(5), None);
        assert_eq!(secs(9), None);
    }
}
