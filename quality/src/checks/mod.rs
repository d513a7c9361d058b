//! The individual checks. Each returns issues with code-point spans.
//!
//! One family of checks per file: [`numbers`] (numbers, units, currencies),
//! [`dates`] (month names), [`polarity`] (direction words and negation),
//! [`untranslated`], [`alignment`] (omitted or added sentences, length ratios),
//! [`markup`] (inline tags and placeholders), [`glossary`], and the target
//! language's conventions: [`whitespace`], [`punctuation`] and [`conventions`]
//! (encoding, casing, repeated words).

mod alignment;
mod conventions;
mod dates;
mod glossary;
mod markup;
mod numbers;
mod phrases;
mod polarity;
mod punctuation;
mod untranslated;
mod whitespace;

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

use crate::text::{self, Token};
use crate::{Issue, IssueType, Options, Severity, Span, SubType};

/// Both texts, tokenized once.
struct Pair<'a> {
    source: &'a str,
    target: &'a str,
    src: Vec<Token>,
    tgt: Vec<Token>,
    /// The source's code points (spans index them).
    source_chars: Vec<char>,
    /// The target's code points.
    target_chars: Vec<char>,
    options: &'a Options,
}

fn issue(
    kind: IssueType,
    sub_type: SubType,
    severity: Severity,
    explanation: String,
    source_spans: Vec<Span>,
    target_spans: Vec<Span>,
) -> Issue {
    Issue {
        kind,
        sub_type,
        severity,
        explanation,
        source_spans,
        target_spans,
    }
}

/// A Minor fluency issue on target spans (the target language's conventions).
fn minor(sub_type: SubType, explanation: String, target_spans: Vec<Span>) -> Issue {
    issue(
        IssueType::Fluency,
        sub_type,
        Severity::Minor,
        explanation,
        Vec::new(),
        target_spans,
    )
}

fn span(t: &Token) -> Span {
    Span::new(t.start, t.end)
}

/// Pairs each source item with the first unused target item of the same key, in
/// order. Returns which target items were used and the source items left without
/// a counterpart.
fn match_in_order<'t, K: Hash + Eq>(
    src: &[&'t Token],
    tgt: &[&Token],
    key: impl Fn(&Token) -> K,
) -> (Vec<bool>, Vec<&'t Token>) {
    let mut used = vec![false; tgt.len()];
    let mut missing = Vec::new();
    // Target positions by key, consumed in order.
    let mut by_key: HashMap<K, VecDeque<usize>> = HashMap::new();
    for (i, t) in tgt.iter().enumerate() {
        by_key.entry(key(t)).or_default().push_back(i);
    }
    for s in src {
        match by_key.get_mut(&key(s)).and_then(VecDeque::pop_front) {
            Some(i) => used[i] = true,
            None => missing.push(*s),
        }
    }
    (used, missing)
}

/// Runs every check.
pub fn run(source: &str, target: &str, options: &Options) -> Vec<Issue> {
    if target.trim().is_empty() {
        if source.trim().is_empty() {
            return Vec::new();
        }
        return vec![issue(
            IssueType::Accuracy,
            SubType::Omission,
            Severity::Critical,
            "The translation is empty: nothing of the source was translated.".to_owned(),
            vec![Span::new(0, source.chars().count())],
            Vec::new(),
        )];
    }
    let p = Pair {
        source,
        target,
        src: text::tokenize(source),
        tgt: text::tokenize(target),
        source_chars: source.chars().collect(),
        target_chars: target.chars().collect(),
        options,
    };
    let mut out = Vec::new();
    let untranslated = untranslated::untranslated(&p, &mut out);
    numbers::numbers(&p, &mut out);
    dates::months(&p, &mut out);
    polarity::directions(&p, &mut out);
    polarity::negation(&p, &mut out);
    if !untranslated {
        alignment::alignment(&p, &mut out);
    }
    markup::markup(&p, &mut out);
    glossary::glossary(&p, &mut out);
    conventions::conventions(&p, &mut out);
    out
}
