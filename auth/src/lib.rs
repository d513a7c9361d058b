//! Tolk's auth service: local sign-in with an encrypted session cookie, an
//! OAuth 2.0 / OpenID Connect authorization server (code + PKCE, client
//! credentials, refresh rotation, revocation, userinfo, discovery, JWKS), RS256
//! access tokens in the earlier deployment's shape, API keys, login events.
//!
//! [`router`] serves `/auth/*` and `/.well-known/*`; [`tokens::Verifier`] checks
//! the tokens it issues in other services (the translation and voice APIs).
//!
//! Federation ([`federation`]): sign-in through a tenant's OAuth 2.0 / OpenID
//! Connect provider (`oauth_strat`) and token exchange (RFC 8693); self-onboarded
//! clients ([`clients`]): dynamic registration and client metadata documents.

#![deny(missing_docs)]

pub mod api_keys;
pub mod clients;
pub mod config;
pub mod consent;
pub mod context;
pub mod error;
pub mod events;
pub mod federation;
pub mod outbound;
pub mod pages;
pub mod passwords;
pub mod pkce;
pub mod redirect;
pub mod routes;
pub mod sealing;
pub mod sessions;
pub mod state;
pub mod throttle;
pub mod tokens;

pub use config::AuthConfig;
pub use error::{AuthError, OAuthError};
pub use routes::router;
pub use state::AuthState;
