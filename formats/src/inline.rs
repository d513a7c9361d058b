//! The inline markup of a segment: the contract with the translation engine.
//!
//! A segment is XML-escaped text (`&amp;`, `&lt;`, `&gt;`; `&quot;`, `&apos;`
//! and numeric character references are accepted when reading) with two
//! inline tags only:
//!
//! * `<g id="N">…</g>` — a paired span (a run's formatting, a hyperlink, an
//!   inline HTML element such as `b`, `i`, `a`, `span`), properly nested;
//! * `<x id="N"/>` — a standalone placeholder (a tab, a line break, an image,
//!   a field, an HTML `<br>`, `<img>`…).
//!
//! Ids are small integers, unique within one segment. A translation may move
//! or reorder the tags. [`parse`] is lenient so that `merge` never fails on
//! what an engine returns: text that does not form one of the two tags is
//! taken literally (`a < b` stays `a < b`), a stray `</g>` is ignored and
//! spans left open are closed at the end. Its output is always balanced.
//!
//! ```
//! use tolk_formats::inline::{parse, plain_text, Piece};
//!
//! let segment = r#"Click <g id="1">here</g> &amp; wait<x id="2"/>"#;
//! assert_eq!(plain_text(segment), "Click here & wait");
//! assert_eq!(parse(segment)[1], Piece::Open(1));
//! ```

/// One piece of a parsed segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Unescaped text.
    Text(String),
    /// `<g id="N">`.
    Open(u32),
    /// The `</g>` closing the span opened with this id.
    Close(u32),
    /// `<x id="N"/>`.
    Placeholder(u32),
}

/// Parses a segment into pieces, leniently (see the module documentation).
///
/// Consecutive text is returned as one [`Piece::Text`]; every [`Piece::Open`]
/// has a matching [`Piece::Close`] later in the list, properly nested.
pub fn parse(segment: &str) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut open: Vec<u32> = Vec::new();
    let mut rest = segment;
    while let Some(pos) = rest.find(['<', '&']) {
        text.push_str(&rest[..pos]);
        rest = &rest[pos..];
        if rest.starts_with('&') {
            match decode_entity(rest) {
                Some((ch, len)) => {
                    text.push(ch);
                    rest = &rest[len..];
                }
                None => {
                    text.push('&');
                    rest = &rest[1..];
                }
            }
            continue;
        }
        match parse_tag(rest) {
            Some((tag, len)) => {
                rest = &rest[len..];
                let piece = match tag {
                    Tag::Open(id) => {
                        open.push(id);
                        Piece::Open(id)
                    }
                    Tag::Close => match open.pop() {
                        Some(id) => Piece::Close(id),
                        None => continue,
                    },
                    Tag::Placeholder(id) => Piece::Placeholder(id),
                    Tag::Ignored => continue,
                };
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(piece);
            }
            None => {
                text.push('<');
                rest = &rest[1..];
            }
        }
    }
    text.push_str(rest);
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    while let Some(id) = open.pop() {
        pieces.push(Piece::Close(id));
    }
    pieces
}

/// The text of a segment without its tags, entities decoded.
///
/// This is what a reader sees; use it to count billed characters.
pub fn plain_text(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for piece in parse(segment) {
        if let Piece::Text(text) = piece {
            out.push_str(&text);
        }
    }
    out
}

/// The enclosing span of every tag of a segment: tag id → id of the
/// innermost `<g>` around it (`None` at the top level).
pub fn parents(segment: &str) -> std::collections::HashMap<u32, Option<u32>> {
    let mut parents = std::collections::HashMap::new();
    let mut open: Vec<u32> = Vec::new();
    for piece in parse(segment) {
        match piece {
            Piece::Open(id) => {
                parents.entry(id).or_insert(open.last().copied());
                open.push(id);
            }
            Piece::Close(_) => {
                open.pop();
            }
            Piece::Placeholder(id) => {
                parents.entry(id).or_insert(open.last().copied());
            }
            Piece::Text(_) => {}
        }
    }
    parents
}

/// Whether a translation holds exactly the tags of its source, each once,
/// every span inside the same span as in the source (placeholders may move
/// between spans). A translation that does not is safer translated piece by
/// piece (see [`map_text`]).
pub fn tags_agree(source: &str, translation: &str) -> bool {
    let expected = parents(source);
    let mut seen = std::collections::HashSet::new();
    let mut open: Vec<u32> = Vec::new();
    for piece in parse(translation) {
        let (id, is_span) = match piece {
            Piece::Open(id) => (id, true),
            Piece::Placeholder(id) => (id, false),
            Piece::Close(_) => {
                open.pop();
                continue;
            }
            Piece::Text(_) => continue,
        };
        let Some(parent) = expected.get(&id) else {
            return false;
        };
        if !seen.insert(id) || (is_span && *parent != open.last().copied()) {
            return false;
        }
        if is_span {
            open.push(id);
        }
    }
    seen.len() == expected.len()
}

/// A segment with its text replaced piece by piece (the text between tags,
/// unescaped, in order), its tags as they were.
pub fn map_text(segment: &str, mut f: impl FnMut(&str) -> String) -> String {
    let mut out = String::with_capacity(segment.len());
    for piece in parse(segment) {
        match piece {
            Piece::Text(text) => escape_into(&mut out, &f(&text)),
            Piece::Open(id) => out.push_str(&format!("<g id=\"{id}\">")),
            Piece::Close(_) => out.push_str("</g>"),
            Piece::Placeholder(id) => out.push_str(&format!("<x id=\"{id}\"/>")),
        }
    }
    out
}

/// The markup of a segment's tags, tag `id` at `[id - 1]`: a placeholder's
/// markup, or a span's start and end tags.
pub(crate) type Tags = Vec<(String, Option<String>)>;

/// Writes a translation back into markup for the text filters (subtitles,
/// Markdown) whose tag `id` is `tags[id - 1]`: its open markup and, for a
/// span, its close markup. Each tag is written once, a span only as a span;
/// placeholders the translation lost are written at the end; text goes
/// through `text`, the format's escaping.
pub(crate) fn write_tags(
    out: &mut String,
    translation: &str,
    tags: &[(String, Option<String>)],
    mut text: impl FnMut(&mut String, &str),
) {
    let mut used = vec![false; tags.len()];
    let mut stack: Vec<Option<&str>> = Vec::new();
    for piece in parse(translation) {
        match piece {
            Piece::Text(t) => text(out, &t),
            Piece::Open(id) => {
                let index = (id as usize).wrapping_sub(1);
                match tags.get(index) {
                    Some((open, Some(close))) if !used[index] => {
                        used[index] = true;
                        out.push_str(open);
                        stack.push(Some(close));
                    }
                    _ => stack.push(None),
                }
            }
            Piece::Close(_) => {
                if let Some(Some(close)) = stack.pop() {
                    out.push_str(close);
                }
            }
            Piece::Placeholder(id) => {
                let index = (id as usize).wrapping_sub(1);
                if let Some((markup, None)) = tags.get(index)
                    && !used[index]
                {
                    used[index] = true;
                    out.push_str(markup);
                }
            }
        }
    }
    for ((markup, close), used) in tags.iter().zip(used) {
        if !used && close.is_none() {
            out.push_str(markup);
        }
    }
}

/// Copies `text[from..]` to `out` with the content of each block replaced
/// by its translation, written by `render` — unless the block is
/// translated as itself, which keeps its bytes. `blocks` are in document
/// order; `range` and `segment` say where a block's content is and which
/// segment it is.
pub(crate) fn splice_blocks<B>(
    out: &mut String,
    text: &str,
    from: usize,
    blocks: &[B],
    at: impl Fn(&B) -> (std::ops::Range<usize>, usize),
    (source, translated): (&[String], &[String]),
    mut render: impl FnMut(&mut String, &str, &B),
) {
    let mut done = from;
    for block in blocks {
        let (range, segment) = at(block);
        out.push_str(&text[done..range.start]);
        let original = source.get(segment).map_or("", String::as_str);
        let translation = translated.get(segment).map_or("", String::as_str);
        if translation == original {
            out.push_str(&text[range.clone()]);
        } else {
            render(out, translation, block);
        }
        done = range.end;
    }
    out.push_str(&text[done..]);
}

/// Escapes text for a segment: `&`, `<` and `>`.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    escape_into(&mut out, text);
    out
}

/// Appends `text` to `out`, escaped for a segment (see [`escape`]).
pub fn escape_into(out: &mut String, text: &str) {
    let mut rest = text;
    while let Some(pos) = rest.find(['&', '<', '>']) {
        out.push_str(&rest[..pos]);
        out.push_str(match rest.as_bytes()[pos] {
            b'&' => "&amp;",
            b'<' => "&lt;",
            _ => "&gt;",
        });
        rest = &rest[pos + 1..];
    }
    out.push_str(rest);
}

/// Builds a segment string, allocating tag ids `1, 2, 3…` in order.
#[derive(Debug, Default)]
pub struct SegmentBuilder {
    out: String,
    next_id: u32,
    has_text: bool,
}

impl SegmentBuilder {
    /// An empty segment.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends text (escaped here).
    pub fn text(&mut self, text: &str) {
        if !text.trim().is_empty() {
            self.has_text = true;
        }
        escape_into(&mut self.out, text);
    }

    /// Opens a `<g>` span and returns its id.
    pub fn open(&mut self) -> u32 {
        let id = self.allocate();
        self.out.push_str(&format!("<g id=\"{id}\">"));
        id
    }

    /// Closes the innermost open `<g>` span.
    pub fn close(&mut self) {
        self.out.push_str("</g>");
    }

    /// Appends an `<x/>` placeholder and returns its id.
    pub fn placeholder(&mut self) -> u32 {
        let id = self.allocate();
        self.out.push_str(&format!("<x id=\"{id}\"/>"));
        id
    }

    /// Whether some non-whitespace text was appended.
    pub fn has_text(&self) -> bool {
        self.has_text
    }

    /// The segment so far.
    pub fn peek(&self) -> &str {
        &self.out
    }

    /// The segment.
    pub fn finish(self) -> String {
        self.out
    }

    fn allocate(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id
    }
}

enum Tag {
    Open(u32),
    Close,
    Placeholder(u32),
    /// A well-formed tag we do not use (`</x>`, `<g id="1"/>`): dropped.
    Ignored,
}

/// Parses `<g id="N">`, `</g>`, `<x id="N"/>` (spaces and either quote
/// allowed) at the start of `s`; returns the tag and its length.
fn parse_tag(s: &str) -> Option<(Tag, usize)> {
    let bytes = s.as_bytes();
    let mut i = 1;
    let closing = bytes.get(i) == Some(&b'/');
    if closing {
        i += 1;
    }
    let name = *bytes.get(i)?;
    if name != b'g' && name != b'x' {
        return None;
    }
    i += 1;
    let skip_ws = |i: &mut usize| {
        while bytes.get(*i).is_some_and(u8::is_ascii_whitespace) {
            *i += 1;
        }
    };
    if closing {
        skip_ws(&mut i);
        if bytes.get(i) != Some(&b'>') {
            return None;
        }
        let tag = if name == b'g' {
            Tag::Close
        } else {
            Tag::Ignored
        };
        return Some((tag, i + 1));
    }
    if !bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
        return None;
    }
    skip_ws(&mut i);
    if !s[i..].starts_with("id") {
        return None;
    }
    i += 2;
    skip_ws(&mut i);
    if bytes.get(i) != Some(&b'=') {
        return None;
    }
    i += 1;
    skip_ws(&mut i);
    let quote = match bytes.get(i) {
        Some(&q @ (b'"' | b'\'')) => {
            i += 1;
            Some(q)
        }
        _ => None,
    };
    let digits_start = i;
    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let id: u32 = s[digits_start..i].parse().ok()?;
    if let Some(q) = quote {
        if bytes.get(i) != Some(&q) {
            return None;
        }
        i += 1;
    }
    skip_ws(&mut i);
    let self_closing = bytes.get(i) == Some(&b'/');
    if self_closing {
        i += 1;
    }
    if bytes.get(i) != Some(&b'>') {
        return None;
    }
    let tag = match (name, self_closing) {
        (b'g', false) => Tag::Open(id),
        (b'g', true) => Tag::Ignored,
        _ => Tag::Placeholder(id),
    };
    Some((tag, i + 1))
}

/// Decodes an XML entity or character reference at the start of `s`.
pub(crate) fn decode_entity(s: &str) -> Option<(char, usize)> {
    let end = s.bytes().take(12).position(|b| b == b';')?;
    let name = s.get(1..end)?;
    let ch = match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        _ => decode_char_ref(name)?,
    };
    Some((ch, end + 1))
}

/// Decodes the inside of a numeric character reference: `#65` or `#x41`.
pub(crate) fn decode_char_ref(name: &str) -> Option<char> {
    let num = name.strip_prefix('#')?;
    let code = match num.strip_prefix(['x', 'X']) {
        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
        None => num.parse().ok()?,
    };
    char::from_u32(code).filter(|&c| c != '\0')
}

#[cfg(test)]
mod tests {
    #[test]
    fn tags_agree_when_each_span_keeps_its_parent() {
        let source = r#"a <g id="1">b <g id="2">c</g></g> d<x id="3"/>"#;
        // Moved, reordered text, a placeholder in another span: fine.
        assert!(super::tags_agree(source, source));
        assert!(super::tags_agree(
            source,
            r#"<x id="3"/>d <g id="1"><g id="2">C</g> B</g> A"#
        ));
        assert!(super::tags_agree(
            source,
            r#"<g id="1">b <x id="3"/><g id="2">c</g></g>"#
        ));
        // A span out of its parent, nested in another, lost, doubled, unknown.
        assert!(!super::tags_agree(
            source,
            r#"<g id="2">c</g><g id="1">b</g><x id="3"/>"#
        ));
        assert!(!super::tags_agree(
            r#"<g id="1">a</g><g id="2">b</g>"#,
            r#"<g id="1">a<g id="2">b</g></g>"#
        ));
        assert!(!super::tags_agree(
            source,
            r#"<g id="1">b c</g><x id="3"/>"#
        ));
        assert!(!super::tags_agree(
            source,
            r#"<g id="1">b <g id="2">c</g></g><x id="3"/><x id="3"/>"#
        ));
        assert!(!super::tags_agree(
            source,
            r#"<g id="1">b <g id="2">c</g></g><x id="3"/><x id="4"/>"#
        ));
    }

    #[test]
    fn map_text_keeps_the_tags() {
        let source = r#"a &amp; <g id="1">b</g><x id="2"/>"#;
        assert_eq!(
            super::map_text(source, |t| t.to_uppercase()),
            r#"A &amp; <g id="1">B</g><x id="2"/>"#
        );
    }

    use super::*;

    #[test]
    fn parses_tags_and_entities() {
        let pieces = parse(r#"a &lt;b&gt; <g id="1">c<x id="2"/></g>&#x41;&#66;"#);
        assert_eq!(
            pieces,
            vec![
                Piece::Text("a <b> ".into()),
                Piece::Open(1),
                Piece::Text("c".into()),
                Piece::Placeholder(2),
                Piece::Close(1),
                Piece::Text("AB".into()),
            ]
        );
    }

    #[test]
    fn accepts_variants_of_tag_syntax() {
        let pieces = parse("<g id='3' >x</g ><x id=4 /><x id=\"5\">");
        assert_eq!(
            pieces,
            vec![
                Piece::Open(3),
                Piece::Text("x".into()),
                Piece::Close(3),
                Piece::Placeholder(4),
                Piece::Placeholder(5),
            ]
        );
    }

    #[test]
    fn malformed_markup_is_text_and_balanced() {
        assert_eq!(parse("a < b & c"), vec![Piece::Text("a < b & c".into())]);
        assert_eq!(
            parse("</g>x<g id=\"1\">y"),
            vec![
                Piece::Text("x".into()),
                Piece::Open(1),
                Piece::Text("y".into()),
                Piece::Close(1),
            ]
        );
        assert_eq!(
            parse("<g id=\"\">z"),
            vec![Piece::Text("<g id=\"\">z".into())]
        );
        assert_eq!(
            parse("&bogus; &#0; &#xZZ;"),
            vec![Piece::Text("&bogus; &#0; &#xZZ;".into())]
        );
        assert_eq!(
            parse("<b>bold</b>"),
            vec![Piece::Text("<b>bold</b>".into())]
        );
        assert!(parse("").is_empty());
    }

    #[test]
    fn plain_text_strips_tags() {
        assert_eq!(
            plain_text(r#"<g id="1">Tom &amp; Jerry</g><x id="2"/>!"#),
            "Tom & Jerry!"
        );
    }

    #[test]
    fn builder_escapes_and_numbers() {
        let mut b = SegmentBuilder::new();
        b.text("a<b & c>");
        assert_eq!(b.open(), 1);
        b.text("d");
        b.close();
        assert_eq!(b.placeholder(), 2);
        assert!(b.has_text());
        let s = b.finish();
        assert_eq!(s, r#"a&lt;b &amp; c&gt;<g id="1">d</g><x id="2"/>"#);
        assert_eq!(plain_text(&s), "a<b & c>d");
    }

    #[test]
    fn escape_round_trips() {
        let text = "x<y>&z ü \u{a0}";
        assert_eq!(plain_text(&escape(text)), text);
    }
}
