//! Repairs of what Apertium introduces where the source shows it is an
//! artefact ("elit at odio" → "elit En odio", "sit" → "Sienta"); the
//! pipeline runs them on what Apertium translated
//! ([`tolk_engine::TranslateResponse::by_apertium`]):
//!
//! * a run of spaces in the translation is made one space unless the source
//!   has as many runs after the same kind of character (two spaces after a
//!   full stop, an indent at the start of a line, a gap between words):
//!   Apertium leaves two where it drops a word ("Vale,  somos"), and a source
//!   with runs elsewhere does not make those right;
//! * into languages that write common words in lower case mid-sentence
//!   ([`LOWER_CASE_MID_SENTENCE`]: the Romance languages, where language
//!   names, days and months are lower case too), a capitalised word that
//!   does not start a sentence is lower-cased when the source has no such
//!   word at all (a source with names or acronyms keeps every capital).
//!
//! Only words of letters count (a token holding `@`, `/`, digits… is never
//! touched); with markup only the character data is looked at, so glossary
//! terms and protected spans, still wrapped when this runs, stay verbatim,
//! and a word right after a tag counts as starting a sentence (a tag may
//! close a block).

use crate::protect::pieces;

/// Targets (lower-case base codes) whose mid-sentence capitals are names.
pub const LOWER_CASE_MID_SENTENCE: &[&str] =
    &["es", "ca", "gl", "pt", "it", "fr", "ro", "oc", "ast", "an"];

/// `output`, the translation of `source` into `target`, repaired; each is
/// XML when its flag says so.
pub fn repair(
    source: &str,
    source_markup: bool,
    output: String,
    output_markup: bool,
    target: &str,
) -> String {
    let source_text = character_data(source, source_markup);
    let mut kept_runs = runs_of_spaces(&source_text);
    let collapse = output.contains("  ");
    let target = tolk_style::language::base(target);
    let lower = LOWER_CASE_MID_SENTENCE.contains(&target.as_str())
        && !has_mid_sentence_capital(&source_text);
    if !collapse && !lower {
        return output;
    }
    let mut out = String::with_capacity(output.len());
    let mut at_start = true;
    let mut before: Option<char> = None;
    let mut each = |text: &str, at_start: &mut bool, out: &mut String| {
        let text = if collapse {
            collapse_spaces(text, &mut kept_runs, &mut before)
        } else {
            text.to_owned()
        };
        if lower {
            lower_mid_sentence(&text, at_start, out);
        } else {
            out.push_str(&text);
        }
    };
    if output_markup {
        for (piece, is_text) in pieces(&output) {
            if is_text {
                each(piece, &mut at_start, &mut out);
            } else {
                out.push_str(piece);
                at_start = true;
            }
        }
    } else {
        each(&output, &mut at_start, &mut out);
    }
    out
}

/// The text of `s` outside tags (all of it without markup).
fn character_data(s: &str, markup: bool) -> String {
    if markup {
        pieces(s).filter(|(_, t)| *t).map(|(p, _)| p).collect()
    } else {
        s.to_owned()
    }
}

/// What a run of spaces follows: the start of a line, a letter or digit, the
/// end of a sentence, or other punctuation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum After {
    LineStart,
    Word,
    SentenceEnd,
    Other,
}

impl After {
    fn of(c: Option<char>) -> Self {
        match c {
            None | Some('\n') => Self::LineStart,
            Some(c) if c.is_alphanumeric() => Self::Word,
            Some(c) if ENDS.contains(&c) || AFTER_END.contains(&c) => Self::SentenceEnd,
            Some(_) => Self::Other,
        }
    }
}

/// How many runs of two or more spaces `text` has after each kind of
/// character.
fn runs_of_spaces(text: &str) -> Vec<(After, usize)> {
    let mut runs: Vec<(After, usize)> = Vec::new();
    let mut before: Option<char> = None;
    let mut spaces = 0;
    let count = |after: After, runs: &mut Vec<(After, usize)>| match runs
        .iter_mut()
        .find(|(a, _)| *a == after)
    {
        Some((_, n)) => *n += 1,
        None => runs.push((after, 1)),
    };
    for c in text.chars() {
        if c == ' ' {
            spaces += 1;
            continue;
        }
        if spaces >= 2 {
            count(After::of(before), &mut runs);
        }
        spaces = 0;
        before = Some(c);
    }
    if spaces >= 2 {
        count(After::of(before), &mut runs);
    }
    runs
}

/// `s` with each run of spaces made one space, except as many runs after
/// each kind of character as the source has ([`runs_of_spaces`], counted
/// down in `kept`); `before` is the character before `s` (carried from one
/// piece of character data to the next).
fn collapse_spaces(s: &str, kept: &mut [(After, usize)], before: &mut Option<char>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut spaces = 0;
    let mut flush = |spaces: &mut usize, before: Option<char>, out: &mut String| {
        let mut n = *spaces;
        if n >= 2 {
            match kept
                .iter_mut()
                .find(|(a, k)| *a == After::of(before) && *k > 0)
            {
                Some((_, k)) => *k -= 1,
                None => n = 1,
            }
        }
        out.extend(std::iter::repeat_n(' ', n));
        *spaces = 0;
    };
    for c in s.chars() {
        if c == ' ' {
            spaces += 1;
            continue;
        }
        flush(&mut spaces, *before, &mut out);
        out.push(c);
        *before = Some(c);
    }
    // A run at the end of a piece is decided here, with what came before it.
    flush(&mut spaces, *before, &mut out);
    out
}

/// Punctuation that may open a word (`¿Qué`, `«Hola`, `(Nota`).
const OPENERS: &[char] = &['¿', '¡', '«', '"', '\'', '(', '[', '“', '‘'];
/// Punctuation that may close a word.
const CLOSERS: &[char] = &[
    '.', ',', ';', ':', '!', '?', '»', '"', '\'', ')', ']', '”', '’', '…',
];
/// What ends a sentence: the next word starts one.
const ENDS: &[char] = &['.', '!', '?', ':', '…'];
/// What may follow the end of a sentence in the same token (`."`, `?»`).
const AFTER_END: &[char] = &['"', '\'', ')', ']', '»', '”', '’'];

/// Whether the next word after `token` starts a sentence.
fn ends_sentence(token: &str) -> bool {
    token.trim_end_matches(AFTER_END).ends_with(ENDS)
}

/// The letters of a word token (punctuation around it taken off), if it is
/// only letters.
fn word(token: &str) -> Option<&str> {
    let w = token.trim_start_matches(OPENERS).trim_end_matches(CLOSERS);
    (!w.is_empty() && w.chars().all(char::is_alphabetic)).then_some(w)
}

/// Whether a word is written with a capital and then lower case (`En`).
fn capitalised(w: &str) -> bool {
    let mut chars = w.chars();
    chars.next().is_some_and(char::is_uppercase) && chars.clone().next().is_some()
}

/// Whether the text has a word with a capital that does not start a
/// sentence (a name, an acronym).
fn has_mid_sentence_capital(text: &str) -> bool {
    let mut at_start = true;
    for token in text.split_whitespace() {
        if let Some(w) = word(token)
            && !at_start
            && w.chars().next().is_some_and(char::is_uppercase)
        {
            return true;
        }
        at_start = ends_sentence(token);
    }
    false
}

/// Appends `text` to `out` with the capitalised words that do not start a
/// sentence lower-cased; `at_start` carries over from the text before.
fn lower_mid_sentence(text: &str, at_start: &mut bool, out: &mut String) {
    let mut rest = text;
    while !rest.is_empty() {
        let space = rest.len() - rest.trim_start().len();
        let (gap, tail) = rest.split_at(space);
        out.push_str(gap);
        if gap.contains('\n') {
            *at_start = true;
        }
        let end = tail.find(char::is_whitespace).unwrap_or(tail.len());
        let (token, after) = tail.split_at(end);
        rest = after;
        if token.is_empty() {
            continue;
        }
        match word(token) {
            Some(w)
                if !*at_start && capitalised(w) && w.chars().skip(1).all(char::is_lowercase) =>
            {
                let start = token.len() - token.trim_start_matches(OPENERS).len();
                let (lead, body) = token.split_at(start);
                let mut chars = body.chars();
                out.push_str(lead);
                if let Some(first) = chars.next() {
                    out.extend(first.to_lowercase());
                }
                out.push_str(chars.as_str());
            }
            _ => out.push_str(token),
        }
        *at_start = ends_sentence(token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(source: &str, output: &str, target: &str) -> String {
        repair(source, false, output.to_owned(), false, target)
    }

    #[test]
    fn stray_capitals_of_the_engine_are_lowered() {
        assert_eq!(
            plain(
                "Lorem ipsum dolor sit amet, elit at odio.",
                "Lorem ipsum dolor Sienta amet, elit En odio.",
                "ES"
            ),
            "Lorem ipsum dolor sienta amet, elit en odio."
        );
        // Sentence starts, after ¿ and quotes too, keep their capital.
        assert_eq!(
            plain(
                "Nam at odio. Is it? \"Yes\", he said.",
                "Nam En odio. ¿Es él? «Sí», Dijo.",
                "es"
            ),
            "Nam en odio. ¿Es él? «Sí», dijo."
        );
    }

    #[test]
    fn capitals_stay_where_the_source_has_names_or_the_target_wants_them() {
        let out = "Conocí a Juan en Madrid.";
        assert_eq!(plain("I met John in Madrid.", out, "ES"), out);
        // German nouns, English language names.
        assert_eq!(
            plain("la casa grande", "das große Haus", "DE"),
            "das große Haus"
        );
        assert_eq!(
            plain("hablo inglés", "I speak English", "EN-US"),
            "I speak English"
        );
        // Tokens that are not plain words (paths, addresses) are never touched.
        let out = "ver /Users/Ana y ana@Example.org";
        assert_eq!(plain("see /Users/Ana and ana@Example.org", out, "ES"), out);
    }

    #[test]
    fn doubled_spaces_are_made_one_unless_the_source_has_them() {
        assert_eq!(
            plain("The house is big.", "La  casa es  grande.", "ES"),
            "La casa es grande."
        );
        assert_eq!(plain("The  house.", "La  casa.", "ES"), "La  casa.");
        // Run by run: two spaces after a full stop in the source do not keep
        // the run Apertium left where it dropped a word.
        assert_eq!(
            plain(
                "Okay, so we are here.  Next one.",
                "Vale,  somos aquí.  Luego uno.",
                "ES"
            ),
            "Vale, somos aquí.  Luego uno."
        );
        // An indent at the start of a line stays.
        assert_eq!(plain("a b\n    c d", "x  y\n    z w", "ES"), "x y\n    z w");
    }

    #[test]
    fn with_markup_only_character_data_changes() {
        assert_eq!(
            repair(
                "<p>elit at odio</p><p>I have <b>a dog</b></p>",
                true,
                "<p class=\"A  B\">elit En  odio</p><p>Tengo <b>Un perro</b></p>".to_owned(),
                true,
                "es"
            ),
            // After a tag a capital may start a block: it stays.
            "<p class=\"A  B\">elit en odio</p><p>Tengo <b>Un perro</b></p>"
        );
    }
}
