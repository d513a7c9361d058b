//! Office Open XML packages (Word, PowerPoint, Excel): the ZIP package, a
//! light XML tree of its parts, and paragraphs as segments.
//!
//! A [`Package`] names the translatable parts of its kind and the
//! [`Dialect`] of each. Those parts are read into skeletons (see
//! [`paragraph`]); on merge they are rewritten (compressed like the original
//! entries) and every other entry is copied raw — byte-identical, compressed
//! data included — in the original entry order.

mod atoms;
mod paragraph;
mod skeleton;

#[cfg(test)]
pub(crate) mod testdoc;

use std::io::{Cursor, Read, Write};

use zip::result::ZipError;
use zip::{ZipArchive, ZipWriter};

use crate::FormatError;
use crate::archive::EntryProblem;
use crate::slots::{SlotMap, Slots, Texts};
use crate::xml;
use skeleton::{Node, NodeList};

/// Larger XML parts are refused (a guard against ZIP bombs).
const MAX_PART_SIZE: u64 = 256 << 20;

/// Magic number of OLE compound files: legacy `.doc` and encrypted Office files.
const OLE_MAGIC: [u8; 8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];

/// The vocabulary of paragraphs in one markup language of Office Open XML.
#[derive(Debug)]
pub(crate) struct Dialect {
    /// The elements that are paragraphs (`w:p`).
    pub paragraphs: &'static [&'static str],
    /// Its properties, first child (`w:pPr`).
    pub paragraph_props: &'static str,
    /// A run (`w:r`).
    pub run: &'static str,
    /// A run's properties (`w:rPr`).
    pub run_props: &'static str,
    /// A run's text (`w:t`).
    pub text: &'static str,
    /// A run written for translated text, open and close.
    pub run_open: &'static str,
    /// See [`Dialect::run_open`].
    pub run_close: &'static str,
    /// The text element written, open and close.
    pub text_open: &'static str,
    /// See [`Dialect::text_open`].
    pub text_close: &'static str,
    /// How a translation's line breaks and tabs are written.
    pub breaks: Breaks,
    /// Whether text elements may stand in a paragraph without a run (the
    /// plain strings of SpreadsheetML).
    pub bare_text: bool,
    /// Whether paragraphs hold their text as character data, with spans as
    /// containers (OpenDocument's mixed content), instead of in text elements.
    pub mixed: bool,
    /// Elements standing for spaces in mixed content (`text:s`, with its
    /// `text:c` count), read as spaces.
    pub spaces: &'static [&'static str],
    /// Elements whose content is part of the paragraph's text flow.
    pub containers: &'static [&'static str],
    /// Run children that may be dropped if a translation loses them.
    pub droppable: &'static [&'static str],
    /// Run properties (elements or attributes) ignored when deciding whether
    /// two runs look the same.
    pub ignored_props: &'static [&'static str],
    /// Markers dropped from translated paragraphs (spell-check marks, layout
    /// hints).
    pub dropped: &'static [&'static str],
    /// Attributes whose values are text to translate, by element: alt text.
    pub attributes: &'static [(&'static str, &'static str)],
    /// Zero-width markers (bookmarks, comment ranges): one that falls inside a
    /// word is moved to the word's end, so the engine sees the word whole.
    pub markers: &'static [&'static str],
    /// Hard breaks (line breaks, positional tabs): a segment ends at each
    /// one standing directly in the paragraph.
    pub hard_breaks: &'static [&'static str],
    /// Tracked changes holding text (`w:ins`): a word cut by their boundary
    /// is made whole outside them, so the engine sees it whole.
    pub revisions: &'static [&'static str],
    /// How a translated run is marked with the target language.
    pub lang: Option<LangMark>,
}

/// How a dialect marks the language of a run.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LangMark {
    /// A child of the run properties (`<w:lang w:val="…"/>`), written before
    /// the first of `before` (the schema's order).
    Element {
        /// The element.
        name: &'static str,
        /// Its attribute holding the language.
        attr: &'static str,
        /// Run properties that follow it.
        before: &'static [&'static str],
    },
    /// An attribute of the run properties (DrawingML's `lang`).
    Attribute(&'static str),
}

/// How a dialect writes the line breaks and tabs of translated text.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Breaks {
    /// As elements inside the run (`w:br`, `w:tab`).
    InRun {
        /// The line break.
        line: &'static str,
        /// The tab.
        tab: &'static str,
    },
    /// Line breaks sit between runs (DrawingML's `a:br`): a newline becomes a
    /// space; a tab stays a character.
    Between,
    /// As characters of the text (SpreadsheetML).
    InText,
}

/// WordprocessingML (`word/*.xml`).
pub(crate) static WORD: Dialect = Dialect {
    paragraphs: &["w:p"],
    paragraph_props: "w:pPr",
    run: "w:r",
    run_props: "w:rPr",
    text: "w:t",
    run_open: "<w:r>",
    run_close: "</w:r>",
    text_open: "<w:t xml:space=\"preserve\">",
    text_close: "</w:t>",
    breaks: Breaks::InRun {
        line: "<w:br/>",
        tab: "<w:tab/>",
    },
    bare_text: false,
    mixed: false,
    spaces: &[],
    containers: &[
        "w:hyperlink",
        "w:ins",
        "w:moveTo",
        "w:smartTag",
        "w:customXml",
        "w:fldSimple",
        "w:sdt",
        "w:sdtContent",
        "w:dir",
        "w:bdo",
    ],
    droppable: &["w:tab", "w:cr", "w:noBreakHyphen", "w:softHyphen"],
    ignored_props: &["w:lang", "w:noProof"],
    dropped: &["w:proofErr", "w:lastRenderedPageBreak"],
    attributes: &[("wp:docPr", "descr"), ("wp:docPr", "title")],
    markers: &[
        "w:bookmarkStart",
        "w:bookmarkEnd",
        "w:commentRangeStart",
        "w:commentRangeEnd",
        "w:permStart",
        "w:permEnd",
        "w:del",
        "w:moveFrom",
    ],
    hard_breaks: &["w:br", "w:cr", "w:ptab"],
    revisions: &["w:ins", "w:moveTo"],
    lang: Some(LangMark::Element {
        name: "w:lang",
        attr: "w:val",
        before: &["w:eastAsianLayout", "w:specVanish", "w:oMath"],
    }),
};

/// DrawingML text (`a:p` in slides, notes, shapes, charts, diagrams).
pub(crate) static DRAWING: Dialect = Dialect {
    paragraphs: &["a:p"],
    paragraph_props: "a:pPr",
    run: "a:r",
    run_props: "a:rPr",
    text: "a:t",
    run_open: "<a:r>",
    run_close: "</a:r>",
    text_open: "<a:t>",
    text_close: "</a:t>",
    breaks: Breaks::Between,
    bare_text: false,
    mixed: false,
    spaces: &[],
    containers: &[],
    droppable: &[],
    ignored_props: &[
        "lang", "altLang", "dirty", "err", "noProof", "smtClean", "smtId",
    ],
    dropped: &[],
    attributes: &[
        ("p:cNvPr", "descr"),
        ("p:cNvPr", "title"),
        ("xdr:cNvPr", "descr"),
    ],
    markers: &[],
    hard_breaks: &["a:br"],
    revisions: &[],
    lang: Some(LangMark::Attribute("lang")),
};

/// SpreadsheetML strings: shared strings (`si`), inline strings (`is`) and
/// the text of cell comments (`text`), plain (`t`) or rich (`r`).
pub(crate) static SPREADSHEET: Dialect = Dialect {
    paragraphs: &["si", "is", "text"],
    paragraph_props: "",
    run: "r",
    run_props: "rPr",
    text: "t",
    run_open: "<r>",
    run_close: "</r>",
    text_open: "<t xml:space=\"preserve\">",
    text_close: "</t>",
    breaks: Breaks::InText,
    bare_text: true,
    mixed: false,
    spaces: &[],
    containers: &[],
    droppable: &[],
    ignored_props: &[],
    dropped: &[],
    attributes: &[],
    markers: &[],
    hard_breaks: &[],
    revisions: &[],
    lang: None,
};

/// Markup whose paragraphs hold character data directly (no runs, no text
/// elements): the base of [`OPEN_DOCUMENT`] and [`PLAIN`].
const MIXED_CONTENT: Dialect = Dialect {
    paragraphs: &[],
    paragraph_props: "",
    run: "",
    run_props: "",
    text: "",
    run_open: "",
    run_close: "",
    text_open: "",
    text_close: "",
    breaks: Breaks::InText,
    bare_text: true,
    mixed: true,
    spaces: &[],
    containers: &[],
    droppable: &[],
    ignored_props: &[],
    dropped: &[],
    attributes: &[],
    markers: &[],
    hard_breaks: &[],
    revisions: &[],
    lang: None,
};

/// OpenDocument text (`text:p`, `text:h` in `content.xml` and `styles.xml`
/// of odt, odp and ods): character data in paragraphs and spans.
pub(crate) static OPEN_DOCUMENT: Dialect = Dialect {
    paragraphs: &["text:p", "text:h"],
    breaks: Breaks::InRun {
        line: "<text:line-break/>",
        tab: "<text:tab/>",
    },
    spaces: &["text:s"],
    containers: &["text:span", "text:a", "text:meta"],
    dropped: &["text:soft-page-break"],
    markers: &[
        "text:bookmark",
        "text:bookmark-start",
        "text:bookmark-end",
        "office:annotation-end",
    ],
    hard_breaks: &["text:line-break"],
    ..MIXED_CONTENT
};

/// Document properties and plain-text comments: elements holding only
/// character data (`dc:title`, `dc:subject`, `dc:description`,
/// `cp:keywords` in `docProps/core.xml`, `meta:keyword` in OpenDocument's
/// `meta.xml`, `p:text` of PowerPoint's comments, `text` of Excel's threaded
/// comments).
pub(crate) static PLAIN: Dialect = Dialect {
    paragraphs: &[
        "dc:title",
        "dc:subject",
        "dc:description",
        "cp:keywords",
        "meta:keyword",
        "p:text",
        "text",
    ],
    ..MIXED_CONTENT
};

/// The document properties part of every Office Open XML package.
pub(crate) const CORE_PROPERTIES: &str = "docProps/core.xml";

/// The message of a truncated or damaged package.
fn damaged(kind: &str) -> FormatError {
    FormatError::corrupt(format!(
        "The file is not a valid {kind} document: the ZIP archive is truncated or damaged"
    ))
}

/// One kind of Office Open XML package: which parts are translated, in
/// which dialect, and the words of its errors.
pub(crate) struct Package {
    /// The format's name in messages (`DOCX`).
    pub kind: &'static str,
    /// What an OLE compound file of this extension is, for its refusal.
    pub legacy: &'static str,
    /// The part every package of the kind has (`word/document.xml`).
    pub main: &'static str,
    /// The other translatable parts, by name (translated in archive order).
    pub is_part: fn(&str) -> bool,
    /// The dialect of a translatable part, by name.
    pub dialect: fn(&str) -> &'static Dialect,
}

/// The package and the skeletons of its translatable parts.
#[derive(Debug)]
pub(crate) struct Skeleton {
    kind: &'static str,
    input: Vec<u8>,
    parts: Vec<PartSkeleton>,
    map: SlotMap,
}

#[derive(Debug)]
struct PartSkeleton {
    /// Index of the entry in the archive.
    index: usize,
    /// The part's markup vocabulary.
    dialect: &'static Dialect,
    /// Whether the part started with a UTF-8 byte-order mark (not in `src`).
    bom: bool,
    src: String,
    nodes: Vec<Node>,
}

/// Reads the translatable parts of a `package` into segments and skeletons;
/// runs marked with another language than `source` (when given) are kept.
pub(crate) fn extract(
    package: &Package,
    input: &[u8],
    source: Option<&str>,
) -> Result<(Vec<String>, Skeleton), FormatError> {
    let kind = package.kind;
    let mut archive = open_archive(package, input)?;
    let mut names = Vec::with_capacity(archive.len());
    for index in 0..archive.len() {
        match archive.name_for_index(index) {
            Some(Ok(name)) => names.push((index, name.into_owned())),
            Some(Err(e)) => return Err(zip_error(kind, e)),
            None => return Err(damaged(kind)),
        }
    }
    let Some(document) = names.iter().position(|(_, n)| n == package.main) else {
        return Err(FormatError::corrupt(format!(
            "The file is a ZIP archive but not a {kind} document ({} is missing)",
            package.main
        )));
    };
    let others = names
        .iter()
        .enumerate()
        .filter(|&(i, (_, name))| i != document && (package.is_part)(name));
    let order: Vec<(usize, String)> = std::iter::once(&names[document])
        .chain(others.map(|(_, entry)| entry))
        .cloned()
        .collect();

    let mut slots = Slots::default();
    let mut parts = Vec::with_capacity(order.len());
    for (index, name) in order {
        let text = read_part(kind, &mut archive, index, &name)?;
        let dialect = (package.dialect)(&name);
        let (bom, src) = match text.strip_prefix('\u{feff}') {
            Some(rest) => (true, rest.to_owned()),
            None => (false, text),
        };
        let nodes = {
            let tree = xml::parse(&src).map_err(|detail| {
                FormatError::corrupt(if detail == xml::DOCTYPE {
                    format!(
                        "The file is not a valid {kind} document: {name} declares a DOCTYPE \
                         (entity declarations are not allowed in documents)"
                    )
                } else {
                    format!(
                        "The file is not a valid {kind} document: {name} is not well-formed XML ({detail})"
                    )
                })
            })?;
            let mut out = NodeList::default();
            let mut extractor = paragraph::PartExtractor::new(dialect, &src, &mut slots, source);
            extractor.trust_language_marks(&tree);
            extractor.copy_nodes(&tree, &mut out);
            out.0
        };
        parts.push(PartSkeleton {
            index,
            dialect,
            bom,
            src,
            nodes,
        });
    }
    let (segments, map) = slots.finish();
    Ok((
        segments,
        Skeleton {
            kind,
            input: input.to_vec(),
            parts,
            map,
        },
    ))
}

pub(crate) fn open_archive<'i>(
    package: &Package,
    input: &'i [u8],
) -> Result<ZipArchive<Cursor<&'i [u8]>>, FormatError> {
    let kind = package.kind;
    if input.is_empty() {
        return Err(FormatError::corrupt("The file is empty"));
    }
    if input.starts_with(&OLE_MAGIC) {
        return Err(FormatError::unsupported(format!(
            "The file is a password-protected or {} document; only unprotected .{} \
             documents can be translated",
            package.legacy,
            kind.to_ascii_lowercase()
        )));
    }
    let mut archive = ZipArchive::new(Cursor::new(input)).map_err(|e| {
        if input.starts_with(b"PK") {
            zip_error(kind, e)
        } else {
            FormatError::corrupt(format!(
                "The file is not a valid {kind} document: it is not a ZIP archive"
            ))
        }
    })?;
    match crate::archive::check_entries(&mut archive) {
        Ok(()) => Ok(archive),
        Err(EntryProblem::Unreadable(e)) => Err(zip_error(kind, e)),
        Err(EntryProblem::UnsafePath(name)) => Err(FormatError::corrupt(format!(
            "The file is not a valid {kind} document: its entry {name:?} has an unsafe path \
             (absolute or climbing out of the package)"
        ))),
    }
}

pub(crate) fn zip_error(kind: &str, error: ZipError) -> FormatError {
    match error {
        ZipError::InvalidPassword => {
            FormatError::unsupported(format!("The {kind} document is password-protected"))
        }
        ZipError::UnsupportedArchive(what) => FormatError::unsupported(format!(
            "The {kind} document uses an unsupported ZIP feature ({what})"
        )),
        ZipError::CompressionMethodNotSupported(method) => FormatError::unsupported(format!(
            "The {kind} document uses an unsupported ZIP compression method ({method})"
        )),
        _ => damaged(kind),
    }
}

/// Reads a part as text.
fn read_part(
    kind: &str,
    archive: &mut ZipArchive<Cursor<&[u8]>>,
    index: usize,
    name: &str,
) -> Result<String, FormatError> {
    let bytes = read_entry(kind, archive, index, name)?;
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
            FormatError::unsupported(format!(
                "The {kind} document stores {name} as UTF-16, which is not supported"
            ))
        } else {
            FormatError::corrupt(format!(
                "The file is not a valid {kind} document: {name} is not valid UTF-8"
            ))
        }
    })
}

/// The bytes of entry `index` (`name`), refused when encrypted or larger
/// than [`MAX_PART_SIZE`] (whatever its header claims).
pub(crate) fn read_entry(
    kind: &str,
    archive: &mut ZipArchive<Cursor<&[u8]>>,
    index: usize,
    name: &str,
) -> Result<Vec<u8>, FormatError> {
    let file = archive.by_index(index).map_err(|e| zip_error(kind, e))?;
    if file.encrypted() {
        return Err(FormatError::unsupported(format!(
            "The {kind} document is password-protected"
        )));
    }
    let too_large = || {
        FormatError::unsupported(format!(
            "The {kind} document is too large to translate ({name} is over {} MiB)",
            MAX_PART_SIZE >> 20
        ))
    };
    if file.size() > MAX_PART_SIZE {
        return Err(too_large());
    }
    let capacity = usize::try_from(file.size()).unwrap_or(0);
    let mut bytes = Vec::with_capacity(capacity);
    file.take(MAX_PART_SIZE + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| damaged(kind))?;
    if bytes.len() as u64 > MAX_PART_SIZE {
        return Err(too_large());
    }
    Ok(bytes)
}

impl Skeleton {
    /// Writes the package with the translated parts, their translated runs
    /// marked with `lang` (BCP 47) where given; every other entry is copied
    /// raw.
    pub(crate) fn merge(
        &self,
        source: &[String],
        translated: &[String],
        lang: Option<&str>,
    ) -> Result<Vec<u8>, FormatError> {
        let texts = Texts::new(&self.map, source, translated);
        let kind = self.kind;
        let mut archive =
            ZipArchive::new(Cursor::new(self.input.as_slice())).map_err(|e| zip_error(kind, e))?;
        let mut writer = ZipWriter::new(Cursor::new(Vec::with_capacity(
            self.input.len() + self.input.len() / 4,
        )));
        let write_error = |e: &dyn std::fmt::Display| FormatError::Write(e.to_string());
        if !archive.comment().is_empty() {
            writer
                .set_raw_comment(archive.comment().into())
                .map_err(|e| write_error(&e))?;
        }
        for index in 0..archive.len() {
            let entry = archive
                .by_index_raw(index)
                .map_err(|e| zip_error(kind, e))?;
            let Some(part) = self.parts.iter().find(|p| p.index == index) else {
                writer.raw_copy_file(entry).map_err(|e| write_error(&e))?;
                continue;
            };
            let mut xml = String::with_capacity(part.src.len() + part.src.len() / 4 + 3);
            if part.bom {
                xml.push('\u{feff}');
            }
            let part_writer = skeleton::Writer {
                dialect: part.dialect,
                src: &part.src,
                texts,
                lang,
            };
            part_writer.render(&mut xml, &part.nodes);
            // A part the translation leaves as it was keeps its compressed bytes.
            if xml.strip_prefix('\u{feff}').unwrap_or(&xml) == part.src {
                writer.raw_copy_file(entry).map_err(|e| write_error(&e))?;
                continue;
            }
            let name = entry.name().map_err(|e| zip_error(kind, e))?.into_owned();
            let options = entry.options();
            drop(entry);
            writer
                .start_file(name, options)
                .map_err(|e| write_error(&e))?;
            writer
                .write_all(xml.as_bytes())
                .map_err(|e| write_error(&e))?;
        }
        let cursor = writer.finish().map_err(|e| write_error(&e))?;
        Ok(cursor.into_inner())
    }
}
