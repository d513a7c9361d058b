//! What the federated sign-in routes ([`super::oauth2`], [`super::saml`])
//! share: the kickoff's strategy lookup, the callback's flow matching, the
//! failure page redirect, and the end of a sign-in (the flow cookie cleared,
//! the session opened, the browser sent on).

use std::future::Future;

use axum::http::{HeaderMap, Method};
use axum::response::Response;
use tolk_storage::auth::authorities::Authority;
use tolk_storage::auth::oauth_strategies::{self, OauthStrategy};
use tolk_storage::auth::saml_strategies::{self, SamlStrategy};
use tolk_storage::auth::users::User;
use tolk_storage::{PgPool, StorageError};
use uuid::Uuid;

use super::signin::{complete_login, see_other, with_cookies};
use super::{Params, request_params};
use crate::federation::FederationError;
use crate::federation::flow::Flow;
use crate::{AuthState, context, redirect};

/// A kind of strategy a browser signs in through.
pub trait Strategy: Sized + Send {
    /// The flow kind (`oauth2`, `saml`).
    const KIND: &'static str;
    /// The parameter the provider sends our flow's `state` back in.
    const ECHO: &'static str;
    /// The strategy `id` of `authority`.
    fn load(
        db: &PgPool,
        authority: Uuid,
        id: &str,
    ) -> impl Future<Output = Result<Option<Self>, StorageError>> + Send;
    /// Its id.
    fn id(&self) -> &str;
}

impl Strategy for OauthStrategy {
    const KIND: &'static str = "oauth2";
    const ECHO: &'static str = "state";
    fn load(
        db: &PgPool,
        authority: Uuid,
        id: &str,
    ) -> impl Future<Output = Result<Option<Self>, StorageError>> + Send {
        oauth_strategies::get(db, authority, id)
    }
    fn id(&self) -> &str {
        &self.id
    }
}

impl Strategy for SamlStrategy {
    const KIND: &'static str = "saml";
    const ECHO: &'static str = "RelayState";
    fn load(
        db: &PgPool,
        authority: Uuid,
        id: &str,
    ) -> impl Future<Output = Result<Option<Self>, StorageError>> + Send {
        saml_strategies::get(db, authority, id)
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// The request's authority and its strategy `id`, or the failure page.
async fn strategy_of<S: Strategy>(
    state: &AuthState,
    headers: &HeaderMap,
    id: &str,
    named: Option<&str>,
) -> Result<(Authority, S), Response> {
    let authority = context::authority(state, headers).await?;
    match S::load(state.db(), authority.id, id).await {
        Ok(Some(s)) => Ok((authority, s)),
        Ok(None) => Err(failure(state, named, "This sign-in method does not exist.")),
        Err(e) => {
            tracing::error!(error = %e, kind = S::KIND, "reading a strategy");
            Err(failure(
                state,
                named,
                "Sign-in is unavailable; try again later.",
            ))
        }
    }
}

/// A kickoff's authority, strategy (the `id` parameter) and sanitised
/// `continue`, or the failure page.
pub async fn kickoff<S: Strategy>(
    state: &AuthState,
    headers: &HeaderMap,
    params: &Params,
) -> Result<(Authority, S, Option<String>), Response> {
    let Some(id) = params.get("id") else {
        return Err(failure(state, None, "No sign-in method was named."));
    };
    let (authority, strategy) = strategy_of::<S>(state, headers, id, None).await?;
    let host = context::host(headers);
    let continue_to = params
        .get("continue")
        .and_then(|c| redirect::sanitize_continue(c, &host));
    Ok((authority, strategy, continue_to))
}

/// The redirect to the provider, with the flow cookie; or the failure page
/// when the strategy cannot make one.
pub fn to_provider(
    state: &AuthState,
    flow: &Flow,
    url: Result<url::Url, FederationError>,
) -> Response {
    match url {
        Ok(url) => {
            tracing::info!(strategy = %flow.strategy, kind = %flow.kind, "federated sign-in started");
            let cookie = flow.cookie(state.sessions(), state.config().production);
            with_cookies(see_other(url.as_str()), &[cookie])
        }
        Err(e) => {
            tracing::error!(strategy = %flow.strategy, error = %e, "strategy unusable");
            failure(state, Some(&flow.strategy), &e.to_string())
        }
    }
}

/// What a callback request brings: its parameters (the query of a GET,
/// the form of a POST) and the flow of this browser whose state the provider
/// echoed ([`Strategy::ECHO`]), at the strategy `named` in the path if any,
/// with its authority and strategy; or the failure page.
pub async fn callback<S: Strategy>(
    state: &AuthState,
    named: Option<&str>,
    request: (&Method, &HeaderMap, Option<&str>, &[u8]),
) -> Result<(Params, Flow, Authority, S), Response> {
    let (method, headers, query, body) = request;
    let params = request_params(method, headers, query, body).unwrap_or_default();
    let Some(flow) = params
        .get(S::ECHO)
        .and_then(|s| Flow::find(state.sessions(), headers, S::KIND, s))
    else {
        tracing::info!(strategy = ?named, kind = S::KIND, "callback without a matching flow");
        return Err(failure(
            state,
            named,
            "The sign-in could not be matched to this browser (it expired, or was started \
             elsewhere). Please try again.",
        ));
    };
    if named.is_some_and(|n| n != flow.strategy) {
        return Err(failure(
            state,
            named,
            "The sign-in came back to the wrong method.",
        ));
    }
    let (authority, strategy) =
        strategy_of::<S>(state, headers, &flow.strategy.clone(), Some(&flow.strategy)).await?;
    Ok((params, flow, authority, strategy))
}

/// 303 to the failure page with `message`, ending any flow.
pub fn failure(state: &AuthState, strategy: Option<&str>, message: &str) -> Response {
    let mut q = url::form_urlencoded::Serializer::new(String::new());
    q.append_pair("message", message);
    if let Some(s) = strategy {
        q.append_pair("strategy", s);
    }
    let res = see_other(&format!("/auth/failure?{}", q.finish()));
    with_cookies(res, &[Flow::clear(state.config().production)])
}

/// The end of a federated sign-in through `flow`'s strategy: the session and
/// a 303 to the flow's `continue` (default `/`), or the failure page with
/// the reason (a database failure is logged and not shown).
pub fn finish(
    state: &AuthState,
    authority: &Authority,
    flow: &Flow,
    provider: &str,
    outcome: Result<User, FederationError>,
) -> Response {
    match outcome {
        Ok(user) => {
            let mut cookies = vec![Flow::clear(state.config().production)];
            cookies.extend(complete_login(state, authority, &user, provider));
            let target = flow.continue_to.as_deref().unwrap_or("/");
            with_cookies(see_other(target), &cookies)
        }
        Err(e) => {
            match &e {
                FederationError::Storage(_) | FederationError::Config(_) => {
                    tracing::error!(strategy = %flow.strategy, error = %e, "federated sign-in failed");
                }
                _ => {
                    tracing::info!(strategy = %flow.strategy, error = %e, "federated sign-in refused")
                }
            }
            let text = match e {
                FederationError::Storage(_) => {
                    "Sign-in is unavailable; try again later.".to_owned()
                }
                other => sentence(&other.to_string()),
            };
            failure(state, Some(&flow.strategy), &text)
        }
    }
}

/// `s` with a capital letter and a full stop.
fn sentence(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect::<String>() + ".",
        None => String::new(),
    }
}
