//! Punctuation rules: double quotation marks (`punctuation.quotation_mark`,
//! `punctuation.quotation_mark_and_apostrophe`), apostrophes
//! (`punctuation.apostrophe`), ellipses (`punctuation.ellipsis`) and the
//! space before `? ! : ;` (`punctuation.spacing_and_punctuation`, the French
//! convention).
//!
//! Quotation marks are recognised in every common form (`"…"`, `“…”`,
//! `„…“`, `«…»`, with or without inner spaces) and whether one opens or closes
//! is read from its neighbours. Curly marks follow the list's language
//! (`„…“` for German, `“…”` otherwise); guillemets are `« … »` with no-break
//! spaces for French, `»…«` for German and `«…»` otherwise. The space put
//! before `? ! : ;` is a no-break space (U+00A0), so the mark never starts a
//! line; `:` and `;` are only touched when a space or the end follows them
//! (times, URLs and entities stay as they are).

use crate::StyleRules;
use crate::numbers::NBSP;
use crate::text::{next_visible, prev_visible};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quotes {
    Curly,
    Straight,
    Guillemets,
}

fn quotes(rules: &StyleRules) -> Option<Quotes> {
    let o = rules
        .option("punctuation", "quotation_mark")
        .or_else(|| rules.option("punctuation", "quotation_mark_and_apostrophe"))?;
    if o.starts_with("use_guillemets") {
        Some(Quotes::Guillemets)
    } else if o.contains("curly_quotation") {
        Some(Quotes::Curly)
    } else if o.contains("straight_quotation") {
        Some(Quotes::Straight)
    } else {
        None
    }
}

fn apostrophe(rules: &StyleRules) -> Option<char> {
    let o = rules
        .option("punctuation", "apostrophe")
        .or_else(|| rules.option("punctuation", "quotation_mark_and_apostrophe"))?;
    if o.ends_with("curly_apostrophes") {
        Some('\u{2019}')
    } else if o.ends_with("straight_apostrophes") || o.ends_with("and_apostrophes") {
        Some('\'')
    } else {
        None
    }
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\u{a0}' | '\u{202f}' | '\u{2009}')
}

fn trim_spaces_end(out: &mut String) {
    while out.chars().last().is_some_and(is_space) {
        out.pop();
    }
}

/// Applies the punctuation rules to plain text.
pub fn apply(text: &str, rules: &StyleRules) -> String {
    let mut s = text.to_owned();
    if let Some(q) = quotes(rules) {
        s = quotation_marks(&s, q, &rules.base());
    }
    if let Some(a) = apostrophe(rules) {
        s = apostrophes(&s, a);
    }
    match rules.option("punctuation", "ellipsis") {
        Some("use_ellipsis_character" | "use_one_ellipsis_character") => {
            s = ellipsis(&s, "\u{2026}");
        }
        Some("use_three_periods" | "use_three_periods_without_spaces") => {
            s = ellipsis(&s, "...");
        }
        Some("use_three_spaced_periods") => s = ellipsis(&s, ". . ."),
        _ => {}
    }
    match rules.option("punctuation", "spacing_and_punctuation") {
        Some("use_regular_space") => s = space_before_marks(&s, Some(NBSP)),
        Some("do_not_use_space") => s = space_before_marks(&s, None),
        _ => {}
    }
    s
}

fn quotation_marks(text: &str, style: Quotes, lang: &str) -> String {
    let (open, close) = match (style, lang) {
        (Quotes::Straight, _) => ("\"", "\""),
        (Quotes::Curly, "de") => ("\u{201e}", "\u{201c}"),
        (Quotes::Curly, _) => ("\u{201c}", "\u{201d}"),
        (Quotes::Guillemets, "fr") => ("\u{ab}\u{a0}", "\u{a0}\u{bb}"),
        (Quotes::Guillemets, "de") => ("\u{bb}", "\u{ab}"),
        (Quotes::Guillemets, _) => ("\u{ab}", "\u{bb}"),
    };
    let french = style == Quotes::Guillemets && lang == "fr";
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut depth = 0usize;
    let mut skip_space = false;
    for (i, &c) in chars.iter().enumerate() {
        if skip_space && is_space(c) {
            continue;
        }
        skip_space = false;
        if !matches!(
            c,
            '"' | '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{ab}' | '\u{bb}'
        ) {
            out.push(c);
            continue;
        }
        let prev = prev_visible(&chars, i);
        let next = next_visible(&chars, i);
        let opens_before = prev.is_none_or(|p| is_space(p) || "([{\u{2014}\u{2013}-/".contains(p));
        let closes_after = next.is_none_or(|n| is_space(n) || n.is_ascii_punctuation());
        let is_open = match c {
            '\u{ab}' | '\u{201e}' => true,
            '\u{bb}' => false,
            _ => match (opens_before, closes_after) {
                (true, false) => true,
                (false, true) => false,
                _ => depth == 0,
            },
        };
        if is_open {
            out.push_str(open);
            depth += 1;
            skip_space = c == '\u{ab}' || french;
        } else {
            if c == '\u{bb}' || french {
                trim_spaces_end(&mut out);
            }
            out.push_str(close);
            depth = depth.saturating_sub(1);
        }
    }
    out
}

fn apostrophes(text: &str, wanted: char) -> String {
    let chars: Vec<char> = text.chars().collect();
    chars
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let between_letters = i > 0
                && chars[i - 1].is_alphabetic()
                && chars.get(i + 1).is_some_and(|n| n.is_alphabetic());
            if matches!(c, '\'' | '\u{2019}') && between_letters {
                wanted
            } else {
                c
            }
        })
        .collect()
}

fn ellipsis(text: &str, wanted: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let run = chars[i..].iter().take_while(|c| **c == '.').count();
        let spaced = chars.len() >= i + 5
            && chars[i..i + 5] == ['.', ' ', '.', ' ', '.']
            && chars.get(i + 5) != Some(&'.');
        if chars[i] == '\u{2026}' {
            out.push_str(wanted);
            i += 1;
        } else if run == 3 {
            out.push_str(wanted);
            i += 3;
        } else if spaced {
            out.push_str(wanted);
            i += 5;
        } else if run > 0 {
            out.extend(&chars[i..i + run]);
            i += run;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

fn space_before_marks(text: &str, space: Option<char>) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        if !matches!(c, '?' | '!' | ':' | ';') {
            out.push(c);
            continue;
        }
        let next = chars.get(i + 1).copied();
        let followed_ok = match c {
            ':' | ';' => next.is_none_or(is_space),
            _ => next.is_none_or(|n| {
                is_space(n) || "?!\"\u{bb}\u{201d}\u{201c})]".contains(n) || n == '.'
            }),
        };
        // The character before the spaces (if any) that precede the mark.
        let before = out.chars().rev().find(|ch| !is_space(*ch));
        let entity = c == ';' && {
            let word: String = out
                .chars()
                .rev()
                .take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '#')
                .collect();
            !word.is_empty() && out[..out.len() - word.len()].ends_with('&')
        };
        let after_word = before.is_some_and(|b| !matches!(b, '?' | '!' | ':' | ';'));
        let directly_after_mark = out.chars().last().is_some_and(|b| matches!(b, '?' | '!'));
        if followed_ok && after_word && !entity && !directly_after_mark {
            trim_spaces_end(&mut out);
            if let Some(sp) = space {
                out.push(sp);
            }
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(lang: &str, pairs: &[(&str, &str)]) -> StyleRules {
        let mut r = StyleRules::new(lang);
        for (rule, opt) in pairs {
            r.set("punctuation", rule, opt);
        }
        r
    }

    #[test]
    fn quotation_marks_per_language() {
        let r = rules("fr", &[("quotation_mark", "use_guillemets")]);
        assert_eq!(
            apply("Il dit \"bonjour\".", &r),
            "Il dit «\u{a0}bonjour\u{a0}»."
        );
        assert_eq!(apply("« déjà »", &r), "«\u{a0}déjà\u{a0}»");
        let r = rules("de", &[("quotation_mark", "use_curly_quotation_marks")]);
        assert_eq!(
            apply("Er sagt \"Hallo\".", &r),
            "Er sagt \u{201e}Hallo\u{201c}."
        );
        let r = rules(
            "en",
            &[("quotation_mark", "use_double_curly_quotation_marks")],
        );
        assert_eq!(
            apply("He said \"hi\" and «bye»", &r),
            "He said \u{201c}hi\u{201d} and \u{201c}bye\u{201d}"
        );
        let r = rules("en", &[("quotation_mark", "use_straight_quotation_marks")]);
        assert_eq!(apply("« oui » and „ja“", &r), "\"oui\" and \"ja\"");
    }

    #[test]
    fn apostrophes_between_letters() {
        let r = rules("en", &[("apostrophe", "use_curly_apostrophes")]);
        assert_eq!(
            apply("It's Anna's 'book'", &r),
            "It\u{2019}s Anna\u{2019}s 'book'"
        );
        let r = rules("fr", &[("apostrophe", "use_straight_apostrophes")]);
        assert_eq!(apply("l\u{2019}homme", &r), "l'homme");
    }

    #[test]
    fn combined_quotes_and_apostrophes() {
        let r = rules(
            "fr",
            &[(
                "quotation_mark_and_apostrophe",
                "use_guillemets_and_curly_apostrophes",
            )],
        );
        assert_eq!(apply("\"l'eau\"", &r), "«\u{a0}l\u{2019}eau\u{a0}»");
    }

    #[test]
    fn ellipses() {
        let r = rules("en", &[("ellipsis", "use_ellipsis_character")]);
        assert_eq!(
            apply("Wait... no. . . and ....", &r),
            "Wait\u{2026} no\u{2026} and ...."
        );
        let r = rules("en", &[("ellipsis", "use_three_periods")]);
        assert_eq!(apply("Wait\u{2026}", &r), "Wait...");
    }

    #[test]
    fn french_spacing_before_marks() {
        let r = rules("fr", &[("spacing_and_punctuation", "use_regular_space")]);
        assert_eq!(
            apply("Quoi? Oui! Note: voir http://x à 10:30; fin !?", &r),
            "Quoi\u{a0}? Oui\u{a0}! Note\u{a0}: voir http://x à 10:30\u{a0}; fin\u{a0}!?"
        );
        assert_eq!(apply("a &amp; b", &r), "a &amp; b");
        let r = rules("fr", &[("spacing_and_punctuation", "do_not_use_space")]);
        assert_eq!(apply("Quoi ? Oui\u{202f}!", &r), "Quoi? Oui!");
    }
}
