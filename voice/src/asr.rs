//! Speech recognition with pocketsphinx (Debian `pocketsphinx` and its
//! `pocketsphinx-en-us` model), run as `pocketsphinx_continuous` on a 16 kHz file.
//!
//! Spoken terms (`/v3/spoken-terms`) bias recognition: pocketsphinx's n-gram
//! model cannot be changed in place, so a second pass spots the terms
//! (keyword spotting, `-kws`) over the same audio while the first one
//! transcribes it with word timings; a spotted term replaces the words heard
//! over the same stretch of time. A term can be spotted when each of its
//! words is in the pronunciation dictionary.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use tokio::process::Command;

use crate::VoiceError;

/// The rate pocketsphinx's en-us model expects.
pub const SAMPLE_RATE: u32 = 16_000;
/// Default program.
pub const DEFAULT_PROGRAM: &str = "pocketsphinx_continuous";
/// Default folder of the en-us model (Debian's pocketsphinx-en-us).
pub const DEFAULT_MODEL_DIR: &str = "/usr/share/pocketsphinx/model/en-us";
/// The language of speech whose language is not given (a DeepL code).
pub const DEFAULT_LANGUAGE: &str = "EN";

/// Keyword-spotting threshold of a spoken term (pocketsphinx's `/1e-N/`):
/// the lower, the more readily a term is spotted, and the more often in
/// speech that does not hold it. Chosen with `tolk-bench spoken-terms`
/// (docs/benchmarks.md), which counts hits and false alarms per threshold on
/// espeak-ng speech of several voices and rates; a spoken-terms collection
/// may set its own.
pub const DEFAULT_TERM_THRESHOLD: f64 = 1e-25;

/// The recogniser.
#[derive(Debug, Clone)]
pub struct Recognizer {
    program: PathBuf,
    model_dir: PathBuf,
    words: Words,
}

/// The pronunciation dictionary's words, read when first needed.
#[derive(Clone, Default)]
struct Words(Arc<OnceLock<HashSet<String>>>);

impl std::fmt::Debug for Words {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.get() {
            Some(w) => write!(f, "Words({} read)", w.len()),
            None => f.write_str("Words(not read)"),
        }
    }
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
            words: Words::default(),
        }
    }

    /// Languages it recognises, as DeepL base codes.
    pub fn languages(&self) -> &'static [&'static str] {
        &[DEFAULT_LANGUAGE]
    }

    /// True when `language` (a DeepL code, any case, variants allowed) can be recognised.
    pub fn supports(&self, language: &str) -> bool {
        let base = tolk_lang::primary(language);
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
        self.recognize_with_terms(samples_16k, &[], DEFAULT_TERM_THRESHOLD)
            .await
    }

    /// [`Recognizer::recognize`], biased towards `terms` (spoken terms: words
    /// or phrases the speaker is expected to say), spotted at `threshold`
    /// ([`DEFAULT_TERM_THRESHOLD`]). A spotted term is written as it was
    /// given ("Tolkien"). Terms with a word the pronunciation dictionary
    /// lacks are left out (logged).
    pub async fn recognize_with_terms(
        &self,
        samples_16k: &[f32],
        terms: &[String],
        threshold: f64,
    ) -> Result<String, VoiceError> {
        self.check()?;
        let terms = self.spottable(terms).await?;
        let path = self.audio_file(samples_16k).await?;
        let result = if terms.is_empty() {
            self.run(&path, &[])
                .await
                .map(|out| out.split_whitespace().collect::<Vec<_>>().join(" "))
        } else {
            let lm = self.run(&path, &["-time", "yes"]);
            let kws = self.spot_in(&path, &terms, threshold);
            let (heard, spotted) = tokio::join!(lm, kws);
            spotted.and_then(|spotted| Ok(merge(timed(&heard?), spotted)))
        };
        let _ = tokio::fs::remove_file(&path).await;
        result
    }

    /// The terms spotted in the speech at `threshold`, as they were given,
    /// in the order they were spoken (the keyword-spotting pass alone).
    pub async fn spot(
        &self,
        samples_16k: &[f32],
        terms: &[String],
        threshold: f64,
    ) -> Result<Vec<String>, VoiceError> {
        self.check()?;
        let terms = self.spottable(terms).await?;
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let path = self.audio_file(samples_16k).await?;
        let spotted = self.spot_in(&path, &terms, threshold).await;
        let _ = tokio::fs::remove_file(&path).await;
        let mut spotted = spotted?;
        spotted.sort_by(|a, b| a.start.total_cmp(&b.start));
        Ok(spotted.into_iter().map(|t| t.text).collect())
    }

    /// The speech as the 16 kHz WAV file pocketsphinx reads (with its noise
    /// floor, [`dither`]).
    async fn audio_file(&self, samples_16k: &[f32]) -> Result<PathBuf, VoiceError> {
        let path = temp_path("wav");
        let wav = crate::wav::encode(&crate::wav::to_i16(&dither(samples_16k)), SAMPLE_RATE)?;
        write(&path, &wav).await?;
        Ok(path)
    }

    /// The keyword-spotting pass over the file at `path`: the spotted terms
    /// with their times, written as given.
    async fn spot_in(
        &self,
        path: &Path,
        terms: &[Term],
        threshold: f64,
    ) -> Result<Vec<Timed>, VoiceError> {
        let list = temp_path("kws");
        let lines: String = terms
            .iter()
            .map(|t| format!("{} /{threshold:e}/\n", t.spoken))
            .collect();
        write(&list, lines.as_bytes()).await?;
        let out = self
            .run_search(path, "-kws", &list, &["-time", "yes"])
            .await;
        let _ = tokio::fs::remove_file(&list).await;
        let mut spotted = timed(&out?);
        for t in &mut spotted {
            if let Some(term) = terms.iter().find(|term| term.spoken == t.text) {
                t.text.clone_from(&term.written);
            }
        }
        Ok(spotted)
    }

    /// The terms that can be spotted: as pocketsphinx spots them (lower
    /// case, single spaces) and as they were written.
    async fn spottable(&self, terms: &[String]) -> Result<Vec<Term>, VoiceError> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let words = self.dictionary().await?;
        let mut out: Vec<Term> = Vec::new();
        for term in terms {
            let written = term.split_whitespace().collect::<Vec<_>>().join(" ");
            let spoken = written.to_lowercase();
            if spoken.is_empty() || out.iter().any(|t| t.spoken == spoken) {
                continue;
            }
            if spoken.split(' ').all(|w| words.contains(w)) {
                out.push(Term { spoken, written });
            } else {
                tracing::warn!(term = %spoken, "spoken term has a word the pronunciation dictionary lacks; not used");
            }
        }
        Ok(out)
    }

    /// The dictionary's words (alternates such as `to(2)` folded).
    async fn dictionary(&self) -> Result<&HashSet<String>, VoiceError> {
        if let Some(w) = self.words.0.get() {
            return Ok(w);
        }
        let path = self.model_dir.join("cmudict-en-us.dict");
        let text = tokio::fs::read_to_string(&path)
            .await
            .map_err(|e| VoiceError::Engine(format!("reading {}: {e}", path.display())))?;
        let words = text
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .map(|w| w.split('(').next().unwrap_or(w).to_owned())
            .collect();
        Ok(self.words.0.get_or_init(|| words))
    }

    /// The n-gram pass (its whole output).
    async fn run(&self, path: &Path, extra: &[&str]) -> Result<String, VoiceError> {
        self.run_search(path, "-lm", &self.model_dir.join("en-us.lm.bin"), extra)
            .await
    }

    /// One pass with `search` (`-lm`, `-kws`) over `model`: pocketsphinx's output.
    async fn run_search(
        &self,
        path: &Path,
        search: &str,
        model: &Path,
        extra: &[&str],
    ) -> Result<String, VoiceError> {
        let out = Command::new(&self.program)
            .arg("-infile")
            .arg(path)
            .arg("-hmm")
            .arg(self.model_dir.join("en-us"))
            .arg(search)
            .arg(model)
            .arg("-dict")
            .arg(self.model_dir.join("cmudict-en-us.dict"))
            .args(["-logfn", "/dev/null"])
            .args(extra)
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
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

async fn write(path: &Path, bytes: &[u8]) -> Result<(), VoiceError> {
    tokio::fs::write(path, bytes)
        .await
        .map_err(|e| VoiceError::Engine(format!("writing {}: {e}", path.display())))
}

/// A word or spotted term with its time span (seconds) and confidence.
#[derive(Debug, Clone, PartialEq)]
struct Timed {
    text: String,
    start: f64,
    end: f64,
    confidence: f64,
}

/// A spoken term: as pocketsphinx spots it, and as it was written.
#[derive(Debug, Clone)]
struct Term {
    spoken: String,
    written: String,
}

/// The timed lines of `-time yes` output (`text start end confidence`),
/// without silences, fillers and sentence marks; `word(2)` read as `word`.
fn timed(out: &str) -> Vec<Timed> {
    out.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let n = f.len();
            if n < 4 {
                return None;
            }
            let num = |s: &str| s.parse::<f64>().ok();
            let (start, end, confidence) = (num(f[n - 3])?, num(f[n - 2])?, num(f[n - 1])?);
            let text = f[..n - 3]
                .iter()
                .map(|w| w.split('(').next().unwrap_or(w))
                .collect::<Vec<_>>()
                .join(" ");
            if text.starts_with('<') || text.starts_with('[') || text.is_empty() {
                return None;
            }
            Some(Timed {
                text,
                start,
                end,
                confidence,
            })
        })
        .collect()
}

/// The words heard, with each spotted term in place of the words heard
/// over its time span (overlapping spots: the more confident one).
fn merge(heard: Vec<Timed>, mut spotted: Vec<Timed>) -> String {
    spotted.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    let mut chosen: Vec<Timed> = Vec::new();
    for s in spotted {
        if chosen.iter().all(|c| s.end <= c.start || s.start >= c.end) {
            chosen.push(s);
        }
    }
    let mut all: Vec<Timed> = heard
        .into_iter()
        .filter(|w| {
            let middle = (w.start + w.end) / 2.0;
            !chosen.iter().any(|c| middle >= c.start && middle <= c.end)
        })
        .collect();
    all.extend(chosen);
    all.sort_by(|a, b| a.start.total_cmp(&b.start));
    all.iter()
        .map(|t| t.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
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

fn temp_path(extension: &str) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    std::env::temp_dir().join(format!(
        "tolk-asr-{}-{}-{nanos}.{extension}",
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

    /// 16 kHz espeak-ng speech of `text` (voice 101, en-US).
    async fn speech(text: &str) -> Vec<f32> {
        let VoiceLookup::Found(voice) = tts_voice(101) else {
            panic!("voice 101")
        };
        let pcm = Espeak::default().synthesize(voice, text).await.unwrap();
        crate::resample::resample(&crate::wav::to_f32(&pcm), tts::SAMPLE_RATE, SAMPLE_RATE)
    }

    #[tokio::test]
    async fn a_spoken_term_is_recognised_with_its_list_and_missed_without() {
        let r = Recognizer::default();
        let x = speech("We met the engineers from Tolkien yesterday.").await;
        let plain = r.recognize(&x).await.unwrap();
        assert!(!plain.contains("tolkien"), "{plain}");
        // A term whose word the dictionary lacks is left out, not an error.
        let terms = ["Tolkien".to_owned(), "Kubernetes".to_owned()];
        let biased = r
            .recognize_with_terms(&x, &terms, DEFAULT_TERM_THRESHOLD)
            .await
            .unwrap();
        assert!(biased.contains("Tolkien"), "written as given: {biased}");
        assert!(
            biased.contains("engineers") && biased.contains("yesterday"),
            "{biased}"
        );
        // Speech without the term, close to it in sound, is left as heard.
        let y = speech("We told you about the cake in the kitchen.").await;
        let plain = r.recognize(&y).await.unwrap();
        let biased = r
            .recognize_with_terms(&y, &terms, DEFAULT_TERM_THRESHOLD)
            .await
            .unwrap();
        assert_eq!(biased, plain);
    }

    #[test]
    fn spotted_terms_replace_the_words_heard_over_their_span() {
        let heard = timed(
            "we went told you yesterday\n<s> 0.000 0.020 0.99\nwe 0.030 0.120 0.08\n\
             went(2) 0.130 0.300 0.07\n<sil> 1.040 1.280 0.97\ntold 1.290 1.530 0.09\n\
             you 1.540 1.720 0.18\nyesterday(2) 1.730 2.350 0.15\n</s> 2.360 2.620 1.0\n",
        );
        assert_eq!(heard.len(), 5);
        assert_eq!(heard[1].text, "went");
        let spotted = timed("tolkien\ntolkien 1.290 1.710 0.85\ndeep learning 1.300 1.600 0.5\n");
        assert_eq!(spotted[1].text, "deep learning");
        assert_eq!(merge(heard, spotted), "we went tolkien yesterday");
    }
}
