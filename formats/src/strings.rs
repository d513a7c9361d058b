//! Apple `.strings` files (`"key" = "value";`): every value is a segment;
//! keys, `/* */` and `//` comments and spacing stay as they are.
//!
//! UTF-8, or UTF-16 with a byte-order mark as Xcode writes it (kept on
//! output, [`crate::encoding`]). A value's escapes (`\"`, `\\`, `\n`, `\t`,
//! `\r`, `\Uxxxx`) are read and written back; format specifiers (`%@`,
//! `%1$@`, `%d`) and other placeholders are tags. A file that does not follow
//! the syntax is refused, naming the line.

use std::ops::Range;

use crate::FormatError;
use crate::encoding::{self, Decoded, Form};
use crate::placeholders::{Value, Values, splice};

/// The file around its values.
#[derive(Debug)]
pub(crate) struct Skeleton {
    source: String,
    form: Form,
    values: Vec<Value>,
}

fn corrupt(source: &str, at: usize, what: &str) -> FormatError {
    let line = source[..at.min(source.len())].matches('\n').count() + 1;
    FormatError::corrupt(format!(
        "The file is not a valid .strings file: {what} on line {line}"
    ))
}

pub(crate) fn extract(input: &[u8]) -> Result<(Vec<String>, Skeleton), FormatError> {
    let Decoded { text: source, form } = encoding::decode(input, None);
    let mut found = Values::default();
    let mut at = skip(&source, 0, &source)?;
    while at < source.len() {
        let key = quoted(&source, at)?;
        at = skip(&source, key.end + 1, &source)?;
        if !source[at..].starts_with('=') {
            return Err(corrupt(&source, at, "'=' expected after a key"));
        }
        at = skip(&source, at + 1, &source)?;
        let value = quoted(&source, at)?;
        at = skip(&source, value.end + 1, &source)?;
        if !source[at..].starts_with(';') {
            return Err(corrupt(&source, at, "';' expected after a value"));
        }
        at = skip(&source, at + 1, &source)?;
        let text = unescape(&source[value.clone()]);
        found.text(value, &text);
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

/// Skips white space and comments from `at`; where the next token starts.
fn skip(text: &str, mut at: usize, source: &str) -> Result<usize, FormatError> {
    loop {
        let rest = &text[at..];
        let trimmed = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
        at += rest.len() - trimmed.len();
        if trimmed.starts_with("/*") {
            let end = trimmed
                .find("*/")
                .ok_or_else(|| corrupt(source, at, "an unclosed comment"))?;
            at += end + 2;
        } else if trimmed.starts_with("//") {
            at += trimmed.find('\n').map_or(trimmed.len(), |e| e + 1);
        } else {
            return Ok(at);
        }
    }
}

/// The content range of the quoted string at `at`.
fn quoted(text: &str, at: usize) -> Result<Range<usize>, FormatError> {
    if !text[at..].starts_with('"') {
        return Err(corrupt(text, at, "a quoted string expected"));
    }
    let bytes = text.as_bytes();
    let mut i = at + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Ok(at + 1..i),
            _ => i += 1,
        }
    }
    Err(corrupt(text, at, "an unclosed string"))
}

fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('U' | 'u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => out.push_str(&hex),
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// Writes a value escaped for a `.strings` file.
fn escape(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
}

impl crate::filter::Merge for Skeleton {
    fn merge(&self, source: &[String], translated: &[String]) -> Vec<u8> {
        let out = splice(&self.source, &self.values, source, translated, escape);
        self.form.encode(&out, false)
    }
}

#[cfg(test)]
mod tests {
    use crate::testdoc::uppercase_merge;
    use crate::{DocumentFormat, FormatError, extract};

    const FILE: &str = "/* Menu */\n\"title\" = \"The house\";\n// A greeting\n\"greeting\" = \"Hello %@, you have %1$d \\\"new\\\" messages\";\n\"id\" = \"btn_ok\";\n";

    #[test]
    fn values_are_segments_with_format_specifiers_as_tags() {
        let d = extract(DocumentFormat::Strings, FILE.as_bytes()).unwrap();
        assert_eq!(
            d.segments(),
            [
                "The house",
                r#"Hello <x id="1"/>, you have <x id="2"/> "new" messages"#,
            ]
        );
        assert_eq!(d.merge(d.segments()).unwrap(), FILE.as_bytes());
        let out = String::from_utf8(uppercase_merge(&d)).unwrap();
        assert_eq!(
            out,
            "/* Menu */\n\"title\" = \"THE HOUSE\";\n// A greeting\n\"greeting\" = \"HELLO %@, YOU HAVE %1$d \\\"NEW\\\" MESSAGES\";\n\"id\" = \"btn_ok\";\n"
        );
    }

    #[test]
    fn utf16_files_are_written_back_as_utf16() {
        let mut input = vec![0xFF, 0xFE];
        for unit in "\"a\" = \"Café\";\n".encode_utf16() {
            input.extend_from_slice(&unit.to_le_bytes());
        }
        let d = extract(DocumentFormat::Strings, &input).unwrap();
        assert_eq!(d.segments(), ["Café"]);
        let out = d.merge(&["Thé".into()]).unwrap();
        let mut expected = vec![0xFF, 0xFE];
        for unit in "\"a\" = \"Thé\";\n".encode_utf16() {
            expected.extend_from_slice(&unit.to_le_bytes());
        }
        assert_eq!(out, expected);
    }

    #[test]
    fn broken_syntax_is_refused_naming_the_line() {
        for (bad, what) in [
            ("\"a\" = \"b\"\n\"c\" = \"d\";", "';' expected"),
            ("\"a\" \"b\";", "'=' expected"),
            ("\"a\" = \"b;", "unclosed string"),
            ("/* never closed", "unclosed comment"),
            ("a = b;", "quoted string"),
        ] {
            let err = extract(DocumentFormat::Strings, bad.as_bytes()).unwrap_err();
            assert!(matches!(err, FormatError::Corrupt(_)), "{bad}");
            assert!(err.to_string().contains(what), "{bad}: {err}");
            assert!(err.to_string().contains("line"), "{err}");
        }
    }
}
