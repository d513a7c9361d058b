//! Where a large RTF file can be cut: before a paragraph of the document's
//! group that reads the same in a piece of its own as in the whole file.

use std::collections::HashMap;
use std::ops::Range;

use encoding_rs::Encoding;

use super::read::{Item, control, parse};
use super::{BREAKS, CHARACTERS, NESTED, SKIPPED, WALKED, Walker};

/// The depth-1 state a paragraph's text is read in: the code page of the
/// font chosen in the document's group and `\ucN`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct State {
    encoding: &'static Encoding,
    uc: i32,
}

/// The document's head once read: what a piece is read under.
struct Head {
    text: String,
    /// The code pages of its fonts, and of the default font.
    fonts: HashMap<i32, &'static Encoding>,
    default: &'static Encoding,
    /// The state its first paragraph is read in.
    state: State,
}

/// The points of `src` where a piece may start and the head every piece
/// but the first is read under: the document's group up to its first
/// paragraph, without the destinations holding text of their own (document
/// information, headers and footers), so that no piece translates them
/// again. A point is the first thing of the document's group after a
/// paragraph end (`\par`, `\cell`, `\line`…, at any depth) with no text
/// since, where the code page and `\uc` in effect are those of the first
/// paragraph (or `\plain` resets the font there). `None` when the file does
/// not read as RTF.
pub(crate) fn cut_points(src: &[u8]) -> Option<(Vec<usize>, String)> {
    let start = src.iter().position(|b| !b.is_ascii_whitespace())?;
    if !src[start..].starts_with(b"{\\rtf") {
        return None;
    }
    let (mut font, mut uc) = (None::<i32>, 1);
    let mut head: Option<Head> = None;
    let mut removed: Vec<Range<usize>> = Vec::new();
    let mut points = Vec::new();
    let mut depth = 1usize;
    // Text since the last paragraph end; a paragraph end not yet followed
    // by anything of the document's group.
    let (mut open, mut ended) = (false, false);
    let mut i = start + 1;
    while i < src.len() {
        let byte = src[i];
        if depth == 1 && !matches!(byte, b'}' | b'\r' | b'\n') {
            match &head {
                None if body_starts(src, i) => {
                    head = Some(read_head(src, i, &removed, (font, uc))?);
                }
                Some(h) if ended && !open => {
                    ended = false;
                    let encoding = font
                        .and_then(|f| h.fonts.get(&f).copied())
                        .unwrap_or(h.default);
                    let state = State { encoding, uc };
                    if state.uc == h.state.uc && (state == h.state || plain_at(src, i)) {
                        points.push(i);
                    }
                }
                _ => {}
            }
        }
        match byte {
            b'{' => {
                if let Some(nested) = set_apart(src, i) {
                    let end = group_end(src, i)?;
                    if head.is_none() && depth == 1 && nested {
                        removed.push(i..end);
                    }
                    i = end;
                    continue;
                }
                depth += 1;
                i += 1;
            }
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
                i += 1;
            }
            b'\\' => {
                let (item, end) = control(src, i);
                match item {
                    Item::Word { name, param, .. } => {
                        let name = &src[name];
                        if depth == 1 {
                            match name {
                                b"f" => font = param,
                                b"plain" => font = None,
                                b"uc" => uc = param.unwrap_or(1),
                                _ => {}
                            }
                        }
                        if BREAKS.iter().any(|b| b.as_bytes() == name) {
                            (open, ended) = (false, true);
                        } else if name == b"u"
                            || CHARACTERS.iter().any(|(c, _)| c.as_bytes() == name)
                        {
                            open = true;
                        }
                    }
                    Item::Symbol {
                        ch: b'\r' | b'\n', ..
                    } => (open, ended) = (false, true),
                    Item::Symbol {
                        ch: b'\\' | b'{' | b'}' | b'~' | b'_',
                        ..
                    }
                    | Item::Hex { .. } => open = true,
                    _ => {}
                }
                i = end;
            }
            b'\r' | b'\n' => i += 1,
            _ => {
                open = true;
                i += 1;
            }
        }
    }
    Some((points, head?.text))
}

/// Whether the document's body starts at `at` (of the document's group): a
/// paragraph's `\pard`, a group or text rather than a document setting.
fn body_starts(src: &[u8], at: usize) -> bool {
    match src[at] {
        b'{' => set_apart(src, at).is_none(),
        b'\\' => match control(src, at).0 {
            Item::Word { name, .. } => {
                let name = &src[name];
                name == b"pard"
                    || name == b"u"
                    || CHARACTERS.iter().any(|(c, _)| c.as_bytes() == name)
                    || BREAKS.iter().any(|b| b.as_bytes() == name)
            }
            Item::Symbol { ch, .. } => ch != b'*',
            Item::Hex { .. } => true,
            _ => false,
        },
        _ => true,
    }
}

/// The head of a document whose body starts at `end`: the document's group
/// up to there without the `removed` destinations, its fonts' code pages,
/// and the state of its first paragraph (`font`, `uc`).
fn read_head(
    src: &[u8],
    end: usize,
    removed: &[Range<usize>],
    (font, uc): (Option<i32>, i32),
) -> Option<Head> {
    let mut text = Vec::with_capacity(end);
    let mut at = 0;
    for range in removed {
        text.extend_from_slice(&src[at..range.start]);
        at = range.end;
    }
    text.extend_from_slice(&src[at..end]);
    let closed = [&text[..], b"}"].concat();
    let top = parse(&closed).ok()?;
    let (walker, _) = Walker::new(&closed, &top);
    let encoding = font
        .and_then(|f| walker.fonts.get(&f).copied())
        .unwrap_or(walker.default);
    Some(Head {
        text: String::from_utf8(text).ok()?,
        state: State { encoding, uc },
        fonts: walker.fonts,
        default: walker.default,
    })
}

/// Whether the group opened at `at` is read apart from the paragraph it
/// stands in: `Some(true)` for a destination with paragraphs of its own
/// (footnotes, headers, the document information), `Some(false)` for one
/// without text (tables, pictures, fields' instructions, `\*`
/// destinations), `None` for a group of the text.
fn set_apart(src: &[u8], at: usize) -> Option<bool> {
    let (name, starred) = destination(src, at).unwrap_or((b"", false));
    let is = |list: &[&str]| list.iter().any(|d| d.as_bytes() == name);
    if is(NESTED) {
        Some(true)
    } else if is(SKIPPED) || (starred && !is(WALKED)) {
        Some(false)
    } else {
        None
    }
}

/// The destination the group opened at `at` starts with: its name and
/// whether it is `\*`.
fn destination(src: &[u8], at: usize) -> Option<(&[u8], bool)> {
    let mut i = at + 1;
    let mut starred = false;
    loop {
        while matches!(src.get(i), Some(b'\r' | b'\n')) {
            i += 1;
        }
        if src.get(i) != Some(&b'\\') {
            return None;
        }
        match control(src, i) {
            (Item::Symbol { ch: b'*', .. }, end) if !starred => {
                starred = true;
                i = end;
            }
            (Item::Word { name, .. }, _) => return Some((&src[name], starred)),
            _ => return None,
        }
    }
}

/// Where the group opened at `at` ends (after its `}`).
fn group_end(src: &[u8], at: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = at;
    while i < src.len() {
        match src[i] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'\\' => {
                i = control(src, i).1;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Whether `\plain` (resetting the font) is at `at`, alone or after a
/// `\pard`.
fn plain_at(src: &[u8], at: usize) -> bool {
    let word = |at: usize| match src.get(at) == Some(&b'\\') {
        true => match control(src, at) {
            (Item::Word { name, .. }, end) => Some((&src[name], end)),
            _ => None,
        },
        false => None,
    };
    match word(at) {
        Some((b"plain", _)) => true,
        Some((b"pard", end)) => {
            let spaces = src[end..]
                .iter()
                .take_while(|b| b.is_ascii_whitespace())
                .count();
            matches!(word(end + spaces), Some((b"plain", _)))
        }
        _ => false,
    }
}
