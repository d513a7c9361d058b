//! Writing a translated RTF file: untouched nodes as they were, segments
//! from their translations, text as ASCII with `\'hh` and `\uN` escapes.

use encoding_rs::Encoding;

use super::{Node, Seg, Skeleton, Tag};
use crate::inline::{self, Piece};

impl crate::filter::Merge for Skeleton {
    fn merge(&self, source: &[String], translated: &[String]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.src.len() + self.src.len() / 4);
        self.render(&self.nodes, source, translated, &mut out);
        out
    }
}

impl Skeleton {
    fn render(&self, nodes: &[Node], source: &[String], translated: &[String], out: &mut Vec<u8>) {
        for node in nodes {
            match node {
                Node::Raw(range) => out.extend_from_slice(&self.src[range.clone()]),
                Node::Segment(seg) => {
                    let (Some(src), Some(tr)) = (source.get(seg.index), translated.get(seg.index))
                    else {
                        self.render(&seg.original, source, translated, out);
                        continue;
                    };
                    if src == tr {
                        self.render(&seg.original, source, translated, out);
                    } else if braces_in_order(seg, src, tr) {
                        self.translation(seg, &inline::parse(tr), source, translated, out);
                    } else {
                        // The source's tags, the translated text first.
                        let mut pieces = vec![Piece::Text(inline::plain_text(tr))];
                        pieces.extend(
                            inline::parse(src)
                                .into_iter()
                                .filter(|p| !matches!(p, Piece::Text(_))),
                        );
                        self.translation(seg, &pieces, source, translated, out);
                    }
                }
            }
        }
    }

    /// Writes a segment's translation, tags as their markup.
    fn translation(
        &self,
        seg: &Seg,
        pieces: &[Piece],
        source: &[String],
        translated: &[String],
        out: &mut Vec<u8>,
    ) {
        let mut open: Vec<usize> = Vec::new();
        for piece in pieces {
            match piece {
                Piece::Text(text) => {
                    let base = seg.base.as_ref().filter(|_| open.is_empty());
                    if let Some(markup) = base {
                        self.render(markup, source, translated, out);
                    }
                    if ends_with_control_word(out) {
                        out.push(b' ');
                    }
                    write_text(out, text, seg.encoding, seg.uc);
                    if base.is_some() {
                        out.push(b'}');
                    }
                }
                Piece::Open(id) => {
                    let index = (*id as usize).wrapping_sub(1);
                    if let Some(Tag::Span { open: markup, .. }) = seg.tags.get(index) {
                        self.render(markup, source, translated, out);
                        open.push(index);
                    }
                }
                Piece::Close(_) => {
                    if let Some(Tag::Span { close, .. }) = open.pop().and_then(|i| seg.tags.get(i))
                    {
                        out.extend_from_slice(&self.src[close.clone()]);
                    }
                }
                Piece::Placeholder(id) => {
                    if let Some(Tag::Codes { nodes, .. }) =
                        seg.tags.get((*id as usize).wrapping_sub(1))
                    {
                        self.render(nodes, source, translated, out);
                    }
                }
            }
        }
        while let Some(index) = open.pop() {
            if let Some(Tag::Span { close, .. }) = seg.tags.get(index) {
                out.extend_from_slice(&self.src[close.clone()]);
            }
        }
    }
}

/// Whether the translation has the source's brace-changing placeholders
/// (groups opened here and closed in another paragraph), once each and in
/// the same order, so the output's groups nest as the source's.
fn braces_in_order(seg: &Seg, source: &str, translation: &str) -> bool {
    let order = |segment: &str| -> Vec<u32> {
        inline::parse(segment)
            .into_iter()
            .filter_map(|p| match p {
                Piece::Placeholder(id) => Some(id),
                _ => None,
            })
            .filter(|id| {
                matches!(seg.tags.get((*id as usize).wrapping_sub(1)),
                    Some(Tag::Codes { braces, .. }) if *braces != 0)
            })
            .collect()
    };
    order(source) == order(translation)
}

/// Whether `out` ends with a control word that has no delimiter yet (text
/// written next would be read as part of it).
fn ends_with_control_word(out: &[u8]) -> bool {
    let digits = out.iter().rev().take_while(|b| b.is_ascii_digit()).count();
    let mut at = out.len() - digits;
    if digits > 0 && at > 0 && out[at - 1] == b'-' {
        at -= 1;
    }
    let letters = out[..at]
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_alphabetic())
        .count();
    if letters == 0 {
        return false;
    }
    let slashes = out[..at - letters]
        .iter()
        .rev()
        .take_while(|b| **b == b'\\')
        .count();
    slashes % 2 == 1
}

/// Writes `text` as RTF: ASCII as itself (`\`, `{`, `}` escaped), tabs and
/// line breaks as control words, characters of `encoding` as `\'hh`, the
/// rest as `\uN` with `uc` fallback characters.
fn write_text(out: &mut Vec<u8>, text: &str, encoding: &'static Encoding, uc: u32) {
    for ch in text.chars() {
        match ch {
            '\\' | '{' | '}' => {
                out.push(b'\\');
                out.push(ch as u8);
            }
            '\t' => out.extend_from_slice(b"\\tab "),
            '\n' => out.extend_from_slice(b"\\line "),
            '\u{A0}' => out.extend_from_slice(b"\\~"),
            c if (c as u32) < 0x20 => {}
            c if c.is_ascii() => out.push(c as u8),
            c => {
                let mut buf = [0u8; 4];
                let (bytes, _, unmappable) = encoding.encode(c.encode_utf8(&mut buf));
                if !unmappable && encoding != encoding_rs::UTF_8 {
                    for b in bytes.iter() {
                        out.extend_from_slice(format!("\\'{b:02x}").as_bytes());
                    }
                    continue;
                }
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.extend_from_slice(format!("\\u{}", *unit as i16).as_bytes());
                    if uc == 0 {
                        out.push(b' ');
                    }
                    out.extend(std::iter::repeat_n(b'?', uc as usize));
                }
            }
        }
    }
}
