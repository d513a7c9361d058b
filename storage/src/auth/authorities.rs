//! Authorities: the tenants of the auth service, found by the request's host.

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

use crate::{StorageError, keys};

/// A tenant.
#[derive(Debug, Clone)]
pub struct Authority {
    /// Its id.
    pub id: Uuid,
    /// Display name.
    pub name: String,
    /// Free text.
    pub description: String,
    /// The host name it serves (the `aud` of its tokens).
    pub domain: String,
    /// Where to send a browser to sign in (`{{url}}` is replaced by the return URL).
    pub login_url: String,
    /// Where to send a browser after logout.
    pub logout_url: String,
    /// Internal settings (`session_timeout` in minutes).
    pub internals: Value,
    /// Settings shown to clients.
    pub config: Value,
    /// The organization billed for the Bearer tokens it issues.
    pub organization_id: Uuid,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

impl Authority {
    /// `internals.session_timeout` in minutes, when set to a positive number.
    pub fn session_timeout_minutes(&self) -> Option<u64> {
        let v = self.internals.get("session_timeout")?;
        v.as_u64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            .filter(|m| *m > 0)
    }
}

macro_rules! authority_from_row {
    ($r:expr) => {{
        let r = $r;
        Authority {
            id: r.id,
            name: r.name,
            description: r.description,
            domain: r.domain,
            login_url: r.login_url,
            logout_url: r.logout_url,
            internals: r.internals,
            config: r.config,
            organization_id: r.organization_id,
            updated_at: r.updated_at,
        }
    }};
}

/// The authority serving `host` (a host name without port). When no authority has
/// that domain and exactly one authority exists, that one serves every host (the
/// single-tenant set-up).
pub async fn resolve(pool: &PgPool, host: &str) -> Result<Option<Authority>, StorageError> {
    let rows = sqlx::query!(
        r#"SELECT id, name, description, domain, login_url, logout_url, internals, config,
                  organization_id, updated_at
           FROM authorities ORDER BY (domain = $1) DESC, created_at LIMIT 2"#,
        host
    )
    .fetch_all(pool)
    .await?;
    let single = rows.len() == 1;
    Ok(rows
        .into_iter()
        .next()
        .filter(|r| single || r.domain.eq_ignore_ascii_case(host))
        .map(|r| authority_from_row!(r)))
}

/// The authority with this exact domain.
pub async fn by_domain(pool: &PgPool, domain: &str) -> Result<Option<Authority>, StorageError> {
    let row = sqlx::query!(
        r#"SELECT id, name, description, domain, login_url, logout_url, internals, config,
                  organization_id, updated_at
           FROM authorities WHERE domain = $1"#,
        domain
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| authority_from_row!(r)))
}

/// The authority of `domain`, created (with an organization of the same name) when missing.
pub async fn ensure(pool: &PgPool, domain: &str) -> Result<Authority, StorageError> {
    if let Some(a) = by_domain(pool, domain).await? {
        return Ok(a);
    }
    let org = keys::ensure_organization(pool, &format!("authority {domain}")).await?;
    sqlx::query!(
        r#"INSERT INTO authorities (id, name, domain, organization_id) VALUES ($1, $2, $2, $3)
           ON CONFLICT (domain) DO NOTHING"#,
        Uuid::new_v4(),
        domain,
        org
    )
    .execute(pool)
    .await?;
    by_domain(pool, domain)
        .await?
        .ok_or_else(|| StorageError::Database(sqlx::Error::RowNotFound))
}

/// Sets `internals` of an authority (operators; tests of the session timeout).
pub async fn set_internals(pool: &PgPool, id: Uuid, internals: &Value) -> Result<(), StorageError> {
    sqlx::query!(
        "UPDATE authorities SET internals = $2, updated_at = now() WHERE id = $1",
        id,
        internals
    )
    .execute(pool)
    .await?;
    Ok(())
}
