//! Node, Graphile Worker's side: installing it, running one test of
//! `graphile.js` to its end, and the worker pool of a latency test.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::graphile::{GraphileResult, GraphileSpec};
use super::probe::Probe;

/// Makes sure `node` runs and graphile-worker is installed in `dir`.
pub(super) async fn prepare_node(dir: &Path) -> anyhow::Result<()> {
    if !dir.join("package.json").is_file() {
        bail!(
            "{} has no package.json (pass --node-dir, or --skip-graphile)",
            dir.display()
        );
    }
    let node = tokio::process::Command::new("node")
        .arg("--version")
        .output()
        .await;
    match node {
        Ok(o) if o.status.success() => {}
        _ => bail!(
            "`node` is not available: Graphile Worker needs Node (>= 14); install it or pass --skip-graphile"
        ),
    }
    if dir
        .join("node_modules/graphile-worker/package.json")
        .is_file()
    {
        return Ok(());
    }
    println!(
        "Installing Graphile Worker (npm install in {}) ...",
        dir.display()
    );
    let out = tokio::process::Command::new("npm")
        .args(["install", "--no-audit", "--no-fund"])
        .current_dir(dir)
        .output()
        .await;
    match out {
        Err(e) => bail!(
            "`npm` is not available ({e}): install npm or run `npm install` in {} yourself, or pass --skip-graphile",
            dir.display()
        ),
        Ok(o) if !o.status.success() => bail!(
            "`npm install` failed in {}:\n{}{}",
            dir.display(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        Ok(_) => Ok(()),
    }
}

/// Runs one test of `graphile.js` to its end and reads its result.
pub(super) async fn run_graphile(
    dir: &Path,
    spec: &GraphileSpec<'_>,
) -> anyhow::Result<GraphileResult> {
    let json = serde_json::to_string(spec)?;
    let out = tokio::process::Command::new("node")
        .arg("graphile.js")
        .arg(&json)
        .current_dir(dir)
        .env("NO_LOG_SUCCESS", "1")
        .output()
        .await
        .context("spawning node graphile.js")?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!(
            "node graphile.js ({} test) failed ({}):\n{stderr}",
            spec.test,
            out.status
        );
    }
    for line in stderr.lines().filter(|l| !l.trim().is_empty()) {
        eprintln!("  node: {line}");
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .ok_or_else(|| anyhow!("node graphile.js printed no JSON result:\n{stdout}"))?;
    serde_json::from_str(last).with_context(|| format!("reading Graphile's result: {last}"))
}

/// Node's worker pool for a latency test (`node graphile.js` with test `serve`),
/// its output read as it comes.
pub(super) struct ServePool {
    child: Child,
    /// Closing it tells Node to end.
    stdin: Option<ChildStdin>,
    /// Signalled when Node prints "ready".
    pub(super) ready: Option<oneshot::Receiver<()>>,
    /// Node's JSON result line, once its stdout ends.
    pub(super) result: JoinHandle<Option<String>>,
    /// Everything Node wrote to stderr.
    stderr: JoinHandle<String>,
}

impl ServePool {
    /// Starts Node with `spec`; each sample it starts is marked in `probe`.
    pub(super) fn spawn(
        dir: &Path,
        spec: &GraphileSpec<'_>,
        probe: &Arc<Probe>,
    ) -> anyhow::Result<Self> {
        let json = serde_json::to_string(spec)?;
        let mut child = tokio::process::Command::new("node")
            .arg("graphile.js")
            .arg(&json)
            .current_dir(dir)
            .env("NO_LOG_SUCCESS", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .context("spawning node graphile.js")?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().context("node stdout")?;
        let mut stderr = child.stderr.take().context("node stderr")?;
        let stderr = tokio::spawn(async move {
            let mut e = String::new();
            let _ = stderr.read_to_string(&mut e).await;
            e
        });
        let (ready_tx, ready_rx) = oneshot::channel::<()>();
        Ok(Self {
            child,
            stdin,
            ready: Some(ready_rx),
            result: read_serve_output(stdout, probe.clone(), ready_tx),
            stderr,
        })
    }

    /// Whether Node got its worker pool ready within two minutes.
    pub(super) async fn wait_ready(&mut self) -> bool {
        let Some(ready) = self.ready.take() else {
            return false;
        };
        tokio::time::timeout(Duration::from_secs(120), ready)
            .await
            .map(|r| r.is_ok())
            .unwrap_or(false)
    }

    /// Closes Node's stdin and waits for its result line and its exit.
    pub(super) async fn finish(&mut self) -> Option<String> {
        drop(self.stdin.take());
        let result = tokio::time::timeout(Duration::from_secs(60), &mut self.result).await;
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
        match result {
            Ok(Ok(Some(line))) => Some(line),
            _ => None,
        }
    }

    /// The error `what`, with what Node wrote to stderr.
    pub(super) async fn failed(self, what: &str) -> anyhow::Error {
        let e = self.stderr.await.unwrap_or_default();
        anyhow!("node graphile.js (latency): {what}\n{e}")
    }
}

/// Reads Node's stdout: "ready", then "s <i>" when sample i starts, then its JSON
/// result (returned).
fn read_serve_output(
    stdout: ChildStdout,
    probe: Arc<Probe>,
    ready_tx: oneshot::Sender<()>,
) -> JoinHandle<Option<String>> {
    tokio::spawn(async move {
        let mut lines = BufReader::new(stdout).lines();
        let mut ready = Some(ready_tx);
        let mut result = None;
        while let Ok(Some(line)) = lines.next_line().await {
            if line == "ready" {
                if let Some(tx) = ready.take() {
                    let _ = tx.send(());
                }
            } else if let Some(i) = line.strip_prefix("s ") {
                if let Ok(i) = i.trim().parse::<usize>() {
                    probe.started_elsewhere(i);
                }
            } else if line.trim_start().starts_with('{') {
                result = Some(line);
            }
        }
        result
    })
}
