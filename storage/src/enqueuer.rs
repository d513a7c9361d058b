//! An API process's side of the queue: enqueue transactions whose jobs are
//! visible the moment they commit, the wake-up NOTIFYs sent off the request path,
//! and the wait until the jobs are durable before the client is answered.
//!
//! A commit that waits for its WAL flush becomes visible only after the flush,
//! and on a busy disk a flush now and then takes tens or hundreds of
//! milliseconds. [`Enqueuer::begin`] commits without waiting
//! (`synchronous_commit = off`), so a worker can start the job at once;
//! [`Enqueuer::committed`] then wakes a worker and waits for a [`Barrier`]: a
//! transaction that commits *with* the flush, on a connection of its own, and
//! since the WAL is flushed in order, everything this process committed before
//! it is durable too. The client is answered only after that, so an
//! acknowledged job is as durable as before; a job a worker starts before the
//! flush is durable no later than that worker's first write (its own commits
//! flush the WAL up to them).
//!
//! Every NOTIFY takes a database-wide lock while its transaction commits, so
//! concurrent notifiers queue behind each other; sent from the request on a
//! pooled connection, that wait held pool connections. The [`Notifier`] sends
//! them from one task, and jobs enqueued while one is in flight share the next.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use sqlx::{Connection, PgConnection, PgPool, Postgres, Transaction};
use tokio::sync::{Notify, watch};

use crate::StorageError;
use crate::queue::{notify_statement, valid_queue_name};

/// How many times [`Enqueuer::committed`] waits for the WAL flush before it
/// gives up confirming durability.
pub const BARRIER_TRIES: u32 = 3;
/// Pause between two of those tries.
const BARRIER_RETRY_DELAY: std::time::Duration = std::time::Duration::from_millis(200);

/// The queue plumbing of an API process; see the module documentation. Cheap to
/// clone.
#[derive(Clone)]
pub struct Enqueuer {
    pool: PgPool,
    notifier: Notifier,
    barrier: Barrier,
}

impl Enqueuer {
    /// Starts the NOTIFY and durability tasks, each on a connection of its own
    /// to `pool`'s database; enqueue transactions run on `pool` itself (the
    /// barrier covers only commits of the same server). Needs a Tokio runtime.
    pub fn start(pool: &PgPool) -> Self {
        Self {
            pool: pool.clone(),
            notifier: Notifier::start(pool),
            barrier: Barrier::start(pool),
        }
    }

    /// Begins an enqueueing transaction: it commits without waiting for the WAL
    /// flush, so its jobs are visible at once. Call [`Enqueuer::committed`]
    /// after the commit, before answering.
    pub async fn begin(&self) -> Result<Transaction<'static, Postgres>, StorageError> {
        Ok(self
            .pool
            .begin_with("BEGIN; SET LOCAL synchronous_commit = off")
            .await?)
    }

    /// After a transaction from [`Enqueuer::begin`] committed a job of `queue`:
    /// wakes a worker of `queue`, then waits until the job is durable.
    ///
    /// The commit has happened, so the caller answers the client with the
    /// job's ids whatever this finds. A barrier whose connection failed (a
    /// database restart leaves it stale) is tried again on a fresh connection,
    /// up to [`BARRIER_TRIES`] times; the first success on the new connection
    /// means the server now running holds the commit durably, or, after a
    /// crash of the server that lost it, never will (then the job is simply
    /// not found). When every try fails the outcome is unknown: a warning is
    /// logged and the client still gets its ids, which is what it needs to
    /// ask again, rather than an error for work that may well run.
    pub async fn committed(&self, queue: &str) {
        self.notifier.wake(queue);
        let mut tries = 0;
        loop {
            tries += 1;
            match self.barrier.wait().await {
                Ok(()) => return,
                Err(e) if tries >= BARRIER_TRIES => {
                    tracing::warn!(queue, error = %e, tries, "a committed job's durability is unconfirmed; answering with its ids");
                    return;
                }
                Err(e) => {
                    tracing::debug!(queue, error = %e, tries, "waiting for the WAL flush failed; trying a fresh connection");
                    tokio::time::sleep(BARRIER_RETRY_DELAY).await;
                }
            }
        }
    }

    /// The durability barrier alone.
    pub fn barrier(&self) -> &Barrier {
        &self.barrier
    }

    /// The NOTIFY sender alone.
    pub fn notifier(&self) -> &Notifier {
        &self.notifier
    }
}

/// What one of this module's background tasks does each time it is woken, on a
/// connection of its own.
trait Round: Send + Sync + 'static {
    /// One round; `conn` is connected on first use and after a failure.
    fn run(&self, conn: &mut Conn) -> impl Future<Output = ()> + Send;
}

/// A task's connection: opened when first needed, dropped after a failure.
struct Conn {
    pool: PgPool,
    conn: Option<PgConnection>,
}

impl Conn {
    /// Runs `sql` (simple-query protocol); on failure the connection is dropped
    /// and the next call reconnects.
    async fn execute(&mut self, sql: String) -> Result<(), StorageError> {
        let conn = match &mut self.conn {
            Some(c) => c,
            None => self
                .conn
                .insert(PgConnection::connect_with(&self.pool.connect_options()).await?),
        };
        let r = sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(&mut *conn)
            .await;
        if r.is_err() {
            self.conn = None;
        }
        r.map(|_| ()).map_err(Into::into)
    }
}

/// The handle side of a background task: wakes it; the task ends when the
/// last clone of the handle is dropped.
struct Task<R> {
    shared: Arc<Shared<R>>,
}

struct Shared<R> {
    round: R,
    signal: Notify,
    closed: AtomicBool,
}

impl<R: Round> Task<R> {
    fn start(round: R, pool: &PgPool) -> Arc<Self> {
        let shared = Arc::new(Shared {
            round,
            signal: Notify::new(),
            closed: AtomicBool::new(false),
        });
        tokio::spawn(drive(shared.clone(), pool.clone()));
        Arc::new(Self { shared })
    }

    /// Runs a round soon: now if the task is idle, else right after the
    /// current one (any number of calls meanwhile make one round).
    fn wake(&self) {
        self.shared.signal.notify_one();
    }

    fn round(&self) -> &R {
        &self.shared.round
    }
}

impl<R> Drop for Task<R> {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::Release);
        self.shared.signal.notify_one();
    }
}

async fn drive<R: Round>(shared: Arc<Shared<R>>, pool: PgPool) {
    let mut conn = Conn { pool, conn: None };
    loop {
        shared.signal.notified().await;
        if shared.closed.load(Ordering::Acquire) {
            if let Some(c) = conn.conn.take() {
                let _ = c.close().await;
            }
            return;
        }
        shared.round.run(&mut conn).await;
    }
}

/// Sends `NOTIFY`s for jobs enqueued by this process. Cheap to clone.
#[derive(Clone)]
pub struct Notifier {
    task: Arc<Task<Pending>>,
}

/// Queues with a job enqueued since the last NOTIFY was sent.
struct Pending(Mutex<BTreeSet<String>>);

impl Notifier {
    /// Starts the sending task, which connects to `pool`'s database on a
    /// connection of its own (not one of the pool's). Needs a Tokio runtime.
    pub fn start(pool: &PgPool) -> Self {
        Self {
            task: Task::start(Pending(Mutex::new(BTreeSet::new())), pool),
        }
    }

    /// Wakes a worker of `queue` soon (call it after the enqueueing transaction
    /// committed). Never waits; a NOTIFY that fails is logged, and the job is
    /// then found by the workers' interval poll.
    pub fn wake(&self, queue: &str) {
        if let Err(e) = valid_queue_name(queue) {
            tracing::error!(error = %e, "not notifying");
            return;
        }
        {
            let mut pending = lock(&self.task.round().0);
            if !pending.contains(queue) {
                pending.insert(queue.to_owned());
            }
        }
        self.task.wake();
    }
}

impl Round for Pending {
    /// One transaction that notifies each pending queue once, committed without
    /// waiting for the WAL flush (a lost notification only delays a job to the
    /// next poll).
    async fn run(&self, conn: &mut Conn) {
        let queues = std::mem::take(&mut *lock(&self.0));
        if queues.is_empty() {
            return;
        }
        let mut sql = String::from("BEGIN; SET LOCAL synchronous_commit = off;");
        // `wake` let only valid names in.
        for statement in queues.iter().filter_map(|q| notify_statement(q).ok()) {
            sql.push(' ');
            sql.push_str(&statement);
        }
        sql.push_str(" COMMIT;");
        if let Err(e) = conn.execute(sql).await {
            tracing::warn!(error = %e, "NOTIFY failed; the workers' interval poll will find the jobs");
        }
    }
}

/// Waits until everything this process committed so far is durable; waiters
/// that arrive while one round runs share the next. Cheap to clone.
#[derive(Clone)]
pub struct Barrier {
    task: Arc<Task<Rounds>>,
}

struct Rounds {
    /// Rounds started so far.
    started: Mutex<u64>,
    /// The last round finished, and its error if it failed.
    done: watch::Sender<(u64, Option<String>)>,
}

impl Barrier {
    /// Starts the task, which connects to `pool`'s database on a connection of
    /// its own. Needs a Tokio runtime.
    pub fn start(pool: &PgPool) -> Self {
        let rounds = Rounds {
            started: Mutex::new(0),
            done: watch::channel((0, None)).0,
        };
        Self {
            task: Task::start(rounds, pool),
        }
    }

    /// Returns once every transaction this process committed before the call
    /// is durable (the WAL flushed past its commit).
    pub async fn wait(&self) -> Result<(), StorageError> {
        let rounds = self.task.round();
        let mut done = rounds.done.subscribe();
        // A round already running may have begun before our commit: wait for
        // the next one.
        let need = *lock(&rounds.started) + 1;
        self.task.wake();
        let failed = done
            .wait_for(|(round, _)| *round >= need)
            .await
            .map_err(|_| StorageError::Durability("the durability task stopped".to_owned()))?
            .1
            .clone();
        match failed {
            None => Ok(()),
            Some(e) => Err(StorageError::Durability(e)),
        }
    }
}

impl Round for Rounds {
    /// A transaction that gets a transaction id (so it writes a commit record)
    /// and commits with `synchronous_commit = on`: it returns once the WAL is
    /// flushed up to its commit, which follows every earlier commit.
    async fn run(&self, conn: &mut Conn) {
        let round = {
            let mut started = lock(&self.started);
            *started += 1;
            *started
        };
        let sql = "SET synchronous_commit = on; SELECT pg_current_xact_id();".to_owned();
        let failed = match conn.execute(sql).await {
            Ok(()) => None,
            Err(e) => {
                tracing::warn!(error = %e, "waiting for the WAL flush failed");
                Some(e.to_string())
            }
        };
        self.done.send_replace((round, failed));
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
