//! Tolk's translation quality evaluator.
//!
//! [`evaluate`] runs deterministic, offline checks over one source/target pair
//! and returns MQM-style [`Issue`]s (type, sub-type, severity, a plain-words
//! explanation and code-point spans on both sides). Nothing here does I/O; the
//! worker adds the optional back-translation check ([`back_translation_issue`])
//! with the engines' output.
//!
//! Checks (see `docs/quality.md` for the mapping table):
//! - numbers, dates (month names) and currency amounts that differ;
//! - direction words that flip (`5% above` → `5 % por debajo`) and lost negation;
//! - untranslated segments and source words left in the target;
//! - omitted or added sentences (length-based sentence alignment) and
//!   suspicious length ratios;
//! - inline tags and placeholders lost, added, reordered or badly nested;
//! - glossary terms not respected;
//! - punctuation, white space, casing and character-encoding conventions of the
//!   target language.

#![deny(missing_docs)]

mod checks;
pub mod chrf;
pub mod lexicon;
pub mod text;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Top-level MQM category.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum IssueType {
    /// The meaning differs.
    Accuracy,
    /// The target reads badly in its own language.
    Fluency,
    /// Style conventions.
    Style,
    /// Anything else.
    Miscellaneous,
}

/// Finer MQM category (the wire format's enumeration).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SubType {
    /// Content in the target that is not in the source.
    Addition,
    /// Content of the source missing from the target.
    Omission,
    /// Content rendered with another meaning.
    Mistranslation,
    /// More specific than the source.
    #[serde(rename = "Over-translation")]
    OverTranslation,
    /// Less specific than the source.
    #[serde(rename = "Under-translation")]
    UnderTranslation,
    /// Source text left as is.
    #[serde(rename = "Untranslated text")]
    UntranslatedText,
    /// Punctuation and white space.
    Punctuation,
    /// Spelling and capitalization.
    Spelling,
    /// Grammar.
    Grammar,
    /// Formal/informal address.
    #[serde(rename = "Grammatical register")]
    GrammaticalRegister,
    /// Inconsistent rendering (markup order, terms).
    Inconsistency,
    /// Broken characters.
    #[serde(rename = "Character encoding")]
    CharacterEncoding,
    /// Unnatural wording.
    Awkward,
    /// Style that changes within the text.
    #[serde(rename = "Inconsistent style")]
    InconsistentStyle,
}

/// How serious an issue is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Severity {
    /// Changes the meaning in a way that can do harm (numbers, polarity).
    Critical,
    /// Loses or distorts content; a reader is misled or misses something.
    Major,
    /// A blemish; the meaning gets through.
    Minor,
}

impl Severity {
    /// MQM penalty points: Minor 1, Major 5, Critical 10.
    pub fn penalty(self) -> u32 {
        match self {
            Self::Critical => 10,
            Self::Major => 5,
            Self::Minor => 1,
        }
    }
}

/// A half-open `[start, end)` range of code points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Span {
    /// Inclusive start.
    pub start: usize,
    /// Exclusive end.
    pub end: usize,
}

impl Span {
    /// `[start, end)`.
    pub fn new(start: usize, end: usize) -> Self {
        Self { start, end }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Issue {
    /// Top-level category.
    #[serde(rename = "type")]
    pub kind: IssueType,
    /// Finer category.
    pub sub_type: SubType,
    /// Severity.
    pub severity: Severity,
    /// What is wrong, in words a translator understands.
    pub explanation: String,
    /// Where in the source.
    pub source_spans: Vec<Span>,
    /// Where in the target.
    pub target_spans: Vec<Span>,
}

/// What the evaluator needs besides the texts.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Source language: ISO 639-1 base code, lower case (`en`).
    pub source_lang: String,
    /// Target language: ISO 639-1 base code, lower case (`es`).
    pub target_lang: String,
    /// Glossary entries (source term → required target term).
    pub glossary: Vec<(String, String)>,
}

impl Options {
    /// Options for a pair given as DeepL codes (`EN`, `PT-BR`, `es`).
    pub fn new(source_lang: &str, target_lang: &str) -> Self {
        Self {
            source_lang: tolk_lang::base(source_lang),
            target_lang: tolk_lang::base(target_lang),
            glossary: Vec::new(),
        }
    }
}

/// Most issues reported for one segment (the most severe first); a pathological
/// segment (thousands of differing numbers) would otherwise make a huge report.
pub const MAX_ISSUES_PER_SEGMENT: usize = 50;

/// Evaluates one source/target pair. Issues come sorted by severity, then by
/// their first target (or source) offset; at most [`MAX_ISSUES_PER_SEGMENT`].
pub fn evaluate(source: &str, target: &str, options: &Options) -> Vec<Issue> {
    let mut issues = checks::run(source, target, options);
    issues.sort_by_key(|i| {
        (
            i.severity,
            i.target_spans.first().or(i.source_spans.first()).copied(),
        )
    });
    issues.truncate(MAX_ISSUES_PER_SEGMENT);
    issues
}

/// chrF below which a back-translation is reported.
pub const BACK_TRANSLATION_MIN_CHRF: f64 = 0.30;

/// A Minor mistranslation hint when the back-translation of the target (into the
/// source language) is far from the source (chrF < [`BACK_TRANSLATION_MIN_CHRF`]).
pub fn back_translation_issue(source: &str, back_translation: &str) -> Option<Issue> {
    if source.trim().chars().count() < 20 {
        return None;
    }
    let score = chrf::chrf(source, back_translation);
    if score >= BACK_TRANSLATION_MIN_CHRF {
        return None;
    }
    Some(Issue {
        kind: IssueType::Accuracy,
        sub_type: SubType::Mistranslation,
        severity: Severity::Minor,
        explanation: format!(
            "Translated back into the source language, the translation reads \"{}\", which shares little with the source (chrF {:.2}); the meaning may have drifted. Please review the whole segment.",
            back_translation.trim(),
            score
        ),
        source_spans: vec![Span::new(0, source.chars().count())],
        target_spans: Vec::new(),
    })
}

/// One segment's result in the wire format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentResult {
    /// Zero-based index in the request.
    pub segment_index: usize,
    /// Its issues (empty when none).
    pub errors: Vec<Issue>,
}

/// Aggregate of a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// 0..100; see [`summarize`].
    pub overall_score: u32,
    /// type → sub_type → severity → count.
    pub granular_counts: BTreeMap<String, BTreeMap<String, BTreeMap<String, u32>>>,
}

fn name<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The summary of a job: counts per type/sub-type/severity and an overall score
/// `round(100 × W / (W + P))`, where W is the number of source words (at least 1)
/// and P the MQM penalty points (Minor 1, Major 5, Critical 10). No issue → 100.
pub fn summarize(sources: &[&str], segments: &[SegmentResult]) -> Summary {
    let mut counts: BTreeMap<String, BTreeMap<String, BTreeMap<String, u32>>> = BTreeMap::new();
    let mut penalty = 0u64;
    for issue in segments.iter().flat_map(|s| &s.errors) {
        *counts
            .entry(name(&issue.kind))
            .or_default()
            .entry(name(&issue.sub_type))
            .or_default()
            .entry(name(&issue.severity))
            .or_default() += 1;
        penalty += u64::from(issue.severity.penalty());
    }
    let words = sources
        .iter()
        .map(|s| {
            text::tokenize(s)
                .iter()
                .filter(|t| matches!(t.kind, text::Kind::Word | text::Kind::Number))
                .count() as u64
        })
        .sum::<u64>()
        .max(1);
    let score = (100.0 * words as f64 / (words + penalty) as f64).round() as u32;
    Summary {
        overall_score: score.min(100),
        granular_counts: counts,
    }
}

#[cfg(test)]
mod tests;
