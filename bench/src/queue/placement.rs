//! Where `--kinds` runs each of its parts on a two-CPU machine: the
//! documents pool, the voice pool and the platform (PostgreSQL's backends
//! and the producer standing for the API).
//!
//! A deployment runs each pool on nodes of its own and the database on a
//! machine of its own. The bench emulates that with CPU affinity, as a
//! container's CPU set pins a pod: the voice pool gets a CPU to itself, and
//! the platform shares the documents pool's CPU, in every run alike (the
//! documents-only baseline included). Left to float
//! (`--kinds-platform-anywhere`), the platform runs on the voice CPU whenever
//! that one is idle, which it is only in the baseline: on a 2-vCPU
//! Firecracker VM a `pgbench` of one-row commits at 30/s beside half a CPU of
//! idle-class work had a p99 of 1.3–1.7 ms when free to move to the other,
//! idle CPU, and 5.6–6.4 ms when it was busy too (5.7–6.0 ms pinned, whether
//! the other CPU was busy or not).
//!
//! The worker processes yield to the platform: they run inside a cgroup
//! whose `cpu.idle` is set ([`IdleGroup`], [`yield_to_the_platform`]), or in
//! the idle scheduling class where no such group can be made. The class
//! alone is not enough where the kernel groups tasks by session
//! (`kernel.sched_autogroup_enabled`):
//! the bench's session and PostgreSQL's are two groups of equal weight,
//! whatever the class of the threads inside, and the same `pgbench`, pinned
//! beside idle-class work of another session, had a commit p99 of 8.4–9.1 ms
//! against 5.7–5.8 ms with that work in an idle cgroup.
//!
//! The documents pool runs on the CPU that serves the storage's interrupts
//! ([`irq`]), so that the voice pool's CPU serves none of the database's
//! flushes either.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use sqlx::postgres::PgConnectOptions;
use sqlx::{Connection, PgConnection, PgPool};
use tokio::sync::oneshot;

use super::irq;

/// Where a process of the bench runs.
#[derive(Clone, Copy)]
pub(super) enum Place {
    /// The documents pool's CPU.
    Documents,
    /// The voice pool's CPU.
    Voice,
    /// Both.
    Both,
}

/// The two CPUs of the bench: the documents pool's (shared with the
/// platform) and the voice pool's.
#[derive(Clone, Copy)]
pub(super) struct Layout {
    pub(super) documents: usize,
    pub(super) voice: usize,
}

impl Layout {
    pub(super) fn cpus(self, place: Place) -> Vec<usize> {
        match place {
            Place::Documents => vec![self.documents],
            Place::Voice => vec![self.voice],
            Place::Both => vec![self.documents, self.voice],
        }
    }

    /// The voice pool on `voice` (0 or 1), the documents pool on the other.
    fn with_voice_on(voice: usize) -> Self {
        Self {
            documents: usize::from(voice == 0),
            voice,
        }
    }

    /// The voice pool on `voice` if given, else off the CPU that serves the
    /// storage's interrupts ([`irq::during_commits`]), else on CPU 1; prints
    /// the choice.
    pub(super) async fn choose(pool: &PgPool, voice: Option<usize>) -> Result<Self> {
        if let Some(v) = voice {
            if v > 1 {
                bail!("--kinds-voice-cpu is 0 or 1");
            }
            println!("voice pool on CPU {v} (--kinds-voice-cpu), documents pool on the other");
            return Ok(Self::with_voice_on(v));
        }
        const COMMITS: usize = 100;
        let served = irq::during_commits(pool, COMMITS).await?;
        Ok(match irq::busiest(&served, COMMITS as u64 / 4) {
            Some(cpu) if cpu <= 1 => {
                let layout = Self::with_voice_on(1 - cpu);
                println!(
                    "device interrupts per CPU during {COMMITS} commits: {served:?}: \
                     the documents pool runs on CPU {cpu}, the voice pool on CPU {}",
                    layout.voice
                );
                layout
            }
            _ => {
                println!(
                    "device interrupts per CPU during {COMMITS} commits: {served:?}: \
                     documents pool on CPU 0, voice pool on CPU 1"
                );
                Self::with_voice_on(1)
            }
        })
    }
}

/// The `tasks` file of the [`IdleGroup`] the worker processes join, once made.
static IDLE_TASKS: OnceLock<PathBuf> = OnceLock::new();

/// Puts the calling thread, and the threads it starts from then on, in the
/// [`IdleGroup`], or where there is none (or it cannot be joined) in the
/// idle scheduling class (`SCHED_IDLE`): a worker "process" of the bench
/// runs only when the bench's PostgreSQL and its API producer, other
/// machines in a deployment, do not want the CPU, in every run alike, so the
/// runs differ only in how the workers share CPUs with each other. Inside
/// the group its threads keep the normal class, so its runtime and its
/// jobs' work compete as in a real process (a woken idle-class thread does
/// not preempt the one running, and would wait for its time slice to end).
pub(super) fn yield_to_the_platform() {
    if let Some(tasks) = IDLE_TASKS.get() {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        if std::fs::write(tasks, tid.to_string()).is_ok() {
            return;
        }
    }
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_setscheduler on the calling thread (pid 0) only reads
    // `param`; a failure leaves the thread as it was.
    unsafe {
        libc::sched_setscheduler(0, libc::SCHED_IDLE, &param);
    }
}

/// The `cpu` controller's hierarchy of cgroup v1, where single threads can
/// be moved (`tasks`).
const CPU_HIERARCHY: &str = "/sys/fs/cgroup/cpu";

/// A cgroup with `cpu.idle = 1` for the worker processes
/// ([`yield_to_the_platform`] moves each process's first thread in; the
/// threads it starts inherit the group): its threads run only when no task
/// outside it wants the CPU, across sessions. Removed when dropped (threads still in
/// it move back to the root group first).
pub(super) struct IdleGroup {
    dir: PathBuf,
}

impl IdleGroup {
    /// Makes the group in the cgroup v1 `cpu` hierarchy, or says why it
    /// cannot: no such hierarchy with `cpu.idle` (cgroup v2 moves single
    /// threads only within a threaded subtree), no right to make it, or a
    /// group made already (the threads find it through one static).
    pub(super) fn create() -> std::result::Result<Self, String> {
        let root = PathBuf::from(CPU_HIERARCHY);
        if !root.join("cpu.idle").exists() || !root.join("tasks").exists() {
            return Err(format!(
                "no cgroup v1 cpu hierarchy with cpu.idle at {CPU_HIERARCHY}"
            ));
        }
        let dir = root.join(format!("tolk-bench-{}", std::process::id()));
        let made = std::fs::create_dir(&dir)
            .and_then(|()| std::fs::write(dir.join("cpu.idle"), "1"))
            .map_err(|e| format!("{}: {e}", dir.display()));
        let group = Self { dir };
        made?;
        IDLE_TASKS
            .set(group.dir.join("tasks"))
            .map_err(|_| "an idle group already exists in this process".to_owned())?;
        Ok(group)
    }

    pub(super) fn path(&self) -> &std::path::Path {
        &self.dir
    }
}

impl Drop for IdleGroup {
    fn drop(&mut self) {
        let root_tasks = PathBuf::from(CPU_HIERARCHY).join("tasks");
        if let Ok(tasks) = std::fs::read_to_string(self.dir.join("tasks")) {
            for tid in tasks.split_whitespace() {
                let _ = std::fs::write(&root_tasks, tid);
            }
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Sets the CPUs of the thread or process `tid` (0: the calling thread).
fn set_affinity(tid: libc::pid_t, cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes within it
    // for indices below CPU_SETSIZE, and sched_setaffinity reads that many
    // bytes of it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        if libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Sets the CPUs of the thread or process `tid` unless it has ended (since
/// it was listed): `Ok(false)` then.
fn set_affinity_if_alive(tid: libc::pid_t, cpus: &[usize]) -> std::io::Result<bool> {
    match set_affinity(tid, cpus) {
        Ok(()) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Pins the calling thread (and the threads it starts) to `cpus`.
pub(super) fn pin(cpus: &[usize]) -> Result<()> {
    set_affinity(0, cpus).with_context(|| format!("sched_setaffinity({cpus:?})"))
}

/// Sets the CPUs of every thread of this process (the bench's runtime: the
/// producer). Threads started later inherit them from the thread that
/// starts them.
fn pin_own_threads(cpus: &[usize]) -> Result<()> {
    for entry in std::fs::read_dir("/proc/self/task").context("/proc/self/task")? {
        let name = entry.context("/proc/self/task")?.file_name();
        let Some(tid) = name.to_str().and_then(|n| n.parse::<libc::pid_t>().ok()) else {
            continue;
        };
        set_affinity_if_alive(tid, cpus)
            .with_context(|| format!("sched_setaffinity(thread {tid}, {cpus:?})"))?;
    }
    Ok(())
}

/// How often new backends of the bench database are looked for.
const LOOK_EVERY: Duration = Duration::from_millis(200);

/// The platform kept on one CPU until [`Platform::release`]: the bench's own
/// threads, and every backend that serves the bench database (the
/// producer's, the pools', their LISTEN connections, autovacuum), placed as
/// they appear. PostgreSQL's other processes (WAL writer, checkpointer) are
/// the server's, shared with the machine, and left where they are.
pub(super) struct Platform {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<usize>>,
}

impl Platform {
    /// Pins this process's threads and the bench database's backends to
    /// `cpu`, and keeps pinning new backends. Fails when the backends cannot
    /// be moved (the bench runs as another user than the server and without
    /// `CAP_SYS_NICE`).
    pub(super) async fn confine(options: PgConnectOptions, db: &str, cpu: usize) -> Result<Self> {
        pin_own_threads(&[cpu])?;
        let mut conn = PgConnection::connect_with(&options)
            .await
            .context("connecting the platform's placer")?;
        let mut placed = HashSet::new();
        place_backends(&mut conn, db, cpu, &mut placed)
            .await
            .context(
                "placing PostgreSQL's backends on the documents CPU (run the bench as root or \
                 as the server's user, or pass --kinds-platform-anywhere)",
            )?;
        let (stop, mut stopped) = oneshot::channel();
        let db = db.to_owned();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    () = tokio::time::sleep(LOOK_EVERY) => {}
                }
                place_backends(&mut conn, &db, cpu, &mut placed).await?;
            }
            conn.close().await.context("closing the placer")?;
            Ok(placed.len())
        });
        Ok(Self { stop, task })
    }

    /// Stops placing backends and gives this process's threads every CPU
    /// back; returns how many backends were placed.
    pub(super) async fn release(self) -> Result<usize> {
        let _ = self.stop.send(());
        let placed = self.task.await.context("the placer")??;
        let every: Vec<usize> =
            (0..std::thread::available_parallelism().map_or(1, usize::from)).collect();
        pin_own_threads(&every)?;
        Ok(placed)
    }
}

/// Pins the backends of database `db` to `cpu` (all of them each time: a
/// backend that ended may pass its pid on), adding their pids to `placed`.
async fn place_backends(
    conn: &mut PgConnection,
    db: &str,
    cpu: usize,
    placed: &mut HashSet<i32>,
) -> Result<()> {
    let pids: Vec<i32> = sqlx::query_scalar(
        "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type <> 'walsender'",
    )
    .bind(db)
    .fetch_all(&mut *conn)
    .await
    .context("listing the bench database's backends")?;
    for pid in pids {
        if set_affinity_if_alive(pid, &[cpu])
            .with_context(|| format!("sched_setaffinity(backend {pid})"))?
        {
            placed.insert(pid);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CPUs the calling thread may run on.
    fn own_cpus() -> Vec<usize> {
        // SAFETY: sched_getaffinity fills the zeroed set it is given;
        // CPU_ISSET reads within it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
                0
            );
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
                .collect()
        }
    }

    #[test]
    fn a_pinned_thread_and_the_threads_it_starts_run_on_its_cpus() {
        let seen = std::thread::spawn(|| {
            pin(&[0]).expect("pin");
            let child = std::thread::spawn(own_cpus).join().expect("child");
            (own_cpus(), child)
        })
        .join()
        .expect("thread");
        assert_eq!(seen, (vec![0], vec![0]));
    }

    #[test]
    fn the_voice_pool_and_the_documents_pool_get_different_cpus() {
        for voice in 0..2 {
            let layout = Layout::with_voice_on(voice);
            assert_eq!(layout.cpus(Place::Voice), vec![voice]);
            assert_eq!(layout.cpus(Place::Documents), vec![1 - voice]);
            assert_eq!(layout.cpus(Place::Both).len(), 2);
        }
    }
}
