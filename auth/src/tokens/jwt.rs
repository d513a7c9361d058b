//! Access tokens in the earlier deployment's shape, id tokens, and verification.

use jsonwebtoken::{Algorithm, Header, Validation};
use serde::{Deserialize, Serialize};

use super::{Audience, SigningKeys};
use crate::AuthError;

/// The legacy user block `u` that downstream services validate.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct UserBlock {
    /// Name.
    pub n: String,
    /// Lowercased email.
    pub e: String,
    /// Permission bitmask (1 support, 2 sys_admin).
    pub p: i32,
    /// Roles.
    pub r: Vec<String>,
}

/// Claims of an access token.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct AccessClaims {
    /// `JWT_ISSUER`.
    pub iss: String,
    /// Issued at (seconds).
    pub iat: i64,
    /// Expiry (seconds).
    pub exp: i64,
    /// Token id (a UUID).
    pub jti: String,
    /// The resources the token was asked for, or the authority's domain
    /// ([`Audience`]).
    pub aud: Audience,
    /// Granted scopes (a JSON array).
    pub scope: Vec<String>,
    /// The user id, or the client's uid for client_credentials.
    pub sub: String,
    /// The legacy user block.
    pub u: UserBlock,
}

impl AccessClaims {
    /// Whether a scope was granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scope.iter().any(|s| s == scope)
    }
}

/// Claims of an OpenID Connect id token.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IdClaims {
    /// The discovery document's issuer (the service's base URL).
    pub iss: String,
    /// The user id.
    pub sub: String,
    /// The client_id.
    pub aud: String,
    /// Issued at.
    pub iat: i64,
    /// Expiry.
    pub exp: i64,
    /// When the user signed in.
    pub auth_time: i64,
    /// The request's nonce.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nonce: Option<String>,
    /// Name (profile scope or always, as the earlier deployment did).
    pub name: String,
    /// Email.
    pub email: String,
}

/// Signs claims with RS256 and the key's `kid`.
pub fn sign<T: Serialize>(keys: &SigningKeys, claims: &T) -> Result<String, AuthError> {
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(keys.kid.clone());
    Ok(jsonwebtoken::encode(&header, claims, &keys.encoding)?)
}

/// Why a token was refused.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// Expired.
    #[error("the token has expired")]
    Expired,
    /// Anything else: bad signature, algorithm, issuer, shape.
    #[error("the token is invalid: {0}")]
    Invalid(String),
}

/// Checks access tokens: RS256 with our key, our issuer, not expired.
#[derive(Clone)]
pub struct Verifier {
    keys: SigningKeys,
    validation: Validation,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verifier")
            .field("keys", &self.keys)
            .finish()
    }
}

impl Verifier {
    /// A verifier for tokens signed by `keys` with `iss` = `issuer`.
    pub fn new(keys: SigningKeys, issuer: &str) -> Self {
        let mut validation = Validation::new(Algorithm::RS256);
        validation.set_issuer(&[issuer]);
        validation.set_required_spec_claims(&["exp", "iat", "iss", "sub"]);
        validation.validate_aud = false;
        validation.leeway = 30;
        Self { keys, validation }
    }

    /// From the same settings the auth service reads (`JWT_SECRET`, `JWT_ISSUER`, `SG_ENV`).
    pub fn from_settings(
        jwt_secret: Option<&str>,
        issuer: &str,
        production: bool,
    ) -> Result<Self, AuthError> {
        Ok(Self::new(
            SigningKeys::load(jwt_secret, production)?,
            issuer,
        ))
    }

    /// The signing keys.
    pub fn keys(&self) -> &SigningKeys {
        &self.keys
    }

    /// Verifies an access token (the `aud` is the caller's to check).
    pub fn verify(&self, token: &str) -> Result<AccessClaims, VerifyError> {
        self.verify_with(token, &self.validation)
    }

    /// Verifies signature and issuer but accepts an expired token (revocation).
    pub fn verify_ignoring_expiry(&self, token: &str) -> Result<AccessClaims, VerifyError> {
        let mut v = self.validation.clone();
        v.validate_exp = false;
        v.required_spec_claims.remove("exp");
        self.verify_with(token, &v)
    }

    /// Checks the header's `kid` (it must name our key), the signature and
    /// claims, and refuses a token issued in the future (beyond the leeway).
    fn verify_with(&self, token: &str, v: &Validation) -> Result<AccessClaims, VerifyError> {
        use jsonwebtoken::errors::ErrorKind;
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| VerifyError::Invalid(e.to_string()))?;
        if header.kid.as_deref() != Some(self.keys.kid.as_str()) {
            return Err(VerifyError::Invalid("unknown key id".to_owned()));
        }
        let claims = jsonwebtoken::decode::<AccessClaims>(token, &self.keys.decoding, v)
            .map(|d| d.claims)
            .map_err(|e| match e.kind() {
                ErrorKind::ExpiredSignature => VerifyError::Expired,
                _ => VerifyError::Invalid(e.to_string()),
            })?;
        let leeway = i64::try_from(v.leeway).unwrap_or(0);
        if claims.iat > chrono::Utc::now().timestamp() + leeway {
            return Err(VerifyError::Invalid("issued in the future".to_owned()));
        }
        Ok(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(exp_in: i64) -> AccessClaims {
        let now = chrono::Utc::now().timestamp();
        AccessClaims {
            iss: "POS".into(),
            iat: now,
            exp: now + exp_in,
            jti: uuid::Uuid::new_v4().to_string(),
            aud: "localhost".into(),
            scope: vec!["public".into(), "translate".into()],
            sub: "user-abc".into(),
            u: UserBlock {
                n: "Ann".into(),
                e: "ann@example.com".into(),
                p: 2,
                r: vec!["staff".into()],
            },
        }
    }

    #[test]
    fn round_trip_expiry_issuer_and_tampering() {
        let keys = SigningKeys::load(None, false).expect("dev key");
        let v = Verifier::new(keys.clone(), "POS");
        let c = claims(60);
        let t = sign(&keys, &c).expect("sign");
        assert_eq!(v.verify(&t).expect("valid"), c);
        // The wire shape: scope is an array, u has n/e/p/r.
        let payload = t.split('.').nth(1).expect("payload");
        let json: serde_json::Value = serde_json::from_slice(
            &base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, payload)
                .expect("b64"),
        )
        .expect("json");
        assert!(json["scope"].is_array());
        assert_eq!(json["u"]["p"], 2);

        let expired = sign(&keys, &claims(-120)).expect("sign");
        assert!(matches!(v.verify(&expired), Err(VerifyError::Expired)));
        // Issued an hour from now: refused.
        let mut future = claims(7200);
        future.iat += 3600;
        let future = sign(&keys, &future).expect("sign");
        assert!(matches!(v.verify(&future), Err(VerifyError::Invalid(_))));
        // Another key id (same key): refused.
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
        header.kid = Some("another-key".to_owned());
        let other = jsonwebtoken::encode(&header, &c, &keys.encoding).expect("sign");
        assert!(matches!(v.verify(&other), Err(VerifyError::Invalid(_))));
        header.kid = None;
        let none = jsonwebtoken::encode(&header, &c, &keys.encoding).expect("sign");
        assert!(matches!(v.verify(&none), Err(VerifyError::Invalid(_))));
        assert!(v.verify_ignoring_expiry(&expired).is_ok());

        let other = Verifier::new(keys.clone(), "someone else");
        assert!(matches!(other.verify(&t), Err(VerifyError::Invalid(_))));

        let mut parts: Vec<String> = t.split('.').map(str::to_owned).collect();
        parts[1] = base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            br#"{"iss":"POS","iat":1,"exp":99999999999,"jti":"x","aud":"a","scope":["admin"],"sub":"user-evil","u":{"n":"","e":"","p":3,"r":[]}}"#,
        );
        assert!(v.verify(&parts.join(".")).is_err());
        // alg=none is refused.
        let none = format!(
            "{}.{}.",
            base64::Engine::encode(
                &base64::engine::general_purpose::URL_SAFE_NO_PAD,
                br#"{"alg":"none","typ":"JWT"}"#
            ),
            parts[1]
        );
        assert!(v.verify(&none).is_err());
    }
}
