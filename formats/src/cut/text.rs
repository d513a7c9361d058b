//! Cut points found by scanning text: plain text at line ends, SubRip and
//! WebVTT before a cue, Markdown between blocks, Java properties and Apple
//! strings between entries, HTML before a block element of the body.

use super::{Cut, Envelope, XML, cut_ascii_at, cut_latin1_at, cut_legacy_at, line_ends};

/// Plain text, at any line end.
pub(crate) fn lines(input: &[u8], size: usize) -> Option<Cut> {
    cut_legacy_at(input, size, |text| {
        Some((line_ends(text, |_| true), Envelope::Bare))
    })
}

/// SubRip, before a cue.
pub(crate) fn srt(input: &[u8], size: usize) -> Option<Cut> {
    cut_legacy_at(input, size, |text| {
        let points = line_ends(text, |p| {
            text[p..].starts_with(|c: char| c.is_ascii_digit()) && blank_line_before(text, p)
        });
        Some((points, Envelope::Bare))
    })
}

/// WebVTT, before a cue after the first: the header, styles and regions
/// stay in the first piece.
pub(crate) fn vtt(input: &[u8], size: usize) -> Option<Cut> {
    cut_legacy_at(input, size, |text| {
        let first_cue = text.find("-->")?;
        let points = line_ends(text, |p| {
            p > first_cue && !text[p..].starts_with(['\n', '\r']) && blank_line_before(text, p)
        });
        Some((points, Envelope::Header(b"WEBVTT\n\n")))
    })
}

/// Markdown, between blocks ([`markdown_points`]); the file's link
/// reference definitions follow every piece (after a comment marking where
/// its own output ends), so that its links read as in the whole file.
pub(crate) fn markdown(input: &[u8], size: usize) -> Option<Cut> {
    cut_legacy_at(input, size, |text| {
        if XML.found_in(text) {
            return None;
        }
        let (points, definitions) = markdown_points(text)?;
        let envelope = match definitions.is_empty() {
            true => Envelope::Bare,
            false => Envelope::Suffix {
                suffix: definitions,
                marks: XML,
            },
        };
        Some((points, envelope))
    })
}

/// HTML, before a block element of the body outside everything the filter
/// keeps whole ([`crate::html::cut_points`]). A page declaring a single-byte
/// charset other than UTF-8 is cut too, every piece after the first under a
/// `<meta charset>` line naming it (dropped from the piece's output); one
/// declaring another charset stays whole.
pub(crate) fn html(input: &[u8], size: usize) -> Option<Cut> {
    let declared = crate::encoding::html_declared(input).filter(|e| *e != encoding_rs::UTF_8);
    let envelope = match declared {
        None => Envelope::Bare,
        Some(e) if e.is_single_byte() => Envelope::Prefix {
            head: format!("<meta charset=\"{}\">\n", e.name()),
            lines: 1,
        },
        Some(_) => return None,
    };
    cut_ascii_at(input, size, declared, |text| {
        Some((crate::html::cut_points(text), envelope))
    })
}

/// Java properties, before a line that does not continue the one before it
/// (a line ending in an odd number of backslashes goes on on the next); an
/// ISO-8859-1 file too, each piece read in it.
pub(crate) fn properties(input: &[u8], size: usize) -> Option<Cut> {
    cut_latin1_at(input, size, |text| {
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
    cut_legacy_at(input, size, |text| {
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

/// Whether the position `at` of `text` (a line start) follows an empty
/// line.
fn blank_line_before(text: &str, at: usize) -> bool {
    let before = text[..at].trim_end_matches(['\n', '\r']);
    text[before.len()..at].matches('\n').count() >= 2
}

/// Cut points of Markdown: blank lines outside fenced code, before a line
/// starting at the left margin with a character that cannot continue a
/// block; and the file's link reference definitions. `None` (the file stays
/// whole) when it defines footnotes, or a definition could be read otherwise
/// away from its place (after a paragraph's line, or with its title on the
/// next line).
fn markdown_points(text: &str) -> Option<(Vec<usize>, String)> {
    let mut points = Vec::new();
    let mut definitions = String::new();
    let mut fence: Option<(char, usize)> = None;
    let (mut previous_blank, mut previous_definition) = (true, false);
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        if previous_definition && trimmed.starts_with(['"', '\'', '(']) {
            return None;
        }
        previous_definition = false;
        if fence.is_none() && indent <= 3 && definition(trimmed) {
            let (label, destination) = trimmed.split_once("]:")?;
            if label.starts_with("[^") || destination.trim().is_empty() || !previous_blank {
                return None;
            }
            definitions.push_str(line.trim_end_matches(['\n', '\r']));
            definitions.push('\n');
            previous_definition = true;
            at += line.len();
            continue;
        }
        let fence_char = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = fence_char.map_or(0, |c| trimmed.chars().take_while(|&x| x == c).count());
        match (fence, fence_char) {
            (None, Some(c)) if indent <= 3 && run >= 3 => fence = Some((c, run)),
            (Some((c, n)), Some(d)) if c == d && run >= n && indent <= 3 => fence = None,
            (None, _)
                if previous_blank
                    && at > 0
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
    Some((points, definitions))
}

/// Whether a line defines a link reference or a footnote (`[label]: …`).
fn definition(line: &str) -> bool {
    line.starts_with('[')
        && line
            .find("]:")
            .is_some_and(|end| !line[1..end].contains(['[', ']']))
}
