//! Text recognition for images: tesseract's command line (Debian's
//! tesseract-ocr and its tesseract-ocr-* language data), the image on its
//! input and TSV on its output, one thread (`OMP_THREAD_LIMIT=1`: a
//! worker's concurrency is what spreads the work over cores), killed past
//! its timeout. A language whose data is not installed is read as English.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tolk_formats::{Ocr, Recognizer};

/// Longest one image's recognition may take by default, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;

/// Tesseract as the worker runs it.
#[derive(Debug, Clone)]
pub struct Tesseract {
    /// `tesseract` (a path or a name on PATH).
    pub program: PathBuf,
    /// Longest one image may take.
    pub timeout: Duration,
}

impl Default for Tesseract {
    fn default() -> Self {
        Self {
            program: PathBuf::from("tesseract"),
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
        }
    }
}

impl Tesseract {
    /// As the image filter takes a recogniser.
    pub fn ocr(&self) -> Ocr {
        Ocr(Arc::new(self.clone()))
    }

    fn run(&self, bytes: &[u8], language: &str) -> Result<String, Failure> {
        let mut child = Command::new(&self.program)
            .args(["stdin", "stdout", "-l", language, "tsv"])
            .env("OMP_THREAD_LIMIT", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                Failure::Other(format!(
                    "{} could not be started (install tesseract-ocr): {e}",
                    self.program.display()
                ))
            })?;
        let (Some(mut stdin), Some(mut stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            return Err(Failure::Other(
                "tesseract's pipes could not be opened".to_owned(),
            ));
        };
        let input = bytes.to_vec();
        let writer = std::thread::spawn(move || stdin.write_all(&input));
        let reader = std::thread::spawn(move || {
            let mut out = Vec::new();
            stdout.read_to_end(&mut out).map(|_| out)
        });
        let errors = std::thread::spawn(move || {
            let mut err = String::new();
            let _ = stderr.read_to_string(&mut err);
            err
        });
        let deadline = Instant::now() + self.timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(Failure::Other(format!(
                        "tesseract took longer than {} s",
                        self.timeout.as_secs()
                    )));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => {
                    return Err(Failure::Other(format!(
                        "tesseract could not be waited for: {e}"
                    )));
                }
            }
        };
        let _ = writer.join();
        let out = reader
            .join()
            .map_err(|_| Failure::Other("tesseract's output was lost".to_owned()))?
            .map_err(|e| Failure::Other(format!("tesseract's output could not be read: {e}")))?;
        let said = errors.join().unwrap_or_default();
        if !status.success() {
            let said = said.trim();
            return Err(match said.contains("Failed loading language") {
                true => Failure::NoLanguage,
                false => Failure::Other(format!("tesseract failed ({status}): {said}")),
            });
        }
        String::from_utf8(out)
            .map_err(|_| Failure::Other("tesseract's output is not UTF-8".to_owned()))
    }
}

/// Why a run failed.
enum Failure {
    /// The language's data is not installed.
    NoLanguage,
    Other(String),
}

impl Recognizer for Tesseract {
    fn recognize(&self, bytes: &[u8], language: &str) -> Result<String, String> {
        match self.run(bytes, language) {
            Ok(tsv) => Ok(tsv),
            Err(Failure::NoLanguage) if language != "eng" => {
                tracing::warn!(
                    language,
                    "no tesseract data for the language; reading as English"
                );
                self.run(bytes, "eng").map_err(|f| match f {
                    Failure::NoLanguage => {
                        "tesseract has no language data (tesseract-ocr-eng)".to_owned()
                    }
                    Failure::Other(why) => why,
                })
            }
            Err(Failure::NoLanguage) => {
                Err("tesseract has no language data (tesseract-ocr-eng)".to_owned())
            }
            Err(Failure::Other(why)) => Err(why),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_or_language_is_said_plainly() {
        let missing = Tesseract {
            program: PathBuf::from("/nonexistent/tesseract"),
            ..Tesseract::default()
        };
        let err = missing.recognize(b"x", "eng").unwrap_err();
        assert!(err.contains("could not be started"), "{err}");
        // Not an image: tesseract itself refuses it.
        let err = Tesseract::default()
            .recognize(b"not an image", "eng")
            .unwrap_err();
        assert!(err.contains("tesseract failed"), "{err}");
    }
}
