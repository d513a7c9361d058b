//! Inline tags and placeholders: lost, added, badly nested or reordered.

use super::{Pair, issue, match_in_order, span};
use crate::text::{Kind, Token};
use crate::{Issue, IssueType, Severity, SubType};

/// Identity of a tag or placeholder: `<b>`, `</b>`, `<br/>` (attributes dropped), `{name}`.
fn markup_key(t: &Token) -> String {
    if t.kind != Kind::Tag {
        return t.text.clone();
    }
    let inner = t.text.trim_start_matches('<').trim_end_matches('>');
    let closing = inner.starts_with('/');
    let self_closing = inner.ends_with('/');
    let name: String = inner
        .trim_start_matches('/')
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '/')
        .collect::<String>()
        .to_lowercase();
    format!(
        "<{}{}{}>",
        if closing { "/" } else { "" },
        name,
        if self_closing { "/" } else { "" }
    )
}

fn well_formed(keys: &[String]) -> bool {
    let mut stack: Vec<&str> = Vec::new();
    for k in keys {
        if !k.starts_with('<') || k.ends_with("/>") || k.starts_with("<!") {
            continue;
        }
        if let Some(name) = k.strip_prefix("</") {
            let name = name.trim_end_matches('>');
            if stack.pop() != Some(name) {
                return false;
            }
        } else {
            stack.push(k.trim_start_matches('<').trim_end_matches('>'));
        }
    }
    stack.is_empty()
}

pub(super) fn markup(p: &Pair, out: &mut Vec<Issue>) {
    let is_markup = |t: &&Token| matches!(t.kind, Kind::Tag | Kind::Placeholder);
    let src: Vec<&Token> = p.src.iter().filter(is_markup).collect();
    let tgt: Vec<&Token> = p.tgt.iter().filter(is_markup).collect();
    if src.is_empty() && tgt.is_empty() {
        return;
    }
    let describe = |t: &Token| {
        if t.kind == Kind::Tag {
            format!("inline tag '{}'", t.text)
        } else {
            format!("placeholder '{}'", t.text)
        }
    };
    let (used, lost) = match_in_order(&src, &tgt, markup_key);
    for s in &lost {
        out.push(issue(
            IssueType::Accuracy,
            SubType::Omission,
            Severity::Major,
            format!(
                "The {} of the source is missing from the translation; formatting or variable content will be lost.",
                describe(s)
            ),
            vec![span(s)],
            Vec::new(),
        ));
    }
    for (t, _) in tgt.iter().zip(&used).filter(|(_, u)| !**u) {
        out.push(issue(
            IssueType::Accuracy,
            SubType::Addition,
            Severity::Major,
            format!(
                "The translation has an {} that the source does not have.",
                describe(t)
            ),
            Vec::new(),
            vec![span(t)],
        ));
    }
    if !lost.is_empty() || used.iter().any(|u| !u) {
        return;
    }
    nesting_and_order(&src, &tgt, out);
}

/// With the same tags and placeholders on both sides: tags badly nested in the
/// translation, or placeholders in another order (tags may legitimately move
/// with word order).
fn nesting_and_order(src: &[&Token], tgt: &[&Token], out: &mut Vec<Issue>) {
    let sk: Vec<String> = src.iter().map(|t| markup_key(t)).collect();
    let tk: Vec<String> = tgt.iter().map(|t| markup_key(t)).collect();
    if well_formed(&sk) && !well_formed(&tk) {
        out.push(inconsistency(
            Severity::Major,
            "The inline tags of the translation are not properly nested (a tag closes before the one opened inside it); the formatting will break.",
            Kind::Tag,
            src,
            tgt,
        ));
    } else if sk != tk {
        let sp: Vec<&String> = sk.iter().filter(|k| !k.starts_with('<')).collect();
        let tp: Vec<&String> = tk.iter().filter(|k| !k.starts_with('<')).collect();
        if sp != tp {
            out.push(inconsistency(
                Severity::Minor,
                "The placeholders appear in a different order in the translation; check that each one still stands where its value belongs.",
                Kind::Placeholder,
                src,
                tgt,
            ));
        }
    }
}

/// An inconsistency over the tokens of `kind` on both sides.
fn inconsistency(
    severity: Severity,
    explanation: &str,
    kind: Kind,
    src: &[&Token],
    tgt: &[&Token],
) -> Issue {
    let of_kind = |tokens: &[&Token]| {
        tokens
            .iter()
            .filter(|t| t.kind == kind)
            .map(|t| span(t))
            .collect()
    };
    issue(
        IssueType::Fluency,
        SubType::Inconsistency,
        severity,
        explanation.to_owned(),
        of_kind(src),
        of_kind(tgt),
    )
}
