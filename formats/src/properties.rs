//! Java `.properties` files: every value is a segment (keys, comments and
//! blank lines stay as they are).
//!
//! A file is ISO-8859-1 with `\uXXXX` escapes, or UTF-8 ([`crate::encoding`]
//! tells them apart); a logical line continues over a line ending in an odd
//! number of backslashes; a key ends at the first unescaped `=`, `:` or
//! white space. A value's escapes (`\t`, `\n`, `\uXXXX`, `\=`, …) are read;
//! MessageFormat and printf placeholders (`{0}`, `%s`) are tags; an access
//! key marked with `&` inside a word (Eclipse's `E&xit`) is taken out of the
//! text and marked again in the translation. A
//! translated value replaces the original on one line, escaped again: `\\`,
//! `\n`, `\t`, a leading space, and every character beyond ASCII as `\uXXXX`
//! unless the file is UTF-8 holding such characters as they are.

use std::ops::Range;

use crate::FormatError;
use crate::encoding::{self, Decoded, Form};
use crate::placeholders::{AccessKeys, Value, Values, splice};

/// The file around its values.
#[derive(Debug)]
pub(crate) struct Skeleton {
    source: String,
    form: Form,
    /// Write characters beyond ASCII as `\uXXXX`.
    ascii: bool,
    values: Vec<Value>,
}

/// Reads a properties file; `known` is its encoding when the bytes cannot
/// say it (a piece of a cut ISO-8859-1 file).
pub(crate) fn extract(
    input: &[u8],
    known: Option<&'static encoding_rs::Encoding>,
) -> Result<(Vec<String>, Skeleton), FormatError> {
    let Decoded { text: source, form } = encoding::decode(input, known);
    let ascii = form.encoding != encoding_rs::UTF_8 || source.is_ascii();
    // Eclipse message bundles mark menu and button labels' access keys with
    // `&` (`E&xit`, `&File`); `&&` is a literal ampersand.
    let mut found = Values {
        access_keys: AccessKeys::InWords,
        ..Values::default()
    };
    let mut at = 0;
    while at < source.len() {
        let (range, next) = logical_line(&source, at);
        at = next;
        let line = &source[range.clone()];
        let content = line.trim_start_matches([' ', '\t', '\u{c}']);
        if content.is_empty() || content.starts_with(['#', '!']) {
            continue;
        }
        let offset = range.start + (line.len() - content.len());
        let Some(value_start) = value_start(content) else {
            continue;
        };
        let value_range = offset + value_start..range.end;
        let text = unescape(&source[value_range.clone()]);
        found.text(value_range, &text);
    }
    let (segments, values) = found.finish();
    Ok((
        segments,
        Skeleton {
            source,
            form,
            ascii,
            values,
        },
    ))
}

/// The logical line starting at `at` (without its final line ending) and
/// where the next one starts.
fn logical_line(text: &str, at: usize) -> (Range<usize>, usize) {
    let mut end = at;
    loop {
        let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
        let content_end = if text[..line_end].ends_with('\r') {
            line_end - 1
        } else {
            line_end
        };
        let backslashes = text[end..content_end]
            .chars()
            .rev()
            .take_while(|c| *c == '\\')
            .count();
        let is_comment = end == at && text[at..content_end].trim_start().starts_with(['#', '!']);
        if backslashes % 2 == 1 && line_end < text.len() && !is_comment {
            end = line_end + 1;
            continue;
        }
        return (at..content_end, (line_end + 1).min(text.len()));
    }
}

/// Where a line's value starts (after the key and its separator).
fn value_start(line: &str) -> Option<usize> {
    let mut chars = line.char_indices().peekable();
    let mut key_end = line.len();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '=' | ':' | ' ' | '\t' | '\u{c}' => {
                key_end = i;
                break;
            }
            _ => {}
        }
    }
    let rest = &line[key_end..];
    let after_ws = rest.trim_start_matches([' ', '\t', '\u{c}']);
    let after_sep = after_ws
        .strip_prefix(['=', ':'])
        .unwrap_or(after_ws)
        .trim_start_matches([' ', '\t', '\u{c}']);
    Some(line.len() - after_sep.len())
}

/// A value's text: escapes read, continuations joined.
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => out.push_str(&hex),
                }
            }
            Some('\r' | '\n') => {
                // A continuation: the next line's leading white space goes.
                while chars
                    .peek()
                    .is_some_and(|c| matches!(c, '\n' | ' ' | '\t' | '\u{c}'))
                {
                    chars.next();
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

impl crate::filter::Merge for Skeleton {
    fn merge(&self, source: &[String], translated: &[String]) -> Vec<u8> {
        let out = splice(
            &self.source,
            &self.values,
            source,
            translated,
            |out, text| escape(out, text, self.ascii),
        );
        self.form.encode(&out, false)
    }
}

/// Writes a value escaped for a `.properties` file.
fn escape(out: &mut String, text: &str, ascii: bool) {
    for (i, c) in text.chars().enumerate() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{c}' => out.push_str("\\f"),
            ' ' if i == 0 => out.push_str("\\ "),
            c if ascii && !c.is_ascii() => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04X}"));
                }
            }
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests;
