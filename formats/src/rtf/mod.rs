//! Rich Text Format (`.rtf`): one segment per paragraph of the body, the
//! headers and footers, footnotes, comments and shape text.
//!
//! The file is read into its groups (`{…}`), control words (`\b`, `\f2`,
//! `\par`), control symbols and text, each with its byte range (no RTF crate
//! keeps ranges, so untouched bytes could not be copied). Text is decoded
//! from `\'hh` bytes in the code page of the current font (its `\fcharset`
//! in the font table) or of the document (`\ansicpg`), and from `\uN`
//! escapes, their `\ucN` fallback characters skipped.
//!
//! A paragraph ends at `\par`, `\sect`, `\cell`, `\row` and their nested
//! forms, and at the hard breaks `\line`, `\page` and `\column`. Inside it,
//! formatting groups holding text (`{\b bold}`, fields' results) become
//! `<g>` spans, other control words and groups (`\tab`, `\b0`, bookmarks,
//! pictures) `<x/>` placeholders; codes and groups wrapping the whole text
//! stay in the skeleton. The document information's title, subject,
//! keywords and comments (`\info`'s `\title`, `\subject`, `\keywords`,
//! `\doccomm`) are segments of their own. Destinations that are not text
//! (font, colour and style tables, the rest of the document information —
//! author, company, dates —, field instructions, pictures, objects, list
//! numbers, `\*` destinations) are copied as they are.
//!
//! Translated text is written as ASCII: characters of the current code page
//! as `\'hh`, others as `\uN` followed by `\ucN` question marks. A
//! translation whose unbalanced braces (a group opened in one paragraph and
//! closed in another) came back out of order is written with its tags in the
//! source's order, so the output always parses.
//!
//! A large file is read a piece at a time, cut before paragraphs of the
//! document's group ([`cut_points`]).

mod pieces;
mod read;
#[cfg(test)]
mod tests;
mod write;

pub(crate) use pieces::cut_points;

use std::collections::HashMap;
use std::ops::Range;

use encoding_rs::Encoding;

use crate::FormatError;
use crate::inline::SegmentBuilder;
use read::{Group, Item, charset, code_page, destination, parse};

/// Destinations whose content is not text: copied as they are.
const SKIPPED: &[&str] = &[
    "fonttbl",
    "colortbl",
    "stylesheet",
    // Document information other than its title, subject and keywords.
    "author",
    "operator",
    "company",
    "manager",
    "category",
    "hlinkbase",
    "comment",
    "creatim",
    "revtim",
    "printim",
    "buptim",
    "listtable",
    "listoverridetable",
    "revtbl",
    "rsidtbl",
    "generator",
    "pict",
    "object",
    "objdata",
    "fldinst",
    "datafield",
    "themedata",
    "colorschememapping",
    "latentstyles",
    "datastore",
    "xmlnstbl",
    "mmathPr",
    "pgdsctbl",
    "listtext",
    "pntext",
    "pntxta",
    "pntxtb",
    "pn",
    "filetbl",
    "bkmkstart",
    "bkmkend",
    "xe",
    "tc",
    "template",
    "userprops",
    "docvar",
    "falt",
    "panose",
    "sp",
    "sn",
    "sv",
    "nonshppict",
    "shprslt",
    "fontemb",
    "fontfile",
    "do",
];

/// Destinations holding paragraphs of their own (segments apart from the
/// paragraph they stand in).
const NESTED: &[&str] = &[
    "footnote",
    "annotation",
    "header",
    "headerl",
    "headerr",
    "headerf",
    "footer",
    "footerl",
    "footerr",
    "footerf",
    "shptxt",
    // The document information, and its text.
    "info",
    "title",
    "subject",
    "keywords",
    "doccomm",
];

/// `\*` destinations whose content is walked (they hold text destinations).
const WALKED: &[&str] = &["shpinst", "fldrslt", "field"];

/// Control words that end a paragraph (or a segment, for hard breaks).
const BREAKS: &[&str] = &[
    "par", "sect", "cell", "row", "nestcell", "nestrow", "line", "page", "column",
];

/// Control words standing for a character.
const CHARACTERS: &[(&str, char)] = &[
    ("emdash", '\u{2014}'),
    ("endash", '\u{2013}'),
    ("lquote", '\u{2018}'),
    ("rquote", '\u{2019}'),
    ("ldblquote", '\u{201C}'),
    ("rdblquote", '\u{201D}'),
    ("bullet", '\u{2022}'),
    ("emspace", '\u{2003}'),
    ("enspace", '\u{2002}'),
    ("qmspace", '\u{2005}'),
];

/// A piece of the output.
#[derive(Debug, Clone)]
enum Node {
    Raw(Range<usize>),
    Segment(std::sync::Arc<Seg>),
}

/// What a tag id of a segment stands for.
#[derive(Debug)]
enum Tag {
    /// A group holding text: its `{` with the codes after it, its `}`.
    Span {
        open: Vec<Node>,
        close: Range<usize>,
    },
    /// Codes; `braces` is how many groups they open (negative: close).
    Codes { nodes: Vec<Node>, braces: i32 },
}

/// A translated paragraph.
#[derive(Debug)]
struct Seg {
    /// Index of its segment.
    index: usize,
    tags: Vec<Tag>,
    /// The source of the segment's span, for an unchanged translation.
    original: Vec<Node>,
    /// The `{` and codes bare text is written in, when the text stood in
    /// run groups.
    base: Option<Vec<Node>>,
    encoding: &'static Encoding,
    /// `\ucN` in effect: fallback characters written after `\uN`.
    uc: u32,
}

/// The skeleton of an RTF file.
#[derive(Debug)]
pub(crate) struct Skeleton {
    src: Vec<u8>,
    nodes: Vec<Node>,
}

/// A piece of the paragraph being read.
#[derive(Debug)]
enum PItem {
    Text {
        range: Range<usize>,
        text: String,
        /// Code-page bytes not yet decoded.
        pending: Vec<u8>,
        encoding: &'static Encoding,
        uc: u32,
    },
    /// Codes, as output nodes (nested destinations hold segments);
    /// `braces`: groups they open (negative: close).
    Code {
        nodes: Vec<Node>,
        braces: i32,
    },
    Open(Range<usize>),
    Close(Range<usize>),
}

impl PItem {
    fn nodes(&self, out: &mut Vec<Node>) {
        match self {
            PItem::Text { range, .. } | PItem::Open(range) | PItem::Close(range) => {
                push_raw(out, range.clone());
            }
            PItem::Code { nodes, .. } => {
                for node in nodes {
                    match node {
                        Node::Raw(r) => push_raw(out, r.clone()),
                        other => out.push(other.clone()),
                    }
                }
            }
        }
    }
}

fn push_raw(out: &mut Vec<Node>, range: Range<usize>) {
    if range.is_empty() {
        return;
    }
    if let Some(Node::Raw(last)) = out.last_mut()
        && last.end == range.start
    {
        last.end = range.end;
        return;
    }
    out.push(Node::Raw(range));
}

/// Formatting state scoped to a group.
#[derive(Debug, Clone, Copy)]
struct State {
    encoding: &'static Encoding,
    uc: u32,
}

/// The run groups of a segment with the same markup.
struct RunKind {
    /// Their `{` and codes, as bytes.
    key: Vec<u8>,
    /// Bytes of text they hold.
    text: usize,
    /// The markup, as nodes.
    open: Vec<Node>,
    /// Where each one's `}` is.
    closes: Vec<usize>,
}

/// Reads paragraphs into segments.
struct Walker<'s> {
    src: &'s [u8],
    fonts: HashMap<i32, &'static Encoding>,
    /// The code page of text in the default font.
    default: &'static Encoding,
    segments: Vec<String>,
}

/// The paragraph being read and the `\uN` fallback characters still to skip.
#[derive(Default)]
struct Para {
    items: Vec<PItem>,
    skip: u32,
}

impl Para {
    fn code(&mut self, range: Range<usize>) {
        self.skip = 0;
        if let Some(PItem::Code { nodes, .. }) = self.items.last_mut() {
            push_raw(nodes, range);
        } else {
            self.items.push(PItem::Code {
                nodes: vec![Node::Raw(range)],
                braces: 0,
            });
        }
    }

    /// The text item `range` adds to (a new one if the last item is not
    /// text of the same code page just before it): its text and its bytes
    /// not yet decoded.
    fn text(&mut self, range: Range<usize>, state: State) -> Option<(&mut String, &mut Vec<u8>)> {
        let extend = matches!(self.items.last(),
            Some(PItem::Text { range: r, encoding, .. })
                if r.end == range.start && *encoding == state.encoding);
        if !extend {
            self.items.push(PItem::Text {
                range: range.start..range.start,
                text: String::new(),
                pending: Vec::new(),
                encoding: state.encoding,
                uc: state.uc,
            });
        }
        match self.items.last_mut() {
            Some(PItem::Text {
                range: r,
                text,
                pending,
                ..
            }) => {
                r.end = range.end;
                Some((text, pending))
            }
            _ => None,
        }
    }

    /// Adds a character (decoding code-page bytes before it).
    fn char(&mut self, range: Range<usize>, state: State, ch: char) {
        if let Some((text, pending)) = self.text(range, state) {
            decode_into(state.encoding, pending, text);
            text.push(ch);
        }
    }

    /// Adds code-page bytes, skipping fallback characters first.
    fn bytes(&mut self, range: Range<usize>, state: State, bytes: &[u8]) {
        let skipped = bytes.len().min(self.skip as usize);
        self.skip -= skipped as u32;
        if let Some((_, pending)) = self.text(range, state) {
            pending.extend_from_slice(&bytes[skipped..]);
        }
    }
}

fn decode_into(encoding: &'static Encoding, pending: &mut Vec<u8>, text: &mut String) {
    if !pending.is_empty() {
        let (decoded, _) = encoding.decode_without_bom_handling(pending);
        text.push_str(&decoded);
        pending.clear();
    }
}

impl<'s> Walker<'s> {
    fn new(src: &'s [u8], top: &[Item]) -> (Self, State) {
        let mut walker = Walker {
            src,
            fonts: HashMap::new(),
            default: encoding_rs::WINDOWS_1252,
            segments: Vec::new(),
        };
        let mut ansi = None;
        let mut deff = None;
        if let Some(Item::Group(doc)) = top.iter().find(|i| matches!(i, Item::Group(_))) {
            for item in &doc.items {
                match item {
                    Item::Word { name, param, .. } => match &src[name.clone()] {
                        b"ansicpg" => ansi = param.and_then(code_page),
                        b"deff" => deff = *param,
                        _ => {}
                    },
                    Item::Group(g) if destination(src, g).is_some_and(|(d, _)| d == b"fonttbl") => {
                        walker.read_fonts(&g.items, &mut None);
                    }
                    _ => {}
                }
            }
        }
        walker.default = deff
            .and_then(|f| walker.fonts.get(&f).copied())
            .or(ansi)
            .unwrap_or(encoding_rs::WINDOWS_1252);
        let state = State {
            encoding: walker.default,
            uc: 1,
        };
        (walker, state)
    }

    /// Reads the font table's `\fN` … `\fcharsetN` (or `\cpgN`) pairs.
    fn read_fonts(&mut self, items: &[Item], font: &mut Option<i32>) {
        for item in items {
            match item {
                Item::Group(g) => self.read_fonts(&g.items, font),
                Item::Word { name, param, .. } => {
                    let encoding = match &self.src[name.clone()] {
                        b"f" => {
                            *font = *param;
                            None
                        }
                        b"fcharset" => param.and_then(charset),
                        b"cpg" => param.and_then(code_page),
                        _ => None,
                    };
                    if let (Some(f), Some(e)) = (*font, encoding) {
                        self.fonts.insert(f, e);
                    }
                }
                _ => {}
            }
        }
    }

    /// Walks the items of a text destination, ending paragraphs into `out`.
    fn items(&mut self, items: &[Item], mut state: State, para: &mut Para, out: &mut Vec<Node>) {
        for item in items {
            match item {
                Item::Group(g) => {
                    para.skip = 0;
                    self.group(g, state, para, out);
                }
                Item::Word { name, param, range } => {
                    let name = &self.src[name.clone()];
                    if let Some(&(_, ch)) = CHARACTERS.iter().find(|(n, _)| n.as_bytes() == name) {
                        para.char(range.clone(), state, ch);
                        continue;
                    }
                    match name {
                        b"u" => {
                            let unit = param.unwrap_or(0);
                            let unit = if unit < 0 { unit + 65_536 } else { unit };
                            let ch = u32::try_from(unit)
                                .ok()
                                .and_then(char::from_u32)
                                .unwrap_or('\u{FFFD}');
                            para.char(range.clone(), state, ch);
                            para.skip = state.uc;
                            continue;
                        }
                        b"uc" => state.uc = param.and_then(|n| u32::try_from(n).ok()).unwrap_or(1),
                        b"f" => {
                            state.encoding = param
                                .and_then(|f| self.fonts.get(&f).copied())
                                .unwrap_or(self.default);
                        }
                        b"plain" => state.encoding = self.default,
                        _ => {}
                    }
                    para.code(range.clone());
                    if BREAKS.iter().any(|b| b.as_bytes() == name) {
                        self.end_paragraph(para, out);
                    }
                }
                Item::Symbol { ch, range } => match ch {
                    b'\\' | b'{' | b'}' => para.char(range.clone(), state, char::from(*ch)),
                    b'~' => para.char(range.clone(), state, '\u{A0}'),
                    b'_' => para.char(range.clone(), state, '\u{2011}'),
                    b'\r' | b'\n' => {
                        para.code(range.clone());
                        self.end_paragraph(para, out);
                    }
                    _ => para.code(range.clone()),
                },
                Item::Hex { byte, range } => para.bytes(range.clone(), state, &[*byte]),
                Item::Text(range) => para.bytes(range.clone(), state, &self.src[range.clone()]),
                Item::Ignored(range) => match para.items.last_mut() {
                    Some(PItem::Text { range: r, .. }) if r.end == range.start => {
                        r.end = range.end;
                    }
                    _ => para.code(range.clone()),
                },
                Item::Binary(range) => para.code(range.clone()),
            }
        }
    }

    fn group(&mut self, g: &Group, state: State, para: &mut Para, out: &mut Vec<Node>) {
        let (name, starred) = destination(self.src, g).unwrap_or((b"", false));
        let is = |list: &[&str]| list.iter().any(|d| d.as_bytes() == name);
        if is(NESTED) {
            let mut inner = Vec::new();
            let mut inner_para = Para::default();
            push_raw(&mut inner, g.open.clone());
            self.items(&g.items, state, &mut inner_para, &mut inner);
            self.end_paragraph(&mut inner_para, &mut inner);
            push_raw(&mut inner, g.close.clone());
            para.skip = 0;
            para.items.push(PItem::Code {
                nodes: inner,
                braces: 0,
            });
        } else if is(SKIPPED) || (starred && !is(WALKED)) {
            para.code(g.span());
        } else {
            para.items.push(PItem::Open(g.open.clone()));
            self.items(&g.items, state, para, out);
            para.skip = 0;
            para.items.push(PItem::Close(g.close.clone()));
        }
    }

    /// Ends the paragraph read so far: its text becomes a segment, the rest
    /// stays as written.
    fn end_paragraph(&mut self, para: &mut Para, out: &mut Vec<Node>) {
        let mut items = std::mem::take(&mut para.items);
        para.skip = 0;
        for item in &mut items {
            if let PItem::Text {
                text,
                pending,
                encoding,
                ..
            } = item
            {
                decode_into(encoding, pending, text);
            }
        }
        // Braces matched inside the paragraph.
        let mut partner = vec![None; items.len()];
        let mut open = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match item {
                PItem::Open(_) => open.push(i),
                PItem::Close(_) => {
                    if let Some(j) = open.pop() {
                        partner[i] = Some(j);
                        partner[j] = Some(i);
                    }
                }
                _ => {}
            }
        }
        let has_text = |i: &PItem| matches!(i, PItem::Text { text, .. } if !text.trim().is_empty());
        let (Some(first), Some(last)) = (
            items.iter().position(has_text),
            items.iter().rposition(has_text),
        ) else {
            for item in &items {
                item.nodes(out);
            }
            return;
        };
        // Codes and groups around all the text stay in the skeleton.
        let mut start = 0;
        while start < first {
            if matches!(items[start], PItem::Open(_)) && partner[start].is_some_and(|p| p <= last) {
                break;
            }
            start += 1;
        }
        let mut end = items.len();
        while end > last + 1 {
            if matches!(items[end - 1], PItem::Close(_))
                && partner[end - 1].is_some_and(|p| p >= start)
            {
                break;
            }
            end -= 1;
        }
        for item in &items[..start] {
            item.nodes(out);
        }
        let seg = self.segment(&items, &partner, start..end);
        out.push(Node::Segment(std::sync::Arc::new(seg)));
        for item in &items[end..] {
            item.nodes(out);
        }
    }

    /// The segment of `items[span]`.
    ///
    /// Groups holding no text are placeholders. When all the text stands in
    /// groups, the run groups (codes, then text only) most of the text is
    /// in are bare text: their translation is written in a group like them
    /// (LibreOffice and Word wrap every run in a group of its own).
    fn segment(&mut self, items: &[PItem], partner: &[Option<usize>], span: Range<usize>) -> Seg {
        let inside = |i: usize| partner[i].is_some_and(|p| span.contains(&p));
        let has_text = |from: usize, to: usize| {
            items[from..to]
                .iter()
                .any(|i| matches!(i, PItem::Text { text, .. } if !text.trim().is_empty()))
        };
        let base = self.base_run(items, partner, span.clone());
        let mut builder = SegmentBuilder::new();
        let mut tags = Vec::new();
        let mut codes: Option<(Vec<Node>, i32)> = None;
        let flush = |codes: &mut Option<(Vec<Node>, i32)>,
                     builder: &mut SegmentBuilder,
                     tags: &mut Vec<Tag>| {
            if let Some((nodes, braces)) = codes.take() {
                builder.placeholder();
                tags.push(Tag::Codes { nodes, braces });
            }
        };
        // Closes of the base run groups, written as bare text.
        let mut bare_closes = Vec::new();
        let mut i = span.start;
        let (mut encoding, mut uc) = (self.default, 1);
        let mut first_text = true;
        while i < span.end {
            match &items[i] {
                PItem::Text {
                    text,
                    encoding: e,
                    uc: u,
                    ..
                } => {
                    flush(&mut codes, &mut builder, &mut tags);
                    if first_text {
                        (encoding, uc, first_text) = (*e, *u, false);
                    }
                    builder.text(text);
                }
                PItem::Open(range) if inside(i) => {
                    let close_at = partner[i].unwrap_or(i);
                    if !has_text(i, close_at) {
                        // A group without text: one placeholder.
                        let (nodes, _) = codes.get_or_insert_with(|| (Vec::new(), 0));
                        for item in &items[i..=close_at] {
                            item.nodes(nodes);
                        }
                        i = close_at + 1;
                        continue;
                    }
                    flush(&mut codes, &mut builder, &mut tags);
                    let close = match &items[close_at] {
                        PItem::Close(r) => r.clone(),
                        _ => range.end..range.end,
                    };
                    let mut open = vec![Node::Raw(range.clone())];
                    while let Some(code @ PItem::Code { braces: 0, .. }) = items.get(i + 1)
                        && i + 1 < span.end
                    {
                        code.nodes(&mut open);
                        i += 1;
                    }
                    if base.as_ref().is_some_and(|(_, at)| at.contains(&close_at)) {
                        bare_closes.push(close_at);
                    } else {
                        builder.open();
                        tags.push(Tag::Span { open, close });
                    }
                }
                PItem::Close(_) if inside(i) => {
                    flush(&mut codes, &mut builder, &mut tags);
                    if !bare_closes.contains(&i) {
                        builder.close();
                    }
                }
                other => {
                    let delta = match other {
                        PItem::Open(_) => 1,
                        PItem::Close(_) => -1,
                        PItem::Code { braces, .. } => *braces,
                        PItem::Text { .. } => 0,
                    };
                    let (nodes, braces) = codes.get_or_insert_with(|| (Vec::new(), 0));
                    other.nodes(nodes);
                    *braces += delta;
                }
            }
            i += 1;
        }
        flush(&mut codes, &mut builder, &mut tags);
        let mut original = Vec::new();
        for item in &items[span] {
            item.nodes(&mut original);
        }
        let index = self.segments.len();
        self.segments.push(builder.finish());
        Seg {
            index,
            tags,
            original,
            base: base.map(|(open, _)| open),
            encoding,
            uc,
        }
    }

    /// The run group whose text is bare in the segment of `items[span]`:
    /// its `{` and codes, and the closes of the groups like it; `None` when
    /// some text stands outside groups.
    fn base_run(
        &self,
        items: &[PItem],
        partner: &[Option<usize>],
        span: Range<usize>,
    ) -> Option<(Vec<Node>, Vec<usize>)> {
        let mut runs: Vec<RunKind> = Vec::new();
        let mut depth = 0usize;
        for i in span.clone() {
            match &items[i] {
                PItem::Open(range) if partner[i].is_some_and(|p| span.contains(&p)) => {
                    depth += 1;
                    if depth > 1 {
                        continue;
                    }
                    let close = partner[i]?;
                    let mut open = vec![Node::Raw(range.clone())];
                    let mut j = i + 1;
                    while let Some(code @ PItem::Code { braces: 0, .. }) = items.get(j)
                        && j < close
                    {
                        code.nodes(&mut open);
                        j += 1;
                    }
                    let mut len = 0;
                    let simple = items[j..close].iter().all(|item| match item {
                        PItem::Text { text, .. } => {
                            len += text.len();
                            true
                        }
                        _ => false,
                    });
                    if !simple || len == 0 {
                        continue;
                    }
                    let key = self.bytes(&open);
                    match runs.iter_mut().find(|r| r.key == key) {
                        Some(run) => {
                            run.text += len;
                            run.closes.push(close);
                        }
                        None => runs.push(RunKind {
                            key,
                            text: len,
                            open,
                            closes: vec![close],
                        }),
                    }
                }
                PItem::Close(_) if partner[i].is_some_and(|p| span.contains(&p)) => {
                    depth = depth.saturating_sub(1);
                }
                PItem::Text { text, .. } if depth == 0 && !text.trim().is_empty() => return None,
                _ => {}
            }
        }
        let run = runs.into_iter().max_by_key(|r| r.text)?;
        Some((run.open, run.closes))
    }

    /// The bytes of raw nodes.
    fn bytes(&self, nodes: &[Node]) -> Vec<u8> {
        let mut out = Vec::new();
        for node in nodes {
            if let Node::Raw(r) = node {
                out.extend_from_slice(&self.src[r.clone()]);
            }
        }
        out
    }
}

pub(crate) fn extract(input: &[u8]) -> Result<(Vec<String>, Skeleton), FormatError> {
    let top = parse(input)?;
    let (mut walker, state) = Walker::new(input, &top);
    let mut nodes = Vec::new();
    let mut para = Para::default();
    walker.items(&top, state, &mut para, &mut nodes);
    walker.end_paragraph(&mut para, &mut nodes);
    Ok((
        walker.segments,
        Skeleton {
            src: input.to_vec(),
            nodes,
        },
    ))
}
