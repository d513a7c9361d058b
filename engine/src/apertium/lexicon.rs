//! Apertium's morphological analysers as dictionaries: which words of a text
//! a language knows, for language detection and `mark_unknown`.
//!
//! Each source language of an installed pair has an analyser (the first stage
//! of its modes, `lt-proc …automorf.bin`; the largest where pairs differ). A text is run through it once
//! (a process per call: only short texts are looked up, a few candidates
//! each) and every word it analyses without the unknown mark `*` counts as
//! known.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;

use super::discovery::Mode;
use crate::engine::Vocabulary;

/// Longest time one look-up may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The analyser of each source language (by base code).
#[derive(Debug, Default)]
pub(crate) struct Lexicons {
    analysers: HashMap<String, (String, PathBuf)>,
}

impl Lexicons {
    /// The analysers of `modes`' source languages: a mode whose first stage
    /// is `lt-proc` with an `.automorf.bin`; of a language's several (one per
    /// pair), the largest, whose dictionary knows the most words.
    pub fn new(modes: &[Mode]) -> Self {
        let size = |bin: &PathBuf| std::fs::metadata(bin).map_or(0, |m| m.len());
        let mut analysers: HashMap<String, (String, PathBuf)> = HashMap::new();
        for mode in modes {
            let Some(first) = mode.stages.first() else {
                continue;
            };
            let Some(bin) = first.args.iter().find(|a| a.ends_with(".automorf.bin")) else {
                continue;
            };
            if !first.program.ends_with("lt-proc") {
                continue;
            }
            let bin = PathBuf::from(bin);
            let larger = analysers
                .get(&mode.pair.source.base)
                .is_none_or(|(_, known)| size(&bin) > size(known));
            if larger {
                analysers.insert(mode.pair.source.base.clone(), (first.program.clone(), bin));
            }
        }
        Self { analysers }
    }

    /// What the analyser of `base` knows of each text's words; `None`
    /// without an analyser for `base` or when it fails.
    pub async fn known(&self, base: &str, texts: &[String]) -> Option<Vec<Vocabulary>> {
        let (program, bin) = self.analysers.get(base)?;
        // One line per text, only letters and the marks inside words (no
        // stream syntax reaches the analyser).
        let mut input = String::new();
        for t in texts {
            for c in t.chars() {
                input.push(match c {
                    '’' => '\'',
                    c if c.is_alphabetic() || c == '\'' || c == '-' => c,
                    _ => ' ',
                });
            }
            input.push('\n');
        }
        let mut child = tokio::process::Command::new(program)
            .arg(bin)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| tracing::warn!(analyser = %bin.display(), error = %e, "cannot start"))
            .ok()?;
        let mut stdin = child.stdin.take()?;
        let write = async move {
            stdin.write_all(input.as_bytes()).await?;
            stdin.shutdown().await
        };
        let run = async {
            write.await?;
            child.wait_with_output().await
        };
        let output = match tokio::time::timeout(TIMEOUT, run).await {
            Ok(Ok(o)) if o.status.success() => o,
            other => {
                tracing::warn!(analyser = %bin.display(), result = ?other.map(|r| r.map(|o| o.status)), "analyser failed");
                return None;
            }
        };
        let out = String::from_utf8_lossy(&output.stdout);
        let known: Vec<Vocabulary> = out.lines().map(vocabulary).collect();
        (known.len() == texts.len()).then_some(known)
    }
}

/// Parts of speech of grammar words (Apertium's tags): determiners,
/// pronouns, prepositions, conjunctions, relatives, auxiliary and modal
/// verbs.
const GRAMMAR: &[&str] = &[
    "det", "predet", "prn", "pr", "cnjcoo", "cnjsub", "cnjadv", "rel", "vbser", "vbhaver", "vaux",
    "vbmod", "preadv", "itg",
];

/// How one analysis reads a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Reading {
    /// Only as a part of compounds, a letter of the alphabet or a name.
    Marginal,
    /// As a word of the language.
    Word,
    /// As a grammar word ([`GRAMMAR`]).
    Grammar,
}

/// The reading of one analysis (`lemma<pos><tag>…`, `+`-joined for
/// contractions, whose first part counts).
fn reading(analysis: &str) -> Reading {
    let Some((lemma, tags)) = analysis.split_once('<') else {
        return Reading::Marginal;
    };
    let pos = tags.split('>').next().unwrap_or_default();
    if tags.contains("compound-only") || lemma.ends_with("alphabet") || pos == "np" {
        Reading::Marginal
    } else if GRAMMAR.contains(&pos) {
        Reading::Grammar
    } else {
        Reading::Word
    }
}

/// What one output line (`^word/analysis$`…) says of its words: how many
/// there are, how many are known as words and as grammar words, and those
/// marked unknown (`*`).
fn vocabulary(line: &str) -> Vocabulary {
    let mut v = Vocabulary::default();
    for unit in line.split('^').skip(1) {
        let unit = unit.split('$').next().unwrap_or_default();
        let Some((surface, analyses)) = unit.split_once('/') else {
            continue;
        };
        if !surface.chars().any(char::is_alphabetic) {
            continue;
        }
        v.words += 1;
        if analyses.starts_with('*') {
            if !v.unknown.iter().any(|u| u == surface) {
                v.unknown.push(surface.to_owned());
            }
            continue;
        }
        match analyses.split('/').map(reading).max() {
            Some(Reading::Grammar) => {
                v.known += 1;
                v.grammar += 1;
            }
            Some(Reading::Word) => v.known += 1,
            _ => {}
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_and_unknown_words() {
        let v = vocabulary("^Hello/Hello<ij>$ ^beam/beam<n><sg>$^./.<sent>$");
        assert_eq!((v.words, v.known, v.share_known()), (2, 2, 1.0));
        assert!(v.unknown.is_empty());
        // Grammar words; names, letters and compound parts are not words.
        let v = vocabulary(
            "^del/de<pr>+el<det><def><m><sg>$ ^y/y<cnjcoo>$ ^casa/casa<n><f><sg>$ \
             ^Toda/Toda<np><ant>$ ^y/yalphabet<n><m><sg><ind>$ \
             ^pot/pott<n><m><sg><ind><cmp><compound-only-L>$",
        );
        assert_eq!((v.words, v.known, v.grammar), (6, 3, 2));
        assert!(v.unknown.is_empty());
        let v = vocabulary("^Zorg/*Zorg$ ^proton/proton<n>$ ^Zorg/*Zorg$ ^blix/*blix$");
        assert_eq!((v.words, v.known, v.share_known()), (4, 1, 0.25));
        assert_eq!(v.unknown, ["Zorg", "blix"]);
        assert_eq!(vocabulary("").share_known(), 0.0);
    }
}
