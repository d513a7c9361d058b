//! Dates: a month name of the source rendered as another month.

use super::{Pair, issue, span};
use crate::lexicon;
use crate::text::{Kind, Token};
use crate::{Issue, IssueType, Severity, Span, SubType};

fn month_of(lang: &str, word: &str) -> Option<usize> {
    lexicon::months(lang)
        .iter()
        .position(|names| names.contains(&word))
}

pub(super) fn months(p: &Pair, out: &mut Vec<Issue>) {
    let (sl, tl) = (&p.options.source_lang, &p.options.target_lang);
    if lexicon::months(sl).is_empty() || lexicon::months(tl).is_empty() {
        return;
    }
    // English "may"/"mar" are ordinary words too: only count a month name next to a number.
    let near_number = |tokens: &[Token], i: usize| {
        tokens[i.saturating_sub(3)..(i + 4).min(tokens.len())]
            .iter()
            .any(|t| t.kind == Kind::Number)
    };
    let collect = |tokens: &[Token], lang: &str| -> Vec<(usize, Span, String)> {
        tokens
            .iter()
            .enumerate()
            .filter(|(_, t)| t.kind == Kind::Word)
            .filter_map(|(i, t)| {
                let m = month_of(lang, &t.lower())?;
                let ambiguous = t.text.chars().count() <= 3 || t.lower() == "may";
                if ambiguous && !near_number(tokens, i) {
                    return None;
                }
                Some((m, span(t), t.text.clone()))
            })
            .collect()
    };
    let s = collect(&p.src, sl);
    let t = collect(&p.tgt, tl);
    let mut used = vec![false; t.len()];
    for (m, sp, word) in &s {
        if let Some(i) = (0..t.len()).find(|&i| !used[i] && t[i].0 == *m) {
            used[i] = true;
            continue;
        }
        if let Some(i) = (0..t.len()).find(|&i| !used[i]) {
            used[i] = true;
            out.push(issue(
                IssueType::Accuracy,
                SubType::Mistranslation,
                Severity::Critical,
                format!(
                    "The date changes: the source says '{word}' but the translation says '{}', another month.",
                    t[i].2
                ),
                vec![*sp],
                vec![t[i].1],
            ));
        }
    }
}
