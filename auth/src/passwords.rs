//! bcrypt password digests (the earlier deployment's `$2a$` digests verify as they are).

use crate::AuthError;

/// bcrypt cost of new digests.
pub const DEFAULT_COST: u32 = 12;

/// A digest of a password, computed on a blocking thread.
pub async fn hash(password: String, cost: u32) -> Result<String, AuthError> {
    tokio::task::spawn_blocking(move || bcrypt::hash(password, cost))
        .await
        .map_err(|e| AuthError::Password(e.to_string()))?
        .map_err(|e| AuthError::Password(e.to_string()))
}

/// Whether `password` matches `digest`, on a blocking thread. An empty or
/// malformed digest (an SSO-only user) never matches; when `digest` is `None`
/// (unknown user) a dummy digest is checked so the answer takes as long.
pub async fn verify(password: String, digest: Option<String>) -> bool {
    let (digest, real) = match digest {
        Some(d) if !d.is_empty() => (d, true),
        _ => (dummy_digest().to_owned(), false),
    };
    let ok =
        tokio::task::spawn_blocking(move || bcrypt::verify(password, &digest).unwrap_or(false))
            .await
            .unwrap_or(false);
    ok && real
}

/// A fixed cost-12 digest (of a random string) for timing parity.
fn dummy_digest() -> &'static str {
    "$2b$12$C6UzMDM.H6dfI/f/IKxGhuXFmXqJbBlOhOAl1lMrjUu4Fq4dqMU8u"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn accepts_2a_and_2b_digests() {
        let d = hash("secret pw".into(), 4).await.expect("hash");
        assert!(d.starts_with("$2b$04$"));
        assert!(verify("secret pw".into(), Some(d.clone())).await);
        assert!(!verify("wrong".into(), Some(d.clone())).await);
        let a = d.replacen("$2b$", "$2a$", 1);
        assert!(verify("secret pw".into(), Some(a)).await);
        assert!(!verify("secret pw".into(), Some(String::new())).await);
        assert!(!verify("secret pw".into(), None).await);
        assert!(!verify("x".into(), Some("not a digest".into())).await);
    }
}
