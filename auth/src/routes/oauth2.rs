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
use serde_json::Value;
use tolk_storage::auth::oauth_strategies::{self, OauthStrategy};
use tolk_storage::auth::users;

use super::Params;
use super::signin::{complete_login, see_other, with_cookies};
use crate::federation::flow::Flow;
use crate::federation::{FederationError, identity, oauth2};
use crate::{AuthState, context, redirect};

/// Provider name of these sign-ins in login events and sessions.
pub const PROVIDER: &str = "oauth2";
const KIND: &str = "oauth2";

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

/// `GET /auth/oauth2`: the kickoff.
pub async fn start(
    State(state): State<AuthState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let params = Params::parse(query.as_deref().unwrap_or("")).unwrap_or_default();
    let authority = match context::authority(&state, &headers).await {
        Ok(a) => a,
        Err(res) => return res,
    };
    let Some(id) = params.get("id") else {
        return failure(&state, None, "No sign-in method was named.");
    };
    let strategy = match oauth_strategies::get(state.db(), authority.id, id).await {
        Ok(Some(s)) => s,
        Ok(None) => return failure(&state, None, "This sign-in method does not exist."),
        Err(e) => {
            tracing::error!(error = %e, "reading an oauth strategy");
            return failure(&state, None, "Sign-in is unavailable; try again later.");
        }
    };
    let host = context::host(&headers);
    let continue_to = params
        .get("continue")
        .and_then(|c| redirect::sanitize_continue(c, &host));
    let redirect_uri = format!(
        "{}/auth/oauth2/callback/{}",
        context::base_url(&headers, state.config().production),
        strategy.id
    );
    let flow = Flow::new(KIND, &strategy.id, redirect_uri, continue_to);
    match oauth2::authorize_url(&strategy, &flow) {
        Ok(url) => {
            tracing::info!(strategy = %strategy.id, "federated sign-in started");
            let cookie = flow.cookie(state.sessions(), state.config().production);
            with_cookies(see_other(url.as_str()), &[cookie])
        }
        Err(e) => {
            tracing::error!(strategy = %strategy.id, error = %e, "oauth strategy unusable");
            failure(&state, Some(&strategy.id), &e.to_string())
        }
    }
}

/// `GET|POST /auth/oauth2/callback`.
pub async fn callback(
    State(state): State<AuthState>,
    method: Method,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Response {
    finish(&state, &method, &headers, query.as_deref(), &body, None).await
}

/// `GET|POST /auth/oauth2/callback/{strategy}`.
pub async fn callback_of(
    State(state): State<AuthState>,
    Path(strategy): Path<String>,
    method: Method,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Response {
    finish(
        &state,
        &method,
        &headers,
        query.as_deref(),
        &body,
        Some(&strategy),
    )
    .await
}

async fn finish(
    state: &AuthState,
    method: &Method,
    headers: &HeaderMap,
    query: Option<&str>,
    body: &[u8],
    named: Option<&str>,
) -> Response {
    // A provider answers on the query (GET) or, with response_mode=form_post, in a form.
    let params = super::request_params(method, headers, query, body).unwrap_or_default();
    let Some(flow) = params
        .get("state")
        .and_then(|s| Flow::find(state.sessions(), headers, KIND, s))
    else {
        tracing::info!(strategy = ?named, "oauth callback without a matching flow");
        return failure(
            state,
            named,
            "The sign-in could not be matched to this browser (it expired, or was started \
             elsewhere). Please try again.",
        );
    };
    if named.is_some_and(|n| n != flow.strategy) {
        return failure(state, named, "The sign-in came back to the wrong method.");
    }
    let strategy_id = flow.strategy.clone();
    if let Some(error) = params.get("error") {
        let error: String = error.chars().take(64).collect();
        tracing::info!(strategy = %strategy_id, error, "identity provider refused the sign-in");
        let text = format!("The identity provider did not sign you in ({error}).");
        return failure(state, Some(&strategy_id), &text);
    }
    let Some(code) = params.get("code") else {
        return failure(
            state,
            Some(&strategy_id),
            "The identity provider sent no code.",
        );
    };
    let authority = match context::authority(state, headers).await {
        Ok(a) => a,
        Err(res) => return res,
    };
    let strategy = match oauth_strategies::get(state.db(), authority.id, &strategy_id).await {
        Ok(Some(s)) => s,
        Ok(None) => {
            return failure(
                state,
                Some(&strategy_id),
                "This sign-in method does not exist.",
            );
        }
        Err(e) => {
            tracing::error!(error = %e, "reading an oauth strategy");
            return failure(
                state,
                Some(&strategy_id),
                "Sign-in is unavailable; try again later.",
            );
        }
    };
    match sign_in(state, &strategy, code, &flow).await {
        Ok(user) => {
            let cookies = complete_login(state, &authority, &user, PROVIDER);
            let target = flow.continue_to.as_deref().unwrap_or("/");
            let mut all = vec![Flow::clear(state.config().production)];
            all.extend(cookies);
            with_cookies(see_other(target), &all)
        }
        Err(e) => {
            match &e {
                FederationError::Storage(_) | FederationError::Config(_) => {
                    tracing::error!(strategy = %strategy.id, error = %e, "federated sign-in failed");
                }
                _ => {
                    tracing::info!(strategy = %strategy.id, error = %e, "federated sign-in refused")
                }
            }
            let text = match e {
                FederationError::Storage(_) => {
                    "Sign-in is unavailable; try again later.".to_owned()
                }
                other => capitalised(&other.to_string()),
            };
            failure(state, Some(&strategy.id), &text)
        }
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect::<String>() + ".",
        None => String::new(),
    }
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
    let access = credentials
        .get("access_token")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let refresh = credentials.get("refresh_token").and_then(Value::as_str);
    users::store_provider_tokens(
        state.db(),
        &user.id,
        access,
        refresh,
        oauth2::expires_at(&credentials),
    )
    .await?;
    Ok(user)
}
