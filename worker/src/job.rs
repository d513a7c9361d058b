//! What every job handler returns from its run: a failure is either permanent (the
//! input can never succeed: the job's row ends in error and apalis gets an
//! `AbortError`) or transient (worth retrying after the persisted backoff).

use tolk_engine::EngineError;
use tolk_formats::FormatError;
use tolk_storage::StorageError;
use tolk_voice::VoiceError;

/// Why a run of a job failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum JobError {
    /// The input or request can never succeed: the job's row ends in error.
    #[error("{0}")]
    Permanent(String),
    /// Worth retrying (database, object store, engine restart).
    #[error("{0}")]
    Transient(String),
}

impl From<StorageError> for JobError {
    fn from(e: StorageError) -> Self {
        Self::Transient(e.to_string())
    }
}

impl From<FormatError> for JobError {
    fn from(e: FormatError) -> Self {
        Self::Permanent(e.to_string())
    }
}

impl From<EngineError> for JobError {
    fn from(e: EngineError) -> Self {
        if e.is_transient() {
            Self::Transient(e.to_string())
        } else {
            Self::Permanent(e.to_string())
        }
    }
}

impl From<VoiceError> for JobError {
    fn from(e: VoiceError) -> Self {
        if e.is_client_error() {
            Self::Permanent(e.to_string())
        } else {
            Self::Transient(e.to_string())
        }
    }
}
