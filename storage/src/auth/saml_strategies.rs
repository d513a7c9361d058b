//! `adfs_strat`: a tenant's SAML 2.0 identity providers, and the assertions
//! already consumed (replay protection).

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

use crate::StorageError;

/// One SAML identity provider of an authority: its id and tenant, and its
/// [`SamlSettings`] (reached through `Deref`).
#[derive(Debug, Clone)]
pub struct SamlStrategy {
    /// `adfs_strat-…`.
    pub id: String,
    /// Its authority.
    pub authority_id: Uuid,
    /// What an operator configured.
    pub settings: SamlSettings,
}

impl std::ops::Deref for SamlStrategy {
    type Target = SamlSettings;
    fn deref(&self) -> &SamlSettings {
        &self.settings
    }
}

/// The configurable columns of a SAML strategy.
#[derive(Debug, Clone, Default)]
pub struct SamlSettings {
    /// Display name.
    pub name: String,
    /// Our entity id (the audience of the assertions).
    pub issuer: String,
    /// The provider's single sign-on URL.
    pub idp_sso_target_url: String,
    /// Extra query parameters of that URL.
    pub idp_sso_target_url_runtime_params: Value,
    /// NameID format asked for (empty: any).
    pub name_identifier_format: String,
    /// Attribute of the user's stable id (empty: the NameID).
    pub uid_attribute: String,
    /// Our ACS URL (empty: `/auth/saml/callback/{id}` on the request's host).
    pub assertion_consumer_service_url: String,
    /// The provider's signing certificate (PEM or base64 DER).
    pub idp_cert: String,
    /// Its SHA-1 or SHA-256 fingerprint (hex), when no certificate is stored.
    pub idp_cert_fingerprint: String,
    /// Kept for the earlier deployment's rows.
    pub attribute_service_name: String,
    /// Our field → attribute names.
    pub attribute_statements: Value,
    /// Kept for the earlier deployment's rows.
    pub request_attributes: Value,
    /// Single logout URL (the earlier deployment's column name).
    pub issuidp_slo_target_urler: String,
    /// Relay state after single logout.
    pub slo_default_relay_state: String,
}

macro_rules! saml_from_row {
    ($r:expr) => {{
        let r = $r;
        SamlStrategy {
            id: r.id,
            authority_id: r.authority_id,
            settings: SamlSettings {
                name: r.name,
                issuer: r.issuer,
                idp_sso_target_url: r.idp_sso_target_url,
                idp_sso_target_url_runtime_params: r.idp_sso_target_url_runtime_params,
                name_identifier_format: r.name_identifier_format,
                uid_attribute: r.uid_attribute,
                assertion_consumer_service_url: r.assertion_consumer_service_url,
                idp_cert: r.idp_cert,
                idp_cert_fingerprint: r.idp_cert_fingerprint,
                attribute_service_name: r.attribute_service_name,
                attribute_statements: r.attribute_statements,
                request_attributes: r.request_attributes,
                issuidp_slo_target_urler: r.issuidp_slo_target_urler,
                slo_default_relay_state: r.slo_default_relay_state,
            },
        }
    }};
}

/// Creates a SAML strategy of `authority_id`.
pub async fn create(
    pool: &PgPool,
    authority_id: Uuid,
    new: &SamlSettings,
) -> Result<SamlStrategy, StorageError> {
    let row = sqlx::query!(
        r#"INSERT INTO adfs_strat (id, authority_id, name, issuer, idp_sso_target_url,
               idp_sso_target_url_runtime_params, name_identifier_format, uid_attribute,
               assertion_consumer_service_url, idp_cert, idp_cert_fingerprint,
               attribute_service_name, attribute_statements, request_attributes,
               issuidp_slo_target_urler, slo_default_relay_state)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
           RETURNING id, authority_id, name, issuer, idp_sso_target_url,
                     idp_sso_target_url_runtime_params, name_identifier_format, uid_attribute,
                     assertion_consumer_service_url, idp_cert, idp_cert_fingerprint,
                     attribute_service_name, attribute_statements, request_attributes,
                     issuidp_slo_target_urler, slo_default_relay_state"#,
        super::random_id("adfs_strat"),
        authority_id,
        new.name,
        new.issuer,
        new.idp_sso_target_url,
        new.idp_sso_target_url_runtime_params,
        new.name_identifier_format,
        new.uid_attribute,
        new.assertion_consumer_service_url,
        new.idp_cert,
        new.idp_cert_fingerprint,
        new.attribute_service_name,
        new.attribute_statements,
        new.request_attributes,
        new.issuidp_slo_target_urler,
        new.slo_default_relay_state
    )
    .fetch_one(pool)
    .await?;
    Ok(saml_from_row!(row))
}

/// The SAML strategy `id` of `authority_id` (another tenant's is not found).
pub async fn get(
    pool: &PgPool,
    authority_id: Uuid,
    id: &str,
) -> Result<Option<SamlStrategy>, StorageError> {
    let row = sqlx::query!(
        r#"SELECT id, authority_id, name, issuer, idp_sso_target_url,
                  idp_sso_target_url_runtime_params, name_identifier_format, uid_attribute,
                  assertion_consumer_service_url, idp_cert, idp_cert_fingerprint,
                  attribute_service_name, attribute_statements, request_attributes,
                  issuidp_slo_target_urler, slo_default_relay_state
           FROM adfs_strat WHERE id = $1 AND authority_id = $2"#,
        id,
        authority_id
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| saml_from_row!(r)))
}

/// Records that the assertion `id` (of `issuer`) was consumed; `false` when
/// it already was (a replay). Expired records are removed on the way.
pub async fn consume_assertion(
    pool: &PgPool,
    issuer: &str,
    id: &str,
    expires_at: DateTime<Utc>,
) -> Result<bool, StorageError> {
    sqlx::query!("DELETE FROM saml_assertions_seen WHERE expires_at < now()")
        .execute(pool)
        .await?;
    let inserted = sqlx::query!(
        r#"INSERT INTO saml_assertions_seen (id, expires_at) VALUES ($1, $2)
           ON CONFLICT (id) DO NOTHING"#,
        format!("{issuer} {id}"),
        expires_at
    )
    .execute(pool)
    .await?;
    Ok(inserted.rows_affected() == 1)
}
