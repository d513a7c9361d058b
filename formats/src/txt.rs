//! Plain text: one segment per non-blank line.
//!
//! The text may be UTF-8, UTF-16 with a byte-order mark, or Latin-1
//! (windows-1252); the output is written the same way ([`crate::encoding`]).
//! Each line's leading
//! and trailing whitespace and its line ending (`\n` or `\r\n`) stay in the
//! skeleton, so the output has exactly the input's layout. Lines are not
//! joined into paragraphs: hard-wrapped prose is translated line by line,
//! which keeps the layout safe whatever the engine does with newlines.

use std::ops::Range;

use crate::encoding::{self, Decoded, Form};
use crate::{FormatError, inline};

/// The text around the segments.
#[derive(Debug)]
pub(crate) struct Skeleton {
    source: String,
    form: Form,
    parts: Vec<Part>,
}

#[derive(Debug)]
enum Part {
    Raw(Range<usize>),
    Segment(usize),
}

pub(crate) fn extract(input: &[u8]) -> Result<(Vec<String>, Skeleton), FormatError> {
    let Decoded { text: source, form } = encoding::decode(input, None);
    let mut segments = Vec::new();
    let mut parts = Vec::new();
    let mut raw_start = 0;
    let mut line_start = 0;
    for line in source.split_inclusive('\n') {
        let start = line_start;
        line_start += line.len();
        let content = line.trim_end_matches(['\n', '\r']);
        let trimmed = content.trim();
        if trimmed.is_empty() {
            continue;
        }
        let lead = content.len() - content.trim_start().len();
        let text_start = start + lead;
        parts.push(Part::Raw(raw_start..text_start));
        parts.push(Part::Segment(segments.len()));
        segments.push(inline::escape(trimmed));
        raw_start = text_start + trimmed.len();
    }
    parts.push(Part::Raw(raw_start..source.len()));
    Ok((
        segments,
        Skeleton {
            source,
            form,
            parts,
        },
    ))
}

impl crate::filter::Merge for Skeleton {
    fn merge(&self, _source: &[String], translated: &[String]) -> Vec<u8> {
        let source = &self.source;
        let mut out = String::with_capacity(source.len() + source.len() / 4);
        for part in &self.parts {
            match part {
                Part::Raw(range) => out.push_str(source.get(range.clone()).unwrap_or("")),
                Part::Segment(index) => {
                    let text = translated
                        .get(*index)
                        .map_or(String::new(), |t| inline::plain_text(t));
                    out.push_str(&text);
                }
            }
        }
        self.form.encode(&out, false)
    }
}

#[cfg(test)]
mod tests {
    use crate::{DocumentFormat, extract};

    fn identity(input: &[u8]) -> Vec<u8> {
        let doc = extract(DocumentFormat::Txt, input).unwrap();
        doc.merge(doc.segments()).unwrap()
    }

    #[test]
    fn lines_are_segments_and_layout_is_kept() {
        let input = "\u{feff}  Title  \r\n\r\nFirst line\n\tsecond & <third>\n\n\n   \nlast";
        let doc = extract(DocumentFormat::Txt, input.as_bytes()).unwrap();
        assert_eq!(
            doc.segments(),
            ["Title", "First line", "second &amp; &lt;third&gt;", "last"]
        );
        assert_eq!(identity(input.as_bytes()), input.as_bytes());
    }

    #[test]
    fn translation_replaces_text_only() {
        let input = "  Hello\r\n\r\n\tWorld & co\n";
        let doc = extract(DocumentFormat::Txt, input.as_bytes()).unwrap();
        let out = doc
            .merge(&[
                "Hallo".into(),
                r#"<g id="1">Welt</g> &amp; Co<x id="2"/>"#.into(),
            ])
            .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "  Hallo\r\n\r\n\tWelt & Co\n"
        );
    }

    #[test]
    fn empty_and_blank_inputs_have_no_segments() {
        for input in ["", "\n\n", "  \t \r\n", "\u{feff}"] {
            let doc = extract(DocumentFormat::Txt, input.as_bytes()).unwrap();
            assert!(doc.segments().is_empty());
            assert_eq!(identity(input.as_bytes()), input.as_bytes());
        }
    }

    #[test]
    fn latin1_text_is_translated_and_written_back_as_latin1() {
        let doc = extract(DocumentFormat::Txt, b"caf\xe9\n").unwrap();
        assert_eq!(doc.segments(), ["café"]);
        assert_eq!(doc.merge(&["thé".into()]).unwrap(), b"th\xe9\n");
    }
}
