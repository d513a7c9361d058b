//! White space in the target: doubled spaces, leading or trailing white space,
//! and spaces before punctuation marks.

use std::collections::HashSet;

use super::{Pair, minor};
use crate::{Issue, Span, SubType};

/// Doubled spaces not in the source.
pub(super) fn double_spaces(p: &Pair, out: &mut Vec<Issue>) {
    if p.source.contains("  ") {
        return;
    }
    let spans: Vec<Span> = runs_of(&p.target_chars, |c| c == ' ')
        .into_iter()
        .filter(|s| s.end - s.start >= 2)
        .collect();
    if !spans.is_empty() {
        out.push(minor(
            SubType::Punctuation,
            "The translation has double spaces.".to_owned(),
            spans,
        ));
    }
}

/// Leading/trailing white space that differs.
pub(super) fn leading_trailing(p: &Pair, out: &mut Vec<Issue>) {
    let (sc, tc) = (&p.source_chars, &p.target_chars);
    let lead = |c: &[char]| c.iter().take_while(|c| c.is_whitespace()).count();
    let trail = |c: &[char]| c.iter().rev().take_while(|c| c.is_whitespace()).count();
    if (lead(sc) > 0) != (lead(tc) > 0) || (trail(sc) > 0) != (trail(tc) > 0) {
        let mut spans = Vec::new();
        if lead(tc) > 0 {
            spans.push(Span::new(0, lead(tc)));
        }
        if trail(tc) > 0 {
            spans.push(Span::new(tc.len() - trail(tc), tc.len()));
        }
        out.push(minor(
            SubType::Punctuation,
            "Leading or trailing white space differs from the source.".to_owned(),
            spans,
        ));
    }
}

/// Space before punctuation (French puts one before ; : ! ?), unless the source
/// has one before the same mark.
pub(super) fn space_before_punctuation(p: &Pair, out: &mut Vec<Issue>) {
    let (sc, tc) = (&p.source_chars, &p.target_chars);
    let tl = p.options.target_lang.as_str();
    let spaced_in_source: HashSet<char> = sc
        .windows(2)
        .filter(|w| w[0] == ' ')
        .map(|w| w[1])
        .collect();
    let mut spans = Vec::new();
    for i in 1..tc.len() {
        let c = tc[i];
        let needs_space_fr = matches!(c, ';' | ':' | '!' | '?' | '»');
        let mark = matches!(c, ',' | '.' | ';' | ':' | '!' | '?');
        if mark && tc[i - 1] == ' ' && !(tl == "fr" && needs_space_fr) {
            let before_in_source = spaced_in_source.contains(&c);
            if !before_in_source {
                spans.push(Span::new(i - 1, i + 1));
            }
        }
    }
    if !spans.is_empty() {
        out.push(minor(
            SubType::Punctuation,
            "There is a space before a punctuation mark, which the target language does not use."
                .to_owned(),
            spans,
        ));
    }
}

fn runs_of(chars: &[char], f: impl Fn(char) -> bool) -> Vec<Span> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if f(chars[i]) {
            let s = i;
            while i < chars.len() && f(chars[i]) {
                i += 1;
            }
            out.push(Span::new(s, i));
        } else {
            i += 1;
        }
    }
    out
}
