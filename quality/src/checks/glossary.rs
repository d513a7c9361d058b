//! Terminology: glossary terms of the source not rendered as the glossary
//! requires.

use super::{Pair, issue};
use crate::text::{self, Kind, Token};
use crate::{Issue, IssueType, Severity, Span, SubType};

/// Whether `term` occurs in `tokens` as words, allowing inflected endings on the
/// last word (`factura` matches `facturas`).
fn find_term(tokens: &[Token], term: &str, inflect: bool) -> Vec<Span> {
    let term_tokens = text::tokenize(term);
    let words: Vec<String> = term_tokens
        .iter()
        .filter(|t| t.kind != Kind::Punct)
        .map(Token::lower)
        .collect();
    let toks: Vec<&Token> = tokens.iter().filter(|t| t.kind != Kind::Punct).collect();
    let mut out = Vec::new();
    if words.is_empty() || toks.len() < words.len() {
        return out;
    }
    for i in 0..=toks.len() - words.len() {
        let ok = words.iter().enumerate().all(|(k, w)| {
            let got = toks[i + k].lower();
            got == *w
                || (inflect
                    && k == words.len() - 1
                    && got.starts_with(w.as_str())
                    && got.chars().count() <= w.chars().count() + 2)
        });
        if ok {
            out.push(Span::new(toks[i].start, toks[i + words.len() - 1].end));
        }
    }
    out
}

pub(super) fn glossary(p: &Pair, out: &mut Vec<Issue>) {
    for (s_term, t_term) in &p.options.glossary {
        if s_term.trim().is_empty() || t_term.trim().is_empty() {
            continue;
        }
        let found = find_term(&p.src, s_term, true);
        if found.is_empty() {
            continue;
        }
        let in_target = find_term(&p.tgt, t_term, true);
        if in_target.len() >= found.len() {
            continue;
        }
        out.push(issue(
            IssueType::Accuracy,
            SubType::Mistranslation,
            Severity::Major,
            format!(
                "The glossary requires '{s_term}' to be translated as '{t_term}', but the translation does not use '{t_term}'{}.",
                if in_target.is_empty() { "" } else { " every time" }
            ),
            found,
            in_target,
        ));
    }
}
