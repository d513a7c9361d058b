//! Text to speech with espeak-ng (the Debian `espeak-ng` command).
//!
//! Every synthesis runs its own `espeak-ng --stdout` process with the text on
//! stdin, so requests never share state and run in parallel; the PCM is read
//! from the process as it is produced, so a stream can forward the first
//! audio before the sentence is finished.

use std::path::PathBuf;
use std::process::Stdio;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdout, Command};
use tokio::task::JoinHandle;

use crate::VoiceError;
use crate::voices::TtsVoice;
use crate::wav::HEADER_LEN;

/// espeak-ng's output rate, in Hz.
pub const SAMPLE_RATE: u32 = 22050;
/// Default name of the espeak-ng program.
pub const DEFAULT_PROGRAM: &str = "espeak-ng";
/// Bytes read from the synthesiser at once (about 93 ms of audio).
const READ_CHUNK: usize = 4096;

/// The espeak-ng engine.
#[derive(Debug, Clone)]
pub struct Espeak {
    program: PathBuf,
}

impl Default for Espeak {
    fn default() -> Self {
        Self::new(DEFAULT_PROGRAM)
    }
}

impl Espeak {
    /// An engine running `program` (a path or a name on PATH).
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
        }
    }

    /// The program's version line; fails when espeak-ng is not installed.
    pub async fn version(&self) -> Result<String, VoiceError> {
        let out = Command::new(&self.program)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .await
            .map_err(|e| self.missing(e))?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    fn missing(&self, e: std::io::Error) -> VoiceError {
        VoiceError::Engine(format!(
            "cannot run {} (apt-get install espeak-ng): {e}",
            self.program.display()
        ))
    }

    /// Synthesises `text` in `voice`: 16-bit mono PCM at [`SAMPLE_RATE`].
    pub async fn synthesize(&self, voice: &TtsVoice, text: &str) -> Result<Vec<i16>, VoiceError> {
        let mut stream = self.start(voice, text)?;
        let mut all = Vec::new();
        while let Some(chunk) = stream.next_chunk().await? {
            all.extend_from_slice(&chunk);
        }
        Ok(all)
    }

    /// Starts synthesising `text`; read the PCM with [`SpeechStream::next_chunk`].
    /// Dropping the stream kills the process.
    pub fn start(&self, voice: &TtsVoice, text: &str) -> Result<SpeechStream, VoiceError> {
        if !text.chars().any(char::is_alphanumeric) {
            return Err(VoiceError::BadRequest(
                "The text contains nothing to speak.".to_owned(),
            ));
        }
        let mut child = Command::new(&self.program)
            .arg("--stdout")
            .args(["-b", "1"])
            .args(["-v", voice.espeak])
            .args(["-p", &voice.pitch.to_string()])
            .args(["-s", &voice.rate.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| self.missing(e))?;
        let mut stdin = child
            .stdin
            .take()
            .ok_or_else(|| VoiceError::Engine("espeak-ng has no stdin".to_owned()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| VoiceError::Engine("espeak-ng has no stdout".to_owned()))?;
        let mut input = text.replace('\0', " ").into_bytes();
        input.push(b'\n');
        let writer = tokio::spawn(async move {
            // A write error means the process ended early; its exit status says why.
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        });
        Ok(SpeechStream {
            child,
            stdout,
            writer,
            header: Vec::with_capacity(HEADER_LEN),
            carry: None,
            buf: vec![0u8; READ_CHUNK],
            done: false,
        })
    }
}

/// PCM coming out of one espeak-ng process.
#[derive(Debug)]
pub struct SpeechStream {
    child: Child,
    stdout: ChildStdout,
    writer: JoinHandle<()>,
    header: Vec<u8>,
    carry: Option<u8>,
    buf: Vec<u8>,
    done: bool,
}

impl SpeechStream {
    /// The next samples (16-bit mono at [`SAMPLE_RATE`]), as soon as the
    /// synthesiser produced them; `None` at the end.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<i16>>, VoiceError> {
        loop {
            if self.done {
                return Ok(None);
            }
            let n = self
                .stdout
                .read(&mut self.buf)
                .await
                .map_err(|e| VoiceError::Engine(format!("reading espeak-ng: {e}")))?;
            if n == 0 {
                self.done = true;
                let status = self
                    .child
                    .wait()
                    .await
                    .map_err(|e| VoiceError::Engine(format!("waiting for espeak-ng: {e}")))?;
                if !status.success() {
                    return Err(VoiceError::Engine(format!("espeak-ng failed: {status}")));
                }
                if self.header.len() < HEADER_LEN {
                    return Err(VoiceError::Engine("espeak-ng produced no audio".to_owned()));
                }
                return Ok(None);
            }
            let mut data = &self.buf[..n];
            if self.header.len() < HEADER_LEN {
                let take = (HEADER_LEN - self.header.len()).min(data.len());
                self.header.extend_from_slice(&data[..take]);
                data = &data[take..];
                if self.header.len() == HEADER_LEN {
                    check_header(&self.header)?;
                }
            }
            if data.is_empty() {
                continue;
            }
            let mut bytes = Vec::with_capacity(data.len() + 1);
            if let Some(b) = self.carry.take() {
                bytes.push(b);
            }
            bytes.extend_from_slice(data);
            if bytes.len() % 2 == 1 {
                self.carry = bytes.pop();
            }
            if bytes.is_empty() {
                continue;
            }
            return Ok(Some(
                bytes
                    .chunks_exact(2)
                    .map(|b| i16::from_le_bytes([b[0], b[1]]))
                    .collect(),
            ));
        }
    }
}

impl Drop for SpeechStream {
    fn drop(&mut self) {
        self.writer.abort();
    }
}

fn check_header(h: &[u8]) -> Result<(), VoiceError> {
    let rate = u32::from_le_bytes([h[24], h[25], h[26], h[27]]);
    let channels = u16::from_le_bytes([h[22], h[23]]);
    let bits = u16::from_le_bytes([h[34], h[35]]);
    if &h[0..4] != b"RIFF"
        || &h[8..12] != b"WAVE"
        || rate != SAMPLE_RATE
        || channels != 1
        || bits != 16
    {
        return Err(VoiceError::Engine(format!(
            "unexpected espeak-ng output format ({rate} Hz, {channels} channels, {bits} bits)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::voices::{TTS_VOICES, VoiceLookup, tts_voice};

    fn voice(id: i64) -> &'static TtsVoice {
        match tts_voice(id) {
            VoiceLookup::Found(v) => v,
            _ => panic!("no voice {id}"),
        }
    }

    #[tokio::test]
    async fn speaks_every_voice() {
        let espeak = Espeak::default();
        assert!(espeak.version().await.unwrap().contains("eSpeak NG"));
        for v in TTS_VOICES {
            let pcm = espeak.synthesize(v, "Hello, one two three.").await.unwrap();
            let secs = pcm.len() as f32 / SAMPLE_RATE as f32;
            assert!((0.5..5.0).contains(&secs), "{}: {secs} s", v.espeak);
            assert!(
                pcm.iter().any(|&s| s.unsigned_abs() > 1000),
                "{} is silent",
                v.espeak
            );
        }
    }

    #[tokio::test]
    async fn streams_in_chunks_and_refuses_empty_text() {
        let espeak = Espeak::default();
        let mut s = espeak
            .start(voice(101), &"This sentence is long enough. ".repeat(5))
            .unwrap();
        let mut chunks = 0;
        let mut total = 0;
        while let Some(c) = s.next_chunk().await.unwrap() {
            chunks += 1;
            total += c.len();
        }
        assert!(chunks > 5 && total > SAMPLE_RATE as usize * 3);
        assert!(matches!(
            espeak.start(voice(101), " ... "),
            Err(VoiceError::BadRequest(_))
        ));
        let missing = Espeak::new("/nonexistent/espeak-ng");
        assert!(matches!(
            missing.start(voice(101), "hi"),
            Err(VoiceError::Engine(_))
        ));
    }
}
