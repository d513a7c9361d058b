//! FrameMaker Maker Interchange Format (`.mif`): one segment per paragraph
//! (`<Para>`) of the text flows, table cells and footnotes, split at hard
//! returns.
//!
//! The file is read into its statements (`<Name … >`) and strings
//! (`` `text' ``) with their byte ranges. A paragraph's text is the strings
//! of its `<ParaLine>`s; `<Char …>` statements standing for characters
//! (`HardSpace`, `EmDash`, `Bullet`…) are text, `<Char HardReturn>` ends a
//! segment, and every other statement inside a line (`<Font>` changes,
//! `<Char Tab>`, variables, cross-references, markers, anchors of frames,
//! tables and footnotes) is a placeholder. `<TextRectID>` is layout and
//! stays in its line.
//!
//! The text of markers a reader sees or searches (`<Marker>` of type Index,
//! Subject, Comment, Glossary and the running header/footer markers) is a
//! segment of its own, after its paragraph's: an index entry's separators
//! (`:` between levels, `;` between entries), its sort strings (`[…]`) and
//! its building blocks (`<$startrange>`, `<Emphasis>`) are tags. Markers
//! holding commands (Hypertext, Cross-Ref, Conditional Text…) are kept.
//!
//! Text flows laid out on reference pages (`<PageType ReferencePage>`:
//! FrameMaker's format definitions — HTML and XML mapping tables with
//! `P:Body` and `Parent = UL`, table-of-contents and index templates) and the
//! tables anchored in them are not text to translate and are kept.
//!
//! A paragraph translated as itself keeps its bytes. Otherwise it is
//! written back with all its text in its first `<ParaLine>` and its other
//! lines holding only their layout: FrameMaker breaks lines again when it
//! opens the file. MIF 8 and later are UTF-8; earlier versions are read
//! and written in FrameRoman (Mac Roman), characters outside it as `\xNN `
//! escapes or, when it has none, `?`.
//!
//! A large file is read a piece at a time, cut before the paragraphs of its
//! body text flows ([`cut_points`]).

mod pieces;
#[cfg(test)]
mod tests;

pub(crate) use pieces::cut_points;

use std::ops::Range;

use encoding_rs::MACINTOSH;

use crate::FormatError;
use crate::inline::{self, Piece, SegmentBuilder};

/// Deeper nesting of statements is refused.
const MAX_DEPTH: usize = 512;

/// `<Char …>` names that are characters of the text.
const CHARACTERS: &[(&str, char)] = &[
    ("HardSpace", '\u{A0}'),
    ("EmDash", '\u{2014}'),
    ("EnDash", '\u{2013}'),
    ("EmSpace", '\u{2003}'),
    ("EnSpace", '\u{2002}'),
    ("ThinSpace", '\u{2009}'),
    ("NumberSpace", '\u{2007}'),
    ("HardHyphen", '\u{2011}'),
    ("Cent", '\u{A2}'),
    ("Pound", '\u{A3}'),
    ("Yen", '\u{A5}'),
    ("Bullet", '\u{2022}'),
    ("Dagger", '\u{2020}'),
    ("DoubleDagger", '\u{2021}'),
];

fn corrupt(detail: &str) -> FormatError {
    FormatError::corrupt(format!("The file is not a valid MIF document: {detail}"))
}

// ---------------------------------------------------------------- reading

/// A statement or a string, with its range in the text.
#[derive(Debug)]
enum Item {
    Statement(Statement),
    /// `` `…' ``, quotes included.
    Str(Range<usize>),
}

#[derive(Debug)]
struct Statement {
    /// Its name (`Para`).
    name: Range<usize>,
    /// From `<` to `>`.
    range: Range<usize>,
    children: Vec<Item>,
}

/// Reads the statements of `text`.
fn parse(text: &str) -> Result<Vec<Item>, FormatError> {
    let b = text.as_bytes();
    let mut top = Vec::new();
    let mut open: Vec<(usize, Range<usize>, Vec<Item>)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'<' => {
                if open.len() >= MAX_DEPTH {
                    return Err(corrupt("its statements are nested too deeply"));
                }
                let start = i + 1;
                let len = b[start..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .count();
                open.push((i, start..start + len, Vec::new()));
                i = start + len;
            }
            b'>' => {
                let Some((at, name, children)) = open.pop() else {
                    return Err(corrupt("a statement ends that was never begun"));
                };
                let item = Item::Statement(Statement {
                    name,
                    range: at..i + 1,
                    children,
                });
                match open.last_mut() {
                    Some((.., children)) => children.push(item),
                    None => top.push(item),
                }
                i += 1;
            }
            b'`' => {
                let mut j = i + 1;
                loop {
                    match b.get(j) {
                        Some(b'\\') => j += 2,
                        Some(b'\'') => break,
                        Some(_) => j += 1,
                        None => return Err(corrupt("a string is not closed")),
                    }
                }
                let item = Item::Str(i..j + 1);
                match open.last_mut() {
                    Some((.., children)) => children.push(item),
                    None => top.push(item),
                }
                i = j + 1;
            }
            b'#' => {
                i += b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .unwrap_or(b.len() - i);
            }
            _ => i += 1,
        }
    }
    if !open.is_empty() {
        return Err(corrupt(
            "its statements are not all ended (the file may be truncated)",
        ));
    }
    Ok(top)
}

/// The version of `<MIFFile 7.00>` at the start of the file.
fn version(input: &[u8]) -> Result<f32, FormatError> {
    let head = &input[..input.len().min(64)];
    let rest = head
        .strip_prefix(b"<MIFFile")
        .ok_or_else(|| corrupt("it does not start with <MIFFile"))?;
    let digits: String = rest
        .iter()
        .skip_while(|b| b.is_ascii_whitespace())
        .take_while(|b| b.is_ascii_digit() || **b == b'.')
        .map(|&b| char::from(b))
        .collect();
    digits
        .parse()
        .map_err(|_| corrupt("its <MIFFile> statement has no version"))
}

/// The text of a string (`` `…' `` with its escapes; `\xNN ` in FrameRoman,
/// which MIF 8 keeps for them).
fn decode(raw: &str) -> String {
    let inner = raw
        .strip_prefix('`')
        .and_then(|r| r.strip_suffix('\''))
        .unwrap_or(raw);
    let mut out = String::new();
    let mut chars = inner.char_indices();
    while let Some((at, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some((_, 't')) => out.push('\t'),
            Some((_, 'q')) => out.push('\''),
            Some((_, 'Q')) => out.push('`'),
            Some((_, 'x')) => {
                let hex: String = inner[at + 2..].chars().take(2).collect();
                match u8::from_str_radix(&hex, 16) {
                    Ok(byte) => {
                        out.push_str(&MACINTOSH.decode_without_bom_handling(&[byte]).0);
                        chars.next();
                        chars.next();
                        // The escape's delimiting space.
                        if inner[at + 4..].starts_with(' ') {
                            chars.next();
                        }
                    }
                    Err(_) => out.push('x'),
                }
            }
            Some((_, other)) => out.push(other),
            None => {}
        }
    }
    out
}

// ---------------------------------------------------------------- skeleton

/// A paragraph's line: `<ParaLine`, its layout statements, its `>`.
#[derive(Debug)]
struct Line {
    start: Range<usize>,
    layout: Vec<Range<usize>>,
    end: Range<usize>,
}

/// A piece of a paragraph's text flow.
#[derive(Debug, Clone)]
enum Flow {
    Text { range: Range<usize>, text: String },
    Code(Range<usize>),
    Break(Range<usize>),
}

/// What a paragraph's flow is written as.
#[derive(Debug)]
enum Unit {
    /// Pieces written as they are.
    Raw(Vec<Flow>),
    /// A segment: its pieces as read, and its placeholders' statements.
    Segment {
        index: usize,
        original: Vec<Flow>,
        tags: Vec<Vec<Range<usize>>>,
    },
}

#[derive(Debug)]
struct Para {
    range: Range<usize>,
    lines: Vec<Line>,
    units: Vec<Unit>,
}

/// A marker's text (`` `…' `` of its `<MText>`): its segment and the
/// markup of the segment's tags.
#[derive(Debug)]
struct MarkerText {
    range: Range<usize>,
    index: usize,
    tags: inline::Tags,
}

/// Marker types whose text is read (by name, and by number when a marker
/// names none): running header/footer texts, index entries, comments,
/// subjects and glossary entries.
const TEXT_MARKERS: &[(&str, &str)] = &[
    ("0", "Header/Footer $1"),
    ("1", "Header/Footer $2"),
    ("2", "Index"),
    ("3", "Comment"),
    ("4", "Subject"),
    ("6", "Glossary"),
];

/// The length of an index entry's building block at the start of `text`:
/// a level or entry separator, a sort string (`[…]`) or a tag (`<$nopage>`,
/// `<Emphasis>`, `<Default Para Font>`).
fn index_code(text: &str) -> Option<usize> {
    match text.chars().next()? {
        ':' | ';' => Some(1),
        '[' => text.find(']').map(|end| end + 1),
        '<' => text.find('>').map(|end| end + 1),
        _ => None,
    }
}

/// The skeleton of a MIF file.
#[derive(Debug)]
pub(crate) struct Skeleton {
    text: String,
    /// MIF before 8: FrameRoman.
    legacy: bool,
    paras: Vec<Para>,
    /// Marker texts, in document order.
    markers: Vec<MarkerText>,
}

struct Reader<'t> {
    text: &'t str,
    segments: Vec<String>,
    paras: Vec<Para>,
    markers: Vec<MarkerText>,
    /// Text rectangles of reference pages (`<TextRect <ID n>>` on a page
    /// of `<PageType ReferencePage>`): their flows are format definitions.
    reference_rects: Vec<String>,
    /// Tables anchored in reference flows (`<ATbl n>`).
    reference_tables: Vec<String>,
}

impl Reader<'_> {
    fn name(&self, s: &Statement) -> &str {
        &self.text[s.name.clone()]
    }

    /// The value of the first `<name value>` statement among `items`.
    fn value(&self, items: &[Item], name: &str) -> Option<String> {
        items.iter().find_map(|item| match item {
            Item::Statement(s) if self.name(s) == name => {
                Some(self.text[s.name.end..s.range.end - 1].trim().to_owned())
            }
            _ => None,
        })
    }

    /// Every `<name value>` statement's value below `items`.
    fn values(&self, items: &[Item], name: &str, out: &mut Vec<String>) {
        for item in items {
            if let Item::Statement(s) = item {
                if self.name(s) == name {
                    out.push(self.text[s.name.end..s.range.end - 1].trim().to_owned());
                } else {
                    self.values(&s.children, name, out);
                }
            }
        }
    }

    /// Finds the reference pages' rectangles, then the flows laid out in
    /// them and the tables those anchor ([`Reader::reference_rects`]).
    fn find_reference_flows(&mut self, items: &[Item]) {
        for item in items {
            let Item::Statement(page) = item else {
                continue;
            };
            if self.name(page) == "Page"
                && self.value(&page.children, "PageType").as_deref() == Some("ReferencePage")
            {
                let mut rects = Vec::new();
                for child in &page.children {
                    if let Item::Statement(r) = child
                        && self.name(r) == "TextRect"
                        && let Some(id) = self.value(&r.children, "ID")
                    {
                        rects.push(id);
                    }
                }
                self.reference_rects.extend(rects);
            }
        }
        for item in items {
            let Item::Statement(flow) = item else {
                continue;
            };
            if self.name(flow) == "TextFlow" && self.is_reference_flow(flow) {
                let mut tables = Vec::new();
                self.values(&flow.children, "ATbl", &mut tables);
                self.reference_tables.extend(tables);
            }
        }
    }

    /// Whether a text flow is laid out in a reference page's rectangle.
    fn is_reference_flow(&self, flow: &Statement) -> bool {
        let mut rects = Vec::new();
        self.values(&flow.children, "TextRectID", &mut rects);
        rects
            .first()
            .is_some_and(|r| self.reference_rects.contains(r))
    }

    fn walk(&mut self, items: &[Item]) {
        for item in items {
            if let Item::Statement(s) = item {
                // Paragraphs stand in flows, table cells and footnotes,
                // never in another paragraph.
                match self.name(s) {
                    "Para" => self.para(s),
                    // Reference pages' flows and their tables define formats
                    // (`P:Body`, mapping tables, TOC templates): kept.
                    "TextFlow" if self.is_reference_flow(s) => {}
                    "Tbl"
                        if self
                            .value(&s.children, "TblID")
                            .is_some_and(|id| self.reference_tables.contains(&id)) => {}
                    _ => self.walk(&s.children),
                }
            }
        }
    }

    /// The string of a marker's `<MText>` when its type holds text for
    /// readers; whether it is an index entry.
    fn marker_text(&self, marker: &Statement) -> Option<(Range<usize>, bool)> {
        let type_name = self.value(&marker.children, "MTypeName");
        let type_name = type_name.as_deref().map(|n| n.trim_matches(['`', '\'']));
        let number = self.value(&marker.children, "MType");
        let kind = TEXT_MARKERS.iter().find(|(n, name)| match type_name {
            Some(t) => t == *name,
            None => number.as_deref() == Some(*n),
        })?;
        let mtext = marker.children.iter().find_map(|c| match c {
            Item::Statement(s) if self.name(s) == "MText" => Some(s),
            _ => None,
        })?;
        let string = mtext.children.iter().find_map(|c| match c {
            Item::Str(r) => Some(r.clone()),
            Item::Statement(_) => None,
        })?;
        Some((string, kind.1 == "Index"))
    }

    fn para(&mut self, para: &Statement) {
        let mut lines = Vec::new();
        let mut flow = Vec::new();
        let mut markers = Vec::new();
        for item in &para.children {
            let Item::Statement(line) = item else {
                continue;
            };
            if self.name(line) != "ParaLine" {
                continue;
            }
            let mut layout = Vec::new();
            for child in &line.children {
                let Item::Statement(s) = child else { continue };
                match self.name(s) {
                    "String" => {
                        let text = s
                            .children
                            .iter()
                            .filter_map(|c| match c {
                                Item::Str(r) => Some(decode(&self.text[r.clone()])),
                                Item::Statement(_) => None,
                            })
                            .collect();
                        flow.push(Flow::Text {
                            range: s.range.clone(),
                            text,
                        });
                    }
                    "TextRectID" => layout.push(s.range.clone()),
                    "Char" => flow.push(self.char(s)),
                    "Marker" => {
                        markers.extend(self.marker_text(s));
                        flow.push(Flow::Code(s.range.clone()));
                    }
                    _ => flow.push(Flow::Code(s.range.clone())),
                }
            }
            lines.push(Line {
                start: line.range.start..line.name.end,
                layout,
                end: line.range.end - 1..line.range.end,
            });
        }
        if lines.is_empty() {
            return;
        }
        let mut units = Vec::new();
        let mut rest = flow.as_slice();
        while !rest.is_empty() {
            let cut = rest
                .iter()
                .position(|f| matches!(f, Flow::Break(_)))
                .map_or(rest.len(), |i| i + 1);
            let (piece, after) = rest.split_at(cut);
            self.unit(piece, &mut units);
            rest = after;
        }
        self.paras.push(Para {
            range: para.range.clone(),
            lines,
            units,
        });
        for (range, index_entry) in markers {
            let text = decode(&self.text[range.clone()]);
            if !text.chars().any(char::is_alphabetic) {
                continue;
            }
            let (segment, tags) = if index_entry {
                crate::placeholders::with_codes(&text, index_code)
            } else {
                crate::placeholders::with_codes(&text, |_| None)
            };
            self.markers.push(MarkerText {
                range,
                index: self.segments.len(),
                tags,
            });
            self.segments.push(segment);
        }
    }

    /// A `<Char Name>` statement: a character, a hard return or a code.
    fn char(&self, s: &Statement) -> Flow {
        let name = self.text[s.name.end..s.range.end - 1].trim();
        if name == "HardReturn" {
            return Flow::Break(s.range.clone());
        }
        match CHARACTERS.iter().find(|(n, _)| *n == name) {
            Some(&(_, ch)) => Flow::Text {
                range: s.range.clone(),
                text: ch.to_string(),
            },
            None => Flow::Code(s.range.clone()),
        }
    }

    /// The units of a piece of flow up to (and with) a hard return: a
    /// segment for its text, codes around it as they are.
    fn unit(&mut self, piece: &[Flow], units: &mut Vec<Unit>) {
        let has_text = |f: &Flow| matches!(f, Flow::Text { text, .. } if !text.trim().is_empty());
        let (Some(first), Some(last)) = (
            piece.iter().position(has_text),
            piece.iter().rposition(has_text),
        ) else {
            units.push(Unit::Raw(piece.to_vec()));
            return;
        };
        units.push(Unit::Raw(piece[..first].to_vec()));
        let mut builder = SegmentBuilder::new();
        let mut tags: Vec<Vec<Range<usize>>> = Vec::new();
        let mut codes: Vec<Range<usize>> = Vec::new();
        for f in &piece[first..=last] {
            match f {
                Flow::Text { text, .. } => {
                    if !codes.is_empty() {
                        builder.placeholder();
                        tags.push(std::mem::take(&mut codes));
                    }
                    builder.text(text);
                }
                Flow::Code(r) | Flow::Break(r) => codes.push(r.clone()),
            }
        }
        units.push(Unit::Segment {
            index: self.segments.len(),
            original: piece[first..=last].to_vec(),
            tags,
        });
        self.segments.push(builder.finish());
        units.push(Unit::Raw(piece[last + 1..].to_vec()));
    }
}

pub(crate) fn extract(input: &[u8]) -> Result<(Vec<String>, Skeleton), FormatError> {
    let version = version(input)?;
    let legacy = version < 8.0;
    let text = if legacy {
        MACINTOSH.decode_without_bom_handling(input).0.into_owned()
    } else {
        String::from_utf8(input.to_vec())
            .map_err(|_| corrupt("it is MIF 8 or later but not valid UTF-8"))?
    };
    let items = parse(&text)?;
    let mut reader = Reader {
        text: &text,
        segments: Vec::new(),
        paras: Vec::new(),
        markers: Vec::new(),
        reference_rects: Vec::new(),
        reference_tables: Vec::new(),
    };
    reader.find_reference_flows(&items);
    // Paragraphs come in document order: none holds another.
    reader.walk(&items);
    let Reader {
        segments,
        paras,
        markers,
        ..
    } = reader;
    Ok((
        segments,
        Skeleton {
            text,
            legacy,
            paras,
            markers,
        },
    ))
}

// ---------------------------------------------------------------- writing

impl crate::filter::Merge for Skeleton {
    fn merge(&self, source: &[String], translated: &[String]) -> Vec<u8> {
        let mut out = String::with_capacity(self.text.len() + self.text.len() / 4);
        let mut done = 0;
        for para in &self.paras {
            let unchanged = para.units.iter().all(|u| match u {
                Unit::Raw(_) => true,
                Unit::Segment { index, .. } => source.get(*index) == translated.get(*index),
            });
            if unchanged || para.range.start < done {
                continue;
            }
            self.copy(done..para.range.start, source, translated, &mut out);
            self.para(para, source, translated, &mut out);
            done = para.range.end;
        }
        self.copy(done..self.text.len(), source, translated, &mut out);
        if self.legacy {
            MACINTOSH.encode(&out).0.into_owned()
        } else {
            out.into_bytes()
        }
    }
}

impl Skeleton {
    /// Copies the source at `range`, the marker texts in it translated.
    fn copy(
        &self,
        range: Range<usize>,
        source: &[String],
        translated: &[String],
        out: &mut String,
    ) {
        let first = self
            .markers
            .partition_point(|m| m.range.start < range.start);
        let mut at = range.start;
        for marker in self.markers[first..]
            .iter()
            .take_while(|m| m.range.end <= range.end)
        {
            let (Some(src), Some(tr)) = (source.get(marker.index), translated.get(marker.index))
            else {
                continue;
            };
            if src == tr {
                continue;
            }
            out.push_str(&self.text[at..marker.range.start]);
            out.push('`');
            self.escape_into(out, &crate::placeholders::restore(tr, &marker.tags));
            out.push('\'');
            at = marker.range.end;
        }
        out.push_str(&self.text[at..range.end]);
    }

    /// Writes a paragraph with all its text in its first line.
    fn para(&self, para: &Para, source: &[String], translated: &[String], out: &mut String) {
        let t = &self.text;
        let (Some(first), Some(last)) = (para.lines.first(), para.lines.last()) else {
            out.push_str(&t[para.range.clone()]);
            return;
        };
        out.push_str(&t[para.range.start..first.start.start]);
        for (i, line) in para.lines.iter().enumerate() {
            out.push_str(&t[line.start.clone()]);
            for layout in &line.layout {
                out.push_str("\n   ");
                out.push_str(&t[layout.clone()]);
            }
            if i == 0 {
                for unit in &para.units {
                    self.unit(unit, source, translated, out);
                }
            }
            out.push_str("\n  ");
            out.push_str(&t[line.end.clone()]);
            if i + 1 < para.lines.len() {
                out.push_str("\n  ");
            }
        }
        out.push_str(&t[last.end.end..para.range.end]);
    }

    fn unit(&self, unit: &Unit, source: &[String], translated: &[String], out: &mut String) {
        let flows = |flows: &[Flow], out: &mut String| {
            for f in flows {
                let (Flow::Text { range, .. } | Flow::Code(range) | Flow::Break(range)) = f;
                out.push_str("\n   ");
                self.copy(range.clone(), source, translated, out);
            }
        };
        match unit {
            Unit::Raw(pieces) => flows(pieces, out),
            Unit::Segment {
                index,
                original,
                tags,
            } => {
                let (Some(src), Some(tr)) = (source.get(*index), translated.get(*index)) else {
                    flows(original, out);
                    return;
                };
                if src == tr {
                    flows(original, out);
                    return;
                }
                let mut used = vec![false; tags.len()];
                for piece in inline::parse(tr) {
                    match piece {
                        Piece::Text(text) => {
                            out.push_str("\n   <String `");
                            self.escape_into(out, &text);
                            out.push_str("'>");
                        }
                        Piece::Placeholder(id) => {
                            let at = (id as usize).wrapping_sub(1);
                            if let Some(codes) = tags.get(at) {
                                used[at] = true;
                                for code in codes {
                                    out.push_str("\n   ");
                                    self.copy(code.clone(), source, translated, out);
                                }
                            }
                        }
                        Piece::Open(_) | Piece::Close(_) => {}
                    }
                }
                // Codes the translation lost (font changes, anchors) are
                // written after it, so nothing anchored disappears.
                for (codes, _) in tags.iter().zip(&used).filter(|(_, u)| !**u) {
                    for code in codes {
                        out.push_str("\n   ");
                        self.copy(code.clone(), source, translated, out);
                    }
                }
            }
        }
    }

    /// Appends `text` escaped for a MIF string.
    fn escape_into(&self, out: &mut String, text: &str) {
        for ch in text.chars() {
            match ch {
                '\t' => out.push_str("\\t"),
                '\'' => out.push_str("\\q"),
                '`' => out.push_str("\\Q"),
                '>' => out.push_str("\\>"),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 => {}
                c if c.is_ascii() || !self.legacy => out.push(c),
                c => {
                    let mut buf = [0u8; 4];
                    let (bytes, _, unmappable) = MACINTOSH.encode(c.encode_utf8(&mut buf));
                    match bytes.first() {
                        Some(b) if !unmappable => out.push_str(&format!("\\x{b:02x} ")),
                        _ => out.push('?'),
                    }
                }
            }
        }
    }
}
