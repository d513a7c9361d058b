//! Shared state of the auth service's handlers.

use std::sync::Arc;

use tolk_storage::PgPool;

use crate::AuthError;
use crate::api_keys::ApiKeyAuth;
use crate::clients::fetches::Fetches;
use crate::config::AuthConfig;
use crate::consent::ConsentSigner;
use crate::events::LoginEvents;
use crate::federation::exchange::DocumentCache;
use crate::federation::saml::SpSigning;
use crate::sealing::TokenKeys;
use crate::sessions::SessionKey;
use crate::throttle::Throttle;
use crate::tokens::{SigningKeys, Verifier};

/// What every handler can reach (cheap to clone).
#[derive(Clone, Debug)]
pub struct AuthState(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    db: PgPool,
    config: AuthConfig,
    verifier: Verifier,
    sessions: SessionKey,
    token_keys: TokenKeys,
    saml_signing: Option<SpSigning>,
    consent: ConsentSigner,
    events: LoginEvents,
    api_keys: ApiKeyAuth,
    throttle: Throttle,
    metadata_fetches: Fetches,
    outbound: reqwest::Client,
    provider_documents: DocumentCache,
}

impl AuthState {
    /// Loads the keys and starts the login event publisher. Fails on a missing key
    /// in production or an unusable secret.
    pub fn new(db: PgPool, config: AuthConfig) -> Result<Self, AuthError> {
        let keys = SigningKeys::load(config.jwt_secret.as_deref(), config.production)?;
        let verifier = Verifier::new(keys, &config.jwt_issuer);
        let sessions = SessionKey::from_secret(config.cookie_session_secret.as_deref())?;
        let consent = ConsentSigner::new(sessions.master());
        let token_keys =
            TokenKeys::from_setting(config.provider_token_keys.as_deref(), sessions.master())?;
        let saml_signing = match &config.saml_sp_signing {
            Some((key, cert)) => {
                let read = |path: &std::path::Path| {
                    std::fs::read_to_string(path)
                        .map_err(|e| AuthError::Key(format!("reading {}: {e}", path.display())))
                };
                Some(
                    SpSigning::from_pem(&read(key)?, &read(cert)?)
                        .map_err(|e| AuthError::Key(e.to_string()))?,
                )
            }
            None => None,
        };
        let events = LoginEvents::start(config.redis_url.as_deref(), &config.login_events_channel);
        let api_keys = ApiKeyAuth::new(config.platform_uri.clone());
        let throttle = Throttle::new(config.redis_url.as_deref());
        let metadata_fetches = Fetches::new(config.redis_url.as_deref());
        let outbound = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(std::time::Duration::from_secs(5))
            .timeout(std::time::Duration::from_secs(15))
            .build()
            .map_err(AuthError::Outbound)?;
        Ok(Self(Arc::new(Inner {
            db,
            config,
            verifier,
            sessions,
            token_keys,
            saml_signing,
            consent,
            events,
            api_keys,
            throttle,
            metadata_fetches,
            outbound,
            provider_documents: DocumentCache::default(),
        })))
    }

    /// PostgreSQL.
    pub fn db(&self) -> &PgPool {
        &self.0.db
    }
    /// The settings.
    pub fn config(&self) -> &AuthConfig {
        &self.0.config
    }
    /// Verifies access tokens.
    pub fn verifier(&self) -> &Verifier {
        &self.0.verifier
    }
    /// The signing keys.
    pub fn keys(&self) -> &SigningKeys {
        self.0.verifier.keys()
    }
    /// Session cookies.
    pub fn sessions(&self) -> &SessionKey {
        &self.0.sessions
    }
    /// The limits and remembered refusals of client metadata fetches.
    pub fn metadata_fetches(&self) -> &Fetches {
        &self.0.metadata_fetches
    }
    /// The key signing SAML service provider metadata, when configured.
    pub fn saml_signing(&self) -> Option<&SpSigning> {
        self.0.saml_signing.as_ref()
    }
    /// The keys sealing identity providers' tokens at rest.
    pub fn token_keys(&self) -> &TokenKeys {
        &self.0.token_keys
    }
    /// Consent tokens.
    pub fn consent(&self) -> &ConsentSigner {
        &self.0.consent
    }
    /// Throttles of failed sign-ins and client authentications.
    pub fn throttle(&self) -> &Throttle {
        &self.0.throttle
    }
    /// Login events.
    pub fn events(&self) -> &LoginEvents {
        &self.0.events
    }
    /// The HTTP client toward identity providers (no redirects followed,
    /// 5 s to connect, 15 s per request).
    pub fn outbound(&self) -> &reqwest::Client {
        &self.0.outbound
    }
    /// Identity providers' discovery documents and key sets (token exchange).
    pub fn provider_documents(&self) -> &DocumentCache {
        &self.0.provider_documents
    }
    /// API keys.
    pub fn api_keys(&self) -> &ApiKeyAuth {
        &self.0.api_keys
    }
}
