//! Speech recognition with pocketsphinx (Debian `pocketsphinx` and its
//! `pocketsphinx-en-us` model), run as `pocketsphinx_continuous` on a 16 kHz file.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::process::Command;

use crate::VoiceError;

/// The rate pocketsphinx's en-us model expects.
pub const SAMPLE_RATE: u32 = 16_000;
/// Default program.
pub const DEFAULT_PROGRAM: &str = "pocketsphinx_continuous";
/// Default folder of the en-us model (Debian's pocketsphinx-en-us).
pub const DEFAULT_MODEL_DIR: &str = "/usr/share/pocketsphinx/model/en-us";

/// The recogniser.
#[derive(Debug, Clone)]
pub struct Recognizer {
    program: PathBuf,
    model_dir: PathBuf,
}

impl Default for Recognizer {
    fn default() -> Self {
        Self::new(DEFAULT_PROGRAM, DEFAULT_MODEL_DIR)
    }
}

impl Recognizer {
    /// A recogniser running `program` with the en-us model in `model_dir`.
    pub fn new(program: impl Into<PathBuf>, model_dir: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            model_dir: model_dir.into(),
        }
    }

    /// Languages it recognises, as DeepL base codes.
    pub fn languages(&self) -> &'static [&'static str] {
        &["EN"]
    }

    /// True when `language` (a DeepL code, any case, variants allowed) can be recognised.
    pub fn supports(&self, language: &str) -> bool {
        let base = language.split(['-', '_']).next().unwrap_or(language);
        self.languages()
            .iter()
            .any(|l| l.eq_ignore_ascii_case(base))
    }

    /// Checks that the program and the model are installed.
    pub fn check(&self) -> Result<(), VoiceError> {
        for f in ["en-us", "en-us.lm.bin", "cmudict-en-us.dict"] {
            if !self.model_dir.join(f).exists() {
                return Err(VoiceError::Engine(format!(
                    "pocketsphinx model file {} is missing (apt-get install pocketsphinx-en-us)",
                    self.model_dir.join(f).display()
                )));
            }
        }
        Ok(())
    }

    /// Transcribes 16 kHz mono speech (lower-case words, utterances joined by spaces).
    pub async fn recognize(&self, samples_16k: &[f32]) -> Result<String, VoiceError> {
        self.check()?;
        let path = temp_path();
        let wav = crate::wav::encode(&crate::wav::to_i16(&dither(samples_16k)), SAMPLE_RATE)?;
        tokio::fs::write(&path, wav)
            .await
            .map_err(|e| VoiceError::Engine(format!("writing {}: {e}", path.display())))?;
        let result = self.run(&path).await;
        let _ = tokio::fs::remove_file(&path).await;
        result
    }

    async fn run(&self, path: &Path) -> Result<String, VoiceError> {
        let out = Command::new(&self.program)
            .arg("-infile")
            .arg(path)
            .arg("-hmm")
            .arg(self.model_dir.join("en-us"))
            .arg("-lm")
            .arg(self.model_dir.join("en-us.lm.bin"))
            .arg("-dict")
            .arg(self.model_dir.join("cmudict-en-us.dict"))
            .args(["-logfn", "/dev/null"])
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output()
            .await
            .map_err(|e| {
                VoiceError::Engine(format!(
                    "cannot run {} (apt-get install pocketsphinx): {e}",
                    self.program.display()
                ))
            })?;
        if !out.status.success() {
            return Err(VoiceError::Engine(format!(
                "pocketsphinx failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        Ok(text.split_whitespace().collect::<Vec<_>>().join(" "))
    }
}

/// Adds a fixed, deterministic noise floor at about -54 dBFS. pocketsphinx
/// tracks the noise level to subtract it; the digital silence between words of
/// synthetic speech throws that tracker off (measured: "what are are the the"
/// without, "i would like a cup of coffee please" with, on espeak-ng en-us).
fn dither(x: &[f32]) -> Vec<f32> {
    let mut seed = 7u32;
    x.iter()
        .map(|&s| {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            s + DITHER * ((seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5)
        })
        .collect()
}

/// Peak-to-peak amplitude of the noise floor [`dither`] adds.
const DITHER: f32 = 0.002;

fn temp_path() -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    std::env::temp_dir().join(format!(
        "tolk-asr-{}-{}-{nanos}.wav",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tts::{self, Espeak};
    use crate::voices::{VoiceLookup, tts_voice};

    #[tokio::test]
    async fn recognizes_espeak_speech() {
        let VoiceLookup::Found(voice) = tts_voice(101) else {
            panic!("voice 101")
        };
        let pcm = Espeak::default()
            .synthesize(voice, "I would like a cup of coffee please.")
            .await
            .unwrap();
        let x = crate::resample::resample(&crate::wav::to_f32(&pcm), tts::SAMPLE_RATE, SAMPLE_RATE);
        let text = Recognizer::default().recognize(&x).await.unwrap();
        assert!(text.contains("coffee") && text.contains("cup"), "{text}");
        assert!(Recognizer::default().supports("en-US"));

        // Intelligibility after voice conversion: the words survive a change of
        // pitch (Robot: monotone 110 Hz) and of pitch and formants (Alto). The
        // en-us acoustic model, trained on adult voices, is the limit here: the
        // Soprano and Child profiles are not recognised well even when clean.
        for id in [206, 203] {
            let crate::voices::VoiceLookup::Found(profile) = crate::voices::vc_voice(id) else {
                panic!("voice {id}")
            };
            let x22 = crate::wav::to_f32(&pcm);
            let y = crate::convert::convert(&x22, tts::SAMPLE_RATE, profile).unwrap();
            let y16 = crate::resample::resample(&y, tts::SAMPLE_RATE, SAMPLE_RATE);
            let text = Recognizer::default().recognize(&y16).await.unwrap();
            eprintln!("{}: {text}", profile.name);
            assert!(text.contains("coffee"), "{}: {text}", profile.name);
        }
        assert!(!Recognizer::default().supports("de"));
    }
}
