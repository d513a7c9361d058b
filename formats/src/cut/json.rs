//! Cut points of JSON: between the members of the object or array holding
//! most of the file, each piece inside brackets standing for its path.

use std::ops::Range;

use super::{Cut, Envelope, cut_legacy_at};

/// JSON, between the members of the container holding most of the file.
pub(crate) fn json(input: &[u8], size: usize) -> Option<Cut> {
    cut_legacy_at(input, size, |text| {
        let (points, open, close) = json_points(text, size)?;
        Some((points, Envelope::Json { open, close }))
    })
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
pub(super) fn json_split(body: &[u8]) -> (&[u8], &[u8]) {
    let trimmed = body.trim_ascii_end();
    let trimmed = trimmed
        .strip_suffix(b",")
        .unwrap_or(trimmed)
        .trim_ascii_end();
    body.split_at(trimmed.len())
}
