//! Reading RTF: the file's groups, control words, control symbols and text,
//! each with its byte range; the code pages of `\ansicpg`, `\cpg` and
//! `\fcharset`; the destination a group starts with.

use std::ops::Range;

use encoding_rs::Encoding;

use crate::FormatError;

/// Deeper nesting of groups is refused.
const MAX_DEPTH: usize = 512;

/// A piece of RTF with its byte range.
#[derive(Debug)]
pub(super) enum Item {
    Group(Group),
    /// `\name[N]`, its delimiting space included in `range`.
    Word {
        name: Range<usize>,
        param: Option<i32>,
        range: Range<usize>,
    },
    /// `\x` for a non-letter `x` (not `\'`).
    Symbol {
        ch: u8,
        range: Range<usize>,
    },
    /// `\'hh`.
    Hex {
        byte: u8,
        range: Range<usize>,
    },
    /// Bytes of text.
    Text(Range<usize>),
    /// Line ends (not text in RTF).
    Ignored(Range<usize>),
    /// `\binN` and its N bytes.
    Binary(Range<usize>),
}

#[derive(Debug)]
pub(super) struct Group {
    /// The `{`.
    pub open: Range<usize>,
    /// The `}`.
    pub close: Range<usize>,
    pub items: Vec<Item>,
}

impl Group {
    pub(super) fn span(&self) -> Range<usize> {
        self.open.start..self.close.end
    }
}

fn corrupt(detail: &str) -> FormatError {
    FormatError::corrupt(format!("The file is not a valid RTF document: {detail}"))
}

/// Reads `src` into its top-level items.
pub(super) fn parse(src: &[u8]) -> Result<Vec<Item>, FormatError> {
    let start = src
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(src.len());
    if !src[start..].starts_with(b"{\\rtf") {
        return Err(corrupt("it does not start with {\\rtf"));
    }
    let mut top = Vec::new();
    let mut open: Vec<(usize, Vec<Item>)> = Vec::new();
    let mut i = 0;
    while i < src.len() {
        let (item, end) = match src[i] {
            b'{' => {
                if open.len() >= MAX_DEPTH {
                    return Err(corrupt("its groups are nested too deeply"));
                }
                open.push((i, Vec::new()));
                i += 1;
                continue;
            }
            b'}' => {
                let Some((at, items)) = open.pop() else {
                    return Err(corrupt("a group is closed that was never opened"));
                };
                let group = Group {
                    open: at..at + 1,
                    close: i..i + 1,
                    items,
                };
                (Item::Group(group), i + 1)
            }
            b'\\' => control(src, i),
            b'\r' | b'\n' => {
                let end = i + src[i..]
                    .iter()
                    .position(|b| !matches!(b, b'\r' | b'\n'))
                    .unwrap_or(src.len() - i);
                (Item::Ignored(i..end), end)
            }
            _ => {
                let end = i + src[i..]
                    .iter()
                    .position(|b| matches!(b, b'{' | b'}' | b'\\' | b'\r' | b'\n'))
                    .unwrap_or(src.len() - i);
                (Item::Text(i..end), end)
            }
        };
        match open.last_mut() {
            Some((_, items)) => items.push(item),
            None => top.push(item),
        }
        i = end;
    }
    if !open.is_empty() {
        return Err(corrupt(
            "its groups are not all closed (the file may be truncated)",
        ));
    }
    Ok(top)
}

/// The control word or symbol at `at` (a backslash) and where it ends.
pub(super) fn control(src: &[u8], at: usize) -> (Item, usize) {
    let rest = &src[at + 1..];
    let Some(&first) = rest.first() else {
        return (Item::Text(at..at + 1), at + 1);
    };
    if first.is_ascii_alphabetic() {
        let letters = rest
            .iter()
            .take(32)
            .take_while(|b| b.is_ascii_alphabetic())
            .count();
        let name = at + 1..at + 1 + letters;
        let mut end = name.end;
        let digits_from = end + usize::from(src.get(end) == Some(&b'-'));
        let digits = src[digits_from.min(src.len())..]
            .iter()
            .take(10)
            .take_while(|b| b.is_ascii_digit())
            .count();
        let param = if digits > 0 {
            end = digits_from + digits;
            std::str::from_utf8(&src[name.end..end])
                .ok()
                .and_then(|n| n.parse::<i64>().ok())
                .map(|n| n.clamp(i32::MIN.into(), i32::MAX.into()) as i32)
        } else {
            None
        };
        if src.get(end) == Some(&b' ') {
            end += 1;
        }
        if &src[name.clone()] == b"bin" {
            let len = usize::try_from(param.unwrap_or(0)).unwrap_or(0);
            let end = end.saturating_add(len).min(src.len());
            return (Item::Binary(at..end), end);
        }
        return (
            Item::Word {
                name,
                param,
                range: at..end,
            },
            end,
        );
    }
    if first == b'\'' {
        let hex = src.get(at + 2..at + 4).and_then(|h| {
            std::str::from_utf8(h)
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        });
        if let Some(byte) = hex {
            return (
                Item::Hex {
                    byte,
                    range: at..at + 4,
                },
                at + 4,
            );
        }
    }
    (
        Item::Symbol {
            ch: first,
            range: at..at + 2,
        },
        at + 2,
    )
}

/// The code page of `\ansicpgN` or a font's `\cpgN`.
pub(super) fn code_page(cp: i32) -> Option<&'static Encoding> {
    let label = match cp {
        437 | 850 | 1252 => "windows-1252",
        866 => "ibm866",
        874 => "windows-874",
        932 => "shift_jis",
        936 => "gbk",
        949 => "euc-kr",
        950 => "big5",
        1250..=1258 => return Encoding::for_label(format!("windows-{cp}").as_bytes()),
        10000 => "macintosh",
        20866 => "koi8-r",
        65001 => "utf-8",
        _ => return None,
    };
    Encoding::for_label(label.as_bytes())
}

/// The code page of a font's `\fcharsetN`.
pub(super) fn charset(cs: i32) -> Option<&'static Encoding> {
    code_page(match cs {
        0 | 2 => 1252,
        77 => 10000,
        128 => 932,
        129 => 949,
        134 => 936,
        136 => 950,
        161 => 1253,
        162 => 1254,
        163 => 1258,
        177 => 1255,
        178 => 1256,
        186 => 1257,
        204 => 1251,
        222 => 874,
        238 => 1250,
        _ => return None,
    })
}

/// The destination a group starts with: its name and whether it is `\*`.
pub(super) fn destination<'s>(src: &'s [u8], group: &Group) -> Option<(&'s [u8], bool)> {
    let mut items = group
        .items
        .iter()
        .filter(|i| !matches!(i, Item::Ignored(_)));
    let mut starred = false;
    let mut first = items.next()?;
    if let Item::Symbol { ch: b'*', .. } = first {
        starred = true;
        first = items.next()?;
    }
    match first {
        Item::Word { name, .. } => Some((&src[name.clone()], starred)),
        _ => None,
    }
}
