//! The streaming TMX reader.

use std::io::BufRead;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use super::lines::LineCounter;
use super::{Attrs, Entry, Header, INLINE_ELEMENTS, Note, Prop, TmxError, Unit, Variant};

/// Largest segment kept, in bytes of canonical XML; a longer one skips its
/// unit (and is not accumulated), so memory stays bounded on hostile input.
pub const MAX_SEGMENT_BYTES: usize = 1 << 20;

/// Deepest element nesting accepted.
const MAX_DEPTH: usize = 256;

/// A simplified, owned XML event.
enum Ev {
    Start {
        name: String,
        attrs: Attrs,
        empty: bool,
        pos: u64,
    },
    End,
    Text(String),
    Eof,
}

/// Reads a TMX document unit by unit; see the [module documentation](super).
pub struct TmxReader<R: BufRead> {
    reader: Reader<LineCounter<R>>,
    buf: Vec<u8>,
    /// Open elements (names), outermost first.
    stack: Vec<String>,
    header: Header,
    /// The root closed and the end of the input was checked.
    finished: bool,
    /// Inside `<body>`.
    in_body: bool,
    /// Byte position of the event being handled.
    pos: u64,
    /// The root element was opened.
    root_seen: bool,
}

impl<R: BufRead> TmxReader<R> {
    /// Reads up to the start of `<body>`: the prolog, `<tmx>` and `<header>`.
    pub fn new(input: R) -> Result<Self, TmxError> {
        let mut reader = Reader::from_reader(LineCounter::new(input));
        let config = reader.config_mut();
        config.check_end_names = true;
        config.check_comments = true;
        config.expand_empty_elements = false;
        config.trim_text(false);
        let mut me = Self {
            reader,
            buf: Vec::with_capacity(8192),
            stack: Vec::new(),
            header: Header::default(),
            finished: false,
            in_body: false,
            pos: 0,
            root_seen: false,
        };
        me.read_prolog()?;
        Ok(me)
    }

    /// The header (empty attributes when the file has none).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The 1-based line of the byte position `pos` of a recent event.
    fn line(&self, pos: u64) -> u64 {
        self.reader.get_ref().line_at(pos)
    }

    fn malformed(&self, pos: u64, message: impl Into<String>) -> TmxError {
        TmxError::Malformed {
            line: self.line(pos),
            message: message.into(),
        }
    }

    /// The next event that matters; checks the document's structure (one root,
    /// nothing but whitespace outside it, every element closed).
    fn next_ev(&mut self) -> Result<Ev, TmxError> {
        loop {
            let pos = self.reader.buffer_position();
            self.reader.get_mut().forget_before(pos);
            self.pos = pos;
            self.buf.clear();
            let event = match self.reader.read_event_into(&mut self.buf) {
                Ok(e) => e,
                Err(quick_xml::Error::Io(io)) => {
                    return Err(TmxError::Io(format!("reading the TMX file failed: {io}")));
                }
                Err(e) => {
                    let at = self.reader.error_position();
                    let line = self.reader.get_ref().line_at(at.max(pos));
                    return Err(TmxError::Malformed {
                        line,
                        message: describe(&e),
                    });
                }
            };
            let ev = match event {
                Event::Start(s) | Event::Empty(s) if self.stack.len() >= MAX_DEPTH => {
                    let _ = s;
                    return Err(self.malformed(pos, "elements are nested too deeply"));
                }
                Event::Start(s) => start(&s, false, pos).map_err(|m| TmxError::Malformed {
                    line: self.reader.get_ref().line_at(pos),
                    message: m,
                })?,
                Event::Empty(s) => start(&s, true, pos).map_err(|m| TmxError::Malformed {
                    line: self.reader.get_ref().line_at(pos),
                    message: m,
                })?,
                Event::End(_) => Ev::End,
                Event::Text(t) => Ev::Text(t.xml10_content().into_owned()),
                Event::CData(t) => Ev::Text(t.xml10_content().into_owned()),
                Event::GeneralRef(r) => {
                    let resolved = if r.is_char_ref() {
                        match r.resolve_char_ref() {
                            Ok(Some(c)) => Some(c.to_string()),
                            _ => None,
                        }
                    } else {
                        match &*r.xml10_content() {
                            "amp" => Some("&".to_owned()),
                            "lt" => Some("<".to_owned()),
                            "gt" => Some(">".to_owned()),
                            "quot" => Some("\"".to_owned()),
                            "apos" => Some("'".to_owned()),
                            _ => None,
                        }
                    };
                    match resolved {
                        Some(t) => Ev::Text(t),
                        None => {
                            let name = r.xml10_content().into_owned();
                            return Err(self
                                .malformed(pos, format!("unknown or invalid reference &{name};")));
                        }
                    }
                }
                Event::Eof => Ev::Eof,
                Event::Comment(_) | Event::PI(_) | Event::Decl(_) | Event::DocType(_) => {
                    continue;
                }
            };
            match &ev {
                Ev::Start { name, empty, .. } => {
                    if self.stack.is_empty() && self.finished_root() {
                        return Err(self.malformed(
                            pos,
                            format!("a second root element <{name}> after </tmx>"),
                        ));
                    }
                    if !empty {
                        self.stack.push(name.clone());
                    }
                }
                Ev::End => {
                    self.stack.pop();
                }
                Ev::Text(t) if self.stack.is_empty() && !t.trim().is_empty() => {
                    return Err(self.malformed(pos, "text outside the root element"));
                }
                Ev::Text(_) => {}
                Ev::Eof => {
                    if let Some(open) = self.stack.last() {
                        return Err(self.malformed(
                            pos,
                            format!("the file ends inside <{open}> (unclosed element)"),
                        ));
                    }
                }
            }
            return Ok(ev);
        }
    }

    /// Whether the root element was already seen and closed (the reader then
    /// only expects the end of input).
    fn finished_root(&self) -> bool {
        self.root_seen
    }

    fn read_prolog(&mut self) -> Result<(), TmxError> {
        // The root.
        let (name, empty) = loop {
            match self.next_ev()? {
                Ev::Start { name, empty, .. } => break (name, empty),
                Ev::Text(_) | Ev::End => {}
                Ev::Eof => return Err(self.malformed(self.pos, "the file has no root element")),
            }
        };
        self.root_seen = true;
        if name != "tmx" {
            return Err(self.malformed(
                self.pos,
                format!("the root element is <{name}>, not <tmx>: this is not a TMX file"),
            ));
        }
        if empty {
            return self.finish();
        }
        // Children of <tmx>: header, then body.
        loop {
            match self.next_ev()? {
                Ev::Start {
                    name, attrs, empty, ..
                } if name == "header" => {
                    self.header.attrs = attrs;
                    if !empty {
                        self.read_header()?;
                    }
                }
                Ev::Start { name, empty, .. } if name == "body" => {
                    if empty {
                        continue;
                    }
                    self.in_body = true;
                    return Ok(());
                }
                Ev::Start { empty, .. } => {
                    if !empty {
                        self.skip_subtree()?;
                    }
                }
                Ev::Text(_) => {}
                Ev::End => return self.finish(),
                Ev::Eof => return Ok(()),
            }
        }
    }

    fn read_header(&mut self) -> Result<(), TmxError> {
        loop {
            match self.next_ev()? {
                Ev::Start {
                    name, attrs, empty, ..
                } => match name.as_str() {
                    "note" => {
                        let text = self.element_text(empty)?;
                        self.header.notes.push(Note { attrs, text });
                    }
                    "prop" => {
                        let text = self.element_text(empty)?;
                        self.header.props.push(Prop { attrs, text });
                    }
                    _ => {
                        let xml = self.capture(&name, &attrs, empty)?;
                        self.header.extra.push(xml);
                    }
                },
                Ev::Text(_) => {}
                Ev::End => return Ok(()),
                Ev::Eof => return Ok(()),
            }
        }
    }

    /// Reads after the root closed: only the end of input may follow.
    fn finish(&mut self) -> Result<(), TmxError> {
        loop {
            match self.next_ev()? {
                Ev::Eof => {
                    self.finished = true;
                    self.in_body = false;
                    return Ok(());
                }
                Ev::Text(_) => {}
                Ev::End => {}
                Ev::Start { name, .. } => {
                    return Err(self.malformed(
                        self.pos,
                        format!("a second root element <{name}> after </tmx>"),
                    ));
                }
            }
        }
    }

    /// The next unit of the body, a skipped one, or `None` at the end (after
    /// checking that the rest of the file is well-formed).
    pub fn next_entry(&mut self) -> Result<Option<Entry>, TmxError> {
        if self.finished {
            return Ok(None);
        }
        if !self.in_body {
            self.finish()?;
            return Ok(None);
        }
        loop {
            match self.next_ev()? {
                Ev::Start {
                    name,
                    attrs,
                    empty,
                    pos,
                } => {
                    let line = self.line(pos);
                    if name != "tu" {
                        if !empty {
                            self.skip_subtree()?;
                        }
                        return Ok(Some(Entry::Skipped {
                            line,
                            reason: format!("<{name}> is not allowed in <body>"),
                        }));
                    }
                    if empty {
                        return Ok(Some(Entry::Skipped {
                            line,
                            reason: "the unit has no <tuv>".to_owned(),
                        }));
                    }
                    return self.read_tu(attrs, line).map(Some);
                }
                Ev::Text(_) => {}
                Ev::End => {
                    // </body>: the rest up to </tmx> and the end of input.
                    self.in_body = false;
                    loop {
                        match self.next_ev()? {
                            Ev::End if self.stack.is_empty() => {
                                self.finish()?;
                                return Ok(None);
                            }
                            Ev::Start { empty: false, .. } => self.skip_subtree()?,
                            Ev::Eof => {
                                self.finished = true;
                                return Ok(None);
                            }
                            _ => {}
                        }
                    }
                }
                Ev::Eof => {
                    self.finished = true;
                    return Ok(None);
                }
            }
        }
    }

    fn read_tu(&mut self, attrs: Attrs, line: u64) -> Result<Entry, TmxError> {
        let mut unit = Unit {
            line,
            attrs,
            ..Unit::default()
        };
        let mut problem: Option<String> = None;
        loop {
            match self.next_ev()? {
                Ev::Start {
                    name, attrs, empty, ..
                } => match name.as_str() {
                    "note" => {
                        let text = self.element_text(empty)?;
                        unit.notes.push(Note { attrs, text });
                    }
                    "prop" => {
                        let text = self.element_text(empty)?;
                        unit.props.push(Prop { attrs, text });
                    }
                    "tuv" => match self.read_tuv(attrs, empty)? {
                        Ok(v) => unit.variants.push(v),
                        Err(why) => {
                            problem.get_or_insert(why);
                        }
                    },
                    other => {
                        problem.get_or_insert(format!("<{other}> is not allowed in <tu>"));
                        if !empty {
                            self.skip_subtree()?;
                        }
                    }
                },
                Ev::Text(_) => {}
                Ev::End => break,
                Ev::Eof => break,
            }
        }
        if let Some(reason) = problem {
            return Ok(Entry::Skipped { line, reason });
        }
        if unit.variants.is_empty() {
            return Ok(Entry::Skipped {
                line,
                reason: "the unit has no <tuv>".to_owned(),
            });
        }
        Ok(Entry::Unit(unit))
    }

    /// A variant, or why it is unusable (the element is consumed either way).
    fn read_tuv(&mut self, attrs: Attrs, empty: bool) -> Result<Result<Variant, String>, TmxError> {
        let mut lang = None;
        let mut rest = Vec::with_capacity(attrs.len());
        for (k, v) in attrs {
            if (k == "xml:lang" || k == "lang") && lang.is_none() {
                lang = Some(v);
            } else {
                rest.push((k, v));
            }
        }
        let mut variant = Variant {
            lang: lang.unwrap_or_default().trim().to_owned(),
            attrs: rest,
            ..Variant::default()
        };
        let mut problem = None;
        if variant.lang.is_empty() {
            problem = Some("a <tuv> has no xml:lang".to_owned());
        }
        if empty {
            return Ok(Err(
                problem.unwrap_or_else(|| "a <tuv> has no <seg>".to_owned())
            ));
        }
        let mut seg_seen = false;
        loop {
            match self.next_ev()? {
                Ev::Start {
                    name, attrs, empty, ..
                } => match name.as_str() {
                    "note" => {
                        let text = self.element_text(empty)?;
                        variant.notes.push(Note { attrs, text });
                    }
                    "prop" => {
                        let text = self.element_text(empty)?;
                        variant.props.push(Prop { attrs, text });
                    }
                    "seg" => {
                        if seg_seen {
                            problem.get_or_insert("a <tuv> has two <seg>".to_owned());
                        }
                        seg_seen = true;
                        if !empty {
                            match self.read_seg()? {
                                Ok((seg, text)) => {
                                    variant.seg = seg;
                                    variant.text = text;
                                }
                                Err(why) => {
                                    problem.get_or_insert(why);
                                }
                            }
                        }
                    }
                    other => {
                        problem.get_or_insert(format!("<{other}> is not allowed in <tuv>"));
                        if !empty {
                            self.skip_subtree()?;
                        }
                    }
                },
                Ev::Text(_) => {}
                Ev::End | Ev::Eof => break,
            }
        }
        if !seg_seen {
            problem.get_or_insert("a <tuv> has no <seg>".to_owned());
        }
        Ok(match problem {
            Some(p) => Err(p),
            None => Ok(variant),
        })
    }

    /// The content of a `<seg>` (its start tag read): canonical XML and plain text.
    fn read_seg(&mut self) -> Result<Result<(String, String), String>, TmxError> {
        let mut xml = String::new();
        let mut text = String::new();
        let mut problem: Option<String> = None;
        // Open inline elements: whether their text is plain text.
        let mut open: Vec<(String, bool)> = Vec::new();
        loop {
            match self.next_ev()? {
                Ev::Text(t) => {
                    if problem.is_none() {
                        xml.push_str(&super::escape_text(&t));
                        if open.last().is_none_or(|(_, plain)| *plain) {
                            text.push_str(&t);
                        }
                    }
                }
                Ev::Start {
                    name, attrs, empty, ..
                } => {
                    if !INLINE_ELEMENTS.contains(&name.as_str()) {
                        problem.get_or_insert(format!("<{name}> is not allowed in <seg>"));
                    }
                    if problem.is_none() {
                        write_start(&mut xml, &name, &attrs, empty);
                    }
                    if !empty {
                        let parent_plain = open.last().is_none_or(|(_, p)| *p);
                        let plain = parent_plain && name == "hi";
                        open.push((name, plain));
                    }
                }
                Ev::End => match open.pop() {
                    Some((name, _)) => {
                        if problem.is_none() {
                            xml.push_str("</");
                            xml.push_str(&name);
                            xml.push('>');
                        }
                    }
                    None => break,
                },
                Ev::Eof => break,
            }
            if problem.is_none() && xml.len() > MAX_SEGMENT_BYTES {
                problem = Some(format!(
                    "a segment is longer than {MAX_SEGMENT_BYTES} bytes"
                ));
                xml = String::new();
                text = String::new();
            }
        }
        Ok(match problem {
            Some(p) => Err(p),
            None => Ok((xml, text)),
        })
    }

    /// The text of a `<note>`/`<prop>` (start tag read); nested elements are skipped.
    fn element_text(&mut self, empty: bool) -> Result<String, TmxError> {
        let mut text = String::new();
        if empty {
            return Ok(text);
        }
        loop {
            match self.next_ev()? {
                Ev::Text(t) => {
                    if text.len() < MAX_SEGMENT_BYTES {
                        text.push_str(&t);
                    }
                }
                Ev::Start { empty, .. } => {
                    if !empty {
                        self.skip_subtree()?;
                    }
                }
                Ev::End | Ev::Eof => return Ok(text),
            }
        }
    }

    /// Consumes the rest of an element whose start tag was read.
    fn skip_subtree(&mut self) -> Result<(), TmxError> {
        let mut depth = 1usize;
        while depth > 0 {
            match self.next_ev()? {
                Ev::Start { empty: false, .. } => depth += 1,
                Ev::End => depth -= 1,
                Ev::Eof => return Ok(()),
                _ => {}
            }
        }
        Ok(())
    }

    /// An element (start tag read) as canonical XML.
    fn capture(&mut self, name: &str, attrs: &Attrs, empty: bool) -> Result<String, TmxError> {
        let mut xml = String::new();
        write_start(&mut xml, name, attrs, empty);
        if empty {
            return Ok(xml);
        }
        let mut open = vec![name.to_owned()];
        while let Some(top) = open.last().cloned() {
            match self.next_ev()? {
                Ev::Text(t) => xml.push_str(&super::escape_text(&t)),
                Ev::Start {
                    name, attrs, empty, ..
                } => {
                    write_start(&mut xml, &name, &attrs, empty);
                    if !empty {
                        open.push(name);
                    }
                }
                Ev::End => {
                    open.pop();
                    xml.push_str("</");
                    xml.push_str(&top);
                    xml.push('>');
                }
                Ev::Eof => break,
            }
            if xml.len() > MAX_SEGMENT_BYTES {
                self.skip_open(open.len())?;
                return Ok(String::new());
            }
        }
        Ok(xml)
    }

    fn skip_open(&mut self, mut depth: usize) -> Result<(), TmxError> {
        while depth > 0 {
            match self.next_ev()? {
                Ev::Start { empty: false, .. } => depth += 1,
                Ev::End => depth -= 1,
                Ev::Eof => return Ok(()),
                _ => {}
            }
        }
        Ok(())
    }
}

/// Writes a start tag (or an empty-element tag) with escaped attribute values.
pub(crate) fn write_start(out: &mut String, name: &str, attrs: &Attrs, empty: bool) {
    out.push('<');
    out.push_str(name);
    for (k, v) in attrs {
        out.push(' ');
        out.push_str(k);
        out.push_str("=\"");
        out.push_str(&quick_xml::escape::escape(v.as_str()));
        out.push('"');
    }
    out.push_str(if empty { "/>" } else { ">" });
}

fn start(s: &BytesStart<'_>, empty: bool, pos: u64) -> Result<Ev, String> {
    let qname = s.name();
    let name: &str = qname.as_ref();
    let name = name.to_owned();
    let mut attrs = Vec::new();
    for a in s.attributes().with_checks(true) {
        let a = a.map_err(|e| format!("bad attribute in <{name}>: {e}"))?;
        let key: &str = a.key.as_ref();
        let key = key.to_owned();
        let value = a
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map_err(|e| format!("bad value of {key} in <{name}>: {e}"))?
            .into_owned();
        attrs.push((key, value));
    }
    Ok(Ev::Start {
        name,
        attrs,
        empty,
        pos,
    })
}

/// A user-facing description of a quick-xml error.
fn describe(e: &quick_xml::Error) -> String {
    use quick_xml::errors::{Error, IllFormedError, SyntaxError};
    match e {
        Error::IllFormed(IllFormedError::MismatchedEndTag { expected, found }) => {
            format!("</{found}> does not close <{expected}>")
        }
        Error::IllFormed(IllFormedError::UnmatchedEndTag(name)) => {
            format!("</{name}> closes no open element")
        }
        Error::Syntax(SyntaxError::UnclosedTag) => "a tag is not closed".to_owned(),
        other => other.to_string(),
    }
}
