//! How an idle worker learns that a job was enqueued: one LISTEN connection per
//! process ([`WakeHub`]) that wakes **one** worker per notification, without
//! apalis' lost wake-up.
//!
//! Every enqueue sends one NOTIFY (`tolk_storage::queue::notify_enqueued`) on
//! its queue's own channel (`tolk_storage::queue::wake_channel`), whose payload
//! names the queue (`job_type`) and carries a number `k`. A hub LISTENs on the
//! channels of the queues it has lanes for (and on apalis' shared channel), so a
//! process hears nothing of the kinds of job it does not run. Each hub keeps
//! the list of live workers of every queue (the rows of `apalis.workers` seen
//! within the dead-worker threshold, refreshed every [`REFRESH`], identical in
//! every process) and wakes only the worker at index `k mod n` of that list, if
//! it is one of its own. Before this, every notification woke every worker of
//! the queue in every process: with eight workers each enqueue cost eight
//! fetch transactions, seven of them empty, which under a steady stream of
//! jobs took most of a small machine's CPU (`tolk-bench queue`).
//!
//! A job is never left to one worker alone: a worker that fetches takes every
//! runnable job of its queue, not just the one it was woken for, and every lane
//! looks once more [`SECOND_LOOK`] after the last notification it heard of (its
//! own, or — for one lane per process, in turn — one meant for another
//! process), so a notification meant for a worker that is busy, has just died,
//! or was fetching when it arrived (apalis then drops the wake-up: its fetch's
//! snapshot predates the new job's commit, it comes back empty and the worker
//! parks) is picked up within that delay. The interval poll (1 s) stays the
//! last resort. Payloads without `k` (apalis' own trigger) wake every local
//! worker of the queue, as apalis does.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use futures::task::AtomicWaker;
use serde::Deserialize;
use sqlx::PgPool;
use sqlx::postgres::PgListener;
use tokio::sync::Notify;

pub use tolk_storage::queue::INSERT_CHANNEL;

/// Delay of a lane's extra look after the last notification it heard of
/// (longer than a fetch takes).
pub const SECOND_LOOK: Duration = Duration::from_millis(20);

/// How often a hub re-reads the live workers of its queues.
pub const REFRESH: Duration = Duration::from_secs(1);

/// One LISTEN connection for all the workers ("lanes") of a process; see the
/// module documentation. Cheap to clone.
#[derive(Clone)]
pub struct WakeHub {
    inner: Arc<Hub>,
}

struct Hub {
    pool: PgPool,
    /// Workers seen this recently are alive.
    live_within: Duration,
    /// Delay of a lane's extra look.
    second_look: Duration,
    /// The workers of this process, by queue.
    lanes: Mutex<HashMap<String, Vec<Arc<Lane>>>>,
    /// Live workers of every process, by queue, sorted by name.
    live: Mutex<HashMap<String, Vec<String>>>,
    /// Turn of the lane that watches notifications meant for other processes.
    backup_turn: AtomicUsize,
    /// Ends the hub's task when the last handle and lane are gone.
    stop: Arc<Notify>,
    /// A lane was added: the hub's task LISTENs on its queue's channel.
    listen: Arc<Notify>,
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.stop.notify_one();
    }
}

/// One worker's share of the hub's wake-ups.
struct Lane {
    name: String,
    /// Fetch now.
    wake: AtomicBool,
    /// (Re)start the second-look timer without fetching now.
    look: AtomicBool,
    waker: AtomicWaker,
}

impl Lane {
    fn signal(&self, flag: &AtomicBool) {
        flag.store(true, Ordering::Release);
        self.waker.wake();
    }
}

#[derive(Deserialize)]
struct InsertEvent {
    job_type: String,
    #[serde(default)]
    k: Option<u64>,
}

/// Which lane a notification for a queue goes to.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    /// Local lane `i` fetches now.
    Wake(usize),
    /// Meant for a worker of another process: local lane `i` looks later.
    Look(usize),
    /// Every local lane fetches now.
    All,
}

/// The decision of [`Hub::dispatch`], apart from its state: `local` are this
/// process's lane names of the queue, `live` the queue's live workers of every
/// process (sorted), `turn` the backup lane's turn.
fn target(k: Option<u64>, local: &[&str], live: &[String], turn: usize) -> Option<Target> {
    if local.is_empty() {
        return None;
    }
    let Some(k) = k else {
        return Some(Target::All);
    };
    if live.is_empty() {
        // No list yet (this process just started): a local lane in turn.
        return Some(Target::Wake((k % local.len() as u64) as usize));
    }
    let chosen = &live[(k % live.len() as u64) as usize];
    Some(match local.iter().position(|l| *l == chosen) {
        Some(i) => Target::Wake(i),
        None => Target::Look(turn % local.len()),
    })
}

impl WakeHub {
    /// Starts the hub of a process: a task that LISTENs on a connection of
    /// `pool` and refreshes the live workers (seen within `live_within`) of the
    /// queues it has lanes for every [`REFRESH`]. Needs a Tokio runtime.
    pub fn start(pool: PgPool, live_within: Duration) -> Self {
        Self::start_with(pool, live_within, SECOND_LOOK)
    }

    /// [`WakeHub::start`] with another delay for the lanes' extra look.
    pub fn start_with(pool: PgPool, live_within: Duration, second_look: Duration) -> Self {
        let stop = Arc::new(Notify::new());
        let listen = Arc::new(Notify::new());
        let inner = Arc::new(Hub {
            pool,
            live_within,
            second_look,
            lanes: Mutex::new(HashMap::new()),
            live: Mutex::new(HashMap::new()),
            backup_turn: AtomicUsize::new(0),
            stop: stop.clone(),
            listen: listen.clone(),
        });
        tokio::spawn(run(Arc::downgrade(&inner), stop, listen));
        Self { inner }
    }

    /// Reads the live workers now (the hub also does every [`REFRESH`]).
    pub async fn refresh(&self) -> Result<(), tolk_storage::StorageError> {
        self.inner.refresh().await
    }

    /// The wake-up stream of the worker named `name` on `queue`, for
    /// `.poll_with_stream(..)`. Never ends.
    pub fn lane(&self, queue: &str, name: &str) -> LaneWake {
        let lane = Arc::new(Lane {
            name: name.to_owned(),
            wake: AtomicBool::new(false),
            look: AtomicBool::new(false),
            waker: AtomicWaker::new(),
        });
        lock(&self.inner.lanes)
            .entry(queue.to_owned())
            .or_default()
            .push(lane.clone());
        self.inner.listen.notify_one();
        LaneWake {
            hub: self.inner.clone(),
            lane,
            second_look: Mutex::new(None),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Hub {
    fn dispatch(&self, payload: &str) {
        let Ok(event) = serde_json::from_str::<InsertEvent>(payload) else {
            return;
        };
        let lanes = lock(&self.lanes);
        let Some(local) = lanes.get(&event.job_type) else {
            return;
        };
        let names: Vec<&str> = local.iter().map(|l| l.name.as_str()).collect();
        let turn = self.backup_turn.load(Ordering::Relaxed);
        let live = lock(&self.live);
        let empty = Vec::new();
        let live = live.get(&event.job_type).unwrap_or(&empty);
        match target(event.k, &names, live, turn) {
            None => {}
            Some(Target::All) => local.iter().for_each(|l| l.signal(&l.wake)),
            Some(Target::Wake(i)) => local[i].signal(&local[i].wake),
            Some(Target::Look(i)) => {
                self.backup_turn.fetch_add(1, Ordering::Relaxed);
                local[i].signal(&local[i].look);
            }
        }
    }

    /// Wakes every lane (the connection was lost: notifications may be too).
    fn wake_all(&self) {
        for l in lock(&self.lanes).values().flatten() {
            l.signal(&l.wake);
        }
    }

    async fn refresh(&self) -> Result<(), tolk_storage::StorageError> {
        let queues: Vec<String> = lock(&self.lanes).keys().cloned().collect();
        let live = if queues.is_empty() {
            HashMap::new()
        } else {
            tolk_storage::queue::live_workers(&self.pool, &queues, self.live_within).await?
        };
        *lock(&self.live) = live;
        Ok(())
    }
}

/// The hub's task: LISTEN on the channels of its lanes' queues (reconnecting
/// after a failure) and refresh the live workers, until the hub is dropped.
async fn run(hub: Weak<Hub>, stop: Arc<Notify>, listen: Arc<Notify>) {
    let Some(pool) = hub.upgrade().map(|h| h.pool.clone()) else {
        return;
    };
    let mut refresh = tokio::time::interval(REFRESH);
    refresh.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut listener: Option<PgListener> = None;
    // The queues whose channel `listener` LISTENs on.
    let mut heard: HashSet<String> = HashSet::new();
    loop {
        if listener.is_none() {
            heard.clear();
            match connect(&pool).await {
                Ok(l) => listener = Some(l),
                Err(e) => {
                    tracing::warn!(error = %e, "LISTEN connection failed; relying on the interval poll");
                }
            }
        }
        if let Some(l) = listener.as_mut() {
            let queues: Vec<String> = match hub.upgrade() {
                Some(hub) => lock(&hub.lanes)
                    .keys()
                    .filter(|q| !heard.contains(*q))
                    .cloned()
                    .collect(),
                None => return,
            };
            for queue in queues {
                match l.listen(&tolk_storage::queue::wake_channel(&queue)).await {
                    Ok(()) => {
                        heard.insert(queue);
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, queue, "LISTEN failed; relying on the interval poll");
                        break;
                    }
                }
            }
        }
        let event = tokio::select! {
            () = stop.notified() => return,
            () = listen.notified() => continue,
            _ = refresh.tick() => None,
            n = async {
                match listener.as_mut() {
                    Some(l) => l.try_recv().await,
                    None => std::future::pending().await,
                }
            } => Some(n),
        };
        let Some(hub) = hub.upgrade() else { return };
        match event {
            None => {
                if let Err(e) = hub.refresh().await {
                    tracing::warn!(error = %e, "reading live workers failed");
                }
            }
            Some(Ok(Some(n))) => hub.dispatch(n.payload()),
            Some(Ok(None)) => {
                // sqlx reconnects on the next call; what was sent meanwhile is lost.
                tracing::warn!("LISTEN connection lost; reconnecting");
                hub.wake_all();
            }
            Some(Err(e)) => {
                tracing::warn!(error = %e, "LISTEN failed; reconnecting");
                listener = None;
                hub.wake_all();
                drop(hub);
                tokio::select! {
                    () = stop.notified() => return,
                    () = tokio::time::sleep(Duration::from_secs(1)) => {}
                }
            }
        }
    }
}

/// A LISTEN connection, on apalis' shared channel to begin with (the lanes'
/// own channels follow).
async fn connect(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut l = PgListener::connect_with(pool).await?;
    l.listen(INSERT_CHANNEL).await?;
    Ok(l)
}

/// A worker's wake-up stream (from [`WakeHub::lane`]): yields when the hub
/// chose this worker for a new job, and once more [`SECOND_LOOK`] (the hub's
/// setting) after the last notification this lane heard of.
pub struct LaneWake {
    hub: Arc<Hub>,
    lane: Arc<Lane>,
    // The Mutex only makes the stream `Sync`; it is never contended.
    second_look: Mutex<Option<Pin<Box<tokio::time::Sleep>>>>,
}

impl Drop for LaneWake {
    fn drop(&mut self) {
        let mut lanes = lock(&self.hub.lanes);
        for v in lanes.values_mut() {
            v.retain(|l| !Arc::ptr_eq(l, &self.lane));
        }
        lanes.retain(|_, v| !v.is_empty());
    }
}

impl Stream for LaneWake {
    type Item = ();

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<()>> {
        let this = self.get_mut();
        this.lane.waker.register(cx.waker());
        let now = this.lane.wake.swap(false, Ordering::AcqRel);
        let later = this.lane.look.swap(false, Ordering::AcqRel);
        let look = this
            .second_look
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        if now || later {
            let mut sleep = Box::pin(tokio::time::sleep(this.hub.second_look));
            // Register the timer's waker now.
            let _ = sleep.as_mut().poll(cx);
            *look = Some(sleep);
        }
        if now {
            return Poll::Ready(Some(()));
        }
        if let Some(sleep) = look.as_mut()
            && sleep.as_mut().poll(cx).is_ready()
        {
            *look = None;
            return Poll::Ready(Some(()));
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn insert_payload_names_the_queue_and_k() {
        let e: InsertEvent =
            serde_json::from_str(r#"{"job_type":"translate_document","k":7}"#).unwrap();
        assert_eq!((e.job_type.as_str(), e.k), ("translate_document", Some(7)));
        let e: InsertEvent =
            serde_json::from_str(r#"{"job_type":"translate_document","id":"x"}"#).unwrap();
        assert_eq!(e.k, None);
    }

    #[test]
    fn one_worker_of_all_processes_is_chosen() {
        let all = live(&["a", "b", "c", "d"]);
        // This process runs b and d.
        let local = ["b", "d"];
        assert_eq!(target(Some(1), &local, &all, 0), Some(Target::Wake(0)));
        assert_eq!(target(Some(3), &local, &all, 0), Some(Target::Wake(1)));
        assert_eq!(target(Some(7), &local, &all, 0), Some(Target::Wake(1)));
        // Meant for a or c: a local lane, in turn, only looks later.
        assert_eq!(target(Some(0), &local, &all, 0), Some(Target::Look(0)));
        assert_eq!(target(Some(2), &local, &all, 5), Some(Target::Look(1)));
    }

    #[test]
    fn without_a_list_or_k_the_local_lanes_are_woken() {
        let local = ["x", "y", "z"];
        assert_eq!(target(Some(4), &local, &[], 0), Some(Target::Wake(1)));
        assert_eq!(target(None, &local, &live(&["x"]), 0), Some(Target::All));
        assert_eq!(target(Some(4), &[], &live(&["x"]), 0), None);
    }

    #[test]
    fn each_process_wakes_its_own_share_exactly_once() {
        // Two processes, the same live list: every k wakes exactly one lane
        // in all, and each process looks later when it is not chosen.
        let all = live(&["p1-a", "p1-b", "p2-a"]);
        for k in 0..30u64 {
            let woken = [&["p1-a", "p1-b"][..], &["p2-a"][..]]
                .iter()
                .filter(|local| matches!(target(Some(k), local, &all, 0), Some(Target::Wake(_))))
                .count();
            assert_eq!(woken, 1, "k = {k}");
        }
    }
}
