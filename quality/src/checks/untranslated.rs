//! Untranslated text: the whole segment, or runs of source words left in the
//! target.

use std::collections::HashSet;

use super::phrases::find_phrase;
use super::{Pair, issue};
use crate::lexicon;
use crate::text::{self, Kind, Token};
use crate::{Issue, IssueType, Severity, Span, SubType};

/// Reports untranslated segments and source words left in the target. Returns
/// whether the whole segment is untranslated (alignment checks are then moot).
pub(super) fn untranslated(p: &Pair, out: &mut Vec<Issue>) -> bool {
    if p.options.source_lang == p.options.target_lang {
        return false;
    }
    let src_words: HashSet<String> = p
        .src
        .iter()
        .filter(|t| t.kind == Kind::Word)
        .map(Token::lower)
        .collect();
    let tgt_words: Vec<&Token> = p.tgt.iter().filter(|t| t.kind == Kind::Word).collect();
    if tgt_words.is_empty() || src_words.is_empty() {
        return false;
    }
    let s_func = lexicon::function_words(&p.options.source_lang);
    let t_func = lexicon::function_words(&p.options.target_lang);
    let source_only = |w: &str| s_func.contains(&w) && !t_func.contains(&w);
    if whole_segment(p, &src_words, &tgt_words, &source_only) {
        out.push(issue(
            IssueType::Accuracy,
            SubType::UntranslatedText,
            Severity::Major,
            format!(
                "The segment was left untranslated: the target is still in the source language ({}).",
                p.options.source_lang.to_uppercase()
            ),
            vec![Span::new(0, p.source.chars().count())],
            vec![Span::new(0, p.target.chars().count())],
        ));
        return true;
    }
    if s_func.is_empty() {
        return false;
    }
    copied_runs(p, &src_words, &source_only, out);
    false
}

/// Whether the target is the source itself (white space and case aside), or
/// mostly its words with a function word only the source language has.
fn whole_segment(
    p: &Pair,
    src_words: &HashSet<String>,
    tgt_words: &[&Token],
    source_only: &dyn Fn(&str) -> bool,
) -> bool {
    let copied = tgt_words
        .iter()
        .filter(|t| src_words.contains(&t.lower()))
        .count();
    let has_source_function_word = tgt_words.iter().any(|t| source_only(&t.lower()));
    let same = normalize(p.source) == normalize(p.target);
    let mostly = tgt_words.len() >= 3 && copied * 10 >= tgt_words.len() * 7;
    (same && tgt_words.len() >= 2) || (mostly && has_source_function_word)
}

/// Reports runs of consecutive copied words holding a function word of the
/// source language.
fn copied_runs(
    p: &Pair,
    src_words: &HashSet<String>,
    source_only: &dyn Fn(&str) -> bool,
    out: &mut Vec<Issue>,
) {
    let tchars = &p.target_chars;
    let mut run: Vec<&Token> = Vec::new();
    let mut prev_end: Option<usize> = None;
    for t in &p.tgt {
        let copied = t.kind == Kind::Word && src_words.contains(&t.lower());
        let adjacent =
            prev_end.is_none_or(|e| tchars[e..t.start].iter().all(|c| c.is_whitespace()));
        if copied && (run.is_empty() || adjacent) {
            run.push(t);
            prev_end = Some(t.end);
        } else {
            flush_run(p, &mut run, source_only, out);
            if copied {
                run.push(t);
                prev_end = Some(t.end);
            } else {
                prev_end = None;
            }
        }
    }
    flush_run(p, &mut run, source_only, out);
}

/// Reports `run` if it holds a function word of the source language only, and
/// empties it.
fn flush_run(
    p: &Pair,
    run: &mut Vec<&Token>,
    source_only: &dyn Fn(&str) -> bool,
    out: &mut Vec<Issue>,
) {
    if run.iter().any(|t| source_only(&t.lower())) {
        let first = run[0];
        let last = run[run.len() - 1];
        let words = run.len();
        let text = text::substring(p.target, first.start, last.end);
        let src_spans: Vec<Span> = find_phrase(
            &p.src,
            &run.iter().map(|t| t.lower()).collect::<Vec<_>>().join(" "),
        );
        out.push(issue(
            IssueType::Accuracy,
            SubType::UntranslatedText,
            if words >= 3 {
                Severity::Major
            } else {
                Severity::Minor
            },
            format!("'{text}' was left in the source language in the translation."),
            src_spans.into_iter().take(1).collect(),
            vec![Span::new(first.start, last.end)],
        ));
    }
    run.clear();
}

fn normalize(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}
