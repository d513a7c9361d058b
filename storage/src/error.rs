//! The storage error type.

/// Anything that can go wrong talking to PostgreSQL, the queue or the object store.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// A database error.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// A migration failed.
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The queue backend failed.
    #[error("queue error: {0}")]
    Queue(#[from] apalis_postgres::Error),
    /// The object store failed.
    #[error("object store error: {0}")]
    Object(#[from] object_store::Error),
    /// The object store URL or settings are not usable.
    #[error("object store configuration: {0}")]
    ObjectConfig(String),
    /// A queue argument (job id, queue name) is malformed.
    #[error("queue argument: {0}")]
    QueueArgument(String),
    /// Waiting for committed work to become durable failed (the WAL flush
    /// could not be confirmed).
    #[error("durability: {0}")]
    Durability(String),
    /// The usage appender's task is gone (the process is shutting down).
    #[error("usage appender: {0}")]
    Unavailable(String),
    /// A job payload could not be (de)serialized.
    #[error("job payload: {0}")]
    Payload(#[from] serde_json::Error),
}
