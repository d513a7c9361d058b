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

/// `TOLK_NO_MIGRATE` takes the forms people type: with `1` or `yes` a process
/// starts on a database whose migrations it could not run; with `0` or `off`
/// it runs them (and so refuses that database); `maybe` is refused by name.
#[tokio::test]
async fn boolean_settings_accept_the_forms_people_type() -> Result<()> {
    let mut world = World::new("boolean_settings").await?;
    let pool = sqlx::PgPool::connect(&world.database_url).await?;
    // A recorded migration whose checksum no longer matches: migrating fails.
    set_checksum(&pool, &"00".repeat(48)).await?;
    for (value, starts) in [("1", true), ("yes", true), ("0", false), ("off", false)] {
        world.extra_env = vec![("TOLK_NO_MIGRATE".into(), value.into())];
        let port = crate::support::free_port();
        let listen = format!("127.0.0.1:{port}");
        let log = format!("api-{value}");
        let pid = world.spawn(&["api", "--listen", &listen], &log)?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let answered = loop {
            let health = reqwest::get(format!("http://{listen}/healthz")).await;
            if health.is_ok_and(|r| r.status().is_success()) {
                break true;
            }
            if !world.is_running(pid) || std::time::Instant::now() > deadline {
                break false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        };
        assert_eq!(
            answered,
            starts,
            "TOLK_NO_MIGRATE={value}: {}",
            world.log(&log)
        );
        if !starts {
            assert!(world.log(&log).contains("migrat"), "{}", world.log(&log));
        }
    }
    world.extra_env = vec![("TOLK_NO_MIGRATE".into(), "maybe".into())];
    let pid = world.spawn(&["api", "--listen", "127.0.0.1:0"], "api-maybe")?;
    let status = world
        .wait_exit(pid, std::time::Duration::from_secs(30))
        .await?;
    assert!(!status.success());
    let log = world.log("api-maybe");
    assert!(log.contains("invalid value 'maybe'"), "{log}");
    Ok(())
}
