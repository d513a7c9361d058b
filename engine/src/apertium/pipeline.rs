//! Long-lived Apertium process pipelines fed with null-flush blocks, and a
//! small lazily started pool of them per pair.
//!
//! Every stage runs as its own child process, wired stdout → stdin, all with
//! `-z`: a block written to the first stage followed by a NUL comes out of
//! the last stage followed by exactly one NUL, and the processes stay alive
//! for the next block. Blocks come out in the order they went in, so a
//! pipeline takes several blocks at once (up to [`DEPTH`]): a writer task
//! feeds them in and a reader task hands each output to the request that
//! wrote the block, first in, first out. Every stage keeps working on the
//! next block while later stages finish the previous one, just like the
//! plain `apertium` command on a file.
//!
//! If any stage dies, or a block times out, the whole pipeline is killed;
//! its pending blocks fail and are retried once on a fresh pipeline.

use std::collections::VecDeque;
use std::io;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

use super::discovery::Stage;
use crate::EngineError;
use crate::upstream::Gate;

/// Blocks in flight in one pipeline at most.
pub(crate) const DEPTH: usize = 8;

type Reply = oneshot::Sender<io::Result<Vec<u8>>>;

/// A block to translate and where to send its output.
struct Job {
    block: Vec<u8>,
    reply: Reply,
}

/// One running pipeline.
pub(crate) struct Pipeline {
    mode: String,
    children: Mutex<Vec<Child>>,
    pids: Vec<u32>,
    jobs: mpsc::UnboundedSender<Job>,
    in_flight: AtomicUsize,
    dead: Arc<AtomicBool>,
}

impl Pipeline {
    /// Starts all stages and the writer and reader tasks. Must be called
    /// inside a Tokio runtime.
    pub fn spawn(mode: &str, stages: &[Stage]) -> io::Result<Self> {
        let mut children: Vec<Child> = Vec::with_capacity(stages.len());
        let mut first_stdin = None;
        let mut last_stdout = None;
        let mut upstream: Option<Stdio> = None;
        let started = (|| -> io::Result<()> {
            for (i, stage) in stages.iter().enumerate() {
                let mut cmd = Command::new(&stage.program);
                cmd.args(&stage.args)
                    .env("LC_ALL", "C.UTF-8")
                    .stdin(upstream.take().unwrap_or_else(Stdio::piped))
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                let mut child = cmd
                    .spawn()
                    .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", stage.program)))?;
                if i == 0 {
                    first_stdin = child.stdin.take();
                }
                let stdout = child
                    .stdout
                    .take()
                    .ok_or_else(|| io::Error::other("no stdout"))?;
                if i + 1 == stages.len() {
                    last_stdout = Some(stdout);
                } else {
                    upstream = Some(Stdio::from(stdout));
                }
                if let Some(stderr) = child.stderr.take() {
                    log_stderr(mode, &stage.program, stderr);
                }
                children.push(child);
            }
            Ok(())
        })();
        let ends = started.and_then(|()| match (first_stdin, last_stdout) {
            (Some(i), Some(o)) => Ok((
                tokio::process::ChildStdin::from_std(i)?,
                tokio::process::ChildStdout::from_std(o)?,
            )),
            _ => Err(io::Error::other("empty pipeline")),
        });
        let (stdin, stdout) = match ends {
            Ok(ends) => ends,
            Err(e) => {
                reap(children);
                return Err(e);
            }
        };
        let pids: Vec<u32> = children.iter().map(Child::id).collect();
        tracing::info!(mode, ?pids, "started Apertium pipeline");

        let dead = Arc::new(AtomicBool::new(false));
        let (jobs, jobs_rx) = mpsc::unbounded_channel();
        let (replies, replies_rx) = mpsc::unbounded_channel();
        tokio::spawn(write_loop(
            mode.to_owned(),
            stdin,
            jobs_rx,
            replies,
            dead.clone(),
        ));
        tokio::spawn(read_loop(
            mode.to_owned(),
            BufReader::with_capacity(64 * 1024, stdout),
            replies_rx,
            dead.clone(),
        ));
        Ok(Self {
            mode: mode.to_owned(),
            children: Mutex::new(children),
            pids,
            jobs,
            in_flight: AtomicUsize::new(0),
            dead,
        })
    }

    /// Whether every stage is still running and the pipe works.
    pub fn is_alive(&self) -> bool {
        if self.dead.load(Ordering::Acquire) {
            return false;
        }
        let Ok(mut children) = self.children.lock() else {
            return false;
        };
        let alive = children
            .iter_mut()
            .all(|c| matches!(c.try_wait(), Ok(None)));
        if !alive {
            self.dead.store(true, Ordering::Release);
        }
        alive
    }

    /// Kills the stages now; pending blocks fail.
    pub fn kill(&self) {
        self.dead.store(true, Ordering::Release);
        if let Ok(mut children) = self.children.lock() {
            reap(std::mem::take(&mut *children));
        }
    }

    /// Process ids of the stages.
    pub fn pids(&self) -> &[u32] {
        &self.pids
    }

    /// Blocks currently in the pipeline.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// Sends one block (which must not contain NUL) and waits for its
    /// output, at most `timeout` (`Ok(None)` on timeout).
    pub async fn process(&self, block: Vec<u8>, timeout: Duration) -> io::Result<Option<Vec<u8>>> {
        struct InFlight<'a>(&'a AtomicUsize);
        impl Drop for InFlight<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::AcqRel);
            }
        }
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        let _guard = InFlight(&self.in_flight);
        let (reply, rx) = oneshot::channel();
        self.jobs
            .send(Job { block, reply })
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "pipeline stopped"))?;
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(out)) => out.map(Some),
            Ok(Err(_)) => Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "pipeline stopped",
            )),
            Err(_) => Ok(None),
        }
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        tracing::debug!(mode = self.mode, "stopping Apertium pipeline");
        self.kill();
    }
}

/// Writes blocks in arrival order, registering each one's reply with the
/// reader first.
async fn write_loop(
    mode: String,
    mut stdin: tokio::process::ChildStdin,
    mut jobs: mpsc::UnboundedReceiver<Job>,
    replies: mpsc::UnboundedSender<Reply>,
    dead: Arc<AtomicBool>,
) {
    while let Some(Job { mut block, reply }) = jobs.recv().await {
        if dead.load(Ordering::Acquire) || replies.send(reply).is_err() {
            break;
        }
        block.push(0);
        let written = async {
            stdin.write_all(&block).await?;
            stdin.flush().await
        };
        if let Err(e) = written.await {
            tracing::warn!(mode, error = %e, "writing to the Apertium pipeline failed");
            dead.store(true, Ordering::Release);
            break;
        }
    }
}

/// Reads NUL-terminated outputs and hands them out in order.
async fn read_loop(
    mode: String,
    mut stdout: BufReader<tokio::process::ChildStdout>,
    mut replies: mpsc::UnboundedReceiver<Reply>,
    dead: Arc<AtomicBool>,
) {
    let mut pending: VecDeque<Reply> = VecDeque::new();
    loop {
        let reply = match pending.pop_front() {
            Some(r) => r,
            None => match replies.recv().await {
                Some(r) => r,
                None => break,
            },
        };
        let mut buf = Vec::new();
        let result = stdout.read_until(0, &mut buf).await;
        match result {
            Ok(_) if buf.last() == Some(&0) => {
                buf.pop();
                // The requester may have timed out and gone: ignore.
                let _ = reply.send(Ok(buf));
            }
            other => {
                let error = match other {
                    Err(e) => e,
                    Ok(_) => {
                        io::Error::new(io::ErrorKind::UnexpectedEof, "pipeline closed its output")
                    }
                };
                if !dead.swap(true, Ordering::AcqRel) {
                    tracing::warn!(mode, error = %error, "Apertium pipeline stopped answering");
                }
                let _ = reply.send(Err(error));
                break;
            }
        }
        // Collect replies registered meanwhile without blocking.
        while let Ok(r) = replies.try_recv() {
            pending.push_back(r);
        }
    }
    // Dropping `pending` and `replies` fails the remaining requests.
}

/// Kills the processes and waits for them off the async threads.
fn reap(mut children: Vec<Child>) {
    if children.is_empty() {
        return;
    }
    for c in &mut children {
        let _ = c.kill();
    }
    let waiter = move || {
        for mut c in children {
            let _ = c.wait();
        }
    };
    if std::thread::Builder::new()
        .name("apertium-reaper".into())
        .spawn(waiter)
        .is_err()
    {
        tracing::warn!("could not start a thread to reap Apertium processes");
    }
}

/// Forwards a stage's error output to the log.
fn log_stderr(mode: &str, program: &str, stderr: std::process::ChildStderr) {
    let Ok(stderr) = tokio::process::ChildStderr::from_std(stderr) else {
        return;
    };
    let (mode, program) = (mode.to_owned(), program.to_owned());
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if !line.trim().is_empty() {
                tracing::warn!(mode, program, "{line}");
            }
        }
    });
}

/// Pipelines of one pair: up to `size`, each started when the running ones
/// are all busy.
pub(crate) struct Pool {
    mode: String,
    stages: Vec<Stage>,
    timeout: Duration,
    slots: Vec<Mutex<Option<Arc<Pipeline>>>>,
    gate: Gate,
    blocks: AtomicUsize,
}

impl Pool {
    pub fn new(
        mode: String,
        stages: Vec<Stage>,
        size: usize,
        timeout: Duration,
        queue: usize,
    ) -> Self {
        let size = size.max(1);
        Self {
            gate: Gate::new(format!("Apertium {mode}"), size * DEPTH, queue),
            mode,
            stages,
            timeout,
            slots: (0..size).map(|_| Mutex::new(None)).collect(),
            blocks: AtomicUsize::new(0),
        }
    }

    /// Blocks sent so far (each is one flush through the pipeline).
    pub fn blocks(&self) -> usize {
        self.blocks.load(Ordering::Relaxed)
    }

    /// Number of pipelines the pool may run.
    pub fn size(&self) -> usize {
        self.slots.len()
    }

    /// Pids of all running stages.
    pub fn pids(&self) -> Vec<u32> {
        self.slots
            .iter()
            .filter_map(|s| {
                s.lock()
                    .ok()
                    .and_then(|g| g.as_ref().map(|p| p.pids().to_vec()))
            })
            .flatten()
            .collect()
    }

    /// The pipeline for the next block: an idle running one, else a new one
    /// in a free slot, else the least busy. Dead pipelines are replaced.
    fn pick(&self) -> Result<(usize, Arc<Pipeline>), EngineError> {
        let mut best: Option<(usize, usize, Arc<Pipeline>)> = None; // (in flight, slot, pipeline)
        let mut free_slot = None;
        for (i, slot) in self.slots.iter().enumerate() {
            let mut guard = slot
                .lock()
                .map_err(|_| EngineError::Failed("pipeline pool poisoned".into()))?;
            if guard.as_ref().is_some_and(|p| !p.is_alive()) {
                tracing::warn!(mode = self.mode, "Apertium pipeline died; restarting it");
                *guard = None;
            }
            match guard.as_ref() {
                Some(p) => {
                    let load = p.in_flight();
                    if best.as_ref().is_none_or(|(l, _, _)| load < *l) {
                        best = Some((load, i, p.clone()));
                    }
                }
                None => {
                    free_slot.get_or_insert(i);
                }
            }
        }
        match (best, free_slot) {
            (Some((0, i, p)), _) => Ok((i, p)),
            (_, Some(i)) => {
                let p = Arc::new(Pipeline::spawn(&self.mode, &self.stages).map_err(|e| {
                    EngineError::Unavailable(format!(
                        "cannot start the {} pipeline: {e}",
                        self.mode
                    ))
                })?);
                let mut guard = self.slots[i]
                    .lock()
                    .map_err(|_| EngineError::Failed("pipeline pool poisoned".into()))?;
                match guard.as_ref() {
                    // Another request filled the slot meanwhile: use that one.
                    Some(existing) => Ok((i, existing.clone())),
                    None => {
                        *guard = Some(p.clone());
                        Ok((i, p))
                    }
                }
            }
            (Some((_, i, p)), None) => Ok((i, p)),
            (None, None) => Err(EngineError::Failed("empty pipeline pool".into())),
        }
    }

    /// Kills `pipeline` and removes it from slot `i` (if still there).
    fn discard(&self, i: usize, pipeline: &Arc<Pipeline>) {
        pipeline.kill();
        if let Ok(mut guard) = self.slots[i].lock()
            && guard.as_ref().is_some_and(|p| Arc::ptr_eq(p, pipeline))
        {
            *guard = None;
        }
    }

    /// Translates one block. A block whose pipeline dies is retried once on
    /// a fresh one; a timeout kills the pipeline and gives
    /// [`EngineError::Unavailable`].
    pub async fn run(&self, block: &[u8]) -> Result<Vec<u8>, EngineError> {
        self.blocks.fetch_add(1, Ordering::Relaxed);
        let _permit = self.gate.enter().await?;
        let mut last_error = String::new();
        for attempt in 0..2 {
            let (slot, pipeline) = self.pick()?;
            match pipeline.process(block.to_vec(), self.timeout).await {
                Ok(Some(out)) => return Ok(out),
                Ok(None) => {
                    tracing::warn!(mode = self.mode, timeout = ?self.timeout, bytes = block.len(), "Apertium pipeline timed out; killing it");
                    self.discard(slot, &pipeline);
                    return Err(EngineError::Timeout(format!(
                        "the {} pipeline did not answer within {:?}",
                        self.mode, self.timeout
                    )));
                }
                Err(e) => {
                    tracing::warn!(mode = self.mode, attempt, error = %e, "Apertium pipeline failed; restarting it");
                    last_error = e.to_string();
                    self.discard(slot, &pipeline);
                }
            }
        }
        Err(EngineError::Unavailable(format!(
            "the {} pipeline failed: {last_error}",
            self.mode
        )))
    }
}
