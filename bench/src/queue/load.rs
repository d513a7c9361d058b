//! Load generation: enqueue at a fixed offered rate without waiting (open loop),
//! or one job at a time (Graphile's latencyTest), and a producer that runs as a
//! process of its own.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use tokio::sync::oneshot;

use super::probe::Probe;

/// Runs `f` on a thread of its own with a single-threaded runtime of its own,
/// as a separate process would (the API beside the worker processes).
pub(super) async fn in_own_process<T, F, Fut>(f: F) -> anyhow::Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = anyhow::Result<T>>,
{
    let (tx, rx) = oneshot::channel();
    std::thread::Builder::new()
        .name("bench-api".into())
        .spawn(move || {
            let r = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("API runtime")
                .and_then(|rt| rt.block_on(f()));
            let _ = tx.send(r);
        })
        .context("API thread")?;
    rx.await.context("API thread ended")?
}

/// Enqueues `n` jobs at `rate` per second, each as its own task, without waiting for
/// earlier ones (open loop). Returns the enqueue call times (ms) and the offering time.
pub(super) async fn open_loop<F, Fut>(
    n: usize,
    rate: u32,
    enqueue: F,
) -> anyhow::Result<(Vec<f64>, f64)>
where
    F: Fn(i64) -> Fut,
    Fut: Future<Output = anyhow::Result<f64>> + Send + 'static,
{
    let spacing = Duration::from_secs_f64(1.0 / f64::from(rate.max(1)));
    let t0 = tokio::time::Instant::now();
    let mut tasks = Vec::with_capacity(n);
    for i in 0..n {
        tokio::time::sleep_until(t0 + spacing * i as u32).await;
        tasks.push(tokio::spawn(enqueue(i as i64)));
    }
    let offer_secs = t0.elapsed().as_secs_f64();
    let mut enq = Vec::with_capacity(n);
    for t in tasks {
        enq.push(t.await.context("enqueue task")??);
    }
    Ok((enq, offer_secs))
}

/// Graphile's latencyTest loop: enqueue sample i, wait until it started, go on.
/// Returns the enqueue call times, ms.
pub(super) async fn sequential_with<F, Fut>(
    probe: &Probe,
    n: usize,
    enqueue: F,
) -> anyhow::Result<Vec<f64>>
where
    F: Fn(i64) -> Fut,
    Fut: Future<Output = anyhow::Result<f64>>,
{
    let mut enq = Vec::with_capacity(n);
    for i in 0..n {
        enq.push(enqueue(i as i64).await?);
        let deadline = Instant::now() + Duration::from_secs(30);
        while probe.latency[i].load(Ordering::Relaxed) == 0 {
            if Instant::now() > deadline {
                bail!("sequential latency: sample {i} did not start within 30 s");
            }
            let _ = tokio::time::timeout(Duration::from_millis(50), probe.started.notified()).await;
        }
    }
    Ok(enq)
}
