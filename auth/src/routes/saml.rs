//! Sign-in through an `adfs_strat` (SAML 2.0): `GET /auth/saml?id=…&continue=…`
//! sends the browser to the identity provider with an AuthnRequest
//! (redirect binding; the request id in the flow cookie);
//! `GET|POST /auth/saml/callback` and `/auth/saml/callback/{strategy}` take the
//! response (POST binding), verify it ([`crate::federation::saml`]), refuse a
//! replayed assertion, resolve the user like an OAuth sign-in and open the
//! session. Failures land on `/auth/failure`. `GET /auth/saml/metadata?id=…`
//! answers the strategy's service provider metadata, for the identity
//! provider to import.

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use tolk_storage::auth::saml_strategies::{self, SamlStrategy};
use tolk_storage::auth::users::User;

use super::Params;
use super::federated::{self, Strategy, failure};
use crate::federation::flow::Flow;
use crate::federation::{FederationError, identity, saml};
use crate::{AuthState, context};

/// Provider name of these sign-ins in login events and sessions.
pub const PROVIDER: &str = "saml";

/// `GET /auth/saml`: the kickoff.
pub async fn start(
    State(state): State<AuthState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let params = Params::parse(query.as_deref().unwrap_or("")).unwrap_or_default();
    let (_, strategy, continue_to) =
        match federated::kickoff::<SamlStrategy>(&state, &headers, &params).await {
            Ok(k) => k,
            Err(res) => return res,
        };
    let acs = acs_url(&state, &headers, &strategy);
    let mut flow = Flow::new(SamlStrategy::KIND, &strategy.id, acs, continue_to);
    flow.request_id = saml::request_id();
    let url = saml::authn_request_url(&strategy, &flow.redirect_uri, &flow.request_id, &flow.state);
    federated::to_provider(&state, &flow, url)
}

/// Where the strategy's identity provider posts its answers: the configured
/// URL, or this host's callback of the strategy.
fn acs_url(state: &AuthState, headers: &HeaderMap, strategy: &SamlStrategy) -> String {
    match strategy.assertion_consumer_service_url.trim() {
        "" => format!(
            "{}/auth/saml/callback/{}",
            context::base_url(headers, state.config().production),
            strategy.id
        ),
        configured => configured.to_owned(),
    }
}

/// `GET /auth/saml/metadata?id=…`: the strategy's service provider metadata
/// (`application/samlmetadata+xml`, signed when `SAML_SP_KEY_FILE` is set);
/// 400 without an id, 404 for a strategy this host's authority does not have.
pub async fn metadata(
    State(state): State<AuthState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let params = Params::parse(query.as_deref().unwrap_or("")).unwrap_or_default();
    let Some(id) = params.get("id") else {
        return crate::error::message(StatusCode::BAD_REQUEST, "Name the strategy with ?id=…");
    };
    let authority = match context::authority(&state, &headers).await {
        Ok(a) => a,
        Err(res) => return res,
    };
    match <SamlStrategy as Strategy>::load(state.db(), authority.id, id).await {
        Ok(Some(strategy)) => {
            let acs = acs_url(&state, &headers, &strategy);
            match saml::sp_metadata(&strategy, &acs, state.saml_signing()) {
                Ok(xml) => ([(CONTENT_TYPE, "application/samlmetadata+xml")], xml).into_response(),
                Err(e) => crate::AuthError::Internal(e.to_string()).into_response(),
            }
        }
        Ok(None) => crate::error::message(StatusCode::NOT_FOUND, "No such SAML strategy."),
        Err(e) => crate::AuthError::from(e).into_response(),
    }
}

/// `GET|POST /auth/saml/callback` and `/auth/saml/callback/{strategy}`: the
/// response (POST binding, or the same fields on the query).
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
        match federated::callback::<SamlStrategy>(&state, named.as_deref(), request).await {
            Ok(found) => found,
            Err(res) => return res,
        };
    let Some(response) = params.get("SAMLResponse").map(str::to_owned) else {
        return failure(
            &state,
            Some(&strategy.id),
            "The identity provider sent no response.",
        );
    };
    let outcome = sign_in(&state, strategy, response, &flow).await;
    federated::finish(&state, &authority, &flow, PROVIDER, outcome)
}

/// The response verified (off the async threads: libxmlsec1 blocks), the
/// assertion consumed once, the user resolved.
async fn sign_in(
    state: &AuthState,
    strategy: SamlStrategy,
    response: String,
    flow: &Flow,
) -> Result<User, FederationError> {
    let (acs, request_id) = (flow.redirect_uri.clone(), flow.request_id.clone());
    let (strategy, verified) = tokio::task::spawn_blocking(move || {
        let verified = saml::verify(&strategy, &acs, &response, &request_id);
        (strategy, verified)
    })
    .await
    .map_err(|e| {
        FederationError::Provider(format!("the SAML response could not be checked: {e}"))
    })?;
    let verified = verified?;
    let fresh = saml_strategies::consume_assertion(
        state.db(),
        &strategy.id,
        &verified.assertion_id,
        verified.expires_at,
    )
    .await?;
    if !fresh {
        return Err(FederationError::Refused(
            "this sign-in response was already used".into(),
        ));
    }
    let who = saml::identity(&strategy, &verified)?;
    identity::resolve_user(state.db(), strategy.authority_id, &strategy.id, &who).await
}
