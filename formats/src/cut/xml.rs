//! Cut points of XML documents: XLIFF, .NET and Android resources between
//! the entries of their one container, other XML and DITA between the
//! children of the element with the most of them.

use std::ops::Range;

use super::{Container, Cut, Envelope, XML, cut_ascii_at};

/// XLIFF, between the units and groups of its unit containers (1.2's
/// `<body>`s, 2.0's `<file>`s), each piece inside its `<file>`.
pub(crate) fn xliff(input: &[u8], size: usize) -> Option<Cut> {
    cut_ascii_at(input, size, crate::encoding::xml_declared(input), |text| {
        let unit_parent = if text.contains("<body") {
            Within::Body
        } else {
            Within::File
        };
        xml_points(text, unit_parent)
    })
}

/// XML: Android string resources between the entries of their
/// `<resources>`, other XML as [`xml_tree`].
pub(crate) fn xml(input: &[u8], size: usize) -> Option<Cut> {
    if !crate::android::is_android(input) {
        return xml_tree(input, size);
    }
    cut_ascii_at(input, size, crate::encoding::xml_declared(input), |text| {
        xml_points(text, Within::Root("resources"))
    })
}

/// Generic XML and DITA (the ITS filter), between the child elements of the
/// element with the most of them and no text of its own, each piece inside
/// the prolog and the start tags of that element and its ancestors (which
/// carry the `translate` and language marks the filter inherits). A file with
/// global ITS rules (whose selectors may count siblings) stays whole.
pub(crate) fn xml_tree(input: &[u8], size: usize) -> Option<Cut> {
    cut_ascii_at(input, size, crate::encoding::xml_declared(input), |text| {
        if text.contains("translateRule") || XML.found_in(text) {
            return None;
        }
        let (points, head, tail) = tree_points(text)?;
        let marks = XML;
        Some((points, Envelope::Made { head, tail, marks }))
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
struct Largest {
    /// Its child elements.
    children: usize,
    /// Where its start tag starts.
    start: usize,
    /// Its ancestors' and its own start tags (ranges) and names, from the root.
    path: Vec<(Range<usize>, String)>,
}

/// The cut points of [`xml_tree`] and the head and tail of its pieces.
pub(super) fn tree_points(text: &str) -> Option<(Vec<usize>, String, String)> {
    use quick_xml::events::Event;
    // First the container: the element with the most children and no text.
    let mut reader = quick_xml::Reader::from_str(text);
    let mut stack: Vec<TreeFrame> = Vec::new();
    let mut root_start = None;
    let mut best: Option<Largest> = None;
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
                    best = Some(Largest {
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
    let Largest {
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
    cut_ascii_at(input, size, crate::encoding::xml_declared(input), |text| {
        xml_points(text, Within::Root("root"))
    })
}

/// Where the units of a file [`xml_points`] cuts stand.
#[derive(Clone, Copy)]
enum Within {
    /// In the `<body>`s of XLIFF 1.2 `<file>`s.
    Body,
    /// In XLIFF 2.0 `<file>`s.
    File,
    /// In the one root element of this name (resx's `<root>`, Android's
    /// `<resources>`).
    Root(&'static str),
}

impl Within {
    fn name(self) -> &'static str {
        match self {
            Within::Body => "body",
            Within::File => "file",
            Within::Root(name) => name,
        }
    }
}

/// The cut points of an XML file between the children of its unit
/// containers (elements named as `within` says), and the envelope of its
/// pieces.
fn xml_points(text: &str, within: Within) -> Option<(Vec<usize>, Envelope)> {
    use quick_xml::events::Event;
    // Only a file with an XML declaration naming UTF-8 or a single-byte
    // encoding (which every piece repeats) is cut.
    text.find("?>")?;
    if crate::encoding::xml_declared(text.as_bytes()).is_some_and(|e| !e.is_single_byte())
        || XML.found_in(text)
    {
        return None;
    }
    let name = within.name();
    let mut reader = quick_xml::Reader::from_str(text);
    // The start of every open element.
    let mut open: Vec<usize> = Vec::new();
    // The depth of the container being read, and where its head starts.
    let mut inside: Option<(usize, usize)> = None;
    // A container whose units ended: where its tail starts, and the depth
    // of the element the tail closes.
    let mut closing: Option<(usize, usize)> = None;
    let mut containers: Vec<Container> = Vec::new();
    // Where the first container's head starts and the last one's tail ends.
    let (mut first, mut last) = (None, 0);
    let mut points = Vec::new();
    loop {
        let before = reader.buffer_position() as usize;
        let event = reader.read_event().ok()?;
        let after = reader.buffer_position() as usize;
        match event {
            Event::Start(e) => {
                if inside.is_none() && closing.is_none() && e.local_name().into_inner() == name {
                    let head = match within {
                        Within::Body => *open.last()?,
                        _ => before,
                    };
                    inside = Some((open.len() + 1, head));
                    first.get_or_insert(head);
                    containers.push(Container {
                        head: text[head..after].to_owned(),
                        tail: String::new(),
                        end: 0,
                    });
                } else if inside.is_some_and(|(depth, _)| depth == open.len()) {
                    points.push(before);
                }
                open.push(before);
            }
            Event::Empty(_) if inside.is_some_and(|(depth, _)| depth == open.len()) => {
                points.push(before)
            }
            Event::End(_) => {
                open.pop()?;
                if inside.is_some_and(|(depth, _)| depth == open.len() + 1) {
                    inside = None;
                    let frame = match within {
                        Within::Body => open.len().checked_sub(1)?,
                        _ => open.len(),
                    };
                    closing = Some((before, frame));
                }
                if let Some((tail, frame)) = closing
                    && frame == open.len()
                {
                    let container = containers.last_mut()?;
                    container.tail = text[tail..after].to_owned();
                    container.end = tail;
                    last = after;
                    closing = None;
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let several = matches!(within, Within::Body | Within::File);
    if containers.is_empty() || (!several && containers.len() != 1) || closing.is_some() {
        return None;
    }
    let prolog = text[..first?].to_owned();
    let epilog = text[last..].to_owned();
    // A point is where a container's child starts; the first one starts the
    // units and is no cut.
    let points = points.into_iter().skip(1).collect();
    Some((
        points,
        Envelope::Containers {
            prolog,
            containers,
            epilog,
            marks: XML,
        },
    ))
}
