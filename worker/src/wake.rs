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
//!
//! A process whose every lane is busy stops listening (`UNLISTEN *`), and
//! listens again once one of them has a free place: a busy worker has no use
//! for a wake-up (a lane that frees fetches at once, by itself), and
//! PostgreSQL (15 here) signals every listening backend of the database on
//! every NOTIFY, whatever its channel, so the LISTEN connection of a saturated
//! pool (voice under a backlog) cost every other kind's enqueues a little
//! (`tolk-bench queue --kinds-queue-only`). Each lane's worker counts its
//! running jobs through [`WakeHub::busy_layer`]; a lane without one counts as
//! always free. The hub stops listening once its lanes have stayed busy for
//! [`SETTLE`] (a short burst does not make it flap) and listens again as soon
//! as one frees; a hub that begins to listen wakes its lanes once, for the
//! jobs enqueued while it did not.

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

/// How long all lanes must stay busy before a hub stops listening.
pub const SETTLE: Duration = Duration::from_millis(20);

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
    /// A lane was added or removed: the hub's task follows at once.
    listen: Arc<Notify>,
    /// Every lane became busy (the hub's task follows after [`SETTLE`]), or
    /// one became free (it follows at once).
    busy: Arc<Notify>,
    /// The channels the hub's connection LISTENs on now.
    listening: Mutex<Vec<String>>,
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
    /// Jobs the lane's worker runs now ([`BusyLayer`]).
    running: AtomicUsize,
    /// Jobs it runs at most; 0 while nothing counts them.
    capacity: AtomicUsize,
}

impl Lane {
    fn new(name: &str) -> Arc<Self> {
        Arc::new(Self {
            name: name.to_owned(),
            wake: AtomicBool::new(false),
            look: AtomicBool::new(false),
            waker: AtomicWaker::new(),
            running: AtomicUsize::new(0),
            capacity: AtomicUsize::new(0),
        })
    }

    fn signal(&self, flag: &AtomicBool) {
        flag.store(true, Ordering::Release);
        self.waker.wake();
    }

    /// Whether the lane's worker could start another job now.
    fn free(&self) -> bool {
        let capacity = self.capacity.load(Ordering::Acquire);
        capacity == 0 || self.running.load(Ordering::Acquire) < capacity
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
        let busy = Arc::new(Notify::new());
        let inner = Arc::new(Hub {
            pool,
            live_within,
            second_look,
            lanes: Mutex::new(HashMap::new()),
            live: Mutex::new(HashMap::new()),
            backup_turn: AtomicUsize::new(0),
            stop: stop.clone(),
            listen: listen.clone(),
            busy: busy.clone(),
            listening: Mutex::new(Vec::new()),
        });
        tokio::spawn(run(Arc::downgrade(&inner), Signals { stop, listen, busy }));
        Self { inner }
    }

    /// The channels this process LISTENs on now, sorted: none while every
    /// lane is busy.
    pub fn listening(&self) -> Vec<String> {
        lock(&self.inner.listening).clone()
    }

    /// The layer that counts the running jobs of the worker named `name`
    /// (whose [`WakeHub::lane`] exists), which runs `jobs_at_once` jobs at
    /// most: add it to that worker (`WorkerBuilder::layer`), so the hub knows
    /// when every lane is busy. Counts nothing for a name without a lane.
    pub fn busy_layer(&self, name: &str, jobs_at_once: usize) -> BusyLayer {
        let lane = lock(&self.inner.lanes)
            .values()
            .flatten()
            .find(|l| l.name == name)
            .cloned();
        if let Some(lane) = &lane {
            lane.capacity.store(jobs_at_once.max(1), Ordering::Release);
        }
        BusyLayer {
            lane,
            busy: self.inner.busy.clone(),
        }
    }

    /// Reads the live workers now (the hub also does every [`REFRESH`]).
    pub async fn refresh(&self) -> Result<(), tolk_storage::StorageError> {
        self.inner.refresh().await
    }

    /// The wake-up stream of the worker named `name` on `queue`, for
    /// `.poll_with_stream(..)`. Never ends.
    pub fn lane(&self, queue: &str, name: &str) -> LaneWake {
        let lane = Lane::new(name);
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

    /// Wakes every lane (the connection was lost: notifications may be too;
    /// or the process did not listen for a while).
    fn wake_all(&self) {
        for l in lock(&self.lanes).values().flatten() {
            l.signal(&l.wake);
        }
    }

    /// The channels the hub should LISTEN on now: those of its lanes' queues
    /// and apalis' shared one while any lane is free, none while all are busy.
    fn wanted(&self) -> HashSet<String> {
        wanted(&lock(&self.lanes))
    }

    /// Whether every lane is busy.
    fn all_busy(&self) -> bool {
        all_busy(&lock(&self.lanes))
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

/// Whether every one of these lanes is busy (none: all busy).
fn all_busy(lanes: &HashMap<String, Vec<Arc<Lane>>>) -> bool {
    !lanes.values().flatten().any(|l| l.free())
}

/// [`Hub::wanted`] of these lanes, by queue.
fn wanted(lanes: &HashMap<String, Vec<Arc<Lane>>>) -> HashSet<String> {
    if all_busy(lanes) {
        return HashSet::new();
    }
    lanes
        .keys()
        .map(|q| tolk_storage::queue::wake_channel(q))
        .chain(std::iter::once(INSERT_CHANNEL.to_owned()))
        .collect()
}

/// What ends or stirs the hub's task.
struct Signals {
    stop: Arc<Notify>,
    listen: Arc<Notify>,
    busy: Arc<Notify>,
}

/// What woke the hub's task.
enum Event {
    /// Follow the lanes' state now.
    Follow,
    /// Every lane became busy (follow in [`SETTLE`], unless due sooner), or
    /// one became free (follow now).
    Settle,
    Refresh,
    Heard(Result<Option<sqlx::postgres::PgNotification>, sqlx::Error>),
}

/// The hub's task: LISTEN on the channels its lanes want ([`Hub::wanted`];
/// reconnecting after a failure) and refresh the live workers, until the hub
/// is dropped.
async fn run(hub: Weak<Hub>, signals: Signals) {
    let Some(pool) = hub.upgrade().map(|h| h.pool.clone()) else {
        return;
    };
    let mut refresh = tokio::time::interval(REFRESH);
    refresh.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut listener: Option<PgListener> = None;
    // The channels `listener` LISTENs on.
    let mut heard: HashSet<String> = HashSet::new();
    // Follow the lanes now, or at this instant.
    let mut follow_now = true;
    let mut follow_at: Option<tokio::time::Instant> = None;
    loop {
        if listener.is_none() {
            heard.clear();
            follow_now = true;
            match PgListener::connect_with(&pool).await {
                Ok(l) => listener = Some(l),
                Err(e) => {
                    tracing::warn!(error = %e, "LISTEN connection failed; relying on the interval poll");
                }
            }
        }
        if follow_now && let Some(l) = listener.as_mut() {
            follow_now = false;
            follow_at = None;
            let Some(wanted) = hub.upgrade().map(|h| h.wanted()) else {
                return;
            };
            let followed = follow(l, &mut heard, &wanted).await;
            let Some(h) = hub.upgrade() else { return };
            match followed {
                // What was enqueued while the process did not listen yet.
                Ok(true) => h.wake_all(),
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "LISTEN or UNLISTEN failed; relying on the interval poll");
                    h.wake_all();
                }
            }
            let mut now: Vec<String> = heard.iter().cloned().collect();
            now.sort();
            *lock(&h.listening) = now;
        }
        let event = tokio::select! {
            () = signals.stop.notified() => return,
            () = signals.listen.notified() => Event::Follow,
            () = signals.busy.notified() => Event::Settle,
            () = async {
                match follow_at {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            } => Event::Follow,
            _ = refresh.tick() => Event::Refresh,
            n = async {
                match listener.as_mut() {
                    Some(l) => l.try_recv().await,
                    None => std::future::pending().await,
                }
            } => Event::Heard(n),
        };
        let Some(hub) = hub.upgrade() else { return };
        match event {
            Event::Follow => {
                follow_now = true;
                follow_at = None;
            }
            Event::Settle => {
                if hub.all_busy() {
                    follow_at.get_or_insert_with(|| tokio::time::Instant::now() + SETTLE);
                } else {
                    // A lane freed: listen again at once (it may find the
                    // queue empty and park).
                    follow_now = true;
                    follow_at = None;
                }
            }
            Event::Refresh => {
                // Also retries a LISTEN that failed.
                follow_now |= follow_at.is_none();
                if let Err(e) = hub.refresh().await {
                    tracing::warn!(error = %e, "reading live workers failed");
                }
            }
            Event::Heard(Ok(Some(n))) => hub.dispatch(n.payload()),
            Event::Heard(Ok(None)) => {
                // sqlx reconnects on the next call and LISTENs again on what
                // `heard` holds; what was sent meanwhile is lost.
                tracing::warn!("LISTEN connection lost; reconnecting");
                hub.wake_all();
            }
            Event::Heard(Err(e)) => {
                tracing::warn!(error = %e, "LISTEN failed; reconnecting");
                listener = None;
                hub.wake_all();
                drop(hub);
                tokio::select! {
                    () = signals.stop.notified() => return,
                    () = tokio::time::sleep(Duration::from_secs(1)) => {}
                }
            }
        }
    }
}

/// Makes `l` LISTEN on exactly `wanted` (`heard` holds what it LISTENs on):
/// new channels first, then `UNLISTEN` of the others (all at once when none
/// is wanted, so PostgreSQL stops signalling the connection). True when it
/// began to listen on a channel.
async fn follow(
    l: &mut PgListener,
    heard: &mut HashSet<String>,
    wanted: &HashSet<String>,
) -> Result<bool, sqlx::Error> {
    let mut new: Vec<&str> = wanted
        .iter()
        .filter(|c| !heard.contains(*c))
        .map(String::as_str)
        .collect();
    new.sort_unstable();
    if !new.is_empty() {
        l.listen_all(new.iter().copied()).await?;
        heard.extend(new.iter().map(|c| (*c).to_owned()));
    }
    if wanted.is_empty() {
        if !heard.is_empty() {
            l.unlisten_all().await?;
            heard.clear();
        }
    } else {
        let old: Vec<String> = heard.difference(wanted).cloned().collect();
        for c in old {
            l.unlisten(&c).await?;
            heard.remove(&c);
        }
    }
    Ok(!new.is_empty())
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
        self.hub.listen.notify_one();
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

/// Counts the running jobs of one lane's worker for its hub (from
/// [`WakeHub::busy_layer`]).
#[derive(Clone)]
pub struct BusyLayer {
    lane: Option<Arc<Lane>>,
    busy: Arc<Notify>,
}

impl<S> tower::Layer<S> for BusyLayer {
    type Service = Busy<S>;

    fn layer(&self, inner: S) -> Busy<S> {
        Busy {
            inner,
            layer: self.clone(),
        }
    }
}

/// A worker's service, counted by a [`BusyLayer`].
#[derive(Clone)]
pub struct Busy<S> {
    inner: S,
    layer: BusyLayer,
}

impl<S, R> tower::Service<R> for Busy<S>
where
    S: tower::Service<R>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Counted<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Counted<S::Future> {
        let running = self.layer.lane.clone().map(|lane| {
            let capacity = lane.capacity.load(Ordering::Acquire);
            if lane.running.fetch_add(1, Ordering::AcqRel) + 1 == capacity {
                self.layer.busy.notify_one();
            }
            Running {
                lane,
                busy: self.layer.busy.clone(),
            }
        });
        Counted {
            job: Box::pin(self.inner.call(request)),
            _running: running,
        }
    }
}

/// One running job of a lane: counted from its start until it ends or is
/// dropped.
struct Running {
    lane: Arc<Lane>,
    busy: Arc<Notify>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let capacity = self.lane.capacity.load(Ordering::Acquire);
        if self.lane.running.fetch_sub(1, Ordering::AcqRel) == capacity {
            self.busy.notify_one();
        }
    }
}

/// A job's future while it counts as running.
pub struct Counted<F> {
    job: Pin<Box<F>>,
    _running: Option<Running>,
}

impl<F: Future> Future for Counted<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.job.as_mut().poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use futures::FutureExt;
    use tokio::sync::oneshot;

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

    /// Lanes of `queue` whose workers run at most `capacity` jobs.
    fn lanes(queue: &str, capacity: &[usize]) -> HashMap<String, Vec<Arc<Lane>>> {
        let v = capacity
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let l = Lane::new(&format!("{queue}-{i}"));
                l.capacity.store(c, Ordering::Release);
                l
            })
            .collect();
        HashMap::from([(queue.to_owned(), v)])
    }

    fn layer(lane: &Arc<Lane>, busy: &Arc<Notify>) -> BusyLayer {
        BusyLayer {
            lane: Some(lane.clone()),
            busy: busy.clone(),
        }
    }

    #[test]
    fn a_process_listens_while_any_lane_is_free() {
        let mut all = lanes("voice", &[1, 2]);
        all.extend(lanes("documents", &[0]));
        let channels = |all: &HashMap<String, Vec<Arc<Lane>>>| {
            let mut v: Vec<String> = wanted(all).into_iter().collect();
            v.sort();
            v
        };
        let every = vec![
            INSERT_CHANNEL.to_owned(),
            tolk_storage::queue::wake_channel("documents"),
            tolk_storage::queue::wake_channel("voice"),
        ];
        assert_eq!(channels(&all), every);
        // A lane that nothing counts (capacity 0) is always free.
        all["voice"][0].running.store(1, Ordering::Release);
        all["voice"][1].running.store(2, Ordering::Release);
        assert_eq!(channels(&all), every);
        all.remove("documents");
        assert_eq!(channels(&all), Vec::<String>::new());
        all["voice"][1].running.store(1, Ordering::Release);
        assert_eq!(channels(&all).len(), 2);
    }

    #[tokio::test]
    async fn the_busy_layer_counts_running_jobs_and_signals_the_edges() {
        use tower::{Layer, Service, ServiceExt};
        let all = lanes("voice", &[2]);
        let lane = &all["voice"][0];
        let busy = Arc::new(Notify::new());
        let mut svc =
            layer(lane, &busy).layer(tower::service_fn(|rx: oneshot::Receiver<()>| async {
                rx.await.ok();
                Ok::<_, std::convert::Infallible>(())
            }));
        let signalled = || busy.notified().now_or_never().is_some();
        let (tx1, rx1) = oneshot::channel();
        let first = svc.ready().await.unwrap().call(rx1);
        assert_eq!(lane.running.load(Ordering::Acquire), 1);
        assert!(lane.free() && !signalled());
        let (_tx2, rx2) = oneshot::channel();
        let second = svc.ready().await.unwrap().call(rx2);
        assert!(!lane.free() && signalled(), "full: the hub is told");
        tx1.send(()).unwrap();
        first.await.unwrap();
        assert!(lane.free() && signalled(), "a place freed: the hub is told");
        // A job dropped before it ends (a worker stopped) counts no more.
        drop(second);
        assert_eq!(lane.running.load(Ordering::Acquire), 0);
        assert!(!signalled());
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
