//! The target language's conventions. White space and punctuation have files of
//! their own ([`super::whitespace`], [`super::punctuation`]); this one runs them
//! all and holds the rest: character encoding, casing and repeated words.

use std::collections::HashSet;

use super::{Pair, issue, minor, punctuation, whitespace};
use crate::text::{Kind, Token};
use crate::{Issue, IssueType, Severity, Span, SubType};

/// Runs the convention checks, in the order their issues are reported.
pub(super) fn conventions(p: &Pair, out: &mut Vec<Issue>) {
    let tl = p.options.target_lang.as_str();
    broken_characters(p, out);
    whitespace::double_spaces(p, out);
    whitespace::leading_trailing(p, out);
    whitespace::space_before_punctuation(p, out);
    if tl == "fr" {
        punctuation::french_spacing(p, out);
    }
    if tl == "es" {
        punctuation::spanish_opening_marks(p, out);
    }
    punctuation::final_punctuation(p, out);
    first_letter_case(p, out);
    repeated_words(p, out);
    punctuation::unbalanced_brackets(p, out);
}

/// Broken characters (mojibake such as `Ã©`, or U+FFFD) not in the source.
fn broken_characters(p: &Pair, out: &mut Vec<Issue>) {
    let (sc, tc) = (&p.source_chars, &p.target_chars);
    let mut bad = Vec::new();
    for (i, w) in tc.windows(2).enumerate() {
        if (w[0] == 'Ã' && !sc.contains(&'Ã')) || (w[0] == 'â' && w[1] == '€') {
            bad.push(Span::new(i, i + 2));
        }
    }
    for (i, c) in tc.iter().enumerate() {
        if *c == '\u{FFFD}' && !sc.contains(c) {
            bad.push(Span::new(i, i + 1));
        }
    }
    if !bad.is_empty() {
        out.push(issue(
            IssueType::Fluency,
            SubType::CharacterEncoding,
            Severity::Major,
            "The translation has broken characters (wrong character encoding, e.g. 'Ã©' for 'é' or '�').".to_owned(),
            Vec::new(),
            bad,
        ));
    }
}

/// The source starts with a capital letter and the translation does not.
fn first_letter_case(p: &Pair, out: &mut Vec<Issue>) {
    let first_tag_free = |tokens: &[Token]| {
        tokens
            .iter()
            .find(|t| t.kind == Kind::Word)
            .and_then(|t| t.text.chars().next().map(|c| (t.start, c)))
    };
    if let (Some((_, s)), Some((ti, t))) = (first_tag_free(&p.src), first_tag_free(&p.tgt))
        && s.is_uppercase()
        && t.is_lowercase()
    {
        out.push(minor(
            SubType::Spelling,
            "The source starts with a capital letter but the translation does not.".to_owned(),
            vec![Span::new(ti, ti + 1)],
        ));
    }
}

/// Repeated words ("el el") that the source does not repeat.
fn repeated_words(p: &Pair, out: &mut Vec<Issue>) {
    let tc = &p.target_chars;
    let words: Vec<&Token> = p.tgt.iter().filter(|t| t.kind == Kind::Word).collect();
    let src_repeats: HashSet<String> = p
        .src
        .windows(2)
        .filter(|w| w[0].kind == Kind::Word && w[0].lower() == w[1].lower())
        .map(|w| w[0].lower())
        .collect();
    for w in words.windows(2) {
        if w[0].lower() == w[1].lower()
            && tc[w[0].end..w[1].start].iter().all(|c| c.is_whitespace())
            && !src_repeats.contains(&w[0].lower())
        {
            out.push(minor(
                SubType::Grammar,
                format!("The word '{}' is repeated.", w[1].text),
                vec![Span::new(w[0].start, w[1].end)],
            ));
        }
    }
}
