//! The queue table as the platform's migrations leave it: an idempotency key
//! guards a job until it is `Done` (migration 20261125100001), and the
//! platform's joins between its own tables and `apalis.jobs` still work with the
//! table's bytewise (`C`) text columns.

use anyhow::{Result, ensure};
use tolk_storage::queue::{self, TranslateDocument};

use crate::support::World;

const QUEUE: &str = "rows-test";

/// Enqueues a job on `queue` with `key` in a transaction of its own; `Err` when
/// the database refuses it.
async fn enqueue_on(db: &sqlx::PgPool, queue: &str, key: &str) -> Result<String> {
    let id = queue::new_job_id();
    let mut tx = db.begin().await?;
    let job = TranslateDocument {
        document_id: key.to_owned(),
        trace_id: "t".repeat(32),
    };
    queue::enqueue(&mut tx, queue, &id, &job, 3, key).await?;
    tx.commit().await?;
    Ok(id)
}

/// [`enqueue_on`] the test's queue.
async fn enqueue(db: &sqlx::PgPool, key: &str) -> Result<String> {
    enqueue_on(db, QUEUE, key).await
}

async fn set_status(db: &sqlx::PgPool, id: &str, status: &str) -> Result<()> {
    sqlx::query("UPDATE apalis.jobs SET status = $2, done_at = now() WHERE id = $1")
        .bind(id)
        .bind(status)
        .execute(db)
        .await?;
    Ok(())
}

#[tokio::test]
async fn an_idempotency_key_guards_its_job_until_it_is_done() -> Result<()> {
    let world = World::new("rows_idem").await?;
    let db = world.db().await?;

    let first = enqueue(&db, "document:a").await?;
    let again = enqueue(&db, "document:a").await;
    ensure!(
        again.is_err(),
        "a second enqueue with the key of a pending job must fail"
    );
    // Another queue may use the same key.
    enqueue_on(&db, "rows-other", "document:a").await?;

    for status in ["Queued", "Running", "Failed", "Killed"] {
        set_status(&db, &first, status).await?;
        ensure!(
            enqueue(&db, "document:a").await.is_err(),
            "the key of a {status} job must still refuse a second enqueue"
        );
    }

    set_status(&db, &first, "Done").await?;
    let second = enqueue(&db, "document:a").await?;
    ensure!(
        enqueue(&db, "document:a").await.is_err(),
        "the new job holds the key in turn"
    );
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT id, status FROM apalis.jobs WHERE job_type = $1 AND idempotency_key = $2 ORDER BY id",
    )
    .bind(QUEUE)
    .bind("document:a")
    .fetch_all(&db)
    .await?;
    ensure!(
        rows == vec![(first, "Done".into()), (second, "Pending".into())],
        "rows: {rows:?}"
    );
    Ok(())
}

#[tokio::test]
async fn platform_tables_join_the_bytewise_job_ids() -> Result<()> {
    let world = World::new("rows_join").await?;
    let db = world.db().await?;
    let id = enqueue(&db, "document:b").await?;
    // A text column of the default collation against apalis.jobs.id (C): the
    // comparison takes C and may use jobs_pkey; two differing non-default
    // collations would fail instead ("could not determine which collation").
    let (status,): (String,) = sqlx::query_as(
        "SELECT j.status FROM (VALUES ($1::text)) AS d(job_id)
         JOIN apalis.jobs j ON j.id = d.job_id",
    )
    .bind(&id)
    .fetch_one(&db)
    .await?;
    ensure!(status == "Pending", "status {status}");
    let plan: Vec<(String,)> = sqlx::query_as(
        "EXPLAIN (COSTS OFF) SELECT j.status FROM documents d JOIN apalis.jobs j ON j.id = d.job_id WHERE d.id = 'x'",
    )
    .fetch_all(&db)
    .await?;
    let plan = plan
        .into_iter()
        .map(|(l,)| l)
        .collect::<Vec<_>>()
        .join("\n");
    ensure!(
        plan.contains("jobs_pkey"),
        "a document's job is found through jobs_pkey:\n{plan}"
    );
    Ok(())
}
