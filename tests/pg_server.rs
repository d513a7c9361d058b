//! A PostgreSQL server of a test's own: a private data directory and port,
//! run with the installed server binaries (`pg_ctl`), so a test can stop and
//! restart the database under running `tolk` processes without touching the
//! shared server the other tests use.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::support::free_port;

/// A running private PostgreSQL server; stopped and deleted on drop.
pub struct PgServer {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
}

/// The newest installed server's binaries (`/usr/lib/postgresql/N/bin`, as
/// Debian installs them; `TOLK_TEST_PG_BIN` names another folder).
fn server_bin() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("TOLK_TEST_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .context(
            "PostgreSQL server binaries under /usr/lib/postgresql (scripts/setup.sh installs them)",
        )?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("pg_ctl").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, bin)| bin)
        .context("no pg_ctl under /usr/lib/postgresql/*/bin")
}

fn is_root() -> bool {
    // SAFETY-free check: the effective uid of this process.
    std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false)
}

impl PgServer {
    /// Creates a cluster in a new folder and starts it on a free port.
    pub fn start() -> Result<Self> {
        let bin = server_bin()?;
        let dir = std::env::temp_dir().join(format!("tolk_pg_{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir)?;
        if is_root() {
            // PostgreSQL refuses to run as root: the cluster belongs to `postgres`.
            let ok = Command::new("chown")
                .args(["postgres:postgres"])
                .arg(&dir)
                .status()?
                .success();
            if !ok {
                bail!("chown postgres {} failed", dir.display());
            }
        }
        let server = Self {
            bin,
            dir,
            port: free_port(),
        };
        server.run(
            "initdb",
            &[
                "-D",
                &server.data().display().to_string(),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
            ],
        )?;
        server.start_again()?;
        Ok(server)
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// Runs one of the server's programs (as `postgres` when this is root).
    fn run(&self, program: &str, args: &[&str]) -> Result<()> {
        let path = self.bin.join(program);
        let mut cmd = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&path);
            c
        } else {
            Command::new(&path)
        };
        let out = cmd.args(args).current_dir(&self.dir).output()?;
        if !out.status.success() {
            bail!(
                "{program} {args:?} failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(())
    }

    /// Starts the (stopped) server and waits until it accepts connections.
    pub fn start_again(&self) -> Result<()> {
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} -c fsync=off -c max_connections=200",
            self.port,
            self.dir.display()
        );
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data().display().to_string(),
                "-l",
                &self.dir.join("server.log").display().to_string(),
                "-o",
                &options,
                "-w",
                "-t",
                "60",
                "start",
            ],
        )
    }

    /// Stops the server at once, closing every connection (`-m fast`).
    pub fn stop(&self) -> Result<()> {
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data().display().to_string(),
                "-m",
                "fast",
                "-w",
                "stop",
            ],
        )
    }

    /// Stops the server, waits `down`, and starts it again.
    pub async fn restart(&self, down: Duration) -> Result<()> {
        self.stop()?;
        tokio::time::sleep(down).await;
        self.start_again()
    }

    /// URL of its `postgres` database, for [`crate::support::World::new_on`].
    pub fn admin_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// The server's log.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let _ = self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data().display().to_string(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
        );
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
