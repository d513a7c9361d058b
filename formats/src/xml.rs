//! A light XML tree over a document's text (an Office part, an XLIFF or
//! .resx file): elements and text keep their byte ranges, so unchanged markup
//! is copied exactly and only translated content is rewritten. A DOCTYPE is
//! refused (no entity expansion).

use std::ops::Range;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

/// Deeper nesting is rejected (protects the recursive passes from hostile input).
pub(crate) const MAX_DEPTH: usize = 512;

/// A node of the tree.
#[derive(Debug)]
pub(crate) enum XNode<'a> {
    Elem(Elem<'a>),
    /// Character data or other non-element markup.
    Text(Range<usize>, TextKind),
}

/// What a [`XNode::Text`] range holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextKind {
    /// Character data (no references inside).
    Chars,
    /// One entity or character reference (`&amp;`, `&#x41;`).
    Ref,
    /// A CDATA section.
    CData,
    /// A comment, processing instruction, declaration or doctype.
    Other,
}

/// An element.
#[derive(Debug)]
pub(crate) struct Elem<'a> {
    /// Qualified name (`w:p`).
    pub name: &'a str,
    /// The start tag, or the whole empty-element tag.
    pub start: Range<usize>,
    /// The end tag; `None` for an empty-element tag.
    pub end: Option<Range<usize>>,
    pub children: Vec<XNode<'a>>,
}

impl<'a> Elem<'a> {
    /// From the start of the start tag to the end of the end tag.
    pub fn span(&self) -> Range<usize> {
        self.start.start..self.end.as_ref().map_or(self.start.end, |e| e.end)
    }

    /// The child elements.
    pub fn elems(&self) -> impl Iterator<Item = &Elem<'a>> {
        self.children.iter().filter_map(|c| match c {
            XNode::Elem(e) => Some(e),
            XNode::Text(..) => None,
        })
    }

    /// The raw (unescaped-as-written) value of an attribute.
    pub fn attr(&self, src: &str, key: &str) -> Option<String> {
        let raw = src.get(self.start.clone())?;
        let inner = raw.strip_prefix('<')?.strip_suffix('>')?;
        let inner = inner.strip_suffix('/').unwrap_or(inner);
        let tag = BytesStart::from_content(inner, self.name.len());
        let attr = tag.try_get_attribute(key).ok().flatten()?;
        Some(attr.value.into_owned())
    }

    /// The attributes of the start tag, raw values, in order.
    pub fn attrs(&self, src: &str) -> Vec<(String, String)> {
        let Some(inner) = src
            .get(self.start.clone())
            .and_then(|raw| raw.strip_prefix('<'))
            .and_then(|raw| raw.strip_suffix('>'))
        else {
            return Vec::new();
        };
        let inner = inner.strip_suffix('/').unwrap_or(inner);
        let tag = BytesStart::from_content(inner, self.name.len());
        tag.attributes()
            .filter_map(Result::ok)
            .map(|a| {
                let key: &str = a.key.as_ref();
                (key.to_owned(), a.value.into_owned())
            })
            .collect()
    }

    /// The raw value of an attribute found by its local name, whatever its
    /// prefix (namespace declarations left out).
    pub fn attr_local(&self, src: &str, name: &str) -> Option<String> {
        self.attrs(src)
            .into_iter()
            .find(|(key, _)| local(key) == name && !key.starts_with("xmlns"))
            .map(|(_, value)| value)
    }

    /// The decoded character data of the element's direct text children.
    pub fn text(&self, src: &str) -> String {
        let mut out = String::new();
        for child in &self.children {
            if let XNode::Text(range, kind) = child {
                decode_into(src, range, *kind, &mut out);
            }
        }
        out
    }
}

/// The local part of a qualified name (`w:p` → `p`).
pub(crate) fn local(name: &str) -> &str {
    name.rsplit(':').next().unwrap_or(name)
}

/// The prefix of a qualified name (`w:p` → `w`; `""` when it has none).
pub(crate) fn prefix(name: &str) -> &str {
    name.split_once(':').map_or("", |(p, _)| p)
}

/// Appends the decoded character data of a text node (nothing for comments
/// and other markup).
pub(crate) fn decode_into(src: &str, range: &Range<usize>, kind: TextKind, out: &mut String) {
    let raw = src.get(range.clone()).unwrap_or("");
    match kind {
        TextKind::Chars => out.push_str(raw),
        TextKind::Ref => match crate::inline::decode_entity(raw) {
            Some((ch, _)) => out.push(ch),
            None => out.push_str(raw),
        },
        TextKind::CData => {
            let inner = raw.strip_prefix("<![CDATA[").unwrap_or(raw);
            out.push_str(inner.strip_suffix("]]>").unwrap_or(inner));
        }
        TextKind::Other => {}
    }
}

/// Tag `id` of a segment built by [`inline_segment`] is `tags[id - 1]`: its
/// open markup and, for a span, its close markup.
pub(crate) use crate::inline::Tags;

/// Appends mixed content (`children`) to a segment: text decoded, elements
/// `paired` says are spans (with an end tag) as `<g>` spans around their own
/// content, every other element — and comments or processing instructions —
/// a placeholder written back exactly. `paired` gets each element and the
/// elements it stands in below the segment's own (its parent first).
pub(crate) fn inline_segment<'t>(
    src: &str,
    children: &'t [XNode<'t>],
    paired: &dyn Fn(&Elem<'t>, &[&'t Elem<'t>]) -> bool,
    builder: &mut crate::inline::SegmentBuilder,
    tags: &mut Tags,
) {
    inline_below(src, children, paired, builder, tags, &mut Vec::new());
}

fn inline_below<'t>(
    src: &str,
    children: &'t [XNode<'t>],
    paired: &dyn Fn(&Elem<'t>, &[&'t Elem<'t>]) -> bool,
    builder: &mut crate::inline::SegmentBuilder,
    tags: &mut Tags,
    parents: &mut Vec<&'t Elem<'t>>,
) {
    let raw = |range: &Range<usize>| src.get(range.clone()).unwrap_or("").to_owned();
    for child in children {
        match child {
            XNode::Text(range, TextKind::Other) => {
                builder.placeholder();
                tags.push((raw(range), None));
            }
            XNode::Text(range, kind) => {
                let mut text = String::new();
                decode_into(src, range, *kind, &mut text);
                builder.text(&text);
            }
            XNode::Elem(e) => match &e.end {
                Some(end) if paired(e, parents) => {
                    builder.open();
                    tags.push((raw(&e.start), Some(raw(end))));
                    parents.insert(0, e);
                    inline_below(src, &e.children, paired, builder, tags, parents);
                    parents.remove(0);
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

/// The attributes of an element's start tag: each value's range (between
/// its quotes), its quote and its name.
pub(crate) fn attribute_values(src: &str, elem: &Elem<'_>) -> Vec<(Range<usize>, char, String)> {
    let mut out = Vec::new();
    let Some(tag) = src.get(elem.start.clone()) else {
        return out;
    };
    let bytes = tag.as_bytes();
    let mut i = 1 + elem.name.len();
    loop {
        while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        let name_start = i;
        while bytes
            .get(i)
            .is_some_and(|b| !b.is_ascii_whitespace() && !matches!(b, b'=' | b'>' | b'/'))
        {
            i += 1;
        }
        if i == name_start {
            return out;
        }
        let name = tag[name_start..i].to_owned();
        while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if bytes.get(i) != Some(&b'=') {
            return out;
        }
        i += 1;
        while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        let Some(&quote) = bytes.get(i).filter(|q| matches!(q, b'"' | b'\'')) else {
            return out;
        };
        let start = i + 1;
        let Some(len) = bytes[start..].iter().position(|&b| b == quote) else {
            return out;
        };
        let at = elem.start.start;
        out.push((at + start..at + start + len, char::from(quote), name));
        i = start + len + 1;
    }
}

/// Appends `text` escaped for an attribute value between `quote`s.
pub(crate) fn escape_attribute_into(out: &mut String, text: &str, quote: char) {
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if quote == '"' => out.push_str("&quot;"),
            '\'' if quote == '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
}

/// Whether a text node is only formatting whitespace.
pub(crate) fn is_blank(src: &str, range: &Range<usize>, kind: TextKind) -> bool {
    kind == TextKind::Chars && src.get(range.clone()).is_some_and(|t| t.trim().is_empty())
}

/// The error of a part declaring a DOCTYPE.
pub(crate) const DOCTYPE: &str = "declares a DOCTYPE";

/// Parses a whole part. `src` must not start with a byte-order mark.
/// The root element of a parsed document, if it has one.
pub(crate) fn root<'a, 't>(tree: &'a [XNode<'t>]) -> Option<&'a Elem<'t>> {
    tree.iter().find_map(|n| match n {
        XNode::Elem(e) => Some(e),
        XNode::Text(..) => None,
    })
}

pub(crate) fn parse(src: &str) -> Result<Vec<XNode<'_>>, String> {
    parse_with(src, false)
}

/// [`parse`]; with `external_doctype`, a DOCTYPE that only names an external
/// DTD (`<!DOCTYPE topic PUBLIC "…" "topic.dtd">`, as DITA files carry) is
/// kept as markup — it is never fetched — while one with an internal subset
/// (entity declarations) is still refused.
pub(crate) fn parse_with(src: &str, external_doctype: bool) -> Result<Vec<XNode<'_>>, String> {
    let mut reader = Reader::from_str(src);
    let mut top: Vec<XNode<'_>> = Vec::new();
    let mut stack: Vec<Elem<'_>> = Vec::new();
    loop {
        let start = offset(reader.buffer_position());
        let event = reader
            .read_event()
            .map_err(|e| format!("{e} (at byte {})", reader.error_position()))?;
        let end = offset(reader.buffer_position());
        let node = match event {
            Event::Start(tag) | Event::Empty(tag) if stack.len() >= MAX_DEPTH => {
                let _ = tag;
                return Err("elements are nested too deeply".to_owned());
            }
            Event::Start(tag) => {
                let name = name_at(src, start, &tag)?;
                stack.push(Elem {
                    name,
                    start: start..end,
                    end: None,
                    children: Vec::new(),
                });
                continue;
            }
            Event::Empty(tag) => XNode::Elem(Elem {
                name: name_at(src, start, &tag)?,
                start: start..end,
                end: None,
                children: Vec::new(),
            }),
            Event::End(_) => {
                let Some(mut elem) = stack.pop() else {
                    return Err(format!("unexpected end tag at byte {start}"));
                };
                elem.end = Some(start..end);
                XNode::Elem(elem)
            }
            Event::Text(_) => XNode::Text(start..end, TextKind::Chars),
            Event::GeneralRef(_) => XNode::Text(start..end, TextKind::Ref),
            Event::CData(_) => XNode::Text(start..end, TextKind::CData),
            // Office Open XML and OpenDocument parts never have one; a
            // declared entity would only serve an expansion bomb or an
            // external read, neither of which this parser performs.
            Event::DocType(_)
                if external_doctype && !src.get(start..end).is_some_and(|d| d.contains('[')) =>
            {
                XNode::Text(start..end, TextKind::Other)
            }
            Event::DocType(_) => {
                return Err(DOCTYPE.to_owned());
            }
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) => {
                XNode::Text(start..end, TextKind::Other)
            }
            Event::Eof => break,
        };
        match stack.last_mut() {
            Some(parent) => parent.children.push(node),
            None => top.push(node),
        }
    }
    if let Some(open) = stack.last() {
        return Err(format!(
            "the document ends before <{}> is closed (the file may be truncated)",
            open.name
        ));
    }
    if !top.iter().any(|n| matches!(n, XNode::Elem(_))) {
        return Err("there is no root element".to_owned());
    }
    Ok(top)
}

fn offset(position: u64) -> usize {
    usize::try_from(position).unwrap_or(usize::MAX)
}

/// The element name as a slice of `src` (the tag starts at `start` with `<`).
fn name_at<'a>(src: &'a str, start: usize, tag: &BytesStart<'_>) -> Result<&'a str, String> {
    let name = tag.name();
    let len = name.as_ref().len();
    match src.get(start + 1..start + 1 + len) {
        Some(slice) if slice == name.as_ref() => Ok(slice),
        _ => Err(format!("unexpected markup at byte {start}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_keeps_ranges() {
        let src = "<?xml version=\"1.0\"?>\n<a x='1'><b>Hi &amp; <![CDATA[<z>]]></b><c/></a>";
        let nodes = parse(src).unwrap();
        let root = root(&nodes).unwrap();
        assert_eq!(root.name, "a");
        assert_eq!(
            &src[root.span()],
            "<a x='1'><b>Hi &amp; <![CDATA[<z>]]></b><c/></a>"
        );
        assert_eq!(root.attr(src, "x").as_deref(), Some("1"));
        let b = root.elems().next().unwrap();
        assert_eq!(b.text(src), "Hi & <z>");
        let c = root.elems().nth(1).unwrap();
        assert_eq!((c.name, c.end.is_none()), ("c", true));
    }

    #[test]
    fn malformed_xml_is_an_error() {
        for src in [
            "<a><b></a>",
            "<a><b>",
            "",
            "text only",
            "<a>x & y</a>",
            "</a>",
        ] {
            assert!(parse(src).is_err(), "{src:?} should not parse");
        }
    }

    #[test]
    fn deep_nesting_is_rejected() {
        let src = "<a>".repeat(MAX_DEPTH + 1) + &"</a>".repeat(MAX_DEPTH + 1);
        assert!(parse(&src).unwrap_err().contains("too deeply"));
    }
}
