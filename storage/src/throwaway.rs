//! Throwaway PostgreSQL databases for the benches and the end-to-end tests
//! (feature `throwaway`): created on a server, migrated with the platform's
//! own migrator, dropped at the end.

use sqlx::postgres::PgPoolOptions;
use sqlx::{Connection, PgConnection, PgPool};

use crate::StorageError;

type Result<T> = std::result::Result<T, StorageError>;

/// A database of a bench's or a test's own on the server of an admin URL.
pub struct ThrowawayDb {
    /// The database's name.
    pub name: String,
    /// The admin URL (a database to connect to for CREATE and DROP DATABASE).
    admin_url: String,
}

impl ThrowawayDb {
    /// Creates database `name` on the server of `admin_url` (a database to connect
    /// to for CREATE and DROP DATABASE), dropping a leftover of that name first, and
    /// migrates it with the platform's own migrator (`crate::db::migrate`:
    /// apalis' schema and ours). If the migration fails, the database is dropped.
    pub async fn create(admin_url: &str, name: &str) -> Result<Self> {
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
    pub fn existing(admin_url: &str, name: &str) -> Self {
        Self {
            name: name.to_owned(),
            admin_url: admin_url.to_owned(),
        }
    }

    /// Runs the platform's migrations on the database.
    pub async fn migrate(&self) -> Result<()> {
        let pool = PgPoolOptions::new()
            .max_connections(1)
            .connect(&self.url()?)
            .await?;
        let migrated = crate::db::migrate(&pool).await;
        pool.close().await;
        migrated
    }

    /// The database's URL: the admin URL's, with `sslmode=disable`.
    pub fn url(&self) -> Result<String> {
        self.url_with(&[("sslmode", "disable")])
    }

    /// The database's URL: the admin URL's, with the query parameters `set` set
    /// (replacing any of the same name).
    pub fn url_with(&self, set: &[(&str, &str)]) -> Result<String> {
        let mut u = url::Url::parse(&self.admin_url)
            .map_err(|e| StorageError::DatabaseUrl(format!("{}: {e}", self.admin_url)))?;
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
    pub async fn connect(&self, size: u32) -> Result<PgPool> {
        let options = self.url()?.parse()?;
        crate::db::connect(options, size).await
    }

    /// Drops the database, closing whatever sessions it still has.
    pub async fn drop_database(&self) -> Result<()> {
        self.admin(&format!(
            "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
            self.name
        ))
        .await
    }

    /// Runs one statement on the admin database.
    pub async fn admin(&self, sql: &str) -> Result<()> {
        let mut conn = PgConnection::connect(&self.admin_url).await?;
        let done = sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
            .execute(&mut conn)
            .await;
        let _ = conn.close().await;
        done.map(|_| ()).map_err(StorageError::from)
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
