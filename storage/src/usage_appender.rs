//! Request metering off the request path: the ledger entries of an API
//! process's requests are appended in batches, one multi-row INSERT (one
//! commit, waiting for the WAL flush) for every entry that arrived within
//! [`AppenderConfig::max_delay`] of the batch's first.
//!
//! A ledger entry costs PostgreSQL about as much as a short translation's
//! whole round trip to it (a transaction id, WAL, five index entries, a
//! commit); appended by the request itself, that cost competed with the work
//! of every short request (`tolk-bench analytics`: +8.8 % on a 64-character
//! `/v2/translate`, +4.9 % even without waiting for the flush). Batched, one
//! commit carries many entries, and no request waits for any of them.
//!
//! What this trades, and what it keeps:
//! - An entry reaches the ledger at most `max_delay` (10 ms by default) plus
//!   one commit after its request was answered. [`UsageAppender::flush`]
//!   waits until everything appended before it is committed; the API calls it
//!   before answering usage and analytics requests, and when it shuts down
//!   gracefully, so those see every entry of their own process.
//! - A process killed without a graceful shutdown (`kill -9`, a crash) loses
//!   the entries of its last `max_delay`: requests are under-billed, never
//!   billed twice. Deployments that must not lose one entry run the API with
//!   per-request durable appends instead (`TOLK_LEDGER_WRITES=durable`).
//! - A failed insert (PostgreSQL away) is retried with backoff, the entries
//!   kept; while the channel is full, requests wait in [`UsageAppender::append`]
//!   instead of losing entries.
//! - Only keys without a limit are metered this way: a key with a limit keeps
//!   its reservation and turns it into the entry in one transaction
//!   (`limits::settle`), so limits stay exact under concurrency.

use std::time::Duration;

use sqlx::PgPool;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use uuid::Uuid;

use crate::StorageError;

/// A request's ledger entry, waiting to be appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Organization billed.
    pub organization_id: Uuid,
    /// Key that caused it.
    pub api_key_id: String,
    /// One of [`crate::usage::kind`].
    pub kind: &'static str,
    /// Characters or milliseconds.
    pub amount: i64,
    /// The client's reporting tag.
    pub custom_tag: Option<String>,
}

/// How the appender batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppenderConfig {
    /// Longest time an entry waits for others before its batch is written
    /// (`TOLK_LEDGER_BATCH_MS`).
    pub max_delay: Duration,
    /// Most entries in one INSERT.
    pub max_batch: usize,
    /// Entries the channel holds before [`UsageAppender::append`] waits.
    pub capacity: usize,
}

impl Default for AppenderConfig {
    fn default() -> Self {
        Self {
            max_delay: Duration::from_millis(10),
            max_batch: 1_000,
            capacity: 100_000,
        }
    }
}

enum Msg {
    Entry(Entry),
    Flush(oneshot::Sender<()>),
}

/// The batching ledger appender of one process; see the module
/// documentation. Cheap to clone; the task ends when every clone is dropped,
/// after writing what it still holds.
#[derive(Clone, Debug)]
pub struct UsageAppender {
    tx: mpsc::Sender<Msg>,
}

impl UsageAppender {
    /// Starts the appender's task on `pool`. Needs a Tokio runtime.
    pub fn start(pool: PgPool, config: AppenderConfig) -> Self {
        let (tx, rx) = mpsc::channel(config.capacity.max(1));
        tokio::spawn(run(pool, config, rx));
        Self { tx }
    }

    /// Queues `entry`; returns at once unless the channel is full.
    pub async fn append(&self, entry: Entry) -> Result<(), StorageError> {
        self.tx.send(Msg::Entry(entry)).await.map_err(|_| stopped())
    }

    /// Returns once every entry appended before this call is committed.
    pub async fn flush(&self) -> Result<(), StorageError> {
        let (done, wait) = oneshot::channel();
        self.tx
            .send(Msg::Flush(done))
            .await
            .map_err(|_| stopped())?;
        wait.await.map_err(|_| stopped())
    }
}

/// The error of a call after the appender's task ended.
fn stopped() -> StorageError {
    StorageError::Unavailable("the usage appender stopped".to_owned())
}

/// The appender's task: gathers a batch, writes it, answers the flushes that
/// came with it, until the channel closes.
async fn run(pool: PgPool, config: AppenderConfig, mut rx: mpsc::Receiver<Msg>) {
    let mut batch: Vec<Entry> = Vec::new();
    let mut flushed: Vec<oneshot::Sender<()>> = Vec::new();
    let mut open = true;
    while open {
        // The first message of a batch: wait for it as long as it takes.
        match rx.recv().await {
            Some(Msg::Entry(e)) => batch.push(e),
            Some(Msg::Flush(done)) => flushed.push(done),
            None => break,
        }
        // More, until the first entry waited max_delay, the batch is full or
        // somebody asked for a flush (everything sent before it is here: the
        // channel keeps the order).
        let deadline = Instant::now() + config.max_delay;
        while flushed.is_empty() && batch.len() < config.max_batch {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(Msg::Entry(e))) => batch.push(e),
                Ok(Some(Msg::Flush(done))) => flushed.push(done),
                Ok(None) => {
                    open = false;
                    break;
                }
                Err(_) => break,
            }
        }
        write(&pool, &mut batch).await;
        for done in flushed.drain(..) {
            let _ = done.send(());
        }
    }
    // The channel closed: what arrived last is written above; nothing remains.
}

/// Writes `batch` in one INSERT, retrying with backoff until it is committed;
/// leaves `batch` empty.
async fn write(pool: &PgPool, batch: &mut Vec<Entry>) {
    if batch.is_empty() {
        return;
    }
    let mut backoff = Duration::from_millis(50);
    loop {
        match insert(pool, batch).await {
            Ok(()) => break,
            Err(e) => {
                tracing::warn!(error = %e, entries = batch.len(), retry_in_ms = backoff.as_millis() as u64,
                    "appending usage entries failed; retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
            }
        }
    }
    batch.clear();
}

/// One multi-row INSERT of `batch` (its own transaction, durable commit).
async fn insert(pool: &PgPool, batch: &[Entry]) -> Result<(), StorageError> {
    let organizations: Vec<Uuid> = batch.iter().map(|e| e.organization_id).collect();
    let keys: Vec<&str> = batch.iter().map(|e| e.api_key_id.as_str()).collect();
    let kinds: Vec<&str> = batch.iter().map(|e| e.kind).collect();
    let amounts: Vec<i64> = batch.iter().map(|e| e.amount).collect();
    let tags: Vec<Option<&str>> = batch.iter().map(|e| e.custom_tag.as_deref()).collect();
    sqlx::query!(
        r#"INSERT INTO usage_events (organization_id, api_key_id, kind, amount, custom_tag)
           SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int8[], $5::text[])"#,
        &organizations,
        &keys as &[&str],
        &kinds as &[&str],
        &amounts,
        &tags as &[Option<&str>]
    )
    .execute(pool)
    .await?;
    Ok(())
}
