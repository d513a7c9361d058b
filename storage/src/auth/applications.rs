//! Administrator-registered OAuth applications (clients).

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
    Ok(row.map(|r| Application {
        id: r.id,
        authority_id: r.authority_id,
        name: r.name,
        uid: r.uid,
        secret_digest: r.secret_digest,
        redirect_uris: r.redirect_uris,
        scopes: r.scopes,
        skip_authorization: r.skip_authorization,
    }))
}
