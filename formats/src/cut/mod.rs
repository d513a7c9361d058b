//! Text documents cut into pieces at unit boundaries, so that a translation
//! holds the file, its output and one piece rather than every segment of the
//! file at once ([`crate::stream::translate`]).
//!
//! A piece is a document of its own for the format's filter, made by one of
//! these cuts: text scanned for its units (plain text, subtitles, Markdown,
//! properties, strings, HTML: [`text`]); XML between the children of its unit
//! containers, each piece inside the file's prolog and the container it
//! starts in, comments marking the piece's output ([`xml`](mod@xml)); JSON
//! between the members of its largest container ([`json`](mod@json)); YAML
//! between the entries of its first mapping with more than one key
//! ([`yaml`](mod@yaml)); RTF between the paragraphs of its document group
//! ([`rtf`](mod@rtf)); MIF between the paragraphs of its body text flows
//! ([`mif`](mod@mif)). UTF-8 files are cut (their bytes can be cut at any
//! line end), XML and HTML files declaring a single-byte encoding, Java
//! properties in ISO-8859-1 (each piece read in it), and plain text,
//! subtitles, Markdown, JSON, YAML and Apple strings in windows-1252 (each
//! piece read as UTF-8, the output encoded back, [`Written`]); files in
//! UTF-16 are not. A file smaller than two pieces is one, and so is a file
//! a cut cannot read safely.

mod json;
mod mif;
mod rtf;
mod text;
mod xml;
mod yaml;

pub(crate) use json::json;
pub(crate) use mif::mif;
pub(crate) use rtf::rtf;
pub(crate) use text::{html, lines, markdown, properties, srt, strings, vtt};
pub(crate) use xml::{resx, xliff, xml, xml_tree};
pub(crate) use yaml::yaml;

use std::ops::Range;

/// How large a piece is, at least (the last may be smaller).
pub(crate) const PIECE_SIZE: usize = 128 << 10;

/// What marks where a piece's own output starts and ends inside its
/// envelope: something the format's filter writes back as it is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Marks {
    start: &'static str,
    end: &'static str,
}

impl Marks {
    /// Whether `text` holds either mark already (such a file is not cut).
    fn found_in(&self, text: &str) -> bool {
        text.contains(self.start) || text.contains(self.end)
    }
}

/// XML comments.
const XML: Marks = Marks {
    start: "<!--tolk-piece-start-->",
    end: "<!--tolk-piece-end-->",
};

/// MIF comments.
const MIF: Marks = Marks {
    start: "\n# tolk-piece-start\n",
    end: "\n# tolk-piece-end\n",
};

/// RTF destinations a reader ignores (`{\*\…}`).
const RTF: Marks = Marks {
    start: "{\\*\\tolkpiecestart}",
    end: "{\\*\\tolkpieceend}",
};

/// How a piece is made a document of its own and found again in the
/// filter's output.
#[derive(Debug, Clone)]
pub(crate) enum Envelope {
    /// The piece is a document as it is.
    Bare,
    /// A header before every piece but the first (WebVTT's `WEBVTT`), written
    /// back by the filter unchanged and dropped from its output.
    Header(&'static [u8]),
    /// Cut between the children of the file's containers (XLIFF's
    /// `<file>`s, MIF's text flows): around every piece the file's prolog
    /// and the head of the container it starts in, the tail of the
    /// container it ends in and the file's epilog (not the head for the
    /// first piece, nor the tail for the last), with `marks` marking the
    /// piece.
    Containers {
        prolog: String,
        containers: Vec<Container>,
        epilog: String,
        marks: Marks,
    },
    /// A head and tail made rather than read (XML: the prolog and the start
    /// tags of the container and its ancestors, and their end tags; RTF: the
    /// document's group up to its first paragraph without the text it holds,
    /// and `}`), with `marks` marking the piece; otherwise as
    /// [`Envelope::Containers`].
    Made {
        head: String,
        tail: String,
        marks: Marks,
    },
    /// What follows every piece (Markdown's link reference definitions),
    /// after the end mark: dropped from its output with the line end before
    /// the mark.
    Suffix { suffix: String, marks: Marks },
    /// YAML: the lines before the mapping whose entries are cut (its keys'
    /// path, `en:`) before every piece but the first; that many lines are
    /// dropped from the piece's output (the filter may rename a locale key).
    Prefix { head: String, lines: usize },
    /// JSON: the members of the container that holds most of the file, each
    /// piece inside brackets opening (`{"":{`) and closing (`}}`) the path
    /// down to it; the comma and spaces after a piece stay outside it.
    Json { open: String, close: String },
}

/// A container of a file's units: what opens it before its units (XLIFF
/// 1.2: `<file …><header>…</header><body>`), what closes it after them, and
/// where in the file its units end.
#[derive(Debug, Clone)]
pub(crate) struct Container {
    pub head: String,
    pub tail: String,
    pub end: usize,
}

/// Where a document is cut, and how each piece is wrapped.
#[derive(Debug)]
pub(crate) struct Cut {
    pub pieces: Vec<Range<usize>>,
    pub envelope: Envelope,
    /// How the pieces of a file in a legacy encoding its bytes do not
    /// declare are read; `None` for the others.
    pub legacy: Option<Legacy>,
}

/// How the pieces of a file in a legacy encoding are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Legacy {
    /// Every piece is read in the encoding (a piece of ASCII alone could
    /// read as another) and written in it by the filter ([`cut_latin1_at`]).
    ReadIn(&'static encoding_rs::Encoding),
    /// Every piece is handed to the filter as UTF-8 and the output encoded
    /// back ([`cut_legacy_at`], [`Written`]).
    Transcoded(&'static encoding_rs::Encoding),
}

impl Cut {
    /// The encoding every piece is read in ([`Legacy::ReadIn`]).
    pub(crate) fn read_in(&self) -> Option<&'static encoding_rs::Encoding> {
        match self.legacy {
            Some(Legacy::ReadIn(encoding)) => Some(encoding),
            _ => None,
        }
    }

    /// The encoding of a [`Legacy::Transcoded`] cut.
    fn transcoded(&self) -> Option<&'static encoding_rs::Encoding> {
        match self.legacy {
            Some(Legacy::Transcoded(encoding)) => Some(encoding),
            _ => None,
        }
    }

    /// Piece `index` of `input` as a document of its own (as UTF-8 when
    /// the cut is [`Legacy::Transcoded`]).
    pub(crate) fn document(&self, input: &[u8], index: usize) -> Vec<u8> {
        let document = self.enveloped(input, index);
        match self.transcoded() {
            Some(encoding) => encoding
                .decode_without_bom_handling(&document)
                .0
                .into_owned()
                .into_bytes(),
            None => document,
        }
    }

    /// Piece `index` of `input` in its envelope, in the file's bytes.
    fn enveloped(&self, input: &[u8], index: usize) -> Vec<u8> {
        let body = &input[self.pieces[index].clone()];
        let last = index + 1 == self.pieces.len();
        match &self.envelope {
            Envelope::Bare => body.to_vec(),
            Envelope::Header(header) if index > 0 => [*header, body].concat(),
            Envelope::Header(_) => body.to_vec(),
            Envelope::Containers {
                prolog,
                containers,
                epilog,
                marks,
            } => {
                let piece = &self.pieces[index];
                // The container a piece starts in, and the one it ends in.
                let around = |at: usize| containers.iter().find(|c| c.end >= at);
                let head = around(piece.start + 1).map_or("", |c| &c.head);
                let tail = around(piece.end).map_or("", |c| &c.tail);
                enveloped(
                    [prolog.as_str(), head].concat().as_bytes(),
                    body,
                    [tail, epilog.as_str()].concat().as_bytes(),
                    (index, last),
                    *marks,
                )
            }
            Envelope::Made { head, tail, marks } => enveloped(
                head.as_bytes(),
                body,
                tail.as_bytes(),
                (index, last),
                *marks,
            ),
            Envelope::Suffix { suffix, marks } => [
                body,
                b"\n",
                marks.end.as_bytes(),
                b"\n\n",
                suffix.as_bytes(),
            ]
            .concat(),
            Envelope::Prefix { head, .. } if index > 0 => [head.as_bytes(), body].concat(),
            Envelope::Prefix { .. } => body.to_vec(),
            Envelope::Json { open, close } => {
                let mut out = Vec::with_capacity(body.len() + open.len() + close.len());
                if index > 0 {
                    out.extend_from_slice(open.as_bytes());
                }
                if last {
                    out.extend_from_slice(body);
                } else {
                    out.extend_from_slice(json::json_split(body).0);
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
                json::json_split(&input[self.pieces[index].clone()]).1
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
            Envelope::Containers { marks, .. } | Envelope::Made { marks, .. } => {
                let start = if index > 0 {
                    find(marks.start.as_bytes())? + marks.start.len()
                } else {
                    0
                };
                let end = if last {
                    output.len()
                } else {
                    find(marks.end.as_bytes())?
                };
                output.get(start..end)
            }
            Envelope::Suffix { marks, .. } => {
                let end = find(marks.end.as_bytes())?;
                output[..end].strip_suffix(b"\n")
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

/// Where `input` is cut into pieces of about `size` bytes, at the points
/// `points` finds in its text (with the envelope of each piece); `None`
/// when it stays whole: smaller than two pieces, not UTF-8 (but see
/// [`cut_ascii_at`]), or no points.
fn cut_at(
    input: &[u8],
    size: usize,
    points: impl FnOnce(&str) -> Option<(Vec<usize>, Envelope)>,
) -> Option<Cut> {
    if input.len() < 2 * size {
        return None;
    }
    cut_text(std::str::from_utf8(input).ok()?, size, points)
}

/// The pieces of `text` (the file, or a view of it at the same offsets) at
/// the points `points` finds; `None` unless there are two or more.
fn cut_text(
    text: &str,
    size: usize,
    points: impl FnOnce(&str) -> Option<(Vec<usize>, Envelope)>,
) -> Option<Cut> {
    let (points, envelope) = points(text)?;
    let pieces = group(points, text.len(), size);
    (pieces.len() > 1).then_some(Cut {
        pieces,
        envelope,
        legacy: None,
    })
}

/// [`cut_at`] for markup whose file may declare a single-byte encoding
/// (`declared`: `windows-1252`, `ISO-8859-2`…), cut too: its markup is
/// ASCII, so the points are found in a copy whose other bytes stand as `?`
/// (at the same offsets), and the pieces are cut from the file's own bytes,
/// each read under the declaration. Made heads hold such a `?` where the
/// file's head has a non-ASCII character (a head is read, never written
/// back).
fn cut_ascii_at(
    input: &[u8],
    size: usize,
    declared: Option<&'static encoding_rs::Encoding>,
    points: impl FnOnce(&str) -> Option<(Vec<usize>, Envelope)>,
) -> Option<Cut> {
    if input.len() < 2 * size {
        return None;
    }
    if let Ok(text) = std::str::from_utf8(input) {
        return cut_text(text, size, points);
    }
    if !declared?.is_single_byte() {
        return None;
    }
    cut_text(&ascii_view(input), size, points)
}

/// [`cut_at`] for a format read as windows-1252 when its bytes are not
/// UTF-8 (Java properties in ISO-8859-1): such a file is cut too, its points
/// found in a copy whose other bytes stand as `?`, and every piece read as
/// windows-1252 (a piece of ASCII alone would otherwise read as UTF-8 and be
/// written back so). A file with a byte-order mark other than UTF-8's stays
/// whole.
fn cut_latin1_at(
    input: &[u8],
    size: usize,
    points: impl FnOnce(&str) -> Option<(Vec<usize>, Envelope)>,
) -> Option<Cut> {
    cut_windows_1252_at(input, size, Legacy::ReadIn, points)
}

/// The cut of a file read as windows-1252 when its bytes are not UTF-8,
/// its pieces read as `legacy` says when they are not; `None` for a file
/// with a byte-order mark other than UTF-8's.
fn cut_windows_1252_at(
    input: &[u8],
    size: usize,
    legacy: fn(&'static encoding_rs::Encoding) -> Legacy,
    points: impl FnOnce(&str) -> Option<(Vec<usize>, Envelope)>,
) -> Option<Cut> {
    if matches!(encoding_rs::Encoding::for_bom(input), Some((e, _)) if e != encoding_rs::UTF_8) {
        return None;
    }
    let not_utf8 = std::str::from_utf8(input).is_err();
    let mut cut = cut_ascii_at(input, size, Some(encoding_rs::WINDOWS_1252), points)?;
    cut.legacy = not_utf8.then(|| legacy(encoding_rs::WINDOWS_1252));
    Some(cut)
}

/// [`cut_at`] for a format read as windows-1252 when its bytes are not
/// UTF-8 and written back so while its translations fit (plain text,
/// subtitles, Markdown, JSON, YAML, Apple strings): such a file is cut too,
/// its points found in a copy whose other bytes stand as `?`, every piece
/// handed to the filter as UTF-8 and the output encoded back by [`Written`].
/// A file with a byte-order mark other than UTF-8's stays whole.
fn cut_legacy_at(
    input: &[u8],
    size: usize,
    points: impl FnOnce(&str) -> Option<(Vec<usize>, Envelope)>,
) -> Option<Cut> {
    cut_windows_1252_at(input, size, Legacy::Transcoded, points)
}

/// The translated file of a cut, written as its pieces come back: as the
/// filter writes them, or for a [`Legacy::Transcoded`] cut in the
/// file's encoding while every translation fits in it, and from the first
/// that does not the whole file as UTF-8 with a byte-order mark (what the
/// filter writes for such a file read whole, [`crate::encoding::Form`]).
/// It holds the output once: what was encoded is decoded again on that
/// change.
pub(crate) struct Written {
    out: Vec<u8>,
    state: Transcoding,
}

#[derive(Clone, Copy)]
enum Transcoding {
    /// Pieces are written as the filter wrote them.
    None,
    /// Pieces are encoded in the file's encoding.
    Encoding(&'static encoding_rs::Encoding),
    /// A translation did not fit the file's encoding: UTF-8.
    Utf8(&'static encoding_rs::Encoding),
}

impl Written {
    /// The output of `cut`, with room for `capacity` bytes.
    pub(crate) fn new(cut: &Cut, capacity: usize) -> Self {
        Self {
            out: Vec::with_capacity(capacity),
            state: match cut.transcoded() {
                Some(encoding) => Transcoding::Encoding(encoding),
                None => Transcoding::None,
            },
        }
    }

    /// A piece's output, as the filter wrote it.
    pub(crate) fn piece(&mut self, output: &[u8]) {
        let Transcoding::Encoding(encoding) = self.state else {
            self.out.extend_from_slice(output);
            return;
        };
        let text = String::from_utf8_lossy(output);
        let (encoded, _, unmappable) = encoding.encode(&text);
        if !unmappable {
            self.out.extend_from_slice(&encoded);
            return;
        }
        drop(encoded);
        let (before, _) = encoding.decode_without_bom_handling(&self.out);
        let mut out = Vec::with_capacity(self.out.capacity().max(before.len() + output.len() + 3));
        out.extend_from_slice(crate::encoding::UTF8_BOM);
        out.extend_from_slice(before.as_bytes());
        drop(before);
        out.extend_from_slice(output);
        self.out = out;
        self.state = Transcoding::Utf8(encoding);
    }

    /// Bytes of the file between pieces, as the file has them.
    pub(crate) fn file_bytes(&mut self, bytes: &[u8]) {
        match self.state {
            Transcoding::Utf8(encoding) => self
                .out
                .extend_from_slice(encoding.decode_without_bom_handling(bytes).0.as_bytes()),
            _ => self.out.extend_from_slice(bytes),
        }
    }

    /// The translated file.
    pub(crate) fn finish(self) -> Vec<u8> {
        self.out
    }
}

/// `input` with every byte beyond ASCII as `?`: the same offsets, for cuts
/// whose syntax is ASCII.
fn ascii_view(input: &[u8]) -> String {
    input
        .iter()
        .map(|&b| if b.is_ascii() { char::from(b) } else { '?' })
        .collect()
}

/// The positions after each line end of `text` that `ok` accepts.
fn line_ends(text: &str, ok: impl Fn(usize) -> bool) -> Vec<usize> {
    text.match_indices('\n')
        .map(|(i, _)| i + 1)
        .filter(|&p| p < text.len() && ok(p))
        .collect()
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

/// A piece between `head` and `tail` with the `marks` marking it: no head
/// before the first piece, no tail after the last.
fn enveloped(
    head: &[u8],
    body: &[u8],
    tail: &[u8],
    (index, last): (usize, bool),
    marks: Marks,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + head.len() + tail.len() + 64);
    if index > 0 {
        out.extend_from_slice(head);
        out.extend_from_slice(marks.start.as_bytes());
    }
    out.extend_from_slice(body);
    if !last {
        out.extend_from_slice(marks.end.as_bytes());
        out.extend_from_slice(tail);
    }
    out
}

#[cfg(test)]
mod tests;
