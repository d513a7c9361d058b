//! The browser session: an encrypted and authenticated cookie `_coauth_session`
//! at Path=/auth holding who signed in and when ([`cookie`]).

pub mod cookie;

pub use cookie::{COOKIE_NAME, Session, SessionKey};

use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use tolk_storage::auth::users::{self, User};

use crate::AuthState;

/// The session of the request and its user, when the cookie is valid, the
/// user exists on `authority_id` and has not logged out since signing in
/// (a logout ends every earlier session, a replayed cookie included); an
/// error response when the database fails.
pub async fn signed_in(
    state: &AuthState,
    headers: &HeaderMap,
    authority_id: uuid::Uuid,
) -> Result<Option<(Session, User)>, Response> {
    let Some(session) = state.sessions().read(headers) else {
        return Ok(None);
    };
    let user = users::by_id(state.db(), &session.uid)
        .await
        .map_err(|e| crate::AuthError::from(e).into_response())?;
    Ok(user
        .filter(|u| u.deleted_at.is_none() && u.authority_id == authority_id)
        .filter(|u| {
            u.logged_out_at
                .is_none_or(|out| session.signed_in_after(out))
        })
        .map(|u| (session, u)))
}
