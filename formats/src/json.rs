//! JSON (`.json`), as localization files use it: every string **value** is a
//! segment (keys never are); the file's order, spacing and escapes stay as
//! they were, since translations are spliced into the original text.
//!
//! Inside a value, placeholders stay verbatim as tags of the segment:
//! `{name}`, `{0}`, `{{name}}`, `${name}`, printf-style `%s`, `%1$d`, `%@`.
//! ICU plural and select messages (`{count, plural, one {# file} other {#
//! files}}`) keep their skeleton — the argument, the keyword, each branch
//! selector, the braces and `#` — as tags, so only the branch text is
//! translated. A brace group holding several words (`{Hello world}`) is
//! text, translated. Values that are codes rather than text (one token with
//! digits or `_ . / : @ #`: `a1b2`, `btn_ok`, URLs) are left alone.

use std::ops::Range;

use crate::FormatError;
use crate::encoding::{self, Decoded, Form};
use crate::inline::{self, SegmentBuilder};
use crate::placeholders::{Value, Values, message, splice};

/// The file around its string values.
#[derive(Debug)]
pub(crate) struct Skeleton {
    source: String,
    form: Form,
    /// The translated values: the range of each string's content (between
    /// its quotes), its segment and its placeholders' markup (tag `id` is
    /// `tags[id - 1]`).
    values: Vec<Value>,
}

/// `translate_placeholders`: identifier-shaped placeholders are text, not
/// tags (`json-placeholders:translate`); ICU skeletons stay tags.
pub(crate) fn extract(
    input: &[u8],
    translate_placeholders: bool,
) -> Result<(Vec<String>, Skeleton), FormatError> {
    let Decoded { text: source, form } = encoding::decode(input, None);
    let body = source.trim_start_matches('\u{feff}');
    serde_json::from_str::<serde::de::IgnoredAny>(body)
        .map_err(|e| FormatError::corrupt(format!("The file is not valid JSON: {e}")))?;
    let mut found = Values::default();
    for range in value_strings(&source) {
        let raw = &source[range.start - 1..range.end + 1];
        let Ok(text) = serde_json::from_str::<String>(raw) else {
            continue;
        };
        if !crate::placeholders::reads_as_text(&text) {
            continue;
        }
        let mut builder = SegmentBuilder::new();
        let mut tags = Vec::new();
        message(&text, &mut builder, &mut tags, false, &|rest, plural| {
            placeholder_len(rest, plural, translate_placeholders)
        });
        let segment = builder.finish();
        if inline::plain_text(&segment).trim().is_empty()
            || !inline::plain_text(&segment)
                .chars()
                .any(char::is_alphabetic)
        {
            continue;
        }
        found.add(range, segment, tags);
    }
    let (segments, values) = found.finish();
    Ok((
        segments,
        Skeleton {
            source,
            form,
            values,
        },
    ))
}

/// The content ranges (inside the quotes) of the strings that are values,
/// in order.
fn value_strings(text: &str) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    // Per open container: (is an object, a key comes next).
    let mut stack: Vec<(bool, bool)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => stack.push((true, true)),
            b'[' => stack.push((false, false)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => {
                if let Some((true, key_next)) = stack.last_mut() {
                    *key_next = true;
                }
            }
            b':' => {
                if let Some((_, key_next)) = stack.last_mut() {
                    *key_next = false;
                }
            }
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                if !matches!(stack.last(), Some((true, true))) {
                    out.push(start..j.min(bytes.len()));
                }
                i = j;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The length of a placeholder at the start of `text`.
fn placeholder_len(text: &str, plural: bool, translate: bool) -> Option<usize> {
    match text.as_bytes().first()? {
        b'#' if plural => Some(1),
        _ if translate => None,
        _ => crate::placeholders::at_start(text),
    }
}

impl crate::filter::Merge for Skeleton {
    fn merge(&self, source: &[String], translated: &[String]) -> Vec<u8> {
        let out = splice(&self.source, &self.values, source, translated, write_string);
        self.form.encode(&out, false)
    }
}

/// Writes `text` as the content of a JSON string.
fn write_string(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests;
