//! Connection pool, database URL resolution and migrations.

use std::time::Duration;

use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::StorageError;

/// The application's own migrations (folder `migrations/` at the workspace root).
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// The parts from which a database URL can be resolved, in order of precedence:
/// `DATABASE_URL`, `PG_DATABASE_URL`, then `PG_HOST`/`PG_PORT`/`PG_DB`/`PG_USER`/`PG_PASSWORD`
/// (the names the auth service specification uses).
#[derive(Debug, Clone, Default)]
pub struct DatabaseSettings {
    /// `DATABASE_URL`.
    pub database_url: Option<String>,
    /// `PG_DATABASE_URL`.
    pub pg_database_url: Option<String>,
    /// `PG_HOST`.
    pub host: Option<String>,
    /// `PG_PORT`.
    pub port: Option<u16>,
    /// `PG_DB`.
    pub db: Option<String>,
    /// `PG_USER`.
    pub user: Option<String>,
    /// `PG_PASSWORD`.
    pub password: Option<String>,
}

impl DatabaseSettings {
    /// The connection options these settings describe; the single-machine default is
    /// `postgres://postgres@127.0.0.1:5432/tolk`.
    pub fn connect_options(&self) -> Result<PgConnectOptions, StorageError> {
        let url = self
            .database_url
            .as_deref()
            .filter(|s| !s.is_empty())
            .or(self.pg_database_url.as_deref().filter(|s| !s.is_empty()));
        if let Some(url) = url {
            return Ok(url.parse::<PgConnectOptions>()?);
        }
        let mut opts = PgConnectOptions::new_without_pgpass()
            .host(self.host.as_deref().unwrap_or("127.0.0.1"))
            .port(self.port.unwrap_or(5432))
            .database(self.db.as_deref().unwrap_or("tolk"))
            .username(self.user.as_deref().unwrap_or("postgres"));
        if let Some(pw) = &self.password {
            opts = opts.password(pw);
        }
        Ok(opts)
    }
}

/// Opens a pool with at most `max_connections` connections.
pub async fn connect(
    options: PgConnectOptions,
    max_connections: u32,
) -> Result<PgPool, StorageError> {
    Ok(PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(options)
        .await?)
}

/// Runs every pending migration: the queue's (schema `apalis`) and the application's.
pub async fn migrate(pool: &PgPool) -> Result<(), StorageError> {
    apalis_postgres::PostgresStorage::<()>::setup(pool).await?;
    MIGRATOR.run(pool).await?;
    Ok(())
}
