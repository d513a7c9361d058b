//! LibreOffice as a supervised tool: a translated document converted to
//! another format (an upload's `output_format`, see
//! [`tolk_formats::Conversion::Office`]) by `soffice --headless
//! --convert-to`, each conversion in a folder of its own with its own user
//! profile (so conversions run side by side and a crashed one leaves nothing
//! behind), within a time limit past which its whole process group is
//! killed.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tolk_formats::Output;

/// Why a conversion failed.
#[derive(Debug, thiserror::Error)]
pub enum OfficeError {
    /// LibreOffice could not be started (not installed?).
    #[error("cannot run {program} (apt-get install libreoffice-core-nogui): {source}")]
    Start {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// It ran past the time limit and was killed.
    #[error("LibreOffice did not finish the conversion within {0} s")]
    TimedOut(u64),
    /// It ended without writing the converted document.
    #[error("LibreOffice could not convert the document: {0}")]
    Failed(String),
    /// The conversion's folder could not be written or read.
    #[error("conversion folder: {0}")]
    Io(#[from] std::io::Error),
}

/// Longest one conversion may take unless configured
/// (`TOLK_CONVERT_TIMEOUT_SECS`), in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;

/// The converter: the `soffice` program and the time limit of one
/// conversion.
#[derive(Debug, Clone)]
pub struct Office {
    /// `soffice` (a path or a name on PATH).
    pub program: PathBuf,
    /// Longest one conversion may take.
    pub timeout: Duration,
}

impl Default for Office {
    fn default() -> Self {
        Self {
            program: PathBuf::from("soffice"),
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
        }
    }
}

impl Office {
    /// `input` (a document with extension `from_ext`) converted with the
    /// import filter `import` (by its extension when `None`) and the export
    /// filter `export` to `to`.
    pub async fn convert(
        &self,
        input: &[u8],
        from_ext: &str,
        import: Option<&str>,
        export: &str,
        to: Output,
    ) -> Result<Vec<u8>, OfficeError> {
        let dir = std::env::temp_dir().join(format!("tolk-office-{}", ulid::Ulid::generate()));
        let result = self
            .convert_in(&dir, input, from_ext, import, export, to)
            .await;
        if let Err(e) = tokio::fs::remove_dir_all(&dir).await {
            tracing::warn!(folder = %dir.display(), error = %e, "conversion folder left behind");
        }
        result
    }

    async fn convert_in(
        &self,
        dir: &Path,
        input: &[u8],
        from_ext: &str,
        import: Option<&str>,
        export: &str,
        to: Output,
    ) -> Result<Vec<u8>, OfficeError> {
        let out = dir.join("out");
        tokio::fs::create_dir_all(&out).await?;
        let source = dir.join(format!("document.{from_ext}"));
        tokio::fs::write(&source, input).await?;
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.arg(format!(
            "-env:UserInstallation=file://{}",
            dir.join("profile").display()
        ))
        .args([
            "--headless",
            "--norestore",
            "--nolockcheck",
            "--nodefault",
            "--nologo",
        ]);
        if let Some(import) = import {
            cmd.arg(format!("--infilter={import}"));
        }
        cmd.arg("--convert-to")
            .arg(export)
            .arg("--outdir")
            .arg(&out)
            .arg(&source)
            .env("HOME", dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        let child = cmd.spawn().map_err(|source| OfficeError::Start {
            program: self.program.display().to_string(),
            source,
        })?;
        let group = child.id();
        let output = match tokio::time::timeout(self.timeout, child.wait_with_output()).await {
            Ok(output) => output?,
            Err(_) => {
                kill_group(group);
                return Err(OfficeError::TimedOut(self.timeout.as_secs()));
            }
        };
        // soffice may leave a helper of its group behind.
        kill_group(group);
        let converted = out.join(format!("document.{}", to.extension()));
        match tokio::fs::read(&converted).await {
            Ok(bytes) if !bytes.is_empty() => Ok(bytes),
            _ => {
                let said = String::from_utf8_lossy(&output.stderr);
                let said = said.trim();
                Err(OfficeError::Failed(if said.is_empty() {
                    format!("it exited with {} and wrote nothing", output.status)
                } else {
                    said.chars().take(500).collect()
                }))
            }
        }
    }
}

/// Kills process group `group` (the conversion's soffice and its helpers).
fn kill_group(group: Option<u32>) {
    let Some(pid) = group.and_then(|g| i32::try_from(g).ok()) else {
        return;
    };
    // Gone already is the usual case.
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_missing_program_is_named_in_the_error() {
        let office = Office {
            program: PathBuf::from("/nonexistent/soffice"),
            ..Office::default()
        };
        let err = office
            .convert(
                b"x",
                "txt",
                None,
                "pdf",
                Output::Document(tolk_formats::DocumentFormat::Pdf),
            )
            .await
            .expect_err("no program");
        assert!(err.to_string().contains("/nonexistent/soffice"), "{err}");
    }

    #[tokio::test]
    async fn a_conversion_past_its_time_is_killed() {
        // A stand-in that would take 30 s.
        let dir = std::env::temp_dir().join(format!("tolk-office-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_default();
        let script = dir.join("slow-soffice");
        std::fs::write(&script, "#!/bin/sh\nsleep 30\n").unwrap_or_default();
        let _ = std::process::Command::new("chmod")
            .arg("+x")
            .arg(&script)
            .status();
        let office = Office {
            program: script,
            timeout: Duration::from_millis(300),
        };
        let err = office
            .convert(
                b"x",
                "txt",
                None,
                "pdf",
                Output::Document(tolk_formats::DocumentFormat::Pdf),
            )
            .await
            .expect_err("timed out");
        assert!(matches!(err, OfficeError::TimedOut(_)), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
