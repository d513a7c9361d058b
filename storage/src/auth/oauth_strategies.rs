//! `oauth_strat`: a tenant's OAuth 2.0 / OpenID Connect identity providers.

use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

use crate::StorageError;

/// One identity provider configuration of an authority: its id and tenant,
/// and its [`OauthSettings`] (reached through `Deref`).
#[derive(Debug, Clone)]
pub struct OauthStrategy {
    /// `oauth_strat-…`.
    pub id: String,
    /// Its authority.
    pub authority_id: Uuid,
    /// What an operator configured.
    pub settings: OauthSettings,
}

impl std::ops::Deref for OauthStrategy {
    type Target = OauthSettings;
    fn deref(&self) -> &OauthSettings {
        &self.settings
    }
}

/// The configurable columns of a strategy.
#[derive(Debug, Clone, Default)]
pub struct OauthSettings {
    /// Display name.
    pub name: String,
    /// Our client id at the provider.
    pub client_id: String,
    /// Our client secret at the provider (empty for a public client).
    pub client_secret: String,
    /// Our field → comma-separated provider fields (first non-empty wins).
    pub info_mappings: Value,
    /// Extra query parameters of the authorization request.
    pub authorize_params: Value,
    /// Field → regexes the provider's value must match (case-insensitive).
    pub ensure_matching: Value,
    /// Base URL of relative URLs.
    pub site: String,
    /// Authorization endpoint (absolute, or relative to `site`).
    pub authorize_url: String,
    /// `post` or `get`.
    pub token_method: String,
    /// `request_body` or `basic_auth`.
    pub auth_scheme: String,
    /// Token endpoint (absolute, or relative to `site`).
    pub token_url: String,
    /// Space-separated scopes requested.
    pub scope: String,
    /// Profile endpoint read with the access token.
    pub raw_info_url: String,
}

macro_rules! strategy_from_row {
    ($r:expr) => {{
        let r = $r;
        OauthStrategy {
            id: r.id,
            authority_id: r.authority_id,
            settings: OauthSettings {
                name: r.name,
                client_id: r.client_id,
                client_secret: r.client_secret,
                info_mappings: r.info_mappings,
                authorize_params: r.authorize_params,
                ensure_matching: r.ensure_matching,
                site: r.site,
                authorize_url: r.authorize_url,
                token_method: r.token_method,
                auth_scheme: r.auth_scheme,
                token_url: r.token_url,
                scope: r.scope,
                raw_info_url: r.raw_info_url,
            },
        }
    }};
}

/// Creates a strategy of `authority_id`.
pub async fn create(
    pool: &PgPool,
    authority_id: Uuid,
    new: &OauthSettings,
) -> Result<OauthStrategy, StorageError> {
    let row = sqlx::query!(
        r#"INSERT INTO oauth_strat (id, authority_id, name, client_id, client_secret,
               info_mappings, authorize_params, ensure_matching, site, authorize_url,
               token_method, auth_scheme, token_url, scope, raw_info_url)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
           RETURNING id, authority_id, name, client_id, client_secret, info_mappings,
                     authorize_params, ensure_matching, site, authorize_url, token_method,
                     auth_scheme, token_url, scope, raw_info_url"#,
        super::random_id("oauth_strat"),
        authority_id,
        new.name,
        new.client_id,
        new.client_secret,
        new.info_mappings,
        new.authorize_params,
        new.ensure_matching,
        new.site,
        new.authorize_url,
        new.token_method,
        new.auth_scheme,
        new.token_url,
        new.scope,
        new.raw_info_url
    )
    .fetch_one(pool)
    .await?;
    Ok(strategy_from_row!(row))
}

/// The strategy `id` of `authority_id` (another tenant's is not found).
pub async fn get(
    pool: &PgPool,
    authority_id: Uuid,
    id: &str,
) -> Result<Option<OauthStrategy>, StorageError> {
    let row = sqlx::query!(
        r#"SELECT id, authority_id, name, client_id, client_secret, info_mappings,
                  authorize_params, ensure_matching, site, authorize_url, token_method,
                  auth_scheme, token_url, scope, raw_info_url
           FROM oauth_strat WHERE id = $1 AND authority_id = $2"#,
        id,
        authority_id
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| strategy_from_row!(r)))
}

/// Every strategy of `authority_id`, oldest first.
pub async fn of_authority(
    pool: &PgPool,
    authority_id: Uuid,
) -> Result<Vec<OauthStrategy>, StorageError> {
    let rows = sqlx::query!(
        r#"SELECT id, authority_id, name, client_id, client_secret, info_mappings,
                  authorize_params, ensure_matching, site, authorize_url, token_method,
                  auth_scheme, token_url, scope, raw_info_url
           FROM oauth_strat WHERE authority_id = $1 ORDER BY created_at, id"#,
        authority_id
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| strategy_from_row!(r)).collect())
}
