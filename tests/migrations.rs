//! Migrating databases that earlier releases migrated.

use anyhow::Result;

use crate::support::World;

/// The migration whose comment was reworded after release, and the checksum
/// of its first text.
const REWORDED: i64 = 20261125100001;
const FIRST_TEXT: &str = "ba214275a2784a8972712254bf84d6b136c8334e791404d70449e20dc180f19f04fe612b2fa69a6fae100bb178eb7b7d";

async fn checksum(pool: &sqlx::PgPool) -> Result<String> {
    Ok(sqlx::query_scalar::<_, String>(
        "SELECT encode(checksum, 'hex') FROM _sqlx_migrations WHERE version = $1",
    )
    .bind(REWORDED)
    .fetch_one(pool)
    .await?)
}

async fn set_checksum(pool: &sqlx::PgPool, hex: &str) -> Result<()> {
    sqlx::query("UPDATE _sqlx_migrations SET checksum = decode($1, 'hex') WHERE version = $2")
        .bind(hex)
        .bind(REWORDED)
        .execute(pool)
        .await?;
    Ok(())
}

#[tokio::test]
async fn a_database_migrated_before_a_comment_was_reworded_still_migrates() -> Result<()> {
    let world = World::new("reworded_migration").await?;
    let pool = sqlx::PgPool::connect(&world.database_url).await?;
    let current = checksum(&pool).await?;
    assert_ne!(current, FIRST_TEXT);
    set_checksum(&pool, FIRST_TEXT).await?;
    tolk_storage::db::migrate(&pool).await?;
    assert_eq!(
        checksum(&pool).await?,
        current,
        "the recorded checksum is repaired"
    );
    // A text that is neither the first nor the current one is still refused.
    set_checksum(&pool, &"0".repeat(96)).await?;
    assert!(tolk_storage::db::migrate(&pool).await.is_err());
    pool.close().await;
    Ok(())
}
