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
    /// A database URL cannot be read.
    #[error("database URL: {0}")]
    DatabaseUrl(String),
    /// A job payload could not be (de)serialized.
    #[error("job payload: {0}")]
    Payload(#[from] serde_json::Error),
}

impl StorageError {
    /// Whether the database (or the queue on it) could not be reached: no
    /// connection within the pool's acquire timeout, a connection lost or
    /// refused, a server shutting down or starting up. The same call may
    /// succeed once the database is back; the API answers 503.
    pub fn is_unavailable(&self) -> bool {
        match self {
            Self::Database(e) | Self::Queue(apalis_postgres::Error::Database(e)) => {
                database_unavailable(e)
            }
            Self::Durability(_) => true,
            _ => false,
        }
    }
}

/// Whether `e` means the database could not be reached (see
/// [`StorageError::is_unavailable`]): SQLSTATE classes 08 (connection
/// exception) and 57P (operator intervention: shutdown, cannot connect now),
/// 53300 (too many connections), and the pool's and socket's own failures.
pub fn database_unavailable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::BeginFailed => true,
        sqlx::Error::Database(d) => d
            .code()
            .is_some_and(|c| c.starts_with("08") || c.starts_with("57P") || c == "53300"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_failures_are_unavailable_and_others_are_not() {
        assert!(StorageError::Database(sqlx::Error::PoolTimedOut).is_unavailable());
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert!(StorageError::Database(sqlx::Error::Io(refused)).is_unavailable());
        assert!(StorageError::Durability("flush".into()).is_unavailable());
        assert!(!StorageError::Database(sqlx::Error::RowNotFound).is_unavailable());
        assert!(!StorageError::QueueArgument("x".into()).is_unavailable());
    }
}
