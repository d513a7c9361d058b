//! RS256 tokens: the signing key and JWKS ([`keys`]), access and id tokens and
//! their verification ([`jwt`]).

pub mod audience;
pub mod jwt;
pub mod keys;

pub use audience::Audience;
pub use jwt::{AccessClaims, IdClaims, UserBlock, Verifier, VerifyError};
pub use keys::SigningKeys;

/// Access token lifetime: 2 hours.
pub const ACCESS_TOKEN_SECONDS: i64 = 2 * 3600;
/// Refresh token lifetime: 30 days.
pub const REFRESH_TOKEN_SECONDS: i64 = 30 * 24 * 3600;
/// Authorization code lifetime: 10 minutes.
pub const CODE_SECONDS: i64 = 600;
