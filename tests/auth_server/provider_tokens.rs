//! Identity providers' tokens kept for users are sealed at rest, and a key
//! rotation seals them again without losing one (`tolk admin
//! reseal-provider-tokens`). The sign-in flows that store them (OAuth sign-in,
//! token exchange) are checked in their own tests to store sealed values.

use super::*;

/// A 32-byte key of `PROVIDER_TOKEN_KEYS`, base64.
fn key(byte: u8) -> String {
    base64::engine::general_purpose::STANDARD.encode([byte; 32])
}

/// The user's stored (access, refresh) tokens.
async fn stored(db: &sqlx::PgPool) -> Result<(String, String)> {
    Ok(sqlx::query_as(
        "SELECT access_token, refresh_token FROM users WHERE email = 'ann@example.com'",
    )
    .fetch_one(db)
    .await?)
}

/// `tolk admin reseal-provider-tokens` with `args`: its (resealed, unreadable).
async fn reseal(world: &World, args: &[&str]) -> Result<(u64, u64)> {
    let mut all = vec!["admin", "reseal-provider-tokens"];
    all.extend_from_slice(args);
    let done = admin_json(world, &all).await?;
    Ok((
        done["resealed"].as_u64().context("resealed")?,
        done["unreadable"].as_u64().context("unreadable")?,
    ))
}

/// Tokens stored before sealing are sealed with the key derived from the
/// session secret; a new key put first seals them again; a process that has
/// lost the key that sealed them leaves them as they are and says so; with the
/// old key kept after the new one, every token moves to the new one. Without
/// any lasting key the command refuses to run.
#[tokio::test]
async fn provider_tokens_are_sealed_and_resealed_when_keys_rotate() -> Result<()> {
    let world = world_with_ann("provider-tokens").await?;
    let db = world.db().await?;
    sqlx::query(
        "UPDATE users SET access_token = 'graph-access-plain', refresh_token = 'graph-refresh-plain'
         WHERE email = 'ann@example.com'",
    )
    .execute(&db)
    .await?;
    let session = ["--cookie-session-secret", SECRET];

    assert_eq!(reseal(&world, &session).await?, (1, 0));
    let (access, refresh) = stored(&db).await?;
    for value in [&access, &refresh] {
        assert!(value.starts_with("sealed:v1:session:"), "{value}");
        assert!(!value.contains("plain"), "{value}");
    }
    assert_ne!(access, refresh);
    assert_eq!(
        reseal(&world, &session).await?,
        (0, 0),
        "nothing left to do"
    );

    let k2 = format!("k2:{}", key(2));
    assert_eq!(
        reseal(
            &world,
            &["--provider-token-keys", &k2, session[0], session[1]]
        )
        .await?,
        (1, 0)
    );
    let (access, refresh) = stored(&db).await?;
    assert!(access.starts_with("sealed:v1:k2:") && refresh.starts_with("sealed:v1:k2:"));

    // The key that sealed them is gone (and the session secret changed).
    let k3 = format!("k3:{}", key(3));
    let other_secret = "another e2e session secret, also over 32 bytes";
    assert_eq!(
        reseal(
            &world,
            &[
                "--provider-token-keys",
                &k3,
                "--cookie-session-secret",
                other_secret
            ]
        )
        .await?,
        (0, 1)
    );
    assert_eq!(stored(&db).await?, (access, refresh), "left as they were");

    let both = format!("{k3},{k2}");
    assert_eq!(
        reseal(
            &world,
            &["--provider-token-keys", &both, session[0], session[1]]
        )
        .await?,
        (1, 0)
    );
    let (access, refresh) = stored(&db).await?;
    assert!(access.starts_with("sealed:v1:k3:") && refresh.starts_with("sealed:v1:k3:"));
    // Only the new key now: everything opens, nothing to do.
    assert_eq!(
        reseal(
            &world,
            &["--provider-token-keys", &k3, session[0], session[1]]
        )
        .await?,
        (0, 0)
    );

    let refused = admin_json(&world, &["admin", "reseal-provider-tokens"]).await;
    let why = refused.expect_err("no lasting key").to_string();
    assert!(why.contains("PROVIDER_TOKEN_KEYS"), "{why}");
    Ok(())
}
