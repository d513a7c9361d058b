//! Polarity: direction words that flip (`5% above` → `5 % por debajo`) and
//! negation lost or added.

use super::numbers::is_unit;
use super::phrases::{find_any, quote};
use super::{Pair, issue};
use crate::lexicon;
use crate::text::{Kind, Token};
use crate::{Issue, IssueType, Severity, Span, SubType};

pub(super) fn directions(p: &Pair, out: &mut Vec<Issue>) {
    let (s_up, s_down) = lexicon::directions(&p.options.source_lang);
    let (t_up, t_down) = lexicon::directions(&p.options.target_lang);
    if s_up.is_empty() || t_up.is_empty() {
        return;
    }
    let su = find_any(&p.src, s_up);
    let sd = find_any(&p.src, s_down);
    let tu = find_any(&p.tgt, t_up);
    let td = find_any(&p.tgt, t_down);
    let flipped = |s_has: &[Span], s_not: &[Span], t_has: &[Span], t_not: &[Span]| {
        !s_has.is_empty() && s_not.is_empty() && !t_has.is_empty() && t_not.is_empty()
    };
    let (src_spans, tgt_spans, from, to) = if flipped(&su, &sd, &td, &tu) {
        (su, td, "up/above/more", "down/below/less")
    } else if flipped(&sd, &su, &tu, &td) {
        (sd, tu, "down/below/less", "up/above/more")
    } else {
        return;
    };
    let has_number = p.src.iter().any(|t| t.kind == Kind::Number);
    let src_spans: Vec<Span> = src_spans
        .into_iter()
        .map(|s| with_preceding_number(&p.src, s))
        .collect();
    let tgt_spans: Vec<Span> = tgt_spans
        .into_iter()
        .map(|s| with_preceding_number(&p.tgt, s))
        .collect();
    out.push(issue(
        IssueType::Accuracy,
        SubType::Mistranslation,
        if has_number {
            Severity::Critical
        } else {
            Severity::Major
        },
        format!(
            "The direction is reversed: the source says {} ({from}) but the translation says {} ({to}). This inverts the meaning{}.",
            quote(p.source, &src_spans),
            quote(p.target, &tgt_spans),
            if has_number { " of the figures" } else { "" }
        ),
        src_spans,
        tgt_spans,
    ));
}

pub(super) fn negation(p: &Pair, out: &mut Vec<Issue>) {
    let sn = lexicon::negations(&p.options.source_lang);
    let tn = lexicon::negations(&p.options.target_lang);
    if sn.is_empty() || tn.is_empty() {
        return;
    }
    let s = find_any(&p.src, sn);
    let t = find_any(&p.tgt, tn);
    if !s.is_empty() && t.is_empty() {
        out.push(issue(
            IssueType::Accuracy,
            SubType::Mistranslation,
            Severity::Major,
            format!(
                "The source is negative ({}) but the translation has no negation: it may say the opposite.",
                quote(p.source, &s)
            ),
            s,
            Vec::new(),
        ));
    } else if s.is_empty() && !t.is_empty() {
        out.push(issue(
            IssueType::Accuracy,
            SubType::Mistranslation,
            Severity::Minor,
            format!(
                "The translation has a negation ({}) that the source does not have; check that the meaning is not reversed.",
                quote(p.target, &t)
            ),
            Vec::new(),
            t,
        ));
    }
}

/// Extends a span to a number (and its unit) right before it: "5% above".
fn with_preceding_number(tokens: &[Token], sp: Span) -> Span {
    let Ok(i) = tokens.binary_search_by_key(&sp.start, |t| t.start) else {
        return sp;
    };
    let mut start = sp.start;
    let mut j = i;
    while j > 0 && i - j < 2 {
        let prev = &tokens[j - 1];
        if prev.kind == Kind::Number || (prev.kind == Kind::Punct && is_unit(&prev.text)) {
            start = prev.start;
            j -= 1;
        } else {
            break;
        }
    }
    Span::new(start, sp.end)
}
