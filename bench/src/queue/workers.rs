//! Tolk's workers as the worker process runs them: apalis workers on a
//! setting's pools and wake-up, and the scheduler's queue pruning beside them.

use std::sync::Arc;
use std::time::Duration;

use anyhow::anyhow;
use apalis::prelude::*;
use apalis_postgres::PostgresStorage;
use sqlx::PgPool;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::QUEUE;
use super::bench::Bench;
use super::probe::{BenchJob, Probe, noop};
use super::settings::{Prune, TolkSetting, Wake, platform_scheduler, platform_worker};

/// A running set of Tolk workers (one apalis `Monitor`, as the worker process has).
pub(super) struct Workers {
    pub(super) stop: Option<oneshot::Sender<()>>,
    pub(super) handle: JoinHandle<Result<(), MonitorError>>,
    /// One per pool, as each `tolk worker` process has one.
    pub(super) hubs: Vec<tolk_worker::wake::WakeHub>,
}

macro_rules! register_worker {
    ($monitor:expr, $name:expr, $probe:expr, $conc:expr, $backend:expr $(, $layer:expr)?) => {{
        let name = $name;
        let probe = $probe;
        let conc = $conc;
        $monitor.register(move |_restarts| {
            WorkerBuilder::new(name.clone())
                .backend($backend)
                $(.layer($layer))?
                .data(probe.clone())
                .catch_panic()
                .concurrency(conc)
                .build(noop)
        })
    }};
}

impl Workers {
    /// Starts the workers of `s` on `pool`, configured as `worker/src/run.rs` does
    /// (each worker stands for one `tolk worker` process).
    pub(super) fn start(s: &TolkSetting, pools: &WorkerPools, probe: &Arc<Probe>) -> Self {
        let wcfg = tolk_worker::WorkerConfig {
            concurrency: s.concurrency,
            batch_size: Some(s.batch),
            lock_tasks: s.lock_tasks,
            ..platform_worker()
        };
        let cfg = wcfg.apalis_config(QUEUE);
        let poll = wcfg.poll_interval;
        let hubs: Vec<_> = pools.0.iter().map(|p| wcfg.wake_hub(p)).collect();
        let mut monitor = Monitor::new();
        for i in 0..s.workers {
            let pool = pools.of(i).clone();
            let hub = hubs[i % hubs.len()].clone();
            let wcfg = wcfg.clone();
            let name = tolk_worker::run::unique_name(QUEUE);
            let (probe, conc) = (probe.clone(), s.concurrency);
            // apalis' own backend on this worker's pool (without the platform's hub).
            let storage = {
                let (pool, cfg) = (pool.clone(), cfg.clone());
                move || PostgresStorage::<BenchJob>::new(&pool).with_config(cfg.clone())
            };
            monitor = match s.wake {
                Wake::ApalisPubsub => register_worker!(monitor, name, probe, conc, {
                    storage().with_pubsub().poll_with_interval(poll)
                }),
                Wake::Turn | Wake::Herd => register_worker!(
                    monitor,
                    name.clone(),
                    probe,
                    conc,
                    tolk_worker::run::backend::<BenchJob>(&pool, &wcfg, &hub, QUEUE, &name),
                    hub.busy_layer(&name, conc)
                ),
                Wake::Interval => register_worker!(monitor, name, probe, conc, {
                    storage().poll_with_interval(poll)
                }),
            };
        }
        let (tx, rx) = oneshot::channel::<()>();
        let handle = tokio::spawn(
            monitor
                .shutdown_timeout(Duration::from_secs(30))
                .run_with_signal(async move {
                    let _ = rx.await;
                    Ok(())
                }),
        );
        Self {
            stop: Some(tx),
            handle,
            hubs,
        }
    }

    pub(super) async fn stop(mut self) -> anyhow::Result<()> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        // Their LISTEN connections go back to the pools once the lanes are gone too.
        self.hubs.clear();
        match tokio::time::timeout(Duration::from_secs(40), &mut self.handle).await {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(e))) => Err(anyhow!("apalis monitor: {e}")),
            Ok(Err(e)) => Err(anyhow!("apalis monitor task: {e}")),
            Err(_) => {
                self.handle.abort();
                Err(anyhow!("apalis monitor did not stop within 40 s"))
            }
        }
    }
}

/// The connection pools of a setting's workers: one each (as separate `tolk
/// worker` processes have), or one for all ([`TolkSetting::shared_pool`]).
pub(super) struct WorkerPools(Vec<PgPool>);

impl WorkerPools {
    pub(super) async fn open(b: &Bench, s: &TolkSetting) -> anyhow::Result<Self> {
        let n = if s.shared_pool { 1 } else { s.workers };
        let mut pools = Vec::with_capacity(n);
        for _ in 0..n {
            let options = b.connect_options(s.transport)?;
            let options = match (s.queue_async_commit, s.generic_plans) {
                // The platform's (`tolk_storage::db::relaxed_pool`).
                (true, false) => tolk_storage::db::queue_options(options),
                (true, true) => options.options([("synchronous_commit", "off")]),
                (false, false) => options.options([("plan_cache_mode", "force_custom_plan")]),
                (false, true) => options,
            };
            pools.push(b.pool_with(s, options, s.pool).await?);
        }
        Ok(Self(pools))
    }

    /// The pool of worker `i`.
    pub(super) fn of(&self, i: usize) -> &PgPool {
        &self.0[i % self.0.len()]
    }

    pub(super) async fn close(self) {
        for pool in self.0 {
            pool.close().await;
        }
    }
}

/// The scheduler's queue pruning (`tolk_scheduler::tasks::prune`) as
/// `prune` says: every `tick`, with Done rows kept `keep_done`; none for
/// [`Prune::Off`].
pub(super) fn start_pruner(pool: &PgPool, prune: Prune) -> Option<JoinHandle<()>> {
    let Prune::Every { tick, keep_done } = prune else {
        return None;
    };
    let config = tolk_scheduler::SchedulerConfig {
        prune_tick: tick,
        keep_done_jobs: keep_done,
        ..platform_scheduler()
    };
    let pool = pool.clone();
    Some(tokio::spawn(async move {
        let mut tick = tokio::time::interval(config.prune_tick);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if let Err(e) = tolk_scheduler::tasks::prune(&config, &pool).await {
                eprintln!("pruning finished jobs failed: {e}");
            }
        }
    }))
}
