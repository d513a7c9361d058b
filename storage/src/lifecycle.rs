//! The lifecycle of each job kind's records, as River and Oban give every
//! job kind its own: how an unfinished record whose queue job is over (killed,
//! or failed with no attempt left) is ended, and when finished records (and
//! the objects they hold) go. Each table's module declares its kind; the
//! scheduler runs both sweeps for every kind of [`JOB_KINDS`].

use std::time::Duration;

use async_trait::async_trait;
use sqlx::PgPool;

use crate::StorageError;

/// How long finished records are kept.
#[derive(Debug, Clone, Copy)]
pub struct Retention {
    /// After their result was downloaded (documents).
    pub downloaded: Duration,
    /// After they finished, or their upload or download period ended.
    pub finished: Duration,
}

/// One kind of job record (documents, quality evaluations, voice jobs,
/// translation-memory jobs).
#[async_trait]
pub trait JobKind: Send + Sync {
    /// The kind's name in logs (`documents`).
    fn name(&self) -> &'static str;

    /// Ends in failure, with a message the client reads, every unfinished
    /// record whose queue job is over; how many.
    async fn fail_lost(&self, db: &PgPool) -> Result<u64, StorageError>;

    /// Puts the record of queue job `queue_job_id` back to waiting, its error
    /// and attempts cleared, when it ended in failure: an operator's retry
    /// (the queue row is made due again in the same transaction). Whether a
    /// record was reopened.
    async fn reopen(
        &self,
        conn: &mut sqlx::PgConnection,
        queue_job_id: &str,
    ) -> Result<bool, StorageError>;

    /// Deletes records past their retention (a batch at a time) and returns
    /// the object-store keys they held, for the caller to delete.
    async fn expire(&self, db: &PgPool, retention: &Retention)
    -> Result<Vec<String>, StorageError>;
}

/// Every job kind.
pub static JOB_KINDS: &[&dyn JobKind] = &[
    &crate::documents::Documents,
    &crate::quality::Evaluations,
    &crate::voice_jobs::VoiceJobs,
    &crate::translation_memories::jobs::TmJobs,
];
