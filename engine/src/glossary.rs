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
use std::ops::Range;

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

/// Puts back around each wrapped span of `output` the whitespace its source
/// had (`source` and `output` wrapped, as sent to and returned by the
/// engines): engines move or drop the blank beside a span they cannot see
/// ("to <https://…>" → "a<https://…>", "%{count} messages" →
/// "%{count}mensajes"). A document filter's placeholder tags (`<x id="1"/>`:
/// a format specifier, a tab, a code) count as spans too ("<x id="1"/> dogs"
/// → "<x id="1"/>els gossos" gets its space back). A span at the very start
/// or end of the output keeps its edge as it is; spans are matched by their
/// content, in order.
pub fn respace(source: &str, output: &str) -> String {
    /// How a filter's placeholder tag starts (see `tolk_formats::inline`).
    const PLACEHOLDER: &str = "<x id=\"";
    let spans_of = |text: &str| -> Vec<(Range<usize>, String)> {
        let mut spans = Vec::new();
        let mut at = 0;
        loop {
            // The next wrapped span, or the next placeholder tag of a
            // document's segment (`<x id="3"/>`, matched by itself).
            let wrapped = text[at..].find(OPEN).map(|i| at + i);
            let placeholder = text[at..].find(PLACEHOLDER).map(|i| at + i);
            let (start, content, mut end) = match (wrapped, placeholder) {
                (Some(w), p) if p.is_none_or(|p| w < p) => {
                    let Some(j) = text[w..].find(CLOSE) else {
                        break;
                    };
                    (
                        w,
                        text[w + OPEN.len()..w + j].to_owned(),
                        w + j + CLOSE.len(),
                    )
                }
                (_, Some(p)) => {
                    let Some(j) = text[p..].find("/>") else {
                        break;
                    };
                    (p, text[p..p + j + 2].to_owned(), p + j + 2)
                }
                _ => break,
            };
            // With the tags right around it (`<a>` and `</a>` of an element
            // holding only the span), not reaching into the previous span.
            let floor = spans
                .last()
                .map_or(0, |(r, _): &(Range<usize>, String)| r.end);
            let mut start = start;
            while start > floor && text[..start].ends_with('>') {
                match text[floor..start].rfind('<') {
                    Some(open) => start = floor + open,
                    None => break,
                }
            }
            while text[end..].starts_with('<') && !text[end..].starts_with(OPEN) {
                match text[end..].find('>') {
                    Some(close) => end += close + 1,
                    None => break,
                }
            }
            spans.push((start..end, content));
            at = end;
        }
        spans
    };
    let source_spans = spans_of(source);
    let output_spans = spans_of(output);
    if source_spans.is_empty() || output_spans.is_empty() {
        return output.to_owned();
    }
    let mut used = vec![false; source_spans.len()];
    let mut out = String::with_capacity(output.len() + 8);
    let mut at = 0;
    for (range, content) in &output_spans {
        let Some(k) = (0..source_spans.len()).find(|&k| !used[k] && source_spans[k].1 == *content)
        else {
            continue;
        };
        used[k] = true;
        let src = &source_spans[k].0;
        let (before, after) = (ws_before(source, src.start), ws_after(source, src.end));
        // The text up to the span, its trailing whitespace replaced unless
        // the span starts the output (or follows the previous span's
        // whitespace, already written).
        let head = &output[at..range.start];
        let trimmed = head.trim_end();
        if output[..range.start].trim().is_empty() || (trimmed.is_empty() && at > 0) {
            out.push_str(head);
        } else {
            out.push_str(trimmed);
            out.push_str(before);
        }
        out.push_str(&output[range.clone()]);
        // Its leading whitespace after the span, unless the span ends the output.
        let rest = &output[range.end..];
        if rest.trim().is_empty() {
            at = range.end;
        } else {
            out.push_str(after);
            at = range.end + ws_after(output, range.end).len();
        }
    }
    out.push_str(&output[at..]);
    out
}

/// The whitespace right before byte `at` of `text`.
fn ws_before(text: &str, at: usize) -> &str {
    let head = &text[..at];
    &head[head.trim_end().len()..]
}

/// The whitespace right after byte `at` of `text`.
fn ws_after(text: &str, at: usize) -> &str {
    let tail = &text[at..];
    &tail[..tail.len() - tail.trim_start().len()]
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
    fn respace_puts_back_the_sources_whitespace_around_spans() {
        let w = |s: &str| format!("{OPEN}{s}{CLOSE}");
        let url = w("http://localhost:5000");
        assert_eq!(
            respace(&format!("Go to {url} now"), &format!("Ve a{url} ahora")),
            format!("Ve a {url} ahora")
        );
        let count = w("%{count}");
        assert_eq!(
            respace(&format!("{count} messages"), &format!("{count}mensajes")),
            format!("{count} mensajes")
        );
        // Not glued where the source had no space; a line break kept.
        assert_eq!(
            respace(
                &format!("Item{count}:\n{url}"),
                &format!("Elemento {count}: {url}")
            ),
            format!("Elemento{count}:\n{url}")
        );
        // At the start and the end, edges stay as the engine left them.
        assert_eq!(
            respace(&format!(" {url} and {count}"), &format!("{url} y{count}")),
            format!("{url} y {count}")
        );
        assert_eq!(respace("no spans", "sin tramos"), "sin tramos");
        // An element holding only the span moves with it.
        assert_eq!(
            respace(
                &format!("to <a>{url}</a> now"),
                &format!("a<a>{url}</a>ahora")
            ),
            format!("a <a>{url}</a> ahora")
        );
        // A filter's placeholder tags keep the source's spacing too.
        assert_eq!(
            respace(
                r#"<x id="1"/> dogs sleep<x id="2"/>"#,
                r#"<x id="1"/>els gossos dormen <x id="2"/>"#
            ),
            r#"<x id="1"/> els gossos dormen<x id="2"/>"#
        );
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
