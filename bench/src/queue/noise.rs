//! Disturbance from outside the bench: other databases' active sessions and
//! other processes' CPU, reported next to every figure.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Context;
use sqlx::postgres::PgConnectOptions;
use sqlx::{Connection, PgConnection};
use tokio::task::JoinHandle;

/// Disturbance from outside the bench during a run: active sessions of *other*
/// databases on the server (sampled every 250 ms) and CPU used by processes other than
/// this one (with its children) and PostgreSQL's.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Noise {
    pub(super) sessions: i64,
    /// Average CPU cores used by foreign processes.
    foreign_cores: f64,
}

impl Noise {
    pub(super) fn warning(&self) -> String {
        let mut w = Vec::new();
        if self.sessions > 0 {
            w.push(format!(
                "{} active session(s) of other databases",
                self.sessions
            ));
        }
        if self.foreign_cores >= 0.2 {
            w.push(format!(
                "other processes used {:.1} cores",
                self.foreign_cores
            ));
        }
        if w.is_empty() {
            String::new()
        } else {
            format!("   ⚠ {}", w.join(", "))
        }
    }
}

/// CPU ticks: the whole machine (busy, total) and ours (this process, its children —
/// node — and every `postgres` process, each with its reaped children).
#[derive(Debug, Clone, Copy, Default)]
struct CpuTicks {
    pub(super) busy: u64,
    pub(super) total: u64,
    pub(super) ours: u64,
}

fn proc_ticks(stat: &str) -> Option<(String, String, u64)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?.to_owned();
    let f: Vec<&str> = stat.get(close + 2..)?.split_whitespace().collect();
    // f[0] is field 3 (state), f[1] field 4 (ppid); fields 14–17 are utime, stime,
    // cutime, cstime.
    let ppid = f.get(1)?.to_string();
    let t = (11..=14)
        .map(|i| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0))
        .sum();
    Some((comm, ppid, t))
}

fn cpu_ticks() -> CpuTicks {
    let mut c = CpuTicks::default();
    if let Ok(stat) = std::fs::read_to_string("/proc/stat")
        && let Some(line) = stat.lines().next()
    {
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .take(8)
            .filter_map(|x| x.parse().ok())
            .collect();
        c.total = v.iter().sum();
        let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
        c.busy = c.total.saturating_sub(idle);
    }
    let me = std::process::id().to_string();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if !name.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            if let Some((comm, ppid, t)) = proc_ticks(&stat)
                && (comm == "postgres" || name == me.as_str() || ppid == me)
            {
                c.ours += t;
            }
        }
    }
    c
}

pub(super) struct NoiseSampler {
    pub(super) max: Arc<AtomicI64>,
    cpu: Mutex<CpuTicks>,
    pub(super) handle: JoinHandle<()>,
}

impl NoiseSampler {
    pub(super) async fn start(admin: &PgConnectOptions, bench_db: &str) -> anyhow::Result<Self> {
        let mut conn = PgConnection::connect_with(admin)
            .await
            .context("connecting the activity sampler")?;
        let max = Arc::new(AtomicI64::new(0));
        let m = max.clone();
        let db = bench_db.to_owned();
        let handle = tokio::spawn(async move {
            loop {
                let n: Result<i64, _> = sqlx::query_scalar(
                    "SELECT count(*) FROM pg_stat_activity
                     WHERE state = 'active' AND backend_type = 'client backend'
                       AND pid <> pg_backend_pid() AND datname IS DISTINCT FROM $1",
                )
                .bind(&db)
                .fetch_one(&mut conn)
                .await;
                if let Ok(n) = n {
                    m.fetch_max(n, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        });
        Ok(Self {
            max,
            cpu: Mutex::new(cpu_ticks()),
            handle,
        })
    }

    /// The disturbance since the last call.
    pub(super) fn take(&self) -> Noise {
        let now = cpu_ticks();
        let mut last = self.cpu.lock().unwrap_or_else(PoisonError::into_inner);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let total = now.total.saturating_sub(last.total) as f64;
        let foreign = now
            .busy
            .saturating_sub(last.busy)
            .saturating_sub(now.ours.saturating_sub(last.ours)) as f64;
        *last = now;
        Noise {
            sessions: self.max.swap(0, Ordering::Relaxed),
            foreign_cores: if total > 0.0 {
                foreign / total * cpus
            } else {
                0.0
            },
        }
    }
}

impl Drop for NoiseSampler {
    fn drop(&mut self) {
        self.handle.abort();
    }
}
