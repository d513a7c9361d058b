//! The benches' throwaway PostgreSQL databases: created on the local server,
//! migrated with the platform's own migrator, dropped at the end.

use anyhow::{Context, Result};
use sqlx::postgres::PgPoolOptions;
use sqlx::{Connection, PgConnection, PgPool};

/// A database of a bench's own on the server of an admin URL.
pub(crate) struct ThrowawayDb {
    /// The database's name.
    pub(crate) name: String,
    /// The admin URL (a database to connect to for CREATE and DROP DATABASE).
    admin_url: String,
}

impl ThrowawayDb {
    /// Creates database `name` on the server of `admin_url` (a database to connect
    /// to for CREATE and DROP DATABASE), dropping a leftover of that name first, and
    /// migrates it with the platform's own migrator (`tolk_storage::db::migrate`:
    /// apalis' schema and ours). If the migration fails, the database is dropped.
    pub(crate) async fn create(admin_url: &str, name: &str) -> Result<Self> {
        let db = Self::existing(admin_url, name);
        db.admin(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
            .await?;
        db.admin(&format!("CREATE DATABASE \"{name}\"")).await?;
        if let Err(e) = db.migrate().await {
            let _ = db.drop_database().await;
            return Err(e);
        }
        Ok(db)
    }

    /// Database `name` on the server of `admin_url`, as it is (nothing created).
    pub(crate) fn existing(admin_url: &str, name: &str) -> Self {
        Self {
            name: name.to_owned(),
            admin_url: admin_url.to_owned(),
        }
    }

    /// Runs the platform's migrations on the database.
    pub(crate) async fn migrate(&self) -> Result<()> {
        let pool = PgPoolOptions::new()
            .max_connections(1)
            .connect(&self.url()?)
            .await
            .with_context(|| format!("connecting to database {}", self.name))?;
        let migrated = tolk_storage::db::migrate(&pool)
            .await
            .with_context(|| format!("migrating database {}", self.name));
        pool.close().await;
        migrated
    }

    /// The database's URL: the admin URL's, with `sslmode=disable`.
    pub(crate) fn url(&self) -> Result<String> {
        self.url_with(&[("sslmode", "disable")])
    }

    /// The database's URL: the admin URL's, with the query parameters `set` set
    /// (replacing any of the same name).
    pub(crate) fn url_with(&self, set: &[(&str, &str)]) -> Result<String> {
        let mut u = url::Url::parse(&self.admin_url)
            .with_context(|| format!("parsing the database URL {}", self.admin_url))?;
        u.set_path(&format!("/{}", self.name));
        let pairs: Vec<(String, String)> = u
            .query_pairs()
            .filter(|(k, _)| !set.iter().any(|(s, _)| s == k))
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        {
            let mut q = u.query_pairs_mut();
            q.clear();
            for (k, v) in &pairs {
                q.append_pair(k, v);
            }
            for (k, v) in set {
                q.append_pair(k, v);
            }
        }
        if u.query() == Some("") {
            u.set_query(None);
        }
        Ok(u.to_string())
    }

    /// A pool of `size` connections to the database, the platform's
    /// (`tolk_storage::db::connect`), on [`ThrowawayDb::url`].
    pub(crate) async fn connect(&self, size: u32) -> Result<PgPool> {
        tolk_storage::db::connect(self.url()?.parse()?, size)
            .await
            .with_context(|| format!("connecting to database {}", self.name))
    }

    /// Drops the database, closing whatever sessions it still has.
    pub(crate) async fn drop_database(&self) -> Result<()> {
        self.admin(&format!(
            "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
            self.name
        ))
        .await
    }

    /// Runs one statement on the admin database.
    pub(crate) async fn admin(&self, sql: &str) -> Result<()> {
        let mut conn = PgConnection::connect(&self.admin_url)
            .await
            .with_context(|| {
                format!(
                    "connecting to {}: PostgreSQL must be running (scripts/setup.sh)",
                    self.admin_url
                )
            })?;
        let done = sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
            .execute(&mut conn)
            .await
            .with_context(|| sql.to_owned());
        let _ = conn.close().await;
        done.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::ThrowawayDb;

    #[test]
    fn url_is_the_admin_url_on_the_database_without_tls() {
        let db = ThrowawayDb::existing("postgres://postgres@127.0.0.1:5432/postgres", "tolk_x");
        assert_eq!(
            db.url().unwrap(),
            "postgres://postgres@127.0.0.1:5432/tolk_x?sslmode=disable"
        );
        assert_eq!(
            db.url_with(&[]).unwrap(),
            "postgres://postgres@127.0.0.1:5432/tolk_x"
        );
    }

    #[test]
    fn url_with_replaces_its_parameters_and_keeps_the_others() {
        let db = ThrowawayDb::existing(
            "postgres://u@localhost/postgres?sslmode=require&application_name=a",
            "tolk_x",
        );
        assert_eq!(
            db.url_with(&[("sslmode", "disable"), ("host", "/run/pg")])
                .unwrap(),
            "postgres://u@localhost/tolk_x?application_name=a&sslmode=disable&host=%2Frun%2Fpg"
        );
    }
}
