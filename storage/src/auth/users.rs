//! Users of an authority, looked up by `md5(lower(email))` as the earlier deployment did.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use crate::StorageError;

/// Permission bit: support staff.
pub const SUPPORT: i32 = 1;
/// Permission bit: system administrator.
pub const SYS_ADMIN: i32 = 2;

/// A user.
#[derive(Debug, Clone)]
pub struct User {
    /// `user-…`.
    pub id: String,
    /// Its authority.
    pub authority_id: Uuid,
    /// Display name.
    pub name: String,
    /// Email as given.
    pub email: String,
    /// bcrypt digest; empty for SSO-only users.
    pub password_digest: String,
    /// Bitmask of [`SUPPORT`] and [`SYS_ADMIN`].
    pub permissions: i32,
    /// Roles.
    pub groups: Vec<String>,
    /// Last logout: tokens issued before it are refused.
    pub logged_out_at: Option<DateTime<Utc>>,
    /// Soft deletion.
    pub deleted_at: Option<DateTime<Utc>>,
}

macro_rules! user_from_row {
    ($r:expr) => {{
        let r = $r;
        User {
            id: r.id,
            authority_id: r.authority_id,
            name: r.name,
            email: r.email,
            password_digest: r.password_digest,
            permissions: r.permissions,
            groups: r.groups,
            logged_out_at: r.logged_out_at,
            deleted_at: r.deleted_at,
        }
    }};
}

/// A new user id: `user-` and 14 base-62 characters.
pub fn new_id() -> String {
    super::random_id("user")
}

/// Creates a user; `None` when the authority already has one with this email.
pub async fn create(
    pool: &PgPool,
    authority_id: Uuid,
    email: &str,
    name: &str,
    password_digest: &str,
    permissions: i32,
) -> Result<Option<User>, StorageError> {
    let row = sqlx::query!(
        r#"INSERT INTO users (id, authority_id, name, email, email_digest, password_digest, permissions)
           VALUES ($1, $2, $3, $4, md5(lower($4)), $5, $6)
           ON CONFLICT (authority_id, email_digest) DO NOTHING
           RETURNING id, authority_id, name, email, password_digest, permissions, groups,
                     logged_out_at, deleted_at"#,
        new_id(),
        authority_id,
        name,
        email,
        password_digest,
        permissions
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| user_from_row!(r)))
}

/// The authority's user with this email (any case), deleted ones included.
pub async fn by_email(
    pool: &PgPool,
    authority_id: Uuid,
    email: &str,
) -> Result<Option<User>, StorageError> {
    let row = sqlx::query!(
        r#"SELECT id, authority_id, name, email, password_digest, permissions, groups,
                  logged_out_at, deleted_at
           FROM users WHERE authority_id = $1 AND email_digest = md5(lower($2))"#,
        authority_id,
        email
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| user_from_row!(r)))
}

/// The user with this id.
pub async fn by_id(pool: &PgPool, id: &str) -> Result<Option<User>, StorageError> {
    let row = sqlx::query!(
        r#"SELECT id, authority_id, name, email, password_digest, permissions, groups,
                  logged_out_at, deleted_at
           FROM users WHERE id = $1"#,
        id
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| user_from_row!(r)))
}

/// Stamps `logged_out_at = now()`: every token issued before is refused from now on.
pub async fn stamp_logged_out(pool: &PgPool, id: &str) -> Result<(), StorageError> {
    sqlx::query!(
        "UPDATE users SET logged_out_at = clock_timestamp(), updated_at = now() WHERE id = $1",
        id
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// The authority's user that signed in before as `uid` of `provider` (a
/// strategy id), through its `user_auth_lookups` record.
pub async fn by_lookup(
    pool: &PgPool,
    authority_id: Uuid,
    provider: &str,
    uid: &str,
) -> Result<Option<User>, StorageError> {
    let row = sqlx::query!(
        r#"SELECT u.id, u.authority_id, u.name, u.email, u.password_digest, u.permissions,
                  u.groups, u.logged_out_at, u.deleted_at
           FROM user_auth_lookups l JOIN users u ON u.id = l.user_id
           WHERE l.id = $1 AND u.authority_id = $2"#,
        lookup_id(authority_id, provider, uid),
        authority_id
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| user_from_row!(r)))
}

/// The id of a lookup record: `auth-{authority}-{provider}-{uid}`.
pub fn lookup_id(authority_id: Uuid, provider: &str, uid: &str) -> String {
    format!("auth-{authority_id}-{provider}-{uid}")
}

/// Records that `user_id` is `uid` at `provider` (kept when it exists).
pub async fn add_lookup(
    pool: &PgPool,
    authority_id: Uuid,
    user_id: &str,
    provider: &str,
    uid: &str,
) -> Result<(), StorageError> {
    sqlx::query!(
        r#"INSERT INTO user_auth_lookups (id, user_id, provider, uid) VALUES ($1, $2, $3, $4)
           ON CONFLICT (id) DO NOTHING"#,
        lookup_id(authority_id, provider, uid),
        user_id,
        provider,
        uid
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Stores the identity provider's tokens on the user (e.g. a Graph token).
pub async fn store_provider_tokens(
    pool: &PgPool,
    id: &str,
    access_token: &str,
    refresh_token: Option<&str>,
    expires_at: Option<DateTime<Utc>>,
) -> Result<(), StorageError> {
    sqlx::query!(
        r#"UPDATE users SET access_token = $2, refresh_token = COALESCE($3, refresh_token),
                  expires_at = $4, updated_at = now()
           WHERE id = $1"#,
        id,
        access_token,
        refresh_token,
        expires_at
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// A user's provider tokens as stored (sealed, or from before sealing).
#[derive(Debug, Clone)]
pub struct StoredProviderTokens {
    /// The user.
    pub id: String,
    /// The access token.
    pub access_token: Option<String>,
    /// The refresh token.
    pub refresh_token: Option<String>,
}

/// Up to `limit` users after `after` (by id) holding a provider token that
/// does not start with `prefix` (not sealed with the current key).
pub async fn provider_tokens_without_prefix(
    pool: &PgPool,
    prefix: &str,
    after: &str,
    limit: i64,
) -> Result<Vec<StoredProviderTokens>, StorageError> {
    let rows = sqlx::query_as!(
        StoredProviderTokens,
        r#"SELECT id AS "id!", access_token, refresh_token FROM users
           WHERE id > $2
             AND ((access_token IS NOT NULL AND NOT starts_with(access_token, $1))
               OR (refresh_token IS NOT NULL AND NOT starts_with(refresh_token, $1)))
           ORDER BY id LIMIT $3"#,
        prefix,
        after,
        limit
    )
    .fetch_all(pool)
    .await?;
    Ok(rows)
}

/// Replaces a user's provider tokens with `new` when they are still `old`
/// (a sign-in storing fresh tokens in between wins); whether they were.
pub async fn replace_provider_tokens(
    pool: &PgPool,
    old: &StoredProviderTokens,
    new: &StoredProviderTokens,
) -> Result<bool, StorageError> {
    let done = sqlx::query!(
        r#"UPDATE users SET access_token = $4, refresh_token = $5
           WHERE id = $1 AND access_token IS NOT DISTINCT FROM $2
             AND refresh_token IS NOT DISTINCT FROM $3"#,
        old.id,
        old.access_token,
        old.refresh_token,
        new.access_token,
        new.refresh_token
    )
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Whether the user holds a provider token that has not expired (one without
/// an expiry counts as live).
pub async fn has_live_provider_token(pool: &PgPool, id: &str) -> Result<bool, StorageError> {
    let live = sqlx::query_scalar!(
        r#"SELECT access_token IS NOT NULL AND (expires_at IS NULL OR expires_at > now())
                  AS "live!"
           FROM users WHERE id = $1"#,
        id
    )
    .fetch_optional(pool)
    .await?;
    Ok(live.unwrap_or(false))
}
