//! Where a large MIF file can be cut: before the paragraphs of its body text
//! flows and the tables of its `<Tbls>`.

use std::ops::Range;

use super::{Reader, parse};
use crate::cut::Container;

/// A top-level statement's direct child.
struct Child {
    name: Range<usize>,
    range: Range<usize>,
}

/// Where a piece of a MIF file may start, and what every piece but the
/// first is read under.
pub(crate) struct Pieces {
    pub points: Vec<usize>,
    /// The `<MIFFile>` statement, the reference pages and the text flows
    /// laid out on them: what tells a piece which flows and tables define
    /// formats (none of them has text to translate).
    pub prolog: String,
    /// The body text flows and `<Tbls>`, opened without their paragraphs
    /// (a flow's footnotes stay in the piece that holds them).
    pub containers: Vec<Container>,
}

/// The cut points of a MIF file (of version 8 or later): the paragraphs of
/// its text flows laid out on body pages, and the tables of `<Tbls>`. When
/// a reference flow anchors tables, no cut comes before the last reference
/// flow (the first piece then holds them and the tables). `None` when the
/// file does not read as MIF or a page comes after a text flow.
pub(crate) fn cut_points(text: &str) -> Option<Pieces> {
    let b = text.as_bytes();
    // The text rectangles of reference pages.
    let mut rects: Vec<String> = Vec::new();
    let mut prolog = String::new();
    let mut containers = Vec::new();
    let mut points = Vec::new();
    // Where the last reference flow anchoring tables ends.
    let mut tables_defined = 0;
    let mut flows = false;
    // The top-level statement being read and its direct children.
    let mut top: Option<Range<usize>> = None;
    let mut children: Vec<Child> = Vec::new();
    let mut child: Option<Range<usize>> = None;
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'<' => {
                let start = i + 1;
                let len = b[start..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .count();
                match depth {
                    0 => top = Some(start..start + len),
                    1 => child = Some(start..start + len),
                    _ => {}
                }
                depth += 1;
                i = start + len;
            }
            b'>' => {
                depth = depth.checked_sub(1)?;
                if depth == 1 {
                    let name = child.take()?;
                    let range = name.start - 1..i + 1;
                    children.push(Child { name, range });
                } else if depth == 0 {
                    let name = top.take()?;
                    let range = name.start - 1..i + 1;
                    let children = std::mem::take(&mut children);
                    match &text[name] {
                        "MIFFile" if range.start == 0 => prolog.push_str(&text[range]),
                        "Page" => {
                            if flows {
                                return None;
                            }
                            let found = reference_rects(&text[range.clone()])?;
                            if !found.is_empty() {
                                rects.extend(found);
                                prolog.push('\n');
                                prolog.push_str(&text[range]);
                            }
                        }
                        "TextFlow" => {
                            flows = true;
                            let flow = &text[range.clone()];
                            if first_value(flow, "<TextRectID")
                                .is_some_and(|r| rects.iter().any(|x| x == r))
                            {
                                prolog.push('\n');
                                prolog.push_str(flow);
                                if flow.contains("<ATbl") {
                                    tables_defined = range.end;
                                }
                            } else {
                                container(
                                    text,
                                    range,
                                    &children,
                                    "Para",
                                    &mut containers,
                                    &mut points,
                                );
                            }
                        }
                        "Tbls" => {
                            container(text, range, &children, "Tbl", &mut containers, &mut points)
                        }
                        _ => {}
                    }
                }
                i += 1;
            }
            b'`' => {
                let mut j = i + 1;
                loop {
                    match b.get(j)? {
                        b'\\' => j += 2,
                        b'\'' => break,
                        _ => j += 1,
                    }
                }
                i = j + 1;
            }
            b'#' => {
                i += b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .unwrap_or(b.len() - i)
            }
            _ => i += 1,
        }
    }
    if depth != 0 || prolog.is_empty() {
        return None;
    }
    points.retain(|p| *p >= tables_defined);
    Some(Pieces {
        points,
        prolog,
        containers,
    })
}

/// A statement at `range` cut before its children named `unit`: its head
/// is the statement up to its first unit without its other children that
/// hold paragraphs (footnotes), its tail its `>`.
fn container(
    text: &str,
    range: Range<usize>,
    children: &[Child],
    unit: &str,
    containers: &mut Vec<Container>,
    points: &mut Vec<usize>,
) {
    let units: Vec<usize> = children
        .iter()
        .filter(|c| &text[c.name.clone()] == unit)
        .map(|c| c.range.start)
        .collect();
    let Some(&first) = units.first() else {
        return;
    };
    let mut head = String::new();
    let mut at = range.start;
    for c in children.iter().filter(|c| c.range.end <= first) {
        if text[c.range.clone()].contains("<Para") {
            head.push_str(&text[at..c.range.start]);
            at = c.range.end;
        }
    }
    head.push_str(&text[at..first]);
    containers.push(Container {
        head,
        tail: ">".to_owned(),
        end: range.end - 1,
    });
    points.extend(units);
}

/// The text rectangles of a `<Page>` statement when it is a reference page.
fn reference_rects(page: &str) -> Option<Vec<String>> {
    let mut reader = Reader {
        text: page,
        segments: Vec::new(),
        paras: Vec::new(),
        markers: Vec::new(),
        reference_rects: Vec::new(),
        reference_tables: Vec::new(),
    };
    reader.find_reference_flows(&parse(page).ok()?);
    Some(reader.reference_rects)
}

/// The value of the first `<name value>` statement in `text`.
fn first_value<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    let at = text.find(name)? + name.len();
    let end = at + text[at..].find('>')?;
    Some(text[at..end].trim())
}
