//! The bench database and how to reach it: one URL per transport, the pools of
//! a setting, and the observer connection that resets, checkpoints and checks
//! completion.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Connection, PgConnection, PgPool};

use super::noise::NoiseSampler;
use super::raw::RAW_SCHEMA;
use super::settings::{TolkSetting, Transport};
use super::{Plan, QUEUE};
use tolk_storage::throwaway::ThrowawayDb;

/// The bench database and how to reach it.
pub(super) struct Bench {
    pub(super) db_name: String,
    /// The bench database, sslmode as in the admin URL.
    url_default: String,
    /// The bench database, `sslmode=require`.
    url_tls: String,
    /// The bench database, `sslmode=disable`.
    url_no_tls: String,
    /// The bench database over the Unix socket.
    url_unix: String,
    /// Observer connection (`sslmode=disable`): resets, checkpoints, completion checks.
    pub(super) obs: PgPool,
    pub(super) noise: NoiseSampler,
    /// Time cap of one burn-down.
    pub(super) cap: Duration,
    /// Jobs per INSERT in the burn-downs.
    pub(super) chunk: usize,
}

impl Bench {
    /// Connects to the migrated bench database `db`: the URL of each transport, the
    /// observer connection, the raw loop's table, `--setup-sql`, and the sampler of
    /// outside disturbance.
    pub(super) async fn open(
        plan: &Plan,
        admin: &PgConnectOptions,
        db: &ThrowawayDb,
    ) -> anyhow::Result<Self> {
        let args = &plan.args;
        let url_default = db.url_with(&[])?;
        let url_no_tls = db.url_with(&[("sslmode", "disable")])?;
        let url_tls = db.url_with(&[("sslmode", "require")])?;
        let port = admin.get_port();
        let socket = args.socket_dir.join(format!(".s.PGSQL.{port}"));
        let url_unix = if socket.exists() {
            let dir = args.socket_dir.to_string_lossy();
            db.url_with(&[("sslmode", "disable"), ("host", &dir)])?
        } else {
            println!(
                "warning: no PostgreSQL socket at {}: the \"Unix socket\" settings use TCP sslmode=disable",
                socket.display()
            );
            url_no_tls.clone()
        };
        let obs_opts: PgConnectOptions = url_no_tls.parse().context("parsing the bench URL")?;
        let obs = PgPoolOptions::new()
            .max_connections(1)
            .connect_with(obs_opts)
            .await
            .context("connecting to the bench database")?;
        sqlx::raw_sql(RAW_SCHEMA)
            .execute(&obs)
            .await
            .context("creating raw_jobs")?;
        if let Some(path) = &args.setup_sql {
            let sql = std::fs::read_to_string(path)
                .with_context(|| format!("reading --setup-sql {}", path.display()))?;
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
                .execute(&obs)
                .await
                .with_context(|| format!("running --setup-sql {}", path.display()))?;
            println!(
                "Ran {} on the bench database (--setup-sql).",
                path.display()
            );
        }
        Ok(Self {
            db_name: db.name.clone(),
            url_default,
            url_tls,
            url_no_tls,
            url_unix,
            obs,
            noise: NoiseSampler::start(admin, &db.name).await?,
            chunk: args.chunk.max(1),
            cap: plan.cap,
        })
    }

    pub(super) fn url(&self, t: Transport) -> &str {
        match t {
            Transport::Url => &self.url_default,
            Transport::Tls => &self.url_tls,
            Transport::NoTls => &self.url_no_tls,
            Transport::Unix => &self.url_unix,
        }
    }

    /// A pool of setting `s`: the platform's, or sqlx's default (`ping_always`).
    pub(super) async fn pool_of(&self, s: &TolkSetting, size: u32) -> anyhow::Result<PgPool> {
        self.pool_with(s, self.connect_options(s.transport)?, size)
            .await
    }

    /// A pool of `size` on `options`: the platform's (`tolk_storage::db::connect`),
    /// or sqlx's default one for the toggle `ping`.
    pub(super) async fn pool_with(
        &self,
        s: &TolkSetting,
        options: PgConnectOptions,
        size: u32,
    ) -> anyhow::Result<PgPool> {
        if !s.ping_always {
            return tolk_storage::db::connect(options, size)
                .await
                .context("connecting to the bench database");
        }
        PgPoolOptions::new()
            .max_connections(size)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options)
            .await
            .context("connecting to the bench database")
    }

    /// The options of transport `t`, as the platform reads DATABASE_URL.
    pub(super) fn connect_options(&self, t: Transport) -> anyhow::Result<PgConnectOptions> {
        tolk_storage::db::DatabaseSettings {
            database_url: Some(self.url(t).to_owned()),
            ..Default::default()
        }
        .connect_options()
        .context("parsing the bench URL")
    }

    pub(super) async fn pool(&self, t: Transport, size: u32) -> anyhow::Result<PgPool> {
        tolk_storage::db::connect(self.connect_options(t)?, size)
            .await
            .context("connecting to the bench database")
    }

    /// `ANALYZE` a table, as autovacuum does within a minute of a large insert.
    pub(super) async fn analyze(&self, table: &str) -> anyhow::Result<()> {
        sqlx::query(sqlx::AssertSqlSafe(format!("ANALYZE {table}")))
            .execute(&self.obs)
            .await
            .with_context(|| format!("ANALYZE {table}"))?;
        Ok(())
    }

    pub(super) async fn checkpoint(&self) -> anyhow::Result<()> {
        sqlx::query("CHECKPOINT")
            .execute(&self.obs)
            .await
            .context("CHECKPOINT")?;
        // Let the checkpoint's writes and the sampler settle.
        tokio::time::sleep(Duration::from_millis(200)).await;
        self.noise.take();
        Ok(())
    }

    pub(super) async fn wait_tolk_rows_done(&self, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let left: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM apalis.jobs WHERE job_type = $1 AND status <> 'Done'",
            )
            .bind(QUEUE)
            .fetch_one(&self.obs)
            .await
            .context("counting unfinished apalis rows")?;
            if left == 0 {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!(
                    "{left} apalis rows still not Done after {} s",
                    timeout.as_secs()
                );
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// `--log-statements-ms`: the server logs every statement of the bench database
/// slower than `ms` (`ALTER DATABASE … SET log_min_duration_statement`).
pub(super) async fn log_statements(
    admin: &PgConnectOptions,
    db: &ThrowawayDb,
    ms: u32,
) -> anyhow::Result<()> {
    db.admin(&format!(
        "ALTER DATABASE \"{}\" SET log_min_duration_statement = {ms}",
        db.name
    ))
    .await
    .context("setting log_min_duration_statement")?;
    let mut conn = PgConnection::connect_with(admin)
        .await
        .context("connecting to the admin database")?;
    let log: Option<String> = sqlx::query_scalar("SELECT pg_current_logfile()")
        .fetch_one(&mut conn)
        .await
        .unwrap_or(None);
    let _ = conn.close().await;
    println!(
        "Logging statements of {} slower than {ms} ms to the server log{}.",
        db.name,
        log.map(|l| format!(" ({l})")).unwrap_or_default()
    );
    Ok(())
}
