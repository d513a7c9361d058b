//! What the runs measure: burn-downs (throughput) and latency statistics.

use std::time::Duration;

use super::noise::Noise;

/// How a burn-down is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Everything inserted first; timed from the workers' start.
    Processing,
    /// The workers started first; timed from the first insert.
    EndToEnd,
}

impl Mode {
    pub(super) fn label(self) -> &'static str {
        match self {
            Mode::Processing => "processing",
            Mode::EndToEnd => "end to end",
        }
    }
}

/// One burn-down's result.
#[derive(Debug, Clone, Copy)]
pub(super) struct Burn {
    /// Jobs done (all of them, unless the run hit the time cap).
    pub(super) jobs: usize,
    /// The run stopped at the time cap (`--cap-secs`) before every job was done; the
    /// rate is then jobs started / time.
    pub(super) capped: bool,
    /// Seconds until every job was done (or the cap).
    pub(super) secs: f64,
    /// Seconds the inserts took.
    pub(super) insert_secs: f64,
    pub(super) noise: Noise,
}

impl Burn {
    /// Jobs per second.
    pub(super) fn rate(&self) -> f64 {
        self.jobs as f64 / self.secs
    }
}

/// One system's (or setting's) burn-downs in both modes.
pub(super) struct ThroughputRow {
    pub(super) system: String,
    pub(super) key: String,
    pub(super) detail: String,
    pub(super) processing: Option<Burn>,
    pub(super) e2e: Option<Burn>,
}

/// Percentiles, maximum and mean of latencies, ms.
#[derive(Debug, Clone)]
pub(super) struct LatencyStats {
    pub(super) p50: f64,
    pub(super) p95: f64,
    pub(super) p99: f64,
    pub(super) max: f64,
    pub(super) mean: f64,
}

impl LatencyStats {
    /// The statistics of `v` (`None` when empty).
    pub(super) fn of(mut v: Vec<f64>) -> Option<Self> {
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let pct = |p: f64| {
            let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
            v[rank.clamp(1, v.len()) - 1]
        };
        Some(Self {
            p50: pct(50.0),
            p95: pct(95.0),
            p99: pct(99.0),
            max: v[v.len() - 1],
            mean: v.iter().sum::<f64>() / v.len() as f64,
        })
    }
}

/// Commit → start per sample: start latency minus the enqueue call's duration.
pub(super) fn after_commit(start: &[Option<f64>], enqueue: &[f64]) -> Vec<f64> {
    start
        .iter()
        .zip(enqueue)
        .filter_map(|(s, e)| s.map(|s| (s - e).max(0.0)))
        .collect()
}

/// One latency test of one system or setting.
pub(super) struct LatencyRow {
    pub(super) system: String,
    pub(super) test: &'static str,
    pub(super) detail: String,
    /// Enqueue call start → handler start.
    pub(super) start: Option<LatencyStats>,
    /// Enqueue call end (commit acknowledged) → handler start.
    pub(super) after_commit: Option<LatencyStats>,
    /// The enqueue call (BEGIN, INSERT, COMMIT).
    pub(super) enqueue: Option<LatencyStats>,
    /// Samples started / samples enqueued (open loop: the rest had not started when
    /// the wait hit the time cap, so the figures are a lower bound).
    pub(super) started: usize,
    pub(super) total: usize,
    /// Achieved offered rate (open loop), jobs/s.
    pub(super) offered: Option<f64>,
    pub(super) noise: Noise,
}

/// A latency test's name and what it measured besides the start latencies.
pub(super) struct LatencyRun {
    pub(super) system: String,
    pub(super) test: &'static str,
    pub(super) detail: String,
    /// The enqueue call times, ms.
    pub(super) enqueue: Vec<f64>,
    /// Achieved offered rate (open loop), jobs/s.
    pub(super) offered: Option<f64>,
    pub(super) noise: Noise,
}

impl LatencyRun {
    /// The row of this run, given each sample's start latency, ms (`None`: not
    /// started).
    pub(super) fn row(self, start: &[Option<f64>]) -> LatencyRow {
        LatencyRow {
            system: self.system,
            test: self.test,
            detail: self.detail,
            start: LatencyStats::of(start.iter().flatten().copied().collect()),
            after_commit: LatencyStats::of(after_commit(start, &self.enqueue)),
            enqueue: LatencyStats::of(self.enqueue),
            started: start.iter().flatten().count(),
            total: start.len(),
            offered: self.offered,
            noise: self.noise,
        }
    }
}

/// How long a burn-down of `n` jobs may take before it is an error.
pub(super) fn burn_timeout(n: usize) -> Duration {
    Duration::from_secs(120 + (n / 200) as u64)
}
