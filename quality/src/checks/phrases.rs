//! Finding word phrases in a token list, and quoting what was found.

use crate::Span;
use crate::text::{self, Kind, Token};

/// Occurrences of `phrase` (space-separated words, lower case) among the word
/// tokens of `tokens`, as spans over the matched words.
pub(super) fn find_phrase(tokens: &[Token], phrase: &str) -> Vec<Span> {
    let words: Vec<&str> = phrase.split(' ').collect();
    let toks: Vec<&Token> = tokens.iter().filter(|t| t.kind == Kind::Word).collect();
    let lower: Vec<String> = toks.iter().map(|t| t.lower()).collect();
    let mut out = Vec::new();
    if words.is_empty() || toks.len() < words.len() {
        return out;
    }
    for i in 0..=toks.len() - words.len() {
        if words.iter().enumerate().all(|(k, w)| lower[i + k] == *w) {
            out.push(Span::new(toks[i].start, toks[i + words.len() - 1].end));
        }
    }
    out
}

/// Occurrences of any of `phrases`, merged where they overlap.
pub(super) fn find_any(tokens: &[Token], phrases: &[&str]) -> Vec<Span> {
    let mut spans: Vec<Span> = phrases
        .iter()
        .flat_map(|ph| find_phrase(tokens, ph))
        .collect();
    spans.sort();
    // Drop spans inside longer ones ("debajo" inside "por debajo").
    let mut kept: Vec<Span> = Vec::new();
    for s in spans {
        if let Some(last) = kept.last_mut()
            && s.start < last.end
        {
            if s.end > last.end {
                last.end = s.end;
            }
            continue;
        }
        kept.push(s);
    }
    kept
}

/// The texts of `spans`, quoted and separated by commas.
pub(super) fn quote(text: &str, spans: &[Span]) -> String {
    spans
        .iter()
        .map(|s| format!("'{}'", text::substring(text, s.start, s.end)))
        .collect::<Vec<_>>()
        .join(", ")
}
