//! Text documents cut into pieces at unit boundaries, so that a translation
//! holds the file, its output and one piece rather than every segment of the
//! file at once ([`crate::stream::translate`]).
//!
//! A piece is a document of its own for the format's filter: plain text at
//! line ends; SubRip before a cue; WebVTT before a cue, pieces after the
//! first given a `WEBVTT` header the output drops again; Markdown at a blank
//! line outside fenced code, before a line that starts a block at the left
//! margin (never in a file with link reference or footnote definitions,
//! which blocks anywhere may use); XLIFF between the units and groups of its
//! one `<body>` (1.2) or `<file>` (2.x), each piece inside the file's own
//! head and tail, with comments marking where the piece's output starts and
//! ends; .NET and Android resources the same way between the entries of their
//! `<root>` or `<resources>`; other XML and DITA between the children of the
//! element with the most of them and no text, inside a made head and tail
//! (the prolog, that element's and its ancestors' start and end tags; a file
//! with global ITS rules stays whole);
//! HTML before a block element of the body outside what the filter keeps
//! whole; YAML at the keys of the first mapping from the top with more than one key,
//! each piece under the lines of the keys above it; Java properties before a
//! line that continues no other; Apple strings
//! between entries, outside strings and comments; JSON between the members of
//! the object or array holding most of the file, each piece inside brackets
//! standing for the path down to it.
//! Only UTF-8 files are cut (their bytes can be cut at any line end);
//! a file smaller than two pieces is one.

use std::ops::Range;

/// How large a piece is, at least (the last may be smaller).
pub(crate) const PIECE_SIZE: usize = 128 << 10;

/// Marks where a piece's own output starts inside its envelope.
const START: &[u8] = b"<!--tolk-piece-start-->";
/// Marks where it ends.
const END: &[u8] = b"<!--tolk-piece-end-->";
/// [`START`] and [`END`] as text.
const START_STR: &str = "<!--tolk-piece-start-->";
const END_STR: &str = "<!--tolk-piece-end-->";

/// How a piece is made a document of its own and found again in the
/// filter's output.
#[derive(Debug, Clone)]
pub(crate) enum Envelope {
    /// The piece is a document as it is.
    Bare,
    /// A header before every piece but the first (WebVTT's `WEBVTT`), written
    /// back by the filter unchanged and dropped from its output.
    Header(&'static [u8]),
    /// XML: the file's head and tail around every piece (not the head for
    /// the first, nor the tail for the last), with comments marking the
    /// piece.
    Xml {
        head: Range<usize>,
        tail: Range<usize>,
    },
    /// XML whose head and tail are made rather than read: the prolog and the
    /// start tags of the container and its ancestors, and their end tags;
    /// otherwise as [`Envelope::Xml`].
    Tree { head: String, tail: String },
    /// YAML: the lines before the mapping whose entries are cut (its keys'
    /// path, `en:`) before every piece but the first; that many lines are
    /// dropped from the piece's output (the filter may rename a locale key).
    Prefix { head: Range<usize>, lines: usize },
    /// JSON: the members of the container that holds most of the file, each
    /// piece inside brackets opening (`{"":{`) and closing (`}}`) the path
    /// down to it; the comma and spaces after a piece stay outside it.
    Json { open: String, close: String },
}

/// Where a document is cut, and how each piece is wrapped.
#[derive(Debug)]
pub(crate) struct Cut {
    pub pieces: Vec<Range<usize>>,
    pub envelope: Envelope,
}

/// Where `input` is cut into pieces of about `size` bytes, at the points
/// `points` finds in its text (with the envelope of each piece); `None`
/// when it stays whole: smaller than two pieces, not UTF-8, or no points.
fn cut_at(
    input: &[u8],
    size: usize,
    points: impl FnOnce(&str) -> Option<(Vec<usize>, Envelope)>,
) -> Option<Cut> {
    if input.len() < 2 * size {
        return None;
    }
    let text = std::str::from_utf8(input).ok()?;
    let (points, envelope) = points(text)?;
    let pieces = group(points, input.len(), size);
    (pieces.len() > 1).then_some(Cut { pieces, envelope })
}

/// Plain text, at any line end.
pub(crate) fn lines(input: &[u8], size: usize) -> Option<Cut> {
    cut_at(input, size, |text| {
        Some((line_ends(text, |_| true), Envelope::Bare))
    })
}

/// SubRip, before a cue.
pub(crate) fn srt(input: &[u8], size: usize) -> Option<Cut> {
    cut_at(input, size, |text| {
        let points = line_ends(text, |p| {
            text[p..].starts_with(|c: char| c.is_ascii_digit()) && blank_line_before(text, p)
        });
        Some((points, Envelope::Bare))
    })
}

/// WebVTT, before a cue after the first: the header, styles and regions
/// stay in the first piece.
pub(crate) fn vtt(input: &[u8], size: usize) -> Option<Cut> {
    cut_at(input, size, |text| {
        let first_cue = text.find("-->")?;
        let points = line_ends(text, |p| {
            p > first_cue && !text[p..].starts_with(['\n', '\r']) && blank_line_before(text, p)
        });
        Some((points, Envelope::Header(b"WEBVTT\n\n")))
    })
}

/// Markdown, between blocks ([`markdown_points`]).
pub(crate) fn markdown(input: &[u8], size: usize) -> Option<Cut> {
    cut_at(input, size, |text| {
        Some((markdown_points(text)?, Envelope::Bare))
    })
}

/// XLIFF, between the units and groups of its one unit container.
pub(crate) fn xliff(input: &[u8], size: usize) -> Option<Cut> {
    cut_at(input, size, |text| {
        let container = if text.contains("<body") {
            "body"
        } else {
            "file"
        };
        let (points, head, tail) = xml_points(text, container)?;
        Some((points, Envelope::Xml { head, tail }))
    })
}

/// YAML, between the entries of the first mapping from the top with more
/// than one key (a Rails file's `en:` mapping): at the line of each key, each
/// piece after the first under the lines of the keys above it. A file with
/// anchors, aliases, tags, several documents or a key that does not start its
/// line stays whole.
pub(crate) fn yaml(input: &[u8], size: usize) -> Option<Cut> {
    cut_at(input, size, |text| {
        let (points, head) = yaml_points(text)?;
        let lines = text[head.clone()].matches('\n').count();
        Some((points, Envelope::Prefix { head, lines }))
    })
}

/// A mapping being read by [`yaml_points`].
struct YamlFrame {
    mapping: bool,
    key_next: bool,
    /// On the path of first keys from the top: the byte offsets of its keys.
    keys: Option<Vec<usize>>,
}

/// The cut points of a YAML file (the line starts of the keys after the
/// first of the mapping [`yaml`] cuts) and the head before its first key.
fn yaml_points(text: &str) -> Option<(Vec<usize>, Range<usize>)> {
    use saphyr_parser::{Event, Parser};
    let mut offsets = crate::yaml::CharOffsets::new(text);
    let mut stack: Vec<YamlFrame> = Vec::new();
    let mut documents = 0;
    // The shallowest mapping on the path with more than one key: (depth, keys).
    let mut chosen: Option<(usize, Vec<usize>)> = None;
    for event in Parser::new_from_str(text) {
        let (event, span) = event.ok()?;
        // A node in a mapping is its key or its value, by turns.
        let parent_key = match stack.last_mut() {
            Some(frame) if frame.mapping => {
                let key = frame.key_next;
                frame.key_next = !key;
                key
            }
            _ => false,
        };
        match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return None;
                }
            }
            Event::Alias(_) => return None,
            Event::Scalar(_, _, anchor, tag) => {
                if anchor != 0 || tag.is_some() {
                    return None;
                }
                if parent_key && let Some(keys) = stack.last_mut().and_then(|f| f.keys.as_mut()) {
                    keys.push(offsets.byte(span.start.index()));
                }
            }
            Event::MappingStart(anchor, ref tag) | Event::SequenceStart(anchor, ref tag) => {
                if anchor != 0 || tag.is_some() {
                    return None;
                }
                let mapping = matches!(event, Event::MappingStart(..));
                // On the path: the top node, or the value of the first key of
                // a mapping on the path.
                let on_path = match stack.last() {
                    None => true,
                    Some(parent) => {
                        !parent_key && parent.keys.as_ref().is_some_and(|k| k.len() == 1)
                    }
                };
                stack.push(YamlFrame {
                    mapping,
                    key_next: true,
                    keys: (on_path && mapping).then(Vec::new),
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                let frame = stack.pop()?;
                let depth = stack.len();
                if let Some(keys) = frame.keys
                    && keys.len() > 1
                    && chosen.as_ref().is_none_or(|(d, _)| depth < *d)
                {
                    chosen = Some((depth, keys));
                }
            }
            _ => {}
        }
    }
    let (_, keys) = chosen?;
    let line_start = |at: usize| text[..at].rfind('\n').map_or(0, |i| i + 1);
    let mut starts = Vec::with_capacity(keys.len());
    for key in keys {
        let start = line_start(key);
        if !text[start..key].bytes().all(|b| b == b' ') {
            return None;
        }
        starts.push(start);
    }
    let head = 0..*starts.first()?;
    Some((starts.into_iter().skip(1).collect(), head))
}

/// HTML, before a block element of the body outside everything the filter
/// keeps whole ([`crate::html::cut_points`]); a page declaring a charset other
/// than UTF-8 stays whole.
pub(crate) fn html(input: &[u8], size: usize) -> Option<Cut> {
    if crate::encoding::html_declared(input).is_some_and(|e| e != encoding_rs::UTF_8) {
        return None;
    }
    cut_at(input, size, |text| {
        Some((crate::html::cut_points(text), Envelope::Bare))
    })
}

/// XML: Android string resources between the entries of their
/// `<resources>`, other XML as [`xml_tree`].
pub(crate) fn xml(input: &[u8], size: usize) -> Option<Cut> {
    if !crate::android::is_android(input) {
        return xml_tree(input, size);
    }
    cut_at(input, size, |text| {
        let (points, head, tail) = xml_points(text, "resources")?;
        Some((points, Envelope::Xml { head, tail }))
    })
}

/// Generic XML and DITA (the ITS filter), between the child elements of the
/// element with the most of them and no text of its own, each piece inside
/// the prolog and the start tags of that element and its ancestors (which
/// carry the `translate` and language marks the filter inherits). A file with
/// global ITS rules (whose selectors may count siblings) stays whole.
pub(crate) fn xml_tree(input: &[u8], size: usize) -> Option<Cut> {
    cut_at(input, size, |text| {
        if text.contains("translateRule") || text.contains(START_STR) || text.contains(END_STR) {
            return None;
        }
        let (points, head, tail) = tree_points(text)?;
        Some((points, Envelope::Tree { head, tail }))
    })
}

/// One open element while [`tree_points`] reads.
struct TreeFrame {
    start: Range<usize>,
    name: String,
    children: usize,
    text: bool,
}

/// The element [`tree_points`] cuts in.
struct Container {
    /// Its child elements.
    children: usize,
    /// Where its start tag starts.
    start: usize,
    /// Its ancestors' and its own start tags (ranges) and names, from the root.
    path: Vec<(Range<usize>, String)>,
}

/// The cut points of [`xml_tree`] and the head and tail of its pieces.
fn tree_points(text: &str) -> Option<(Vec<usize>, String, String)> {
    use quick_xml::events::Event;
    // First the container: the element with the most children and no text.
    let mut reader = quick_xml::Reader::from_str(text);
    let mut stack: Vec<TreeFrame> = Vec::new();
    let mut root_start = None;
    let mut best: Option<Container> = None;
    loop {
        let before = reader.buffer_position() as usize;
        let event = reader.read_event().ok()?;
        let after = reader.buffer_position() as usize;
        match event {
            Event::Start(_) => {
                root_start.get_or_insert(before);
                if let Some(parent) = stack.last_mut() {
                    parent.children += 1;
                }
                let name = text[before + 1..after]
                    .split(|c: char| c.is_whitespace() || c == '>' || c == '/')
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                stack.push(TreeFrame {
                    start: before..after,
                    name,
                    children: 0,
                    text: false,
                });
            }
            Event::Empty(_) => {
                if let Some(parent) = stack.last_mut() {
                    parent.children += 1;
                }
            }
            Event::Text(_) => {
                if let Some(frame) = stack.last_mut()
                    && !text[before..after].trim().is_empty()
                {
                    frame.text = true;
                }
            }
            Event::CData(_) | Event::GeneralRef(_) => {
                if let Some(frame) = stack.last_mut() {
                    frame.text = true;
                }
            }
            Event::End(_) => {
                let frame = stack.last()?;
                if !frame.text && best.as_ref().is_none_or(|b| frame.children > b.children) {
                    best = Some(Container {
                        children: frame.children,
                        start: frame.start.start,
                        path: stack
                            .iter()
                            .map(|f| (f.start.clone(), f.name.clone()))
                            .collect(),
                    });
                }
                stack.pop();
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let Container {
        start: container,
        path,
        ..
    } = best?;
    // Then its children's starts; an ancestor with text of its own (the
    // container inside a paragraph's segment) keeps the file whole.
    let ancestors: Vec<usize> = path.iter().map(|(start, _)| start.start).collect();
    let mut reader = quick_xml::Reader::from_str(text);
    let mut open: Vec<usize> = Vec::new();
    let mut inside: Option<usize> = None;
    let mut points = Vec::new();
    loop {
        let before = reader.buffer_position() as usize;
        let event = reader.read_event().ok()?;
        let after = reader.buffer_position() as usize;
        let in_ancestor = open
            .last()
            .is_some_and(|s| *s != container && ancestors.contains(s));
        match event {
            Event::Start(_) => {
                if before == container {
                    inside = Some(open.len() + 1);
                } else if inside == Some(open.len()) {
                    points.push(before);
                }
                open.push(before);
            }
            Event::Empty(_) if inside == Some(open.len()) => points.push(before),
            Event::Text(_) if in_ancestor && !text[before..after].trim().is_empty() => return None,
            Event::CData(_) | Event::GeneralRef(_) if in_ancestor => return None,
            Event::End(_) => {
                open.pop()?;
                if inside == Some(open.len() + 1) {
                    inside = None;
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let mut head = text[..root_start?].to_owned();
    let mut tail = String::new();
    for (start, name) in &path {
        head.push_str(&text[start.clone()]);
        tail.insert_str(0, &format!("</{name}>"));
    }
    tail.push('\n');
    Some((points.into_iter().skip(1).collect(), head, tail))
}

/// .NET resources, between the entries of their `<root>`.
pub(crate) fn resx(input: &[u8], size: usize) -> Option<Cut> {
    cut_at(input, size, |text| {
        let (points, head, tail) = xml_points(text, "root")?;
        Some((points, Envelope::Xml { head, tail }))
    })
}

/// Java properties, before a line that does not continue the one before it
/// (a line ending in an odd number of backslashes goes on on the next).
pub(crate) fn properties(input: &[u8], size: usize) -> Option<Cut> {
    cut_at(input, size, |text| {
        let points = line_ends(text, |p| {
            let before = text[..p - 1].trim_end_matches('\r');
            let line = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
            (line.len() - line.trim_end_matches('\\').len()) % 2 == 0
        });
        Some((points, Envelope::Bare))
    })
}

/// Apple strings, at a line start between entries: outside a string or a
/// comment, after the `;` of the last entry.
pub(crate) fn strings(input: &[u8], size: usize) -> Option<Cut> {
    cut_at(input, size, |text| {
        Some((strings_points(text), Envelope::Bare))
    })
}

/// The line starts of a .strings file where no entry, string or comment is
/// open.
fn strings_points(text: &str) -> Vec<usize> {
    let b = text.as_bytes();
    let (mut string, mut block, mut line, mut entry) = (false, false, false, false);
    let mut points = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let (c, next) = (b[i], b.get(i + 1).copied());
        if string {
            match c {
                b'\\' => i += 1,
                b'"' => string = false,
                _ => {}
            }
        } else if block {
            if c == b'*' && next == Some(b'/') {
                block = false;
                i += 1;
            }
        } else {
            match (c, next) {
                (b'"', _) => (string, entry) = (true, true),
                (b';', _) => entry = false,
                (b'/', Some(b'*')) if !line => {
                    block = true;
                    i += 1;
                }
                (b'/', Some(b'/')) => line = true,
                (b'\n', _) => {
                    line = false;
                    if !entry && i + 1 < b.len() {
                        points.push(i + 1);
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    points
}

/// JSON, between the members of the container holding most of the file.
pub(crate) fn json(input: &[u8], size: usize) -> Option<Cut> {
    cut_at(input, size, |text| {
        let (points, open, close) = json_points(text, size)?;
        Some((points, Envelope::Json { open, close }))
    })
}

/// The positions after each line end of `text` that `ok` accepts.
fn line_ends(text: &str, ok: impl Fn(usize) -> bool) -> Vec<usize> {
    text.match_indices('\n')
        .map(|(i, _)| i + 1)
        .filter(|&p| p < text.len() && ok(p))
        .collect()
}

/// Whether the position `at` of `text` (a line start) follows an empty
/// line.
fn blank_line_before(text: &str, at: usize) -> bool {
    let before = text[..at].trim_end_matches(['\n', '\r']);
    text[before.len()..at].matches('\n').count() >= 2
}

/// Cut points of Markdown: blank lines outside fenced code, before a line
/// starting at the left margin with a character that cannot continue a
/// block; none when the file defines link references or footnotes.
fn markdown_points(text: &str) -> Option<Vec<usize>> {
    let mut points = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut previous_blank = false;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        if indent <= 3 && definition(trimmed) {
            return None;
        }
        let fence_char = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = fence_char.map_or(0, |c| trimmed.chars().take_while(|&x| x == c).count());
        match (fence, fence_char) {
            (None, Some(c)) if indent <= 3 && run >= 3 => fence = Some((c, run)),
            (Some((c, n)), Some(d)) if c == d && run >= n && indent <= 3 => fence = None,
            (None, _)
                if previous_blank
                    && trimmed.len() == line.len()
                    && line.starts_with(|c: char| c.is_alphanumeric() || c == '#') =>
            {
                points.push(at);
            }
            _ => {}
        }
        previous_blank = fence.is_none() && line.trim().is_empty();
        at += line.len();
    }
    Some(points)
}

/// Whether a line defines a link reference or a footnote (`[label]: …`).
fn definition(line: &str) -> bool {
    line.starts_with('[')
        && line
            .find("]:")
            .is_some_and(|end| !line[1..end].contains(['[', ']']))
}

/// The cut points of an XML file between the children of its one element
/// named `container` (XLIFF's unit container, resx's root), and the head and
/// tail around them.
fn xml_points(text: &str, container: &str) -> Option<(Vec<usize>, Range<usize>, Range<usize>)> {
    use quick_xml::events::Event;
    // Only a file with an XML declaration naming no legacy encoding (read
    // as the filter reads it) is cut.
    text.find("?>")?;
    if crate::encoding::xml_declared(text.as_bytes()).is_some() {
        return None;
    }
    if text.as_bytes().windows(START.len()).any(|w| w == START)
        || text.as_bytes().windows(END.len()).any(|w| w == END)
    {
        return None;
    }
    let mut reader = quick_xml::Reader::from_str(text);
    let mut depth = 0usize;
    let mut inside: Option<usize> = None;
    let mut containers = 0;
    let mut points = Vec::new();
    let mut head = None;
    let mut tail = None;
    loop {
        let before = reader.buffer_position() as usize;
        let event = reader.read_event().ok()?;
        let after = reader.buffer_position() as usize;
        match event {
            Event::Start(e) => {
                if inside.is_none() && e.local_name().into_inner() == container {
                    containers += 1;
                    inside = Some(depth + 1);
                    head = Some(0..after);
                } else if inside == Some(depth) {
                    points.push(before);
                }
                depth += 1;
            }
            Event::Empty(_) if inside == Some(depth) => points.push(before),
            Event::End(e) => {
                depth = depth.checked_sub(1)?;
                if inside == Some(depth + 1) && e.local_name().into_inner() == container {
                    inside = None;
                    tail = Some(before..text.len());
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if containers != 1 {
        return None;
    }
    let (head, tail) = (head?, tail?);
    // A point is where a top-level child starts; the first one starts the
    // units and is no cut.
    let points = points.into_iter().skip(1).collect();
    Some((points, head, tail))
}

/// The end of the JSON value starting at `at` (a string, a container, or a
/// number, `true`, `false` or `null`).
fn json_value_end(b: &[u8], at: usize) -> Option<usize> {
    let string_end = |mut i: usize| -> Option<usize> {
        loop {
            match *b.get(i)? {
                b'\\' => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
    };
    match *b.get(at)? {
        b'"' => string_end(at + 1),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                match *b.get(i)? {
                    b'"' => {
                        i = string_end(i + 1)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let len = b[at..]
                .iter()
                .take_while(|c| !matches!(c, b',' | b'}' | b']') && !c.is_ascii_whitespace())
                .count();
            (len > 0).then_some(at + len)
        }
    }
}

/// The members (objects: from the key to the end of the value) or elements
/// of the container whose opening bracket is at `open`, and where it closes.
fn json_members(b: &[u8], open: usize) -> Option<(Vec<Range<usize>>, usize)> {
    let object = b[open] == b'{';
    let skip = |mut i: usize| {
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        i
    };
    let mut members = Vec::new();
    let mut i = skip(open + 1);
    if matches!(b.get(i), Some(b'}' | b']')) {
        return Some((members, i));
    }
    loop {
        let start = i;
        if object {
            i = skip(json_value_end(b, i)?);
            if b.get(i) != Some(&b':') {
                return None;
            }
            i = skip(i + 1);
        }
        let end = json_value_end(b, i)?;
        members.push(start..end);
        i = skip(end);
        match b.get(i)? {
            b',' => i = skip(i + 1),
            b'}' | b']' => return Some((members, i)),
            _ => return None,
        }
    }
}

/// The cut points of a JSON file between the members of the container
/// holding most of it (found from the root down, while one member holds
/// more than half of its container), and the brackets opening and closing
/// the path to that container.
fn json_points(text: &str, size: usize) -> Option<(Vec<usize>, String, String)> {
    let b = text.as_bytes();
    let mut open = text.find(['{', '['])?;
    if !text[..open]
        .trim_start_matches('\u{feff}')
        .trim()
        .is_empty()
    {
        return None;
    }
    let mut path = String::new();
    loop {
        let (members, close) = json_members(b, open)?;
        let object = b[open] == b'{';
        let largest = members.iter().max_by_key(|m| m.len())?;
        let value = if object {
            // The value after the key and its colon.
            let colon = largest.start + text[largest.clone()].find(':')?;
            colon + 1 + text[colon + 1..largest.end].len()
                - text[colon + 1..largest.end].trim_start().len()
        } else {
            largest.start
        };
        let nested = matches!(b[value], b'{' | b'[');
        if nested && largest.len() * 2 > close - open && largest.len() >= 2 * size {
            path.push_str(if object { "{\"\":" } else { "[" });
            open = value;
            continue;
        }
        let points = members.iter().skip(1).map(|m| m.start).collect();
        path.push(b[open] as char);
        let closers = path
            .chars()
            .rev()
            .filter_map(|c| match c {
                '{' => Some('}'),
                '[' => Some(']'),
                _ => None,
            })
            .collect();
        return Some((points, path, closers));
    }
}

/// A piece's text without the comma and spaces that separate it from the
/// next, and those.
fn json_split(body: &[u8]) -> (&[u8], &[u8]) {
    let trimmed = body.trim_ascii_end();
    let trimmed = trimmed
        .strip_suffix(b",")
        .unwrap_or(trimmed)
        .trim_ascii_end();
    body.split_at(trimmed.len())
}

/// Pieces of at least `size` bytes from the cut `points` of a file of
/// `len` bytes.
fn group(points: Vec<usize>, len: usize, size: usize) -> Vec<Range<usize>> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for point in points {
        if point - start >= size && len - point >= size / 2 {
            pieces.push(start..point);
            start = point;
        }
    }
    pieces.push(start..len);
    pieces
}

/// An XML piece between `head` and `tail` with the comments marking it:
/// no head before the first piece, no tail after the last.
fn enveloped(head: &[u8], body: &[u8], tail: &[u8], index: usize, last: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + head.len() + tail.len() + 64);
    if index > 0 {
        out.extend_from_slice(head);
        out.extend_from_slice(START);
    }
    out.extend_from_slice(body);
    if !last {
        out.extend_from_slice(END);
        out.extend_from_slice(tail);
    }
    out
}

impl Cut {
    /// Piece `index` of `input` as a document of its own.
    pub(crate) fn document(&self, input: &[u8], index: usize) -> Vec<u8> {
        let body = &input[self.pieces[index].clone()];
        let last = index + 1 == self.pieces.len();
        match &self.envelope {
            Envelope::Bare => body.to_vec(),
            Envelope::Header(header) if index > 0 => [*header, body].concat(),
            Envelope::Header(_) => body.to_vec(),
            Envelope::Xml { head, tail } => enveloped(
                &input[head.clone()],
                body,
                &input[tail.clone()],
                index,
                last,
            ),
            Envelope::Tree { head, tail } => {
                enveloped(head.as_bytes(), body, tail.as_bytes(), index, last)
            }
            Envelope::Prefix { head, .. } if index > 0 => [&input[head.clone()], body].concat(),
            Envelope::Prefix { .. } => body.to_vec(),
            Envelope::Json { open, close } => {
                let mut out = Vec::with_capacity(body.len() + open.len() + close.len());
                if index > 0 {
                    out.extend_from_slice(open.as_bytes());
                }
                if last {
                    out.extend_from_slice(body);
                } else {
                    out.extend_from_slice(json_split(body).0);
                    out.extend_from_slice(close.as_bytes());
                }
                out
            }
        }
    }

    /// What follows piece `index`'s own output in the file (JSON: the comma
    /// and spaces before the next piece).
    pub(crate) fn separator<'i>(&self, input: &'i [u8], index: usize) -> &'i [u8] {
        match self.envelope {
            Envelope::Json { .. } if index + 1 < self.pieces.len() => {
                json_split(&input[self.pieces[index].clone()]).1
            }
            _ => &[],
        }
    }

    /// The output of piece `index` in the filter's output for its
    /// [`Cut::document`]; `None` when the envelope did not come back.
    pub(crate) fn own_output<'o>(&self, output: &'o [u8], index: usize) -> Option<&'o [u8]> {
        let last = index + 1 == self.pieces.len();
        let find = |needle: &[u8]| output.windows(needle.len()).position(|w| w == needle);
        match &self.envelope {
            Envelope::Bare => Some(output),
            Envelope::Header(header) if index > 0 => output.strip_prefix(*header),
            Envelope::Header(_) => Some(output),
            Envelope::Xml { .. } | Envelope::Tree { .. } => {
                let start = if index > 0 {
                    find(START)? + START.len()
                } else {
                    0
                };
                let end = if last { output.len() } else { find(END)? };
                output.get(start..end)
            }
            Envelope::Prefix { lines, .. } if index > 0 => {
                let mut rest = output;
                for _ in 0..*lines {
                    let end = rest.iter().position(|b| *b == b'\n')?;
                    rest = &rest[end + 1..];
                }
                Some(rest)
            }
            Envelope::Prefix { .. } => Some(output),
            Envelope::Json { open, close } => {
                let output = if index > 0 {
                    output.strip_prefix(open.as_bytes())?
                } else {
                    output
                };
                if last {
                    Some(output)
                } else {
                    output.strip_suffix(close.as_bytes())
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DocumentFormat;

    /// The cut of the format's registered filter.
    fn cut(format: DocumentFormat, input: &[u8], size: usize) -> Option<Cut> {
        crate::filter::of(format).cut(input, size)
    }

    fn pieces(format: DocumentFormat, text: &str, size: usize) -> Vec<String> {
        let Some(cut) = cut(format, text.as_bytes(), size) else {
            return vec![text.to_owned()];
        };
        cut.pieces
            .iter()
            .map(|r| text[r.clone()].to_owned())
            .collect()
    }

    #[test]
    fn subtitles_are_cut_before_a_cue() {
        let srt: String = (1..=6)
            .map(|i| format!("{i}\n00:00:0{i},000 --> 00:00:0{i},500\nLine {i}\n\n"))
            .collect();
        let got = pieces(DocumentFormat::Srt, &srt, 60);
        assert!(got.len() > 1, "{got:?}");
        assert_eq!(got.concat(), srt);
        for piece in &got {
            assert!(piece.starts_with(|c: char| c.is_ascii_digit()), "{piece:?}");
        }
        let vtt = format!(
            "WEBVTT\n\nSTYLE\n::cue {{ color: red }}\n\n{}",
            (1..=6)
                .map(|i| format!("00:00:0{i}.000 --> 00:00:0{i}.500\nLine {i}\n\n"))
                .collect::<String>()
        );
        let got = pieces(DocumentFormat::Vtt, &vtt, 60);
        assert!(got.len() > 1, "{got:?}");
        assert_eq!(got.concat(), vtt);
        assert!(
            got[0].contains("STYLE") && got[0].contains("Line 1"),
            "{got:?}"
        );
        assert!(got[1].starts_with("00:00:0"), "{got:?}");
    }

    #[test]
    fn markdown_is_cut_between_blocks_outside_fences() {
        let md = "# Title\n\nOne paragraph here.\n\n```\ncode\n\nMore code\n```\n\nTwo paragraph.\n\n- item\n\n  continued\n\nThree.\n";
        let got = pieces(DocumentFormat::Markdown, md, 10);
        assert_eq!(got.concat(), md);
        assert!(got.iter().all(|p| !p.starts_with("More code")), "{got:?}");
        assert!(got.iter().all(|p| !p.starts_with("  continued")), "{got:?}");
        assert!(
            got.iter().any(|p| p.starts_with("Two paragraph")),
            "{got:?}"
        );
        let with_refs = format!("{md}\n[home]: https://example.com\n");
        assert_eq!(pieces(DocumentFormat::Markdown, &with_refs, 10).len(), 1);
    }

    #[test]
    fn xliff_is_cut_between_the_units_of_its_body() {
        let units: String = (1..=6)
            .map(|i| format!("<trans-unit id=\"{i}\"><source>Line {i}</source></trans-unit>\n"))
            .collect();
        let xliff = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<xliff version=\"1.2\"><file source-language=\"en\" datatype=\"plaintext\" original=\"a\"><body>\n{units}<group id=\"g\"><trans-unit id=\"7\"><source>Seven</source></trans-unit></group>\n</body></file></xliff>\n"
        );
        let pieces = cut(DocumentFormat::Xliff, xliff.as_bytes(), 120).unwrap();
        assert!(pieces.pieces.len() > 1);
        let mut again = Vec::new();
        for i in 0..pieces.pieces.len() {
            let doc = pieces.document(xliff.as_bytes(), i);
            // Each piece reads as XML on its own.
            let mut reader = quick_xml::Reader::from_reader(doc.as_slice());
            let mut buf = Vec::new();
            loop {
                match reader.read_event_into(&mut buf).unwrap() {
                    quick_xml::events::Event::Eof => break,
                    _ => buf.clear(),
                }
            }
            again.extend_from_slice(pieces.own_output(&doc, i).unwrap());
        }
        assert_eq!(String::from_utf8(again).unwrap(), xliff);
        let declared = xliff.replace("UTF-8", "windows-1252");
        assert!(cut(DocumentFormat::Xliff, declared.as_bytes(), 120).is_none());
    }

    #[test]
    fn json_is_cut_between_the_members_of_its_largest_object() {
        let members: String = (0..40)
            .map(|i| {
                format!("    \"key{i}\": {{\"a\": \"The house {i}\", \"b\": [1, true, null]}},\n")
            })
            .collect();
        let json = format!(
            "\u{feff}{{\n  \"title\": \"The book\",\n  \"messages\": {{\n{}    \"last\": \"The end\"\n  }},\n  \"n\": 1\n}}\n",
            members
        );
        let pieces = cut(DocumentFormat::Json, json.as_bytes(), 300).unwrap();
        assert!(pieces.pieces.len() > 2, "{pieces:?}");
        let mut again = Vec::new();
        for i in 0..pieces.pieces.len() {
            let doc = pieces.document(json.as_bytes(), i);
            let text = String::from_utf8(doc.clone()).unwrap();
            serde_json::from_str::<serde_json::Value>(text.trim_start_matches('\u{feff}'))
                .unwrap_or_else(|e| panic!("piece {i}: {e}: {text}"));
            again.extend_from_slice(pieces.own_output(&doc, i).unwrap());
            again.extend_from_slice(pieces.separator(json.as_bytes(), i));
        }
        assert_eq!(String::from_utf8(again).unwrap(), json);
    }

    /// Generic XML is cut between the children of the element with the most
    /// of them and no text, each piece under the prolog and that element's
    /// and its ancestors' start tags; global ITS rules keep a file whole.
    #[test]
    fn xml_is_cut_between_the_children_of_its_largest_element() {
        let doc = "<?xml version=\"1.0\"?>\n<d a=\"1\"><h>The title</h><list translate=\"no\"><i>x</i><i>y</i><i>z</i></list></d>";
        let (points, head, tail) = tree_points(doc).unwrap();
        let at = |s: &str| doc.find(s).unwrap();
        assert_eq!(points, [at("<i>y"), at("<i>z")]);
        assert_eq!(
            head,
            "<?xml version=\"1.0\"?>\n<d a=\"1\"><list translate=\"no\">"
        );
        assert_eq!(tail, "</list></d>\n");
        // A list inside a paragraph's text is in its segment: no cut.
        let nested = "<d><li>Step <ul><i>a</i><i>b</i><i>c</i></ul> done</li><li>x</li></d>";
        assert!(tree_points(nested).is_none());
        // A paragraph with inline children holds text: never the container.
        let mixed = "<d><p>A <b>b</b> <i>c</i> <u>d</u></p><q/></d>";
        assert_eq!(tree_points(mixed).unwrap().0, [mixed.find("<q/>").unwrap()]);
        let rules = format!(
            "<d><its:rules xmlns:its=\"http://www.w3.org/2005/11/its\" version=\"2.0\"><its:translateRule selector=\"//p[2]\" translate=\"no\"/></its:rules>{}</d>",
            "<p>The dog</p>".repeat(20)
        );
        assert!(xml_tree(rules.as_bytes(), 64).is_none());
        assert!(xml_tree(rules.replace("translateRule", "x").as_bytes(), 64).is_some());
    }

    #[test]
    fn small_and_non_utf8_files_stay_whole() {
        assert!(cut(DocumentFormat::Txt, b"One\nTwo\n", 100).is_none());
        let latin1: Vec<u8> = b"Caf\xe9\n".repeat(100);
        assert!(cut(DocumentFormat::Txt, &latin1, 100).is_none());
    }
}
