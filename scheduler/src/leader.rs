//! Leader election with a session-level PostgreSQL advisory lock held on a
//! dedicated connection: if the process dies, its connection closes and the lock
//! is free for another scheduler.

use sqlx::pool::PoolConnection;
use sqlx::{PgPool, Postgres};

/// Advisory lock key of the scheduler leader ("tolk-scheduler").
pub const LOCK_KEY: i64 = 0x746f_6c6b_7363_6864;

/// The leader state of this process.
pub struct Leader {
    pool: PgPool,
    conn: Option<PoolConnection<Postgres>>,
}

impl Leader {
    /// Not leading yet.
    pub fn new(pool: PgPool) -> Self {
        Self { pool, conn: None }
    }

    /// True when this process holds the lock (taking it if free).
    pub async fn ensure(&mut self) -> Result<bool, sqlx::Error> {
        if let Some(conn) = self.conn.as_mut() {
            // Still alive? A broken connection means the lock is gone.
            if sqlx::query_scalar!("SELECT 1 AS \"one!\"")
                .fetch_one(&mut **conn)
                .await
                .is_ok()
            {
                return Ok(true);
            }
            tracing::warn!("lost the leader connection");
            self.conn = None;
        }
        let mut conn = self.pool.acquire().await?;
        let got = sqlx::query_scalar!("SELECT pg_try_advisory_lock($1) AS \"got!\"", LOCK_KEY)
            .fetch_one(&mut *conn)
            .await?;
        if got {
            tracing::info!("this scheduler is the leader");
            // Keep the connection out of the pool for as long as we lead.
            self.conn = Some(conn);
        }
        Ok(got)
    }

    /// Gives the lock up.
    pub async fn release(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            let _ = sqlx::query_scalar!("SELECT pg_advisory_unlock($1) AS \"ok!\"", LOCK_KEY)
                .fetch_one(&mut *conn)
                .await;
        }
    }
}
