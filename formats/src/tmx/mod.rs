//! TMX 1.4b (Translation Memory eXchange), read and written as streams.
//!
//! [`TmxReader`] pulls one translation unit (`<tu>`) at a time out of any
//! [`std::io::BufRead`] with quick-xml: memory stays bounded by the largest
//! unit, whatever the file's size. Structural problems of a single unit (a
//! `<tuv>` without a language, a missing `<seg>`, an element that TMX does not
//! allow inside a segment) skip that unit with a reason ([`Entry::Skipped`]);
//! a file that is not well-formed XML stops the reader with
//! [`TmxError::Malformed`] carrying the line of the fault.
//!
//! [`TmxWriter`] writes a valid TMX 1.4b document to any [`std::io::Write`],
//! unit by unit.
//!
//! Segments keep their inline markup: [`Variant::seg`] is the content of
//! `<seg>` as canonical XML (`bpt`, `ept`, `it`, `ph`, `hi`, `ut`, `sub` with
//! their attributes and native code; text escaped), and [`Variant::text`] its
//! plain text (the text of `<seg>` and of `<hi>`, without the native code of
//! the other inline elements), which is what translation memories match on.
//!
//! ```
//! use tolk_formats::tmx::{Entry, TmxReader};
//!
//! let tmx = r#"<tmx version="1.4"><header srclang="en" creationtool="t"
//!   creationtoolversion="1" segtype="sentence" o-tmf="t" adminlang="en"
//!   datatype="plaintext"/><body><tu tuid="1"><tuv xml:lang="en"><seg>Hello
//!   <ph x="1">&lt;br/&gt;</ph>world</seg></tuv><tuv xml:lang="de"><seg>Hallo
//!   Welt</seg></tuv></tu></body></tmx>"#;
//! let mut reader = TmxReader::new(tmx.as_bytes()).unwrap();
//! assert_eq!(reader.header().srclang(), Some("en"));
//! let Some(Entry::Unit(unit)) = reader.next_entry().unwrap() else { panic!() };
//! assert_eq!(unit.variants[0].text, "Hello\n  world");
//! assert!(unit.variants[0].seg.contains(r#"<ph x="1">&lt;br/&gt;</ph>"#));
//! assert!(reader.next_entry().unwrap().is_none());
//! ```

mod lines;
mod reader;
mod writer;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use reader::TmxReader;
pub use writer::TmxWriter;

/// Elements TMX 1.4b allows inside `<seg>` (and, but for `sub`, nowhere else).
pub const INLINE_ELEMENTS: [&str; 7] = ["bpt", "ept", "it", "ph", "hi", "ut", "sub"];

/// Attributes as written, in order: (name, unescaped value).
pub type Attrs = Vec<(String, String)>;

/// Why a TMX stream could not be read (or written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TmxError {
    /// Not well-formed XML, or not a TMX document: nothing after it can be trusted.
    #[error("The TMX file is not well-formed at line {line}: {message}")]
    Malformed {
        /// 1-based line of the fault.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// Reading or writing the underlying stream failed.
    #[error("{0}")]
    Io(String),
}

impl TmxError {
    /// The line of a [`TmxError::Malformed`] fault.
    pub fn line(&self) -> Option<u64> {
        match self {
            Self::Malformed { line, .. } => Some(*line),
            Self::Io(_) => None,
        }
    }
}

/// A `<note>`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    /// Its attributes (`xml:lang`, `o-encoding`).
    #[serde(default, rename = "a", skip_serializing_if = "Vec::is_empty")]
    pub attrs: Attrs,
    /// Its text.
    #[serde(rename = "t")]
    pub text: String,
}

/// A `<prop type="…">`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prop {
    /// Its attributes (`type`, `xml:lang`, `o-encoding`).
    #[serde(default, rename = "a", skip_serializing_if = "Vec::is_empty")]
    pub attrs: Attrs,
    /// Its text.
    #[serde(rename = "t")]
    pub text: String,
}

/// The `<header>`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Its attributes (`srclang`, `creationtool`, `segtype`…).
    #[serde(default, rename = "a", skip_serializing_if = "Vec::is_empty")]
    pub attrs: Attrs,
    /// Its notes.
    #[serde(default, rename = "n", skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
    /// Its properties.
    #[serde(default, rename = "p", skip_serializing_if = "Vec::is_empty")]
    pub props: Vec<Prop>,
    /// Other children (`<ude>`), as canonical XML.
    #[serde(default, rename = "x", skip_serializing_if = "Vec::is_empty")]
    pub extra: Vec<String>,
}

impl Header {
    /// The value of an attribute.
    pub fn attr(&self, name: &str) -> Option<&str> {
        attr(&self.attrs, name)
    }

    /// The source language (`srclang`), unless it is `*all*` or missing.
    pub fn srclang(&self) -> Option<&str> {
        self.attr("srclang")
            .map(str::trim)
            .filter(|s| !s.is_empty() && *s != "*all*")
    }
}

/// One language variant of a unit (`<tuv>`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Variant {
    /// Its language (`xml:lang`, or `lang` in TMX 1.1 files), as written.
    #[serde(rename = "l")]
    pub lang: String,
    /// Its other attributes.
    #[serde(default, rename = "a", skip_serializing_if = "Vec::is_empty")]
    pub attrs: Attrs,
    /// Its notes.
    #[serde(default, rename = "n", skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
    /// Its properties.
    #[serde(default, rename = "p", skip_serializing_if = "Vec::is_empty")]
    pub props: Vec<Prop>,
    /// The content of `<seg>` as canonical XML, inline elements kept.
    #[serde(rename = "s")]
    pub seg: String,
    /// The plain text of the segment (not stored: recomputed from `seg`).
    #[serde(skip)]
    pub text: String,
}

/// A translation unit (`<tu>`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unit {
    /// Line of its `<tu>` start tag in the file read (0 for units built otherwise).
    #[serde(skip)]
    pub line: u64,
    /// Its attributes (`tuid`, `datatype`, `srclang`…).
    #[serde(default, rename = "a", skip_serializing_if = "Vec::is_empty")]
    pub attrs: Attrs,
    /// Its notes.
    #[serde(default, rename = "n", skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
    /// Its properties.
    #[serde(default, rename = "p", skip_serializing_if = "Vec::is_empty")]
    pub props: Vec<Prop>,
    /// Its variants, in file order.
    #[serde(rename = "v")]
    pub variants: Vec<Variant>,
}

impl Unit {
    /// The value of an attribute.
    pub fn attr(&self, name: &str) -> Option<&str> {
        attr(&self.attrs, name)
    }
}

/// What [`TmxReader::next_entry`] yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A unit that is structurally valid.
    Unit(Unit),
    /// A unit (or other body element) that was left out, and why.
    Skipped {
        /// Line of its start tag.
        line: u64,
        /// Why.
        reason: String,
    },
}

fn attr<'a>(attrs: &'a Attrs, name: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// Escapes text for XML character data (`&`, `<`, `>`).
pub fn escape_text(text: &str) -> std::borrow::Cow<'_, str> {
    quick_xml::escape::partial_escape(text)
}
