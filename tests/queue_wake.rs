//! The worker processes' wake hubs (`tolk_worker::wake`) on a real PostgreSQL:
//! a notification wakes exactly one worker, the workers of all processes in
//! turn, and one meant for a worker that has no lane (another process, or a
//! dead one) still reaches a local worker; each queue is woken on its own
//! channel, so a process hears only of the queues it runs, and a process whose
//! lanes are all busy hears nothing until one frees. Also which commits skip the WAL
//! flush (`tolk_storage::enqueuer`, `db::relaxed_pool`) and which do not.

use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use futures::{FutureExt, StreamExt};
use tolk_storage::queue;
use tolk_worker::wake::{LaneWake, WakeHub};

use crate::support::World;

const QUEUE: &str = "wake-test";

/// A live worker row, as apalis' registration writes it.
async fn register(db: &sqlx::PgPool, name: &str) -> Result<()> {
    sqlx::query(
        "INSERT INTO apalis.workers (id, worker_type, storage_name, layers, last_seen)
         VALUES ($1, $2, 'PgStorage', '', now())",
    )
    .bind(name)
    .bind(QUEUE)
    .execute(db)
    .await?;
    Ok(())
}

/// Index of the first lane to yield within `within`, if any.
async fn first_woken(lanes: &mut [LaneWake], within: Duration) -> Option<usize> {
    let next = futures::future::select_all(lanes.iter_mut().map(|l| l.next().boxed()));
    match tokio::time::timeout(within, next).await {
        Ok((Some(()), i, _)) => Some(i),
        _ => None,
    }
}

/// Lanes that have a wake-up ready now.
fn ready(lanes: &mut [LaneWake]) -> Vec<usize> {
    (0..lanes.len())
        .filter(|&i| lanes[i].next().now_or_never().flatten().is_some())
        .collect()
}

/// Waits until every hub LISTENs on the queue's channel (they do on
/// connections of their own, opened in the background), then clears every
/// lane (a hub that begins to listen wakes its lanes once).
async fn wait_listening(hubs: &[&WakeHub], lanes: &mut [LaneWake]) -> Result<()> {
    let ours = queue::wake_channel(QUEUE);
    wait_for(
        || hubs.iter().all(|h| h.listening().contains(&ours)),
        "the hubs to listen",
    )
    .await?;
    ready(lanes);
    Ok(())
}

#[tokio::test]
async fn each_notification_wakes_one_worker_of_all_processes_in_turn() -> Result<()> {
    let world = World::new("wake_turn").await?;
    let db = world.db().await?;
    // Process p runs workers a and c, process r runs b; no extra looks.
    let never = Duration::from_secs(3600);
    let p = WakeHub::start_with(db.clone(), Duration::from_secs(60), never);
    let r = WakeHub::start_with(db.clone(), Duration::from_secs(60), never);
    let mut lanes = vec![
        p.lane(QUEUE, "w-a"),
        r.lane(QUEUE, "w-b"),
        p.lane(QUEUE, "w-c"),
    ];
    for name in ["w-a", "w-b", "w-c"] {
        register(&db, name).await?;
    }
    p.refresh().await?;
    r.refresh().await?;
    wait_listening(&[&p, &r], &mut lanes).await?;

    let mut woken = [0usize; 3];
    let mut order = Vec::new();
    for n in 0..12 {
        queue::notify_enqueued(&db, QUEUE).await?;
        let i = first_woken(&mut lanes, Duration::from_secs(10))
            .await
            .with_context(|| format!("notification {n} woke no worker"))?;
        let also = ready(&mut lanes);
        ensure!(
            also.is_empty(),
            "notification {n} woke lane {i} and also {also:?}"
        );
        woken[i] += 1;
        order.push(i);
    }
    // One process's notifications count up, so the three workers take turns
    // (other tests of this process notify too and may shift the count).
    ensure!(
        woken.iter().all(|&w| w >= 2),
        "wake-ups per worker {woken:?}, order {order:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_notification_for_a_worker_without_a_lane_reaches_a_local_one() -> Result<()> {
    let world = World::new("wake_look").await?;
    let db = world.db().await?;
    let look = Duration::from_millis(50);
    let hub = WakeHub::start_with(db.clone(), Duration::from_secs(60), look);
    let mut lanes = vec![hub.lane(QUEUE, "w-a")];
    // w-z is alive by its heartbeat but runs nowhere (its process just died):
    // every other notification is meant for it.
    register(&db, "w-a").await?;
    register(&db, "w-z").await?;
    hub.refresh().await?;
    wait_listening(&[&hub], &mut lanes).await?;
    for n in 0..6 {
        // Let the last extra look pass, so only this notification can wake the lane.
        tokio::time::sleep(look * 4).await;
        ready(&mut lanes);
        queue::notify_enqueued(&db, QUEUE).await?;
        woken_soon(&mut lanes)
            .await
            .with_context(|| format!("notification {n} never woke the local worker"))?;
    }
    Ok(())
}

#[tokio::test]
async fn a_process_whose_lanes_are_all_busy_stops_listening() -> Result<()> {
    use tower::{Layer, Service, ServiceExt};
    let world = World::new("wake_busy").await?;
    let db = world.db().await?;
    let never = Duration::from_secs(3600);
    let hub = WakeHub::start_with(db.clone(), Duration::from_secs(60), never);
    let mut lanes = vec![hub.lane(QUEUE, "w-a")];
    // The lane's worker runs one job at a time: a job that ends when told.
    let mut worker = hub.busy_layer("w-a", 1).layer(tower::service_fn(
        |end: tokio::sync::oneshot::Receiver<()>| async {
            end.await.ok();
            Ok::<_, std::convert::Infallible>(())
        },
    ));
    register(&db, "w-a").await?;
    hub.refresh().await?;
    wait_listening(&[&hub], &mut lanes).await?;
    let ours = queue::wake_channel(QUEUE);

    // Busy: the hub UNLISTENs everything, and a NOTIFY no longer reaches it.
    let (end, job) = tokio::sync::oneshot::channel();
    let running = worker.ready().await?.call(job);
    wait_for(|| hub.listening().is_empty(), "the hub to stop listening").await?;
    queue::notify_enqueued(&db, QUEUE).await?;
    ensure!(
        first_woken(&mut lanes, Duration::from_millis(500))
            .await
            .is_none(),
        "a busy process was woken"
    );

    // Free again: it listens, and wakes its lane once for what it missed…
    let _ = end.send(());
    running.await?;
    woken_soon(&mut lanes)
        .await
        .context("the freed lane was not woken to look for what was enqueued meanwhile")?;
    ensure!(hub.listening().contains(&ours), "{:?}", hub.listening());
    // …and notifications reach it again.
    queue::notify_enqueued(&db, QUEUE).await?;
    woken_soon(&mut lanes)
        .await
        .context("a notification did not reach the process that listens again")?;
    Ok(())
}

/// Fails unless one of `lanes` is woken within 10 s.
async fn woken_soon(lanes: &mut [LaneWake]) -> Result<()> {
    first_woken(lanes, Duration::from_secs(10))
        .await
        .map(|_| ())
        .context("no lane woken within 10 s")
}

/// Waits up to 10 s for `cond`.
async fn wait_for(cond: impl Fn() -> bool, what: &str) -> Result<()> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !cond() {
        if std::time::Instant::now() > deadline {
            bail!("timed out waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(())
}

#[tokio::test]
async fn a_process_hears_only_the_queues_it_runs() -> Result<()> {
    let world = World::new("wake_channels").await?;
    let db = world.db().await?;
    // What a voice-only process's hub LISTENs on: its queue's channel.
    let mut listener = sqlx::postgres::PgListener::connect_with(&db).await?;
    listener.listen(&queue::wake_channel(QUEUE)).await?;
    // Another queue's enqueues (documents, say) never reach it…
    for _ in 0..5 {
        queue::notify_enqueued(&db, "wake-other").await?;
    }
    // …its own do.
    queue::notify_enqueued(&db, QUEUE).await?;
    let first = tokio::time::timeout(Duration::from_secs(10), listener.recv())
        .await
        .context("no notification arrived")??;
    ensure!(
        first
            .payload()
            .contains(&format!(r#""job_type":"{QUEUE}""#)),
        "first notification heard: {} on {}",
        first.payload(),
        first.channel()
    );
    ensure!(
        listener.next_buffered().is_none(),
        "more than this queue's notification arrived"
    );
    Ok(())
}

#[tokio::test]
async fn only_queue_bookkeeping_and_enqueues_commit_without_the_flush() -> Result<()> {
    let world = World::new("wake_sync").await?;
    let db = world.db().await?;
    let show = |pool: sqlx::PgPool, setting: &'static str| async move {
        let (v,): (String,) = sqlx::query_as(sqlx::AssertSqlSafe(format!("SHOW {setting}")))
            .fetch_one(&pool)
            .await?;
        Ok::<_, anyhow::Error>(v)
    };
    // Handlers' writes: durable. The workers' apalis pool: not.
    ensure!(show(db.clone(), "synchronous_commit").await? == "on");
    let relaxed = tolk_storage::db::relaxed_pool(&db);
    ensure!(show(relaxed.clone(), "synchronous_commit").await? == "off");
    // The bookkeeping plans each statement for the table as it is now (apalis'
    // prepared ack kept a generic plan made on an empty table: a scan of the whole
    // backlog per ack); the handlers' pool keeps PostgreSQL's default.
    ensure!(show(relaxed.clone(), "plan_cache_mode").await? == "force_custom_plan");
    ensure!(show(db.clone(), "plan_cache_mode").await? == "auto");
    // An enqueue transaction skips the flush, and only that transaction.
    let enqueuer = tolk_storage::enqueuer::Enqueuer::start(&db);
    let mut tx = enqueuer.begin().await?;
    let (inside,): (String,) = sqlx::query_as("SHOW synchronous_commit")
        .fetch_one(&mut *tx)
        .await?;
    tx.commit().await?;
    ensure!(inside == "off", "inside the enqueue: {inside}");
    // Many waiters at once all get through the shared barrier.
    let waits = (0..50).map(|_| enqueuer.barrier().wait());
    for r in futures::future::join_all(waits).await {
        r?;
    }
    ensure!(show(db, "synchronous_commit").await? == "on");
    Ok(())
}

#[tokio::test]
async fn a_worker_process_runs_its_lanes_in_turn() -> Result<()> {
    let mut world = World::new("wake_lanes").await?;
    let key = world.create_key("lanes", false).await?;
    let api = world.start_api().await?;
    world.spawn(
        &["worker", "--concurrency", "1", "--lanes", "2"],
        "worker-lanes",
    )?;
    let db = world.db().await?;
    // Both lanes registered, and the hub has read them (it does every second).
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (n,): (i64,) =
            sqlx::query_as("SELECT count(*) FROM apalis.workers WHERE worker_type = $1")
                .bind(queue::TRANSLATE_DOCUMENT)
                .fetch_one(&db)
                .await?;
        if n == 2 {
            break;
        }
        ensure!(n < 2, "{n} document workers for 2 lanes");
        if std::time::Instant::now() > deadline {
            bail!("lanes not registered: {}", world.log("worker-lanes"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(2500)).await;
    for i in 0..4 {
        let (id, dk) = api
            .upload_ok(
                &key,
                &format!("lane{i}.txt"),
                b"The dog sleeps in the house.".to_vec(),
                &[("target_lang", "ES"), ("source_lang", "EN")],
            )
            .await?;
        let st = api.wait(&key, &id, &dk, Duration::from_secs(120)).await?;
        ensure!(st.status == "done", "{}", st.body);
    }
    // One after another, the documents went to the two lanes in turn.
    let (lanes,): (i64,) = sqlx::query_as(
        "SELECT count(DISTINCT lock_by) FROM apalis.jobs WHERE job_type = $1 AND status = 'Done'",
    )
    .bind(queue::TRANSLATE_DOCUMENT)
    .fetch_one(&db)
    .await?;
    ensure!(lanes == 2, "documents ran on {lanes} lane(s)");
    Ok(())
}
