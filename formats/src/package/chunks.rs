//! Cuts a part's XML, read as a stream, into chunks that each parse alone,
//! so a large part is translated and written a piece at a time instead of
//! being held whole.
//!
//! A cut falls only after an element ends outside every paragraph (and
//! outside every element whose start tag holds translatable text, and
//! every `mc:AlternateContent`, whose choices are translated alike), once
//! the chunk holds at least its size limit. Each chunk is wrapped: it starts
//! with the start tags of the elements open where it begins (as written)
//! and ends with the end tags of the elements open where it ends, so it is a
//! well-formed document of its own; [`Chunk::body`] is the part's own bytes.

use std::io::Read;
use std::ops::Range;

use super::Dialect;

/// Bytes read from the part at a time.
const READ_BLOCK: usize = 64 << 10;

use crate::xml::MAX_DEPTH;

/// Elements where no cut falls, besides a dialect's paragraphs.
const UNCUT: &[&str] = &["mc:AlternateContent"];

/// A wrapped piece of a part.
#[derive(Debug)]
pub(crate) struct Chunk {
    /// The open start tags, the piece, the closing end tags.
    pub text: String,
    /// The piece within `text`.
    pub body: Range<usize>,
}

/// Why a part could not be cut.
#[derive(Debug)]
pub(crate) enum ChunkError {
    /// Reading the part failed (a damaged entry).
    Read,
    /// The part is larger than its limit.
    TooLarge,
    /// The part is not UTF-8; `utf16` when it starts with a UTF-16 mark.
    Encoding { utf16: bool },
    /// Elements nest deeper than [`MAX_DEPTH`].
    TooDeep,
    /// The part ends with this element (and those around it) still open.
    Unclosed(String),
}

/// An element open at the current position.
#[derive(Debug)]
struct Open {
    name: String,
    /// Its start tag as written.
    start: Vec<u8>,
    uncut: bool,
}

/// Chunks of one part.
pub(crate) struct Chunker<R> {
    reader: R,
    dialect: &'static Dialect,
    /// A chunk is cut at the first allowed place past this many bytes.
    limit: usize,
    /// Parts larger than this many bytes are refused.
    max: u64,
    /// The part's bytes from the current chunk's start on.
    buf: Vec<u8>,
    /// How much of `buf` is tokenized.
    scanned: usize,
    open: Vec<Open>,
    /// Open elements where no cut falls.
    uncut: usize,
    /// Start tags open where the current chunk starts.
    prefix: Vec<u8>,
    read: u64,
    eof: bool,
    started: bool,
    /// Whether the part started with a UTF-8 byte-order mark (not in any chunk).
    pub bom: bool,
}

impl<R: Read> Chunker<R> {
    pub(crate) fn new(reader: R, dialect: &'static Dialect, limit: usize, max: u64) -> Self {
        Chunker {
            reader,
            dialect,
            limit,
            max,
            buf: Vec::new(),
            scanned: 0,
            open: Vec::new(),
            uncut: 0,
            prefix: Vec::new(),
            read: 0,
            eof: false,
            started: false,
            bom: false,
        }
    }

    /// Bytes of the part read so far.
    pub(crate) fn position(&self) -> u64 {
        self.read
    }

    /// The next chunk; `None` at the end of the part.
    pub(crate) fn next_chunk(&mut self) -> Result<Option<Chunk>, ChunkError> {
        loop {
            match token(&self.buf, self.scanned, self.eof) {
                Some((end, kind)) => {
                    let start = self.scanned;
                    self.scanned = end;
                    if self.take(start, kind)? {
                        return self.cut(end, true).map(Some);
                    }
                }
                None if self.eof => {
                    if self.buf.is_empty() && self.started {
                        // A part cut off after a place where a chunk ended.
                        return match self.open.last() {
                            Some(open) => Err(ChunkError::Unclosed(open.name.clone())),
                            None => Ok(None),
                        };
                    }
                    // The rest, as it is (an unfinished token included): a
                    // part that ends inside markup is refused by the parser.
                    let end = self.buf.len();
                    self.scanned = end;
                    return self.cut(end, false).map(Some);
                }
                None => self.fill()?,
            }
        }
    }

    /// Follows one token; whether a cut falls after it.
    fn take(&mut self, start: usize, kind: Token) -> Result<bool, ChunkError> {
        match kind {
            Token::Start { name, empty } => {
                if empty {
                    return Ok(self.cuttable());
                }
                if self.open.len() >= MAX_DEPTH {
                    return Err(ChunkError::TooDeep);
                }
                let name = String::from_utf8_lossy(&self.buf[name]).into_owned();
                let uncut = self.dialect.paragraphs.contains(&name.as_str())
                    || self.dialect.attributes.iter().any(|(e, _)| *e == name)
                    || self.dialect.pieces.iter().any(|(e, _)| *e == name)
                    || self.dialect.text_bodies.contains(&name.as_str())
                    || UNCUT.contains(&name.as_str());
                self.uncut += usize::from(uncut);
                let start = self.buf[start..self.scanned].to_vec();
                self.open.push(Open { name, start, uncut });
                Ok(false)
            }
            Token::End => {
                // A mismatched end tag is left for the parser to refuse.
                if let Some(open) = self.open.pop() {
                    self.uncut -= usize::from(open.uncut);
                }
                Ok(self.cuttable())
            }
            Token::Other => Ok(false),
        }
    }

    fn cuttable(&self) -> bool {
        self.uncut == 0 && !self.open.is_empty() && self.scanned >= self.limit
    }

    /// Reads another block of the part.
    fn fill(&mut self) -> Result<(), ChunkError> {
        self.read_block()?;
        while !self.started && self.buf.len() < 3 && !self.eof {
            self.read_block()?;
        }
        if !self.started {
            if self.buf.starts_with(&[0xFF, 0xFE]) || self.buf.starts_with(&[0xFE, 0xFF]) {
                return Err(ChunkError::Encoding { utf16: true });
            }
            if self.buf.starts_with(&[0xEF, 0xBB, 0xBF]) {
                self.bom = true;
                self.buf.drain(..3);
            }
            self.started = true;
        }
        Ok(())
    }

    fn read_block(&mut self) -> Result<(), ChunkError> {
        let at = self.buf.len();
        self.buf.resize(at + READ_BLOCK, 0);
        let n = loop {
            match self.reader.read(&mut self.buf[at..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return Err(ChunkError::Read),
            }
        };
        self.buf.truncate(at + n);
        self.read += n as u64;
        if self.read > self.max {
            return Err(ChunkError::TooLarge);
        }
        if n == 0 {
            self.eof = true;
        }
        Ok(())
    }

    /// The chunk ending at `end` of `buf`, the open elements closed when
    /// `close`.
    fn cut(&mut self, end: usize, close: bool) -> Result<Chunk, ChunkError> {
        self.started = true;
        let mut text = std::mem::take(&mut self.prefix);
        let body_start = text.len();
        text.extend_from_slice(&self.buf[..end]);
        let body = body_start..text.len();
        for open in self.open.iter().rev().filter(|_| close) {
            text.extend_from_slice(b"</");
            text.extend_from_slice(open.name.as_bytes());
            text.push(b'>');
        }
        self.buf.drain(..end);
        self.scanned -= end;
        for open in &self.open {
            self.prefix.extend_from_slice(&open.start);
        }
        let text = String::from_utf8(text).map_err(|_| ChunkError::Encoding { utf16: false })?;
        Ok(Chunk { text, body })
    }
}

/// What a token does to the open elements.
#[derive(Debug, PartialEq)]
enum Token {
    /// A start tag (its name's range), or an empty-element tag.
    Start {
        name: Range<usize>,
        empty: bool,
    },
    End,
    /// Character data, a comment, CDATA, a processing instruction or a
    /// declaration.
    Other,
}

/// The token of `buf` at `at`: its end and kind; `None` when `buf` ends
/// before the token does (and more may come: `eof` false), or at its end.
fn token(buf: &[u8], at: usize, eof: bool) -> Option<(usize, Token)> {
    let rest = buf.get(at..).filter(|r| !r.is_empty())?;
    let find = |pattern: &[u8]| {
        rest.windows(pattern.len())
            .position(|w| w == pattern)
            .map(|i| at + i + pattern.len())
    };
    if rest[0] != b'<' {
        return match rest.iter().position(|&b| b == b'<') {
            Some(i) => Some((at + i, Token::Other)),
            // Text may continue in the next block: take what is here.
            None => Some((buf.len(), Token::Other)),
        };
    }
    if rest.starts_with(b"<!--") {
        return find(b"-->").map(|end| (end, Token::Other));
    }
    if rest.starts_with(b"<![CDATA[") {
        return find(b"]]>").map(|end| (end, Token::Other));
    }
    if rest.starts_with(b"<?") {
        return find(b"?>").map(|end| (end, Token::Other));
    }
    if rest.len() < 9 && !eof && (b"<![CDATA[".starts_with(rest) || b"<!--".starts_with(rest)) {
        return None;
    }
    // A tag or declaration: up to the first `>` outside quotes (and, in a
    // declaration, outside its internal subset).
    let mut quote = None;
    let mut depth = 0usize;
    for (i, &b) in rest.iter().enumerate().skip(1) {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'[') if rest[1] == b'!' => depth += 1,
            (None, b']') if rest[1] == b'!' => depth = depth.saturating_sub(1),
            (None, b'>') if depth == 0 => {
                let end = at + i + 1;
                let kind = match rest[1] {
                    b'!' => Token::Other,
                    b'/' => Token::End,
                    _ => {
                        let len = rest[1..i]
                            .iter()
                            .position(|b| b.is_ascii_whitespace() || *b == b'/')
                            .unwrap_or(i - 1);
                        Token::Start {
                            name: at + 1..at + 1 + len,
                            empty: rest[i - 1] == b'/',
                        }
                    }
                };
                return Some((end, kind));
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::WORD;

    /// The chunks of `xml` cut at `limit`, up to the end or an error.
    fn chunks(xml: &str, limit: usize) -> Vec<Chunk> {
        // A reader giving a few bytes at a time, so tokens span blocks.
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.len().min(out.len()).min(7);
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut chunker = Chunker::new(Trickle(xml.as_bytes()), &WORD, limit, u64::MAX);
        let mut out = Vec::new();
        while let Ok(Some(chunk)) = chunker.next_chunk() {
            out.push(chunk);
        }
        out
    }

    const DOC: &str = "<?xml version=\"1.0\"?>\n<w:document xmlns:w=\"u\"><w:body>\
        <w:p><w:r><w:t>One &amp; \"a>b\"</w:t></w:r></w:p>\
        <!-- a <w:p> comment --><w:tbl a=\"x>y\"><w:tr><w:tc><w:p><w:r><w:t>Two</w:t></w:r></w:p></w:tc>\
        <w:tc><w:p><w:r><w:t>Three</w:t></w:r></w:p></w:tc></w:tr></w:tbl>\
        <w:p><w:r><w:t><![CDATA[Four</w:p>]]></w:t></w:r></w:p><w:sectPr/></w:body></w:document>";

    #[test]
    fn the_bodies_are_the_part_and_every_chunk_is_well_formed() {
        for limit in [0, 1, 40, 100, 10_000] {
            let mut chunker = Chunker::new(DOC.as_bytes(), &WORD, limit, u64::MAX);
            assert!(std::iter::from_fn(|| chunker.next_chunk().transpose()).all(|c| c.is_ok()));
            let chunks = chunks(DOC, limit);
            let joined: String = chunks.iter().map(|c| &c.text[c.body.clone()]).collect();
            assert_eq!(joined, DOC, "limit {limit}");
            for chunk in &chunks {
                crate::xml::parse(&chunk.text).unwrap_or_else(|e| panic!("{e}: {}", chunk.text));
            }
            if limit == 10_000 {
                assert_eq!(chunks.len(), 1);
            }
        }
    }

    #[test]
    fn cuts_fall_between_paragraphs_and_never_inside_one() {
        let chunks = chunks(DOC, 0);
        assert!(chunks.len() > 4, "{chunks:?}");
        for chunk in &chunks {
            assert!(
                !chunk.text[..chunk.body.start].contains("<w:p>"),
                "{chunk:?}"
            );
            assert!(
                !chunk.text[chunk.body.end..].contains("</w:p>"),
                "{chunk:?}"
            );
        }
        // A cell's chunk is wrapped in the table and row it stands in, the
        // table's start tag as written.
        let cell = chunks
            .iter()
            .find(|c| c.text[c.body.clone()].contains("Three"))
            .unwrap();
        assert!(
            cell.text
                .starts_with("<w:document xmlns:w=\"u\"><w:body><w:tbl a=\"x>y\"><w:tr>"),
            "{}",
            cell.text
        );
        assert!(cell.text.ends_with("</w:tr></w:tbl></w:body></w:document>"));
    }

    #[test]
    fn a_byte_order_mark_is_kept_aside_and_utf16_refused() {
        let mut chunker = Chunker::new("\u{feff}<a>x</a>".as_bytes(), &WORD, 0, u64::MAX);
        let chunk = chunker.next_chunk().unwrap().unwrap();
        assert!(chunker.bom);
        assert_eq!(chunk.text, "<a>x</a>");
        let utf16 = [0xFF, 0xFE, b'<', 0];
        let mut chunker = Chunker::new(&utf16[..], &WORD, 0, u64::MAX);
        assert!(matches!(
            chunker.next_chunk(),
            Err(ChunkError::Encoding { utf16: true })
        ));
    }

    #[test]
    fn a_part_ending_inside_markup_is_one_last_chunk() {
        for xml in ["<a><b/><!-- open", "<a><b/><c x=\"1>", "<a><b/><![CDATA[x"] {
            let chunks = chunks(xml, 0);
            let joined: String = chunks.iter().map(|c| &c.text[c.body.clone()]).collect();
            assert_eq!(joined, xml);
            assert!(
                crate::xml::parse(&chunks.last().unwrap().text).is_err(),
                "{xml}"
            );
        }
    }

    #[test]
    fn a_part_cut_off_after_a_chunk_is_refused() {
        let mut chunker = Chunker::new("<a><b/><c/>".as_bytes(), &WORD, 0, u64::MAX);
        let last = std::iter::from_fn(|| Some(chunker.next_chunk()))
            .find(|r| !matches!(r, Ok(Some(_))))
            .unwrap();
        assert!(matches!(last, Err(ChunkError::Unclosed(name)) if name == "a"));
    }

    #[test]
    fn limits_hold() {
        let mut chunker = Chunker::new("<a>0123456789</a>".as_bytes(), &WORD, 0, 8);
        assert!(matches!(chunker.next_chunk(), Err(ChunkError::TooLarge)));
        let deep = "<a>".repeat(MAX_DEPTH + 1);
        let mut chunker = Chunker::new(deep.as_bytes(), &WORD, 0, u64::MAX);
        assert!(matches!(chunker.next_chunk(), Err(ChunkError::TooDeep)));
    }
}
