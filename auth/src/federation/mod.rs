//! Sign-in through a tenant's identity provider: the OAuth 2.0 / OpenID
//! Connect client flow of an `oauth_strat` ([`oauth2`]), the SAML 2.0 service
//! provider of an `adfs_strat` ([`saml`]), the browser's flow
//! state between kickoff and callback ([`flow`]), and what every federated
//! sign-in shares ([`identity`]): the provider's profile mapped to a user,
//! the `ensure_matching` restriction, and the user resolved by lookup
//! record, then email, then created. Token exchange ([`exchange`]) resolves
//! users the same way.

pub mod exchange;
pub mod flow;
pub mod identity;
pub mod oauth2;
pub mod saml;

/// Why a federated sign-in failed. The message is shown on `/auth/failure`
/// (never a secret of ours or the provider's).
#[derive(Debug, thiserror::Error)]
pub enum FederationError {
    /// The provider refused or answered something unusable.
    #[error("{0}")]
    Provider(String),
    /// The user's identity is not allowed on this tenant (`ensure_matching`, a
    /// deleted account).
    #[error("{0}")]
    Refused(String),
    /// The strategy is misconfigured (a URL that does not parse, a bad regex).
    #[error("this sign-in method is misconfigured: {0}")]
    Config(String),
    /// The database failed.
    #[error(transparent)]
    Storage(#[from] tolk_storage::StorageError),
}
