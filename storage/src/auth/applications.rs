//! OAuth applications (clients): registered by an administrator, or
//! dynamically by public clients (RFC 7591).

use sqlx::PgPool;
use uuid::Uuid;

use crate::StorageError;

/// A registered client.
#[derive(Debug, Clone)]
pub struct Application {
    /// Row id.
    pub id: Uuid,
    /// Its authority.
    pub authority_id: Uuid,
    /// Display name (shown on the consent page).
    pub name: String,
    /// The `client_id`.
    pub uid: String,
    /// Hex SHA-256 of the secret; `None` for a public client.
    pub secret_digest: Option<String>,
    /// Registered redirect URIs (exact match; loopback on any port).
    pub redirect_uris: Vec<String>,
    /// Scopes it may ask for.
    pub scopes: Vec<String>,
    /// First-party application: no consent screen.
    pub skip_authorization: bool,
}

impl Application {
    /// A confidential client (has a secret).
    pub fn is_confidential(&self) -> bool {
        self.secret_digest.is_some()
    }
}

/// An [`Application`] from a query row with the same columns.
macro_rules! application_from_row {
    ($r:expr) => {{
        let r = $r;
        Application {
            id: r.id,
            authority_id: r.authority_id,
            name: r.name,
            uid: r.uid,
            secret_digest: r.secret_digest,
            redirect_uris: r.redirect_uris,
            scopes: r.scopes,
            skip_authorization: r.skip_authorization,
        }
    }};
}

/// What [`create`] needs.
#[derive(Debug, Clone)]
pub struct NewApplication<'a> {
    /// Its authority.
    pub authority_id: Uuid,
    /// Display name.
    pub name: &'a str,
    /// `client_id`.
    pub uid: &'a str,
    /// Digest of the secret, `None` for a public client.
    pub secret_digest: Option<&'a str>,
    /// Redirect URIs.
    pub redirect_uris: &'a [String],
    /// Scopes.
    pub scopes: &'a [String],
    /// No consent screen.
    pub skip_authorization: bool,
}

/// Registers an application.
pub async fn create(pool: &PgPool, app: NewApplication<'_>) -> Result<Application, StorageError> {
    let id = Uuid::new_v4();
    sqlx::query!(
        r#"INSERT INTO oauth_applications
             (id, authority_id, name, uid, secret_digest, redirect_uris, scopes, skip_authorization)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"#,
        id,
        app.authority_id,
        app.name,
        app.uid,
        app.secret_digest,
        app.redirect_uris,
        app.scopes,
        app.skip_authorization
    )
    .execute(pool)
    .await?;
    Ok(Application {
        id,
        authority_id: app.authority_id,
        name: app.name.to_owned(),
        uid: app.uid.to_owned(),
        secret_digest: app.secret_digest.map(str::to_owned),
        redirect_uris: app.redirect_uris.to_vec(),
        scopes: app.scopes.to_vec(),
        skip_authorization: app.skip_authorization,
    })
}

/// The application with this `client_id`.
pub async fn by_uid(pool: &PgPool, uid: &str) -> Result<Option<Application>, StorageError> {
    let row = sqlx::query!(
        r#"SELECT id, authority_id, name, uid, secret_digest, redirect_uris, scopes,
                  skip_authorization
           FROM oauth_applications WHERE uid = $1"#,
        uid
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| application_from_row!(r)))
}

/// The `client_id` prefix of dynamically registered clients.
pub const DYNAMIC_PREFIX: &str = "dcr-";

/// Key of the advisory lock that orders dynamic registrations across
/// replicas (so the hourly limit holds for all of them together).
const REGISTRATION_LOCK: i64 = 0x7463_7264; // "tcrd"

/// What a dynamic registration came to.
#[derive(Debug, Clone)]
pub enum Registration {
    /// A client with the same name and redirect URIs existed: it is returned
    /// and the registration does not count toward the limit.
    Existing(Application),
    /// A new public client.
    Created(Application),
    /// As many new clients as the limits allow were registered in the last
    /// hour; a registration is allowed again after this long.
    Limited(std::time::Duration),
}

/// How many dynamic registrations an hour may bring.
#[derive(Debug, Clone, Copy)]
pub struct RegistrationLimits {
    /// From one address.
    pub per_address: u32,
    /// From all addresses, on every authority.
    pub ceiling: u32,
}

/// Registers a public client (`dcr-…`, no secret, consent always asked)
/// unless one with the same name and redirect URIs exists on the authority,
/// and unless the `limits` are reached: as many clients registered in the
/// last hour from the address `from` (when known) or from anywhere.
/// `redirect_uris` are compared as given (callers sort them).
pub async fn register_dynamic(
    pool: &PgPool,
    app: NewApplication<'_>,
    from: Option<&str>,
    limits: RegistrationLimits,
) -> Result<Registration, StorageError> {
    let mut tx = pool.begin().await?;
    sqlx::query!("SELECT pg_advisory_xact_lock($1)", REGISTRATION_LOCK)
        .execute(&mut *tx)
        .await?;
    let existing = sqlx::query!(
        r#"SELECT id, authority_id, name, uid, secret_digest, redirect_uris, scopes,
                  skip_authorization
           FROM oauth_applications
           WHERE authority_id = $1 AND name = $2 AND redirect_uris = $3
             AND starts_with(uid, $4)
           ORDER BY created_at LIMIT 1"#,
        app.authority_id,
        app.name,
        app.redirect_uris,
        DYNAMIC_PREFIX
    )
    .fetch_optional(&mut *tx)
    .await?;
    if let Some(r) = existing {
        return Ok(Registration::Existing(application_from_row!(r)));
    }
    if let Some(from) = from
        && let Some(wait) = window_wait(&mut tx, Some(from), limits.per_address).await?
    {
        return Ok(Registration::Limited(wait));
    }
    if let Some(wait) = window_wait(&mut tx, None, limits.ceiling).await? {
        return Ok(Registration::Limited(wait));
    }
    let id = Uuid::new_v4();
    sqlx::query!(
        r#"INSERT INTO oauth_applications
             (id, authority_id, name, uid, secret_digest, redirect_uris, scopes, skip_authorization,
              registered_from)
           VALUES ($1, $2, $3, $4, NULL, $5, $6, false, $7)"#,
        id,
        app.authority_id,
        app.name,
        app.uid,
        app.redirect_uris,
        app.scopes,
        from
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Registration::Created(Application {
        id,
        authority_id: app.authority_id,
        name: app.name.to_owned(),
        uid: app.uid.to_owned(),
        secret_digest: None,
        redirect_uris: app.redirect_uris.to_vec(),
        scopes: app.scopes.to_vec(),
        skip_authorization: false,
    }))
}

/// The cached row of the client whose metadata document is at `uid` (an
/// https URL) on `authority_id`, while its cache time lasts.
pub async fn cached_metadata_client(
    pool: &PgPool,
    authority_id: Uuid,
    uid: &str,
) -> Result<Option<Application>, StorageError> {
    let row = sqlx::query!(
        r#"SELECT id, authority_id, name, uid, secret_digest, redirect_uris, scopes,
                  skip_authorization
           FROM oauth_applications
           WHERE uid = $1 AND authority_id = $2 AND metadata_expires_at > now()"#,
        uid,
        authority_id
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| application_from_row!(r)))
}

/// When `limit` dynamic registrations (from the address `from`, or from
/// anywhere) fall in the last hour: how long until the oldest that counts
/// leaves it.
async fn window_wait(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    from: Option<&str>,
    limit: u32,
) -> Result<Option<std::time::Duration>, StorageError> {
    if limit == 0 {
        return Ok(Some(std::time::Duration::from_secs(3600)));
    }
    // The limit-th newest registration of the hour, if there is one.
    let seconds = sqlx::query_scalar!(
        r#"SELECT GREATEST(EXTRACT(EPOCH FROM created_at + interval '1 hour' - now()), 1)::float8
                  AS "wait!"
           FROM oauth_applications
           WHERE starts_with(uid, $1) AND created_at > now() - interval '1 hour'
             AND ($2::text IS NULL OR registered_from = $2)
           ORDER BY created_at DESC OFFSET $3 LIMIT 1"#,
        DYNAMIC_PREFIX,
        from,
        i64::from(limit) - 1
    )
    .fetch_optional(&mut **tx)
    .await?;
    Ok(seconds.map(|s| std::time::Duration::from_secs_f64(s.ceil())))
}

/// Deletes the clients of metadata documents whose cache time has ended and
/// that hold no live code or token (nobody consented to them, or every grant
/// has ended): they are fetched again if they come back. How many went.
pub async fn prune_metadata_clients(pool: &PgPool) -> Result<u64, StorageError> {
    let done = sqlx::query!(
        r#"DELETE FROM oauth_applications a
           WHERE a.metadata_expires_at < now()
             AND NOT EXISTS (SELECT 1 FROM oauth_codes c WHERE c.application_id = a.id)
             AND NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.application_id = a.id)"#
    )
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}

/// Stores a freshly fetched metadata document as the public client `app.uid`
/// (its URL), cached until `expires_at`; `None` when that URL is already the
/// client of another authority.
pub async fn store_metadata_client(
    pool: &PgPool,
    app: NewApplication<'_>,
    expires_at: chrono::DateTime<chrono::Utc>,
) -> Result<Option<Application>, StorageError> {
    let row = sqlx::query!(
        r#"INSERT INTO oauth_applications
             (id, authority_id, name, uid, secret_digest, redirect_uris, scopes,
              skip_authorization, metadata_expires_at)
           VALUES ($1, $2, $3, $4, NULL, $5, $6, false, $7)
           ON CONFLICT (uid) DO UPDATE
             SET name = excluded.name, redirect_uris = excluded.redirect_uris,
                 scopes = excluded.scopes, metadata_expires_at = excluded.metadata_expires_at
             WHERE oauth_applications.authority_id = excluded.authority_id
               AND oauth_applications.metadata_expires_at IS NOT NULL
           RETURNING id"#,
        Uuid::new_v4(),
        app.authority_id,
        app.name,
        app.uid,
        app.redirect_uris,
        app.scopes,
        expires_at
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| Application {
        id: r.id,
        authority_id: app.authority_id,
        name: app.name.to_owned(),
        uid: app.uid.to_owned(),
        secret_digest: None,
        redirect_uris: app.redirect_uris.to_vec(),
        scopes: app.scopes.to_vec(),
        skip_authorization: false,
    }))
}
