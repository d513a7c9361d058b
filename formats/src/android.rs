//! Android string resources (`res/values/strings.xml`): an `.xml` file whose
//! root is `<resources>` holding `string`, `plurals` or `string-array`
//! elements.
//!
//! Each `<string>`, each `<item>` of a `<plurals>` (quantities kept) and of a
//! `<string-array>` is a segment, unless it or its parent says
//! `translatable="false"` or its value is a reference (`@string/…`,
//! `?attr/…`). Android's escapes are read as what they mean — `\'`, `\"`,
//! `\@`, `\?`, `\\` as the character — and written back escaped (an
//! apostrophe in a translation becomes `\'`, as aapt2 requires); `\n`,
//! `\t`, `\uXXXX`, the double quotes that keep a value's spaces, format
//! specifiers (`%1$s`, `%d`) and `<xliff:g>` (text not to translate) are
//! tags kept byte for byte; styling elements (`<b>`, `<i>`, `<u>`, `<a>`,
//! `<font>`, `<annotation>`) are spans around their words. The rest of the
//! file keeps its bytes.

use std::ops::Range;

use crate::FormatError;
use crate::encoding::{self, Decoded, Form};
use crate::inline::{SegmentBuilder, Tags, write_tags};
use crate::placeholders::{Value, Values, splice_with};
use crate::xml::{self, Elem, TextKind, XNode};

/// The file around its translated values.
#[derive(Debug)]
pub(crate) struct Skeleton {
    source: String,
    form: Form,
    values: Vec<Value>,
}

/// Whether `input` is an Android string resource file: its root element is
/// `resources` and it holds `string`, `plurals` or `string-array`.
pub(crate) fn is_android(input: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&input[..input.len().min(4096)]);
    let Some(root) = head
        .match_indices('<')
        .map(|(i, _)| &head[i + 1..])
        .find(|rest| !rest.starts_with(['?', '!']))
    else {
        return false;
    };
    root.starts_with("resources")
        && root[9..].starts_with(|c: char| c == '>' || c.is_whitespace())
        && ["<string", "<plurals", "<string-array"]
            .iter()
            .any(|t| head.contains(t))
}

pub(crate) fn extract(input: &[u8]) -> Result<(Vec<String>, Skeleton), FormatError> {
    let Decoded { text: source, form } = encoding::decode(input, encoding::xml_declared(input));
    let tree = xml::parse(&source).map_err(|e| {
        FormatError::corrupt(format!(
            "The file is not a valid Android string resource file: it {e}"
        ))
    })?;
    let root =
        xml::root(&tree).ok_or_else(|| FormatError::corrupt("The file has no root element"))?;
    let mut found = Values::default();
    let translatable = |e: &Elem<'_>| e.attr(&source, "translatable").as_deref() != Some("false");
    for entry in root.elems().filter(|e| translatable(e)) {
        let items: Vec<&Elem<'_>> = match entry.name {
            "string" => vec![entry],
            "plurals" | "string-array" => entry
                .elems()
                .filter(|i| i.name == "item" && translatable(i))
                .collect(),
            _ => Vec::new(),
        };
        for item in items {
            let Some(end) = &item.end else { continue };
            let (segment, tags) = value_segment(&source, item);
            if !crate::inline::plain_text(&segment)
                .chars()
                .any(char::is_alphabetic)
            {
                continue;
            }
            found.add(item.start.end..end.start, segment, tags);
        }
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

/// Elements that style text (spans around their words).
const STYLES: &[&str] = &[
    "b",
    "i",
    "u",
    "a",
    "font",
    "annotation",
    "big",
    "small",
    "sup",
    "sub",
    "strike",
    "tt",
];

/// A value as a segment with its tags (a reference gives an empty one).
fn value_segment(src: &str, item: &Elem<'_>) -> (String, Tags) {
    let mut builder = SegmentBuilder::new();
    let mut tags = Vec::new();
    let text = item.text(src);
    if text.trim_start().starts_with(['@', '?']) {
        return (String::new(), tags);
    }
    children(src, &item.children, &mut builder, &mut tags);
    (builder.finish(), tags)
}

fn children(src: &str, nodes: &[XNode<'_>], builder: &mut SegmentBuilder, tags: &mut Tags) {
    let raw = |range: &Range<usize>| src.get(range.clone()).unwrap_or("").to_owned();
    for node in nodes {
        match node {
            XNode::Text(range, TextKind::Other) => {
                builder.placeholder();
                tags.push((raw(range), None));
            }
            XNode::Text(range, kind) => {
                let mut decoded = String::new();
                xml::decode_into(src, range, *kind, &mut decoded);
                // Character data is written back escaped; a reference or
                // CDATA keeps its own form only when untouched.
                text(&decoded, builder, tags);
            }
            XNode::Elem(e) => match &e.end {
                Some(end) if STYLES.contains(&e.name) => {
                    builder.open();
                    tags.push((raw(&e.start), Some(raw(end))));
                    children(src, &e.children, builder, tags);
                    builder.close();
                }
                _ => {
                    builder.placeholder();
                    tags.push((raw(&e.span()), None));
                }
            },
        }
    }
}

/// Decoded character data into the segment: escapes that stand for a
/// character as that character, the others, double quotes and format
/// specifiers as tags (written back XML-escaped, as they were).
fn text(decoded: &str, builder: &mut SegmentBuilder, tags: &mut Tags) {
    let mut pending = String::new();
    let mut rest = decoded;
    let mut tag = |markup: &str, pending: &mut String, builder: &mut SegmentBuilder| {
        if !pending.is_empty() {
            builder.text(pending);
            pending.clear();
        }
        builder.placeholder();
        tags.push((crate::inline::escape(markup), None));
    };
    while let Some(c) = rest.chars().next() {
        if c == '\\' {
            let next = rest[1..].chars().next();
            match next {
                Some(e @ ('\'' | '"' | '@' | '?' | '\\')) => {
                    pending.push(e);
                    rest = &rest[2..];
                }
                Some('u')
                    if rest
                        .get(2..6)
                        .is_some_and(|h| h.chars().all(|h| h.is_ascii_hexdigit())) =>
                {
                    tag(&rest[..6], &mut pending, builder);
                    rest = &rest[6..];
                }
                Some(n) => {
                    let len = 1 + n.len_utf8();
                    tag(&rest[..len], &mut pending, builder);
                    rest = &rest[len..];
                }
                None => {
                    tag("\\", &mut pending, builder);
                    rest = "";
                }
            }
            continue;
        }
        if c == '"' {
            tag("\"", &mut pending, builder);
            rest = &rest[1..];
            continue;
        }
        if let Some(len) = crate::placeholders::at_start(rest) {
            tag(&rest[..len], &mut pending, builder);
            rest = &rest[len..];
            continue;
        }
        pending.push(c);
        rest = &rest[c.len_utf8()..];
    }
    if !pending.is_empty() {
        builder.text(&pending);
    }
}

/// Writes translated text as Android character data: XML-escaped, with
/// `\`, `'` and `"` escaped, and `@` or `?` escaped at the start of the
/// value (else it would read as a reference).
fn escape(out: &mut String, text: &str, at_start: bool) {
    for (i, c) in text.chars().enumerate() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '@' | '?' if at_start && i == 0 => {
                out.push('\\');
                out.push(c);
            }
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
}

impl crate::filter::Merge for Skeleton {
    fn merge(&self, source: &[String], translated: &[String]) -> Vec<u8> {
        let values = &self.values;
        let out = splice_with(
            &self.source,
            values,
            source,
            translated,
            |out, i, translation| {
                let start = out.len();
                write_tags(out, translation, &values[i].tags, |out, text| {
                    let at_start = out.len() == start;
                    escape(out, text, at_start);
                });
            },
        );
        self.form.encode(&out, true)
    }
}

#[cfg(test)]
mod tests;
