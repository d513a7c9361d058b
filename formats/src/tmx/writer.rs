//! The streaming TMX writer.

use std::io::Write;

use super::reader::write_start;
use super::{Attrs, Header, Note, Prop, TmxError, Unit, escape_text};

/// Attributes TMX 1.4b requires on `<header>`, with the values written when
/// the header given lacks them (`srclang` defaults to `*all*`).
pub const REQUIRED_HEADER_ATTRS: [(&str, &str); 7] = [
    ("creationtool", "Tolk"),
    ("creationtoolversion", env!("CARGO_PKG_VERSION")),
    ("segtype", "sentence"),
    ("o-tmf", "Tolk"),
    ("adminlang", "en"),
    ("srclang", "*all*"),
    ("datatype", "plaintext"),
];

/// Writes a TMX 1.4b document unit by unit; see the [module documentation](super).
pub struct TmxWriter<W: Write> {
    out: W,
    buf: String,
}

fn io(e: std::io::Error) -> TmxError {
    TmxError::Io(format!("writing the TMX file failed: {e}"))
}

impl<W: Write> TmxWriter<W> {
    /// Writes the XML declaration, `<tmx version="1.4">`, the header (missing
    /// required attributes are added) and opens `<body>`.
    pub fn start(mut out: W, header: &Header) -> Result<Self, TmxError> {
        let mut s = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE tmx SYSTEM \"tmx14.dtd\">\n<tmx version=\"1.4\">\n  ",
        );
        let mut attrs: Attrs = header.attrs.clone();
        for (k, v) in REQUIRED_HEADER_ATTRS {
            if !attrs.iter().any(|(name, _)| name == k) {
                attrs.push((k.to_owned(), v.to_owned()));
            }
        }
        let empty = header.notes.is_empty() && header.props.is_empty() && header.extra.is_empty();
        write_start(&mut s, "header", &attrs, empty);
        if !empty {
            for n in &header.notes {
                s.push_str("\n    ");
                note(&mut s, n);
            }
            for x in &header.extra {
                s.push_str("\n    ");
                s.push_str(x);
            }
            for p in &header.props {
                s.push_str("\n    ");
                prop(&mut s, p);
            }
            s.push_str("\n  </header>");
        }
        s.push_str("\n  <body>\n");
        out.write_all(s.as_bytes()).map_err(io)?;
        Ok(Self {
            out,
            buf: String::new(),
        })
    }

    /// Writes one unit. Its variants' `seg` must be canonical segment XML (as
    /// [`super::TmxReader`] produces).
    pub fn write_unit(&mut self, unit: &Unit) -> Result<(), TmxError> {
        let s = &mut self.buf;
        s.clear();
        s.push_str("    ");
        write_start(s, "tu", &unit.attrs, false);
        for n in &unit.notes {
            s.push_str("\n      ");
            note(s, n);
        }
        for p in &unit.props {
            s.push_str("\n      ");
            prop(s, p);
        }
        for v in &unit.variants {
            s.push_str("\n      ");
            let mut attrs = Vec::with_capacity(v.attrs.len() + 1);
            attrs.push(("xml:lang".to_owned(), v.lang.clone()));
            attrs.extend(v.attrs.iter().cloned());
            write_start(s, "tuv", &attrs, false);
            for n in &v.notes {
                s.push_str("\n        ");
                note(s, n);
            }
            for p in &v.props {
                s.push_str("\n        ");
                prop(s, p);
            }
            s.push_str("\n        <seg>");
            s.push_str(&v.seg);
            s.push_str("</seg>\n      </tuv>");
        }
        s.push_str("\n    </tu>\n");
        self.out.write_all(s.as_bytes()).map_err(io)
    }

    /// Closes `<body>` and `<tmx>`; returns the output.
    pub fn finish(mut self) -> Result<W, TmxError> {
        self.out.write_all(b"  </body>\n</tmx>\n").map_err(io)?;
        self.out.flush().map_err(io)?;
        Ok(self.out)
    }

    /// The output so far (for callers that drain a buffer between units).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }
}

fn note(s: &mut String, n: &Note) {
    write_start(s, "note", &n.attrs, false);
    s.push_str(&escape_text(&n.text));
    s.push_str("</note>");
}

fn prop(s: &mut String, p: &Prop) {
    write_start(s, "prop", &p.attrs, false);
    s.push_str(&escape_text(&p.text));
    s.push_str("</prop>");
}
