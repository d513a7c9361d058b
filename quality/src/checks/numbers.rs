//! Numbers, their units and currencies: every number of the source must come
//! over with the same digits, and the currency must not change.

use std::collections::HashSet;

use super::{Pair, issue, match_in_order, span};
use crate::text::{self, Kind, Token};
use crate::{Issue, IssueType, Severity, Span, SubType};

/// Digits of a number token without separators: `1,000.50` and `1.000,50` → `100050`.
fn digits(t: &Token) -> String {
    t.text.chars().filter(char::is_ascii_digit).collect()
}

pub(super) fn numbers(p: &Pair, out: &mut Vec<Issue>) {
    let src: Vec<&Token> = p.src.iter().filter(|t| t.kind == Kind::Number).collect();
    let tgt: Vec<&Token> = p.tgt.iter().filter(|t| t.kind == Kind::Number).collect();
    let (used, missing) = match_in_order(&src, &tgt, digits);
    let mut extra: Vec<&Token> = tgt
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(t, _)| *t)
        .collect();
    let pairs = missing.len().min(extra.len());
    for (s, t) in missing.iter().zip(extra.iter()).take(pairs) {
        out.push(issue(
            IssueType::Accuracy,
            SubType::Mistranslation,
            Severity::Critical,
            format!(
                "The source has the number '{}' but the translation has '{}' instead. Numbers must be carried over exactly.",
                with_unit(p.source, &p.src, s),
                with_unit(p.target, &p.tgt, t)
            ),
            vec![unit_span(&p.src, s)],
            vec![unit_span(&p.tgt, t)],
        ));
    }
    for s in missing.iter().skip(pairs) {
        out.push(issue(
            IssueType::Accuracy,
            SubType::Omission,
            Severity::Major,
            format!(
                "The number '{}' of the source does not appear in the translation.",
                with_unit(p.source, &p.src, s)
            ),
            vec![unit_span(&p.src, s)],
            Vec::new(),
        ));
    }
    extra.drain(..pairs);
    for t in extra {
        out.push(issue(
            IssueType::Accuracy,
            SubType::Addition,
            Severity::Major,
            format!(
                "The translation has the number '{}', which is not in the source.",
                with_unit(p.target, &p.tgt, t)
            ),
            Vec::new(),
            vec![unit_span(&p.tgt, t)],
        ));
    }
    currencies(p, out);
}

/// The number token extended by a directly attached `%`, currency sign or unit sign.
fn unit_span(tokens: &[Token], t: &Token) -> Span {
    let mut sp = span(t);
    if let Ok(i) = tokens.binary_search_by_key(&t.start, |x| x.start) {
        if let Some(next) = tokens.get(i + 1)
            && next.kind == Kind::Punct
            && is_unit(&next.text)
            && next.start <= sp.end + 1
        {
            sp.end = next.end;
        }
        if i > 0 {
            let prev = &tokens[i - 1];
            if prev.kind == Kind::Punct && is_unit(&prev.text) && prev.end + 1 >= sp.start {
                sp.start = prev.start;
            }
        }
    }
    sp
}

pub(super) fn is_unit(s: &str) -> bool {
    matches!(s, "%" | "€" | "$" | "£" | "¥" | "‰")
}

fn with_unit(text: &str, tokens: &[Token], t: &Token) -> String {
    let sp = unit_span(tokens, t);
    text::substring(text, sp.start, sp.end)
}

fn currencies(p: &Pair, out: &mut Vec<Issue>) {
    const SIGNS: [(&str, &str); 6] = [
        ("€", "EUR"),
        ("$", "USD"),
        ("£", "GBP"),
        ("¥", "JPY"),
        ("EUR", "EUR"),
        ("USD", "USD"),
    ];
    let find = |tokens: &[Token]| -> Vec<(String, Span)> {
        tokens
            .iter()
            .filter_map(|t| {
                SIGNS
                    .iter()
                    .find(|(s, _)| t.text == *s)
                    .map(|(_, code)| ((*code).to_owned(), span(t)))
            })
            .collect()
    };
    let s = find(&p.src);
    let t = find(&p.tgt);
    let s_codes: HashSet<&str> = s.iter().map(|(c, _)| c.as_str()).collect();
    let t_codes: HashSet<&str> = t.iter().map(|(c, _)| c.as_str()).collect();
    if s_codes.is_empty() || t_codes.is_empty() || s_codes == t_codes {
        return;
    }
    let gone: Vec<&(String, Span)> = s
        .iter()
        .filter(|(c, _)| !t_codes.contains(c.as_str()))
        .collect();
    let new: Vec<&(String, Span)> = t
        .iter()
        .filter(|(c, _)| !s_codes.contains(c.as_str()))
        .collect();
    if !gone.is_empty() && !new.is_empty() {
        out.push(issue(
            IssueType::Accuracy,
            SubType::Mistranslation,
            Severity::Critical,
            format!(
                "The currency changes: the source is in {} but the translation is in {}.",
                gone[0].0, new[0].0
            ),
            gone.iter().map(|(_, s)| *s).collect(),
            new.iter().map(|(_, s)| *s).collect(),
        ));
    }
}
