//! The RSA signing key from `JWT_SECRET`, its public half and its JWKS entry.

use base64::Engine;
use jsonwebtoken::jwk::{Jwk, JwkSet, KeyAlgorithm, PublicKeyUse, ThumbprintHash};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};

use crate::AuthError;

/// The development key used when `JWT_SECRET` is unset. Public: never use it in
/// production (the service refuses to start with `SG_ENV=production` without a key).
const DEV_KEY_PEM: &str = include_str!("dev_key.pem");

/// The signing key and what is derived from it.
#[derive(Clone)]
pub struct SigningKeys {
    /// Signs.
    pub encoding: EncodingKey,
    /// Verifies (the public key).
    pub decoding: DecodingKey,
    /// RFC 7638 thumbprint, the `kid`.
    pub kid: String,
    /// The public key as a JWK.
    pub jwk: Jwk,
    /// Whether this is the built-in development key.
    pub development: bool,
}

impl std::fmt::Debug for SigningKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKeys")
            .field("kid", &self.kid)
            .field("development", &self.development)
            .finish_non_exhaustive()
    }
}

impl SigningKeys {
    /// Loads `JWT_SECRET` (base64 of a PEM, or a PEM). Without one: the
    /// development key with a loud warning, or an error in production.
    pub fn load(jwt_secret: Option<&str>, production: bool) -> Result<Self, AuthError> {
        match jwt_secret.map(str::trim).filter(|s| !s.is_empty()) {
            Some(secret) => {
                let pem = if secret.starts_with("-----BEGIN") {
                    secret.as_bytes().to_vec()
                } else {
                    let compact: String = secret.split_whitespace().collect();
                    base64::engine::general_purpose::STANDARD
                        .decode(compact.as_bytes())
                        .map_err(|e| AuthError::Key(format!("JWT_SECRET is not base64: {e}")))?
                };
                Self::from_pem(&pem, false)
            }
            None if production => Err(AuthError::Key(
                "JWT_SECRET is required with SG_ENV=production (base64 of an RSA private key PEM)"
                    .to_owned(),
            )),
            None => {
                tracing::warn!(
                    "JWT_SECRET is not set: tokens are signed with the PUBLIC DEVELOPMENT KEY. \
                     Anyone can forge them. Never run like this in production."
                );
                Self::from_pem(DEV_KEY_PEM.as_bytes(), true)
            }
        }
    }

    /// From an RSA private key PEM (PKCS#1 or PKCS#8).
    pub fn from_pem(pem: &[u8], development: bool) -> Result<Self, AuthError> {
        let encoding = EncodingKey::from_rsa_pem(pem)
            .map_err(|e| AuthError::Key(format!("not an RSA private key PEM: {e}")))?;
        let mut jwk = Jwk::from_encoding_key(&encoding, Algorithm::RS256)
            .map_err(|e| AuthError::Key(format!("deriving the public key: {e}")))?;
        let kid = jwk
            .thumbprint(ThumbprintHash::SHA256)
            .map_err(|e| AuthError::Key(format!("key thumbprint: {e}")))?;
        jwk.common.key_id = Some(kid.clone());
        jwk.common.public_key_use = Some(PublicKeyUse::Signature);
        jwk.common.key_algorithm = Some(KeyAlgorithm::RS256);
        let decoding =
            DecodingKey::from_jwk(&jwk).map_err(|e| AuthError::Key(format!("public key: {e}")))?;
        Ok(Self {
            encoding,
            decoding,
            kid,
            jwk,
            development,
        })
    }

    /// The JWKS document (one key).
    pub fn jwks(&self) -> JwkSet {
        JwkSet {
            keys: vec![self.jwk.clone()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_key_loads_and_production_refuses_it() {
        let k = SigningKeys::load(None, false).expect("dev key");
        assert!(k.development);
        assert_eq!(k.kid.len(), 43);
        assert!(SigningKeys::load(None, true).is_err());
        assert!(SigningKeys::load(Some("not base64 !!"), false).is_err());
        let b64 = base64::engine::general_purpose::STANDARD.encode(DEV_KEY_PEM);
        let again = SigningKeys::load(Some(&b64), true).expect("base64 PEM");
        assert_eq!(again.kid, k.kid);
        assert!(!again.development);
    }
}
