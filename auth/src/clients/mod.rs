//! Who a `client_id` is: an application registered by an administrator or
//! dynamically ([`crate::routes::register`]), or a client that serves its
//! metadata at an https `client_id` ([`metadata`]).

pub mod fetches;
pub mod metadata;

use tolk_storage::auth::applications::{self, Application};
use tolk_storage::auth::authorities::Authority;

use crate::{AuthError, AuthState};

/// The client a `client_id` names on an authority.
#[derive(Debug)]
pub enum Client {
    /// Known (or its metadata document fetched and accepted).
    Found(Application),
    /// No such client here.
    Unknown,
    /// A metadata document that cannot be used, and why.
    Refused(String),
}

/// Looks `client_id` up on `authority`, for a request from `address`.
pub async fn find(
    state: &AuthState,
    authority: &Authority,
    client_id: &str,
    address: Option<std::net::IpAddr>,
) -> Result<Client, AuthError> {
    if metadata::is_metadata_url(client_id) {
        return Ok(
            match metadata::client(state, authority, client_id, address).await {
                Ok(app) => Client::Found(app),
                Err(e) => Client::Refused(e.to_string()),
            },
        );
    }
    Ok(match applications::by_uid(state.db(), client_id).await? {
        Some(app) if app.authority_id == authority.id => Client::Found(app),
        _ => Client::Unknown,
    })
}
