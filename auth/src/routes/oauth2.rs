//! Sign-in through an `oauth_strat`: `GET /auth/oauth2?id=…&continue=…`
//! sends the browser to the provider (the flow in an encrypted cookie);
//! `GET|POST /auth/oauth2/callback` and `/auth/oauth2/callback/{strategy}`
//! check `state`, redeem the code with the PKCE verifier, read the profile,
//! apply `ensure_matching`, resolve the user (lookup record, email, new
//! user), keep the provider's tokens on the user and open the session. Any
//! failure lands on `/auth/failure` with a message.

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, Method};
use axum::response::Response;
use tolk_storage::auth::oauth_strategies::OauthStrategy;
use tolk_storage::auth::users;

use super::Params;
use super::federated::{self, Strategy, failure};
use crate::federation::flow::Flow;
use crate::federation::{FederationError, identity, oauth2};
use crate::{AuthState, context};

/// Provider name of these sign-ins in login events and sessions.
pub const PROVIDER: &str = "oauth2";

/// `GET /auth/oauth2`: the kickoff.
pub async fn start(
    State(state): State<AuthState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let params = Params::parse(query.as_deref().unwrap_or("")).unwrap_or_default();
    let (_, strategy, continue_to) =
        match federated::kickoff::<OauthStrategy>(&state, &headers, &params).await {
            Ok(k) => k,
            Err(res) => return res,
        };
    let redirect_uri = format!(
        "{}/auth/oauth2/callback/{}",
        context::base_url(&headers, state.config().production),
        strategy.id
    );
    let flow = Flow::new(OauthStrategy::KIND, &strategy.id, redirect_uri, continue_to);
    federated::to_provider(&state, &flow, oauth2::authorize_url(&strategy, &flow))
}

/// `GET|POST /auth/oauth2/callback` and `/auth/oauth2/callback/{strategy}`:
/// the provider's answer on the query (GET) or, with
/// `response_mode=form_post`, in a form.
pub async fn callback(
    State(state): State<AuthState>,
    named: Option<Path<String>>,
    method: Method,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Response {
    let named = named.map(|Path(n)| n);
    let request = (&method, &headers, query.as_deref(), &body[..]);
    let (params, flow, authority, strategy) =
        match federated::callback::<OauthStrategy>(&state, named.as_deref(), request).await {
            Ok(found) => found,
            Err(res) => return res,
        };
    if let Some(error) = params.get("error") {
        let error: String = error.chars().take(64).collect();
        tracing::info!(strategy = %strategy.id, error, "identity provider refused the sign-in");
        let text = format!("The identity provider did not sign you in ({error}).");
        return failure(&state, Some(&strategy.id), &text);
    }
    let Some(code) = params.get("code") else {
        return failure(
            &state,
            Some(&strategy.id),
            "The identity provider sent no code.",
        );
    };
    let outcome = sign_in(&state, &strategy, code, &flow).await;
    federated::finish(&state, &authority, &flow, PROVIDER, outcome)
}

/// The code redeemed, the profile read and checked, the user resolved and
/// the provider's tokens stored on it.
async fn sign_in(
    state: &AuthState,
    strategy: &OauthStrategy,
    code: &str,
    flow: &Flow,
) -> Result<users::User, FederationError> {
    let http = state.outbound();
    let credentials = oauth2::redeem(http, strategy, code, flow).await?;
    let raw = oauth2::profile(http, strategy, &credentials).await?;
    identity::ensure_matching(&strategy.ensure_matching, &raw)?;
    let who = identity::identity(&strategy.info_mappings, &raw, &credentials)?;
    let user =
        identity::resolve_user(state.db(), strategy.authority_id, &strategy.id, &who).await?;
    oauth2::keep_tokens(state, &user.id, &credentials).await?;
    Ok(user)
}
