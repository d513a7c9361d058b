//! Connection pool, database URL resolution and migrations.

use std::time::Duration;

use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions, PgSslMode};

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
    ///
    /// A loopback host or a Unix socket with no `sslmode` in the URL (nor
    /// `PGSSLMODE`) connects without TLS: sqlx's default `prefer` would encrypt
    /// loopback traffic for nothing, and `tolk-bench queue` measured the queue at a
    /// third of its speed with it. Say `sslmode=require` to keep TLS anyway.
    pub fn connect_options(&self) -> Result<PgConnectOptions, StorageError> {
        let url = self
            .database_url
            .as_deref()
            .filter(|s| !s.is_empty())
            .or(self.pg_database_url.as_deref().filter(|s| !s.is_empty()));
        let sslmode_given =
            std::env::var_os("PGSSLMODE").is_some() || url.is_some_and(|u| u.contains("sslmode="));
        let opts = self.options_for(url)?;
        Ok(if !sslmode_given && is_local_host(opts.get_host()) {
            opts.ssl_mode(PgSslMode::Disable)
        } else {
            opts
        })
    }

    fn options_for(&self, url: Option<&str>) -> Result<PgConnectOptions, StorageError> {
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

/// Whether `host` is this machine: a loopback name or address, or a Unix socket folder.
pub fn is_local_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.starts_with('/')
        || host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// A pooled connection idle for at least this long is pinged before it is
/// handed out; one used more recently is handed out as it is.
///
/// sqlx's default (`test_before_acquire`) pings on every checkout: one more
/// round trip to PostgreSQL before every query or transaction of the platform
/// (a ledger append, a queue fetch or ack). HikariCP skips its validation the
/// same way for connections used within the last 500 ms. A connection that breaks
/// within the window fails its next query, and sqlx then drops it from the pool.
/// `tolk-bench queue` (toggle `ping`) showed no difference beyond its noise on
/// 2 cores, where PostgreSQL's CPU, not round trips, bounds the queue.
pub const PING_IF_IDLE_FOR: Duration = Duration::from_secs(1);

/// How long a query waits for a pool connection by default before failing
/// with `PoolTimedOut` (also while the database is unreachable).
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens a pool with at most `max_connections` connections.
pub async fn connect(
    options: PgConnectOptions,
    max_connections: u32,
) -> Result<PgPool, StorageError> {
    connect_waiting(options, max_connections, ACQUIRE_TIMEOUT).await
}

/// [`connect`] whose queries wait at most `acquire_timeout` for a connection:
/// while the database is unreachable they fail after that long (the API turns
/// the failure into a 503) instead of [`ACQUIRE_TIMEOUT`].
pub async fn connect_waiting(
    options: PgConnectOptions,
    max_connections: u32,
    acquire_timeout: Duration,
) -> Result<PgPool, StorageError> {
    Ok(pool_options(max_connections)
        .acquire_timeout(acquire_timeout)
        .connect_with(options)
        .await?)
}

/// A pool on `db`'s database, of its size, whose transactions commit without
/// waiting for the WAL flush (`synchronous_commit = off`), connecting when first
/// used. The workers' queue bookkeeping (apalis' fetches, acks and heartbeats)
/// runs on it: a fetch that waited for a flush kept a job from starting while
/// the disk was slow (`tolk-bench queue`), and what such a commit can lose —
/// only in a crash of PostgreSQL itself, about the last 0.6 s — is a lock or an
/// acknowledgement: the job runs again, and every handler skips work its own
/// (durable) writes recorded as finished. A handler's first durable commit also
/// flushes the WAL up to it, fetch included.
///
/// Its connections also plan every statement for its parameters and the table's
/// size at the time ([`queue_options`]).
pub fn relaxed_pool(db: &PgPool) -> PgPool {
    let options = queue_options((*db.connect_options()).clone());
    pool_options(db.options().get_max_connections()).connect_lazy_with(options)
}

/// `options` with the settings of the workers' queue connections
/// ([`relaxed_pool`]): `synchronous_commit = off`, and `plan_cache_mode =
/// force_custom_plan`. apalis' fetch and ack are prepared statements, and after
/// five runs PostgreSQL may keep a generic plan made for the table's size at that
/// moment. `apalis.jobs` swings from a few rows to a backlog of 100,000 within a
/// second, and a generic ack planned on the near-empty table scanned the whole
/// backlog for every acknowledgement until autovacuum next analyzed the table,
/// up to a minute later, slowing `tolk-bench queue`'s burn-down by an order of
/// magnitude. Planning each
/// statement costs a fraction of a millisecond; a fetch or ack of a batch pays it
/// once.
pub fn queue_options(options: PgConnectOptions) -> PgConnectOptions {
    options.options([
        ("synchronous_commit", "off"),
        ("plan_cache_mode", "force_custom_plan"),
    ])
}

fn pool_options(max_connections: u32) -> PgPoolOptions {
    PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for >= PING_IF_IDLE_FOR {
                    sqlx::Connection::ping(conn).await?;
                }
                Ok(true)
            })
        })
}

/// Runs every pending migration: the queue's (schema `apalis`) and the application's.
pub async fn migrate(pool: &PgPool) -> Result<(), StorageError> {
    apalis_postgres::PostgresStorage::<()>::setup(pool).await?;
    repair_reworded(pool).await?;
    MIGRATOR.run(pool).await?;
    Ok(())
}

/// Migrations whose text was reworded after release (comments only: what
/// they do is unchanged), with the SHA-384 checksum of the text they were
/// first applied with.
const REWORDED: &[(i64, &str)] = &[(
    20261125100001,
    "ba214275a2784a8972712254bf84d6b136c8334e791404d70449e20dc180f19f04fe612b2fa69a6fae100bb178eb7b7d",
)];

/// Brings the recorded checksum of a [`REWORDED`] migration applied with its
/// first text up to date, as Flyway's `repair` does, so that a database
/// migrated before the rewording still passes sqlx's check. A row with any
/// other checksum is left for that check to refuse.
async fn repair_reworded(pool: &PgPool) -> Result<(), StorageError> {
    let table: Option<String> =
        sqlx::query_scalar!(r#"SELECT to_regclass('_sqlx_migrations')::text AS "t""#)
            .fetch_one(pool)
            .await?;
    if table.is_none() {
        return Ok(());
    }
    for (version, old) in REWORDED {
        let Some(migration) = MIGRATOR.iter().find(|m| m.version == *version) else {
            continue;
        };
        let old = (0..old.len())
            .step_by(2)
            .filter_map(|i| u8::from_str_radix(old.get(i..i + 2)?, 16).ok())
            .collect::<Vec<u8>>();
        // sqlx's own bookkeeping table, outside the schema the queries are checked against.
        sqlx::query(
            "UPDATE _sqlx_migrations SET checksum = $1 WHERE version = $2 AND checksum = $3",
        )
        .bind(migration.checksum.as_ref())
        .bind(version)
        .bind(old)
        .execute(pool)
        .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_hosts() {
        assert!(is_local_host("127.0.0.1"));
        assert!(is_local_host("127.0.1.1"));
        assert!(is_local_host("::1"));
        assert!(is_local_host("[::1]"));
        assert!(is_local_host("localhost"));
        assert!(is_local_host("/var/run/postgresql"));
        assert!(!is_local_host("db.example.com"));
        assert!(!is_local_host("10.0.0.5"));
    }

    #[test]
    fn loopback_urls_skip_tls_unless_asked() {
        let s = |url: &str| DatabaseSettings {
            database_url: Some(url.to_owned()),
            ..Default::default()
        };
        let mode = |url: &str| format!("{:?}", s(url).connect_options().unwrap().get_ssl_mode());
        if std::env::var_os("PGSSLMODE").is_none() {
            assert_eq!(mode("postgres://u@127.0.0.1:5432/d"), "Disable");
            assert_eq!(mode("postgres://u@db.example.com/d"), "Prefer");
        }
        assert_eq!(
            mode("postgres://u@127.0.0.1:5432/d?sslmode=require"),
            "Require"
        );
    }
}
