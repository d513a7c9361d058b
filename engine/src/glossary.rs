//! Applying glossaries to a translation, for every engine (used by
//! `/v2/translate` and by document jobs): before translation
//! each occurrence of a source term is replaced by its target term wrapped in
//! a `<tolk-term>` element, which the request's markup options list as an
//! ignored tag, so that engines pass it through untouched (Apertium as a
//! standalone placeholder, upstream engines via their own ignore-tags
//! option); afterwards the wrapper is removed.
//!
//! Matching is on whole words and case-insensitive; a match that starts with
//! a capital where the source term does not gets a capitalised target term,
//! and a match in capitals (`CAT` for `cat`) a target in capitals. Other
//! inflected forms are not matched (a plural is a word of its own: give it
//! its own entry), since the target's inflection cannot be derived.

use std::collections::HashMap;

/// The element that carries a target term through the engine.
pub const TERM_TAG: &str = "tolk-term";
const OPEN: &str = "<tolk-term>";
const CLOSE: &str = "</tolk-term>";

/// The terms of the glossaries of a request, indexed by their first word.
#[derive(Debug, Default)]
pub struct Terms {
    /// Lower-cased first word (or first character) → (source, target), longest source first.
    by_head: HashMap<String, Vec<(String, String)>>,
}

fn head(s: &str) -> String {
    let word: String = s.chars().take_while(|c| c.is_alphanumeric()).collect();
    if word.is_empty() {
        s.chars()
            .next()
            .map(|c| c.to_lowercase().collect())
            .unwrap_or_default()
    } else {
        word.to_lowercase()
    }
}

impl Terms {
    /// Terms from (source, target) pairs; an earlier pair wins over a later one
    /// with the same source.
    pub fn new(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut by_head: HashMap<String, Vec<(String, String)>> = HashMap::new();
        for (s, t) in pairs {
            let list = by_head.entry(head(&s)).or_default();
            if !list
                .iter()
                .any(|(o, _)| o.to_lowercase() == s.to_lowercase())
            {
                list.push((s, t));
            }
        }
        for list in by_head.values_mut() {
            list.sort_by_key(|(s, _)| std::cmp::Reverse(s.chars().count()));
        }
        Self { by_head }
    }

    /// Whether there is no term.
    pub fn is_empty(&self) -> bool {
        self.by_head.is_empty()
    }

    /// The longest term matching at the start of `rest`: its byte length in
    /// `rest` and the target term to put in.
    fn match_at(&self, rest: &str, markup: bool) -> Option<(usize, String)> {
        let list = self.by_head.get(&head(rest))?;
        for (source, target) in list {
            let source = if markup {
                escape(source)
            } else {
                source.clone()
            };
            if let Some(len) = prefix_len(rest, &source) {
                let after = rest[len..].chars().next();
                if after.is_some_and(char::is_alphanumeric) {
                    continue;
                }
                let capital = rest.chars().next().is_some_and(char::is_uppercase)
                    && !source.chars().next().is_some_and(char::is_uppercase);
                let matched = &rest[..len];
                let shouting = matched.chars().filter(|c| c.is_alphabetic()).count() > 1
                    && !matched.chars().any(char::is_lowercase)
                    && source.chars().any(char::is_lowercase);
                let target = if shouting {
                    target.to_uppercase()
                } else if capital {
                    capitalised(target)
                } else {
                    target.clone()
                };
                return Some((len, target));
            }
        }
        None
    }
}

/// Byte length of the prefix of `text` equal to `term` ignoring case.
fn prefix_len(text: &str, term: &str) -> Option<usize> {
    let mut chars = text.char_indices();
    for tc in term.chars() {
        let (_, c) = chars.next()?;
        if c != tc && !c.to_lowercase().eq(tc.to_lowercase()) {
            return None;
        }
    }
    Some(chars.next().map_or(text.len(), |(i, _)| i))
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let mut done = false;
        for (ent, ch) in [
            ("&amp;", '&'),
            ("&lt;", '<'),
            ("&gt;", '>'),
            ("&quot;", '"'),
            ("&apos;", '\''),
            ("&#39;", '\''),
        ] {
            if let Some(r) = rest.strip_prefix(ent) {
                out.push(ch);
                rest = r;
                done = true;
                break;
            }
        }
        if !done {
            out.push('&');
            rest = &rest[1..];
        }
    }
    out.push_str(rest);
    out
}

/// The text to send to the engine (always as XML): plain text is escaped;
/// with `markup` the text is XML already and only its character data is
/// searched.
pub fn protect(text: &str, terms: &Terms, markup: bool) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut prev: Option<char> = None;
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let Some(c) = rest.chars().next() else { break };
        if markup && c == '<' {
            let end = rest.find('>').map_or(rest.len(), |e| e + 1);
            out.push_str(&rest[..end]);
            i += end;
            prev = None;
            continue;
        }
        if !prev.is_some_and(char::is_alphanumeric)
            && let Some((len, target)) = terms.match_at(rest, markup)
        {
            out.push_str(OPEN);
            out.push_str(&escape(&target));
            out.push_str(CLOSE);
            prev = rest[..len].chars().last();
            i += len;
            continue;
        }
        if markup {
            out.push(c);
        } else {
            out.push_str(&escape(&c.to_string()));
        }
        prev = Some(c);
        i += c.len_utf8();
    }
    out
}

/// The engine's output back in the request's form: wrappers removed, and
/// for plain text the XML escapes undone.
pub fn release(text: &str, markup: bool) -> String {
    let stripped = unglue(text);
    if markup {
        stripped
    } else {
        unescape(&stripped)
    }
}

/// Whether `c` is part of a word written with spaces between words.
fn spaced_word_char(c: char) -> bool {
    c.is_alphanumeric()
        && !matches!(c as u32, 0x3000..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF)
}

/// Removes the wrappers. A term was matched as a whole word, so where an
/// engine glued it to a neighbouring word (Apertium may move the blank
/// beside a placeholder) a space is put back.
fn unglue(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let next = [OPEN, CLOSE]
            .iter()
            .filter_map(|w| rest.find(w).map(|i| (i, *w)))
            .min_by_key(|(i, _)| *i);
        let Some((i, wrapper)) = next else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..i]);
        rest = &rest[i + wrapper.len()..];
        // Across the wrapper: the last character written and the next one.
        if out.chars().last().is_some_and(spaced_word_char)
            && rest.chars().next().is_some_and(spaced_word_char)
        {
            out.push(' ');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms() -> Terms {
        Terms::new([
            ("cat".to_owned(), "michi".to_owned()),
            ("New York".to_owned(), "Nueva York".to_owned()),
            ("new".to_owned(), "nuevo".to_owned()),
            ("a&b".to_owned(), "x<y".to_owned()),
        ])
    }

    #[test]
    fn protects_whole_words_longest_first() {
        let t = terms();
        assert_eq!(
            protect("Cat, cats & a cat in New York.", &t, false),
            "<tolk-term>Michi</tolk-term>, cats &amp; a <tolk-term>michi</tolk-term> in <tolk-term>Nueva York</tolk-term>."
        );
        assert_eq!(protect("Catalog", &t, false), "Catalog");
        assert_eq!(
            protect("A CAT.", &t, false),
            "A <tolk-term>MICHI</tolk-term>."
        );
        assert_eq!(protect("a&b", &t, false), "<tolk-term>x&lt;y</tolk-term>");
    }

    #[test]
    fn markup_skips_tags_and_matches_escaped_terms() {
        let t = terms();
        assert_eq!(
            protect("<p title=\"cat\">my cat a&amp;b</p>", &t, true),
            "<p title=\"cat\">my <tolk-term>michi</tolk-term> <tolk-term>x&lt;y</tolk-term></p>"
        );
    }

    #[test]
    fn release_round_trips() {
        let t = terms();
        let plain = "1 < 2 & cat &amp;";
        assert_eq!(
            release(&protect(plain, &t, false), false),
            "1 < 2 & michi &amp;"
        );
        assert_eq!(
            release("<b>x</b><tolk-term>y</tolk-term>", true),
            "<b>x</b>y"
        );
    }
}
