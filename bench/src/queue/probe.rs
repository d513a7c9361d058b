//! The bench's job, the one clock of producers and handlers, and what the
//! handlers report ([`Probe`]).

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::bail;
use apalis::prelude::{BoxDynError, Data};
use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

/// Microseconds since the bench started (one clock for producer and handlers).
pub(super) fn now_us() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    u64::try_from(EPOCH.get_or_init(Instant::now).elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// The bench's job payload: the document job's fields plus what the bench measures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct BenchJob {
    pub(super) document_id: String,
    trace_id: String,
    /// Sample index; negative for warm-up and burn-down jobs.
    pub(super) seq: i64,
    /// [`now_us`] when the enqueue started.
    pub(super) enqueued_us: u64,
}

impl BenchJob {
    pub(super) fn new(seq: i64) -> Self {
        Self {
            document_id: ulid::Ulid::generate().to_string(),
            trace_id: format!("{:032x}", ulid::Ulid::generate().0),
            seq,
            enqueued_us: now_us(),
        }
    }
}

/// What the handlers report to the bench.
pub(super) struct Probe {
    /// Handlers run (all jobs, warm-up included).
    pub(super) done: AtomicUsize,
    /// Enqueue-to-start latency by sample, µs + 1 (0: not started yet).
    pub(super) latency: Vec<AtomicU64>,
    /// Signalled when a sample starts (sequential test).
    pub(super) started: Notify,
}

impl Probe {
    pub(super) fn new(samples: usize) -> Arc<Self> {
        Arc::new(Self {
            done: AtomicUsize::new(0),
            latency: (0..samples).map(|_| AtomicU64::new(0)).collect(),
            started: Notify::new(),
        })
    }

    pub(super) fn record(&self, job: &BenchJob) {
        if let Ok(i) = usize::try_from(job.seq)
            && let Some(slot) = self.latency.get(i)
        {
            slot.store(
                now_us().saturating_sub(job.enqueued_us) + 1,
                Ordering::Relaxed,
            );
            self.started.notify_one();
        }
        self.done.fetch_add(1, Ordering::Release);
    }

    /// Marks sample `i` started, its latency measured by another process.
    pub(super) fn started_elsewhere(&self, i: usize) {
        if let Some(slot) = self.latency.get(i) {
            slot.store(1, Ordering::Relaxed);
            self.started.notify_one();
            self.done.fetch_add(1, Ordering::Release);
        }
    }

    /// Start latency by sample, ms (`None`: not started).
    pub(super) fn latencies_ms(&self) -> Vec<Option<f64>> {
        self.latency
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .map(|v| (v > 0).then(|| (v - 1) as f64 / 1000.0))
            .collect()
    }

    /// Waits until `target` handlers ran or `cap` passed; true if the target was reached.
    pub(super) async fn wait_done_capped(&self, target: usize, cap: Duration) -> bool {
        let deadline = Instant::now() + cap;
        while self.done.load(Ordering::Acquire) < target {
            if Instant::now() > deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        true
    }

    /// Waits until `target` handlers ran; fails after `timeout`.
    pub(super) async fn wait_done(
        &self,
        target: usize,
        timeout: Duration,
        what: &str,
    ) -> anyhow::Result<()> {
        if self.wait_done_capped(target, timeout).await {
            return Ok(());
        }
        bail!(
            "{what}: only {} of {target} handlers ran within {} s",
            self.done.load(Ordering::Acquire),
            timeout.as_secs()
        );
    }
}

/// The no-op handler: records its start and returns.
pub(super) async fn noop(job: BenchJob, probe: Data<Arc<Probe>>) -> Result<(), BoxDynError> {
    probe.record(&job);
    Ok(())
}
