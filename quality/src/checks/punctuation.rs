//! Punctuation of the target: French spacing, Spanish opening marks, final
//! punctuation, and balanced brackets and quotes.

use std::collections::HashMap;

use super::{Pair, minor};
use crate::text::{self, Kind};
use crate::{Issue, Span, SubType};

/// French puts a (narrow no-break) space before ';', '!' and '?'.
pub(super) fn french_spacing(p: &Pair, out: &mut Vec<Issue>) {
    let tc = &p.target_chars;
    let mut spans = Vec::new();
    for i in 1..tc.len() {
        if matches!(tc[i], ';' | '!' | '?')
            && !matches!(tc[i - 1], ' ' | '\u{00A0}' | '\u{202F}' | '!' | '?')
        {
            spans.push(Span::new(i - 1, i + 1));
        }
    }
    if !spans.is_empty() {
        out.push(minor(
            SubType::Punctuation,
            "French puts a (narrow no-break) space before ';', '!' and '?'.".to_owned(),
            spans,
        ));
    }
}

/// Spanish opens a question or an exclamation with '¿' or '¡'.
pub(super) fn spanish_opening_marks(p: &Pair, out: &mut Vec<Issue>) {
    let tc = &p.target_chars;
    for s in text::sentences(p.target) {
        let chars = &tc[s.start..s.end];
        for (open, close) in [('¿', '?'), ('¡', '!')] {
            if let Some(pos) = chars.iter().rposition(|&c| c == close)
                && !chars[..pos].contains(&open)
            {
                out.push(minor(
                    SubType::Punctuation,
                    format!(
                        "Spanish opens this sentence with '{open}' when it ends with '{close}'."
                    ),
                    vec![Span::new(s.start, s.end)],
                ));
            }
        }
    }
}

/// The last mark of the text (closing quotes, brackets and tags aside), if any.
fn last_mark(text: &str) -> Option<char> {
    let toks = text::tokenize(text);
    let tag_free = toks
        .iter()
        .filter(|t| t.kind != Kind::Tag)
        .map(|t| t.text.clone())
        .collect::<Vec<_>>()
        .join(" ");
    tag_free
        .chars()
        .rev()
        .find(|c| !c.is_whitespace() && !matches!(c, '"' | '\'' | '”' | '’' | ')' | '»' | '>'))
}

/// Final punctuation lost, or a question turned into a statement (or back).
pub(super) fn final_punctuation(p: &Pair, out: &mut Vec<Issue>) {
    if let (Some(s), Some(t)) = (last_mark(p.source), last_mark(p.target)) {
        let terminal = |c: char| matches!(c, '.' | '!' | '?' | ':' | ';' | '…' | '。');
        let end = p.target_chars.len();
        let tail = Span::new(end.saturating_sub(1), end);
        if terminal(s) && !terminal(t) {
            out.push(minor(
                SubType::Punctuation,
                format!("The source ends with '{s}' but the translation has no final punctuation."),
                vec![tail],
            ));
        } else if terminal(s) && terminal(t) && s != t && (s == '?' || t == '?') {
            out.push(minor(
                SubType::Punctuation,
                format!("The source ends with '{s}' but the translation ends with '{t}'."),
                vec![tail],
            ));
        }
    }
}

/// Brackets and quotes balanced in the source but not in the translation.
pub(super) fn unbalanced_brackets(p: &Pair, out: &mut Vec<Issue>) {
    let (sc, tc) = (&p.source_chars, &p.target_chars);
    let mut bal: HashMap<(char, char), ()> = HashMap::new();
    for (open, close) in [('(', ')'), ('[', ']'), ('«', '»'), ('“', '”')] {
        let count = |c: &[char], x: char| c.iter().filter(|&&y| y == x).count();
        let s_ok = count(sc, open) == count(sc, close);
        let t_ok = count(tc, open) == count(tc, close);
        if s_ok && !t_ok && bal.insert((open, close), ()).is_none() {
            let spans = tc
                .iter()
                .enumerate()
                .filter(|(_, c)| **c == open || **c == close)
                .map(|(i, _)| Span::new(i, i + 1))
                .collect();
            out.push(minor(
                SubType::Punctuation,
                format!("'{open}' and '{close}' are not balanced in the translation."),
                spans,
            ));
        }
    }
}
