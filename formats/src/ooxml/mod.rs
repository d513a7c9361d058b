//! Office Open XML packages (Word, PowerPoint, Excel): the ZIP package, a
//! light XML tree of its parts, and paragraphs as segments.
//!
//! A [`Package`] names the translatable parts of its kind and the
//! [`Dialect`] of each. Those parts are read into skeletons (see
//! [`paragraph`]); on merge they are rewritten (compressed like the original
//! entries) and every other entry is copied raw — byte-identical, compressed
//! data included — in the original entry order.

mod atoms;
mod chunks;
mod paragraph;
mod pieces;
mod prescan;
mod skeleton;

#[cfg(test)]
pub(crate) mod testdoc;

use std::io::{Cursor, Read, Write};

use zip::result::ZipError;
use zip::{ZipArchive, ZipWriter};

use crate::FormatError;
use crate::archive::EntryProblem;
use crate::slots::{Slots, Texts};
use crate::stream::Translator;
use crate::xml;
use pieces::Pieces;
use skeleton::NodeList;

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
    /// Elements holding text, not paragraphs, with translatable pieces in
    /// it: formulas' structured references, chart caches' values.
    pub pieces: &'static [(&'static str, &'static Pieces)],
    /// Text bodies (`p:txBody`) whose properties (`a:bodyPr`) get a font
    /// scale when their translation is longer than the source.
    pub text_bodies: &'static [&'static str],
    /// Named styles that mark code (pandoc's `VerbatimChar`, Word's
    /// `HTMLCode`, LibreOffice's `Source Text`): a run, span or paragraph in
    /// one is kept as it is.
    pub code_styles: &'static [&'static str],
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
    /// Whether a run's own attributes are part of its style, not only its
    /// properties element (IDML's `CharacterStyleRange`).
    pub run_attributes: bool,
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
    pieces: &[],
    text_bodies: &[],
    code_styles: &[
        "VerbatimChar",
        "SourceCode",
        "HTMLCode",
        "HTMLKeyboard",
        "HTMLSample",
        "HTMLTypewriter",
        "HTMLPreformatted",
        "SourceText",
        "Teletype",
        "PreformattedText",
    ],
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
    run_attributes: false,
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
    pieces: &[("c:v", &pieces::CACHED_TEXT)],
    text_bodies: &["p:txBody"],
    code_styles: &[],
    markers: &[],
    hard_breaks: &["a:br"],
    revisions: &[],
    lang: Some(LangMark::Attribute("lang")),
    run_attributes: false,
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
    attributes: &[
        ("tableColumn", "name"),
        ("tableColumn", "totalsRowLabel"),
        ("cacheField", "name"),
        ("s", "v"),
        ("dataField", "name"),
    ],
    pieces: &[
        ("f", &pieces::STRUCTURED_REFERENCES),
        ("definedName", &pieces::STRUCTURED_REFERENCES),
        ("calculatedColumnFormula", &pieces::STRUCTURED_REFERENCES),
        ("totalsRowFormula", &pieces::STRUCTURED_REFERENCES),
        ("oddHeader", &pieces::HEADER_FOOTER),
        ("oddFooter", &pieces::HEADER_FOOTER),
        ("evenHeader", &pieces::HEADER_FOOTER),
        ("evenFooter", &pieces::HEADER_FOOTER),
        ("firstHeader", &pieces::HEADER_FOOTER),
        ("firstFooter", &pieces::HEADER_FOOTER),
    ],
    text_bodies: &[],
    code_styles: &[],
    markers: &[],
    hard_breaks: &[],
    revisions: &[],
    lang: None,
    run_attributes: false,
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
    pieces: &[],
    text_bodies: &[],
    code_styles: &[],
    markers: &[],
    hard_breaks: &[],
    revisions: &[],
    lang: None,
    run_attributes: false,
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
    code_styles: &["Source_20_Text", "Teletype", "Preformatted_20_Text"],
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

/// Adobe InDesign stories (`Stories/Story_*.xml` of IDML): paragraphs
/// (`ParagraphStyleRange`) of runs (`CharacterStyleRange`, their style in
/// their attributes and `Properties`) holding `Content`; a `Br` ends a
/// paragraph within a range, so it ends a segment.
pub(crate) static IDML: Dialect = Dialect {
    paragraphs: &["ParagraphStyleRange"],
    paragraph_props: "Properties",
    run: "CharacterStyleRange",
    run_props: "Properties",
    text: "Content",
    run_open: "<CharacterStyleRange>",
    run_close: "</CharacterStyleRange>",
    text_open: "<Content>",
    text_close: "</Content>",
    breaks: Breaks::InText,
    bare_text: false,
    mixed: false,
    spaces: &[],
    containers: &["XMLElement", "HyperlinkTextSource", "Change"],
    droppable: &[],
    ignored_props: &["AppliedLanguage"],
    dropped: &[],
    attributes: &[],
    pieces: &[],
    text_bodies: &[],
    code_styles: &[],
    markers: &["HyperlinkTextDestination"],
    hard_breaks: &["Br"],
    revisions: &[],
    lang: None,
    run_attributes: true,
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

/// Bytes of a part's XML a chunk holds before it is cut ([`chunks`]): what a
/// translation holds of a part at a time, besides the output.
pub(crate) const CHUNK_SIZE: usize = 128 << 10;

/// A package read by [`extract`], translated again from its bytes on merge.
pub(crate) struct Skeleton {
    package: &'static Package,
    input: Vec<u8>,
    source: Option<String>,
    chunk_size: usize,
}

/// Why [`translate`] stopped.
#[derive(Debug)]
pub(crate) enum Stop<E> {
    /// The package could not be read or written.
    Format(FormatError),
    /// The translator failed.
    Translator(E),
}

impl<E> From<FormatError> for Stop<E> {
    fn from(e: FormatError) -> Self {
        Stop::Format(e)
    }
}

/// Reads the translatable parts of a `package` into segments; runs marked
/// with another language than `source` (when given) are kept.
pub(crate) fn extract(
    package: &'static Package,
    input: &[u8],
    source: Option<&str>,
) -> Result<(Vec<String>, Skeleton), FormatError> {
    extract_in_chunks(package, input, source, CHUNK_SIZE)
}

/// [`extract`] cutting parts into chunks of `chunk_size` bytes (the
/// segments are the same whatever the size).
pub(crate) fn extract_in_chunks(
    package: &'static Package,
    input: &[u8],
    source: Option<&str>,
    chunk_size: usize,
) -> Result<(Vec<String>, Skeleton), FormatError> {
    let mut segments = Vec::new();
    let mut collect = |batch: &[String], _: f32| {
        segments.extend_from_slice(batch);
        Ok::<_, std::convert::Infallible>(Vec::new())
    };
    match translate(
        package,
        input,
        source,
        None,
        chunk_size,
        false,
        &mut collect,
    ) {
        Ok(_) => {}
        Err(Stop::Format(e)) => return Err(e),
        Err(Stop::Translator(never)) => match never {},
    }
    let skeleton = Skeleton {
        package,
        input: input.to_vec(),
        source: source.map(str::to_owned),
        chunk_size,
    };
    Ok((segments, skeleton))
}

impl Skeleton {
    /// Writes the package with the translated parts (one translation per
    /// segment of [`extract`], in order), translated runs marked with `lang`
    /// (BCP 47) where given; every other entry is copied raw.
    pub(crate) fn merge(
        &self,
        translated: &[String],
        lang: Option<&str>,
    ) -> Result<Vec<u8>, FormatError> {
        let expected = translated.len();
        let mut rest = translated;
        let mut seen = 0;
        let mut take = |batch: &[String], _: f32| {
            seen += batch.len();
            if batch.len() > rest.len() {
                return Err(FormatError::Mismatch {
                    expected: seen,
                    got: expected,
                });
            }
            let (now, later) = rest.split_at(batch.len());
            rest = later;
            Ok(now.to_vec())
        };
        let source = self.source.as_deref();
        let (input, size) = (&self.input, self.chunk_size);
        let out = match translate(self.package, input, source, lang, size, true, &mut take) {
            Ok(out) => out.unwrap_or_default(),
            Err(Stop::Format(e) | Stop::Translator(e)) => return Err(e),
        };
        if !rest.is_empty() {
            return Err(FormatError::Mismatch {
                expected: expected - rest.len(),
                got: expected,
            });
        }
        Ok(out)
    }
}

/// Translates a `package` part by part and, within a part, a chunk at a time
/// ([`chunks`], of about `chunk_size` bytes): each chunk's segments go to
/// `translator`, and (when `write`) the chunk is written to the output as its translations come back, so
/// what is held besides the output is one chunk, whatever the file's size.
/// Parts are taken in archive order; every other entry is copied raw
/// (compressed bytes included), as is a part the translation leaves as it
/// was. Runs marked with another language than `source` (when given) are
/// kept; translated runs are marked with `lang`.
pub(crate) fn translate<E>(
    package: &Package,
    input: &[u8],
    source: Option<&str>,
    lang: Option<&str>,
    chunk_size: usize,
    write: bool,
    translator: &mut Translator<'_, E>,
) -> Result<Option<Vec<u8>>, Stop<E>> {
    let kind = package.kind;
    let mut archive = open_archive(package, input)?;
    let mut names = Vec::with_capacity(archive.len());
    for index in 0..archive.len() {
        match archive.name_for_index(index) {
            Some(Ok(name)) => names.push(name.into_owned()),
            Some(Err(e)) => return Err(zip_error(kind, e).into()),
            None => return Err(damaged(kind).into()),
        }
    }
    if !names.iter().any(|n| n == package.main) {
        return Err(FormatError::corrupt(format!(
            "The file is a ZIP archive but not a {kind} document ({} is missing)",
            package.main
        ))
        .into());
    }
    let is_part = |name: &str| name == package.main || (package.is_part)(name);
    let mut total = 0u64;
    for (index, name) in names.iter().enumerate() {
        if is_part(name) {
            let entry = archive
                .by_index_raw(index)
                .map_err(|e| zip_error(kind, e))?;
            total += entry.size();
        }
    }
    let total = total.max(1) as f32;

    let write_error = |e: &dyn std::fmt::Display| FormatError::Write(e.to_string());
    let mut writer = None;
    if write {
        let mut w = ZipWriter::new(Cursor::new(Vec::with_capacity(
            input.len() + input.len() / 4,
        )));
        if !archive.comment().is_empty() {
            w.set_raw_comment(archive.comment().into())
                .map_err(|e| write_error(&e))?;
        }
        writer = Some(w);
    }
    let mut done = 0u64;
    for (index, name) in names.iter().enumerate() {
        if !is_part(name) {
            if let Some(w) = writer.as_mut() {
                let entry = archive
                    .by_index_raw(index)
                    .map_err(|e| zip_error(kind, e))?;
                w.raw_copy_file(entry).map_err(|e| write_error(&e))?;
            }
            continue;
        }
        let dialect = (package.dialect)(name);
        let part_source = match source {
            Some(source) => {
                let file = open_entry(kind, &mut archive, index, name)?;
                prescan::marks_language(file, dialect, source).then_some(source)
            }
            None => None,
        };
        if let Some(w) = writer.as_mut() {
            let entry = archive
                .by_index_raw(index)
                .map_err(|e| zip_error(kind, e))?;
            let options = entry.options();
            drop(entry);
            w.start_file(name.as_str(), options)
                .map_err(|e| write_error(&e))?;
        }
        let mut code_styles: Vec<String> = dialect
            .code_styles
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        if dialect.mixed && !code_styles.is_empty() {
            let file = open_entry(kind, &mut archive, index, name)?;
            code_styles.extend(prescan::derived_styles(file, dialect.code_styles));
        }
        let file = open_entry(kind, &mut archive, index, name)?;
        let mut chunks = chunks::Chunker::new(file, dialect, chunk_size, MAX_PART_SIZE);
        let part = Part {
            kind,
            name,
            dialect,
            code_styles: &code_styles,
            source: part_source,
            lang,
            done,
            total,
        };
        let changed = part.translate(&mut chunks, writer.as_mut(), translator)?;
        done += chunks.position();
        drop(chunks);
        if let Some(w) = writer.as_mut()
            && !changed
        {
            // A part the translation leaves as it was keeps its compressed bytes.
            w.abort_file().map_err(|e| write_error(&e))?;
            let entry = archive
                .by_index_raw(index)
                .map_err(|e| zip_error(kind, e))?;
            w.raw_copy_file(entry).map_err(|e| write_error(&e))?;
        }
    }
    match writer {
        Some(w) => {
            let cursor = w.finish().map_err(|e| write_error(&e))?;
            Ok(Some(cursor.into_inner()))
        }
        None => Ok(None),
    }
}

/// One translatable part being translated.
struct Part<'a> {
    kind: &'static str,
    name: &'a str,
    dialect: &'static Dialect,
    /// The source language, when the part's language marks are trusted.
    source: Option<&'a str>,
    /// Styles marking code: the dialect's and those derived from them
    /// ([`prescan::derived_styles`]).
    code_styles: &'a [String],
    lang: Option<&'a str>,
    /// Bytes of the package's translatable parts read before this one, and
    /// in all (the translator's progress).
    done: u64,
    total: f32,
}

impl Part<'_> {
    /// Translates the part's chunks, writing each to `writer` (the part's
    /// entry, started); whether the output differs from the part.
    fn translate<R: Read, E>(
        &self,
        chunks: &mut chunks::Chunker<R>,
        mut writer: Option<&mut ZipWriter<Cursor<Vec<u8>>>>,
        translator: &mut Translator<'_, E>,
    ) -> Result<bool, Stop<E>> {
        let mut changed = false;
        let mut first = true;
        while let Some(chunk) = chunks.next_chunk().map_err(|e| self.chunk_error(e))? {
            let tree = xml::parse(&chunk.text).map_err(|detail| self.parse_error(&detail))?;
            let mut slots = Slots::default();
            let mut nodes = NodeList::default();
            paragraph::PartExtractor::new(
                self.dialect,
                &chunk.text,
                &mut slots,
                self.source,
                self.code_styles,
            )
            .copy_nodes(&tree, &mut nodes);
            drop(tree);
            let (segments, map) = slots.finish();
            let translated = if segments.is_empty() {
                Vec::new()
            } else {
                let read = (self.done + chunks.position()) as f32 / self.total;
                translator(&segments, read).map_err(Stop::Translator)?
            };
            let Some(writer) = writer.as_deref_mut() else {
                continue;
            };
            if translated.len() != segments.len() {
                return Err(FormatError::Mismatch {
                    expected: segments.len(),
                    got: translated.len(),
                }
                .into());
            }
            let mut xml = String::with_capacity(chunk.text.len() + chunk.text.len() / 4);
            let prefix_len = chunk.body.start;
            skeleton::Writer {
                dialect: self.dialect,
                src: &chunk.text,
                texts: Texts::new(&map, &segments, &translated),
                lang: self.lang,
            }
            .render(&mut xml, &nodes.0);
            let suffix = &chunk.text[chunk.body.end..];
            // The wrapper's tags are copied as written: only the body is the part's.
            let body = xml
                .get(prefix_len..)
                .and_then(|rest| rest.strip_suffix(suffix))
                .filter(|_| xml.get(..prefix_len) == chunk.text.get(..prefix_len))
                .ok_or_else(|| {
                    FormatError::Write(format!("{} was rewritten outside its text", self.name))
                })?;
            changed |= body != &chunk.text[chunk.body.clone()];
            let head = if first && chunks.bom { "\u{feff}" } else { "" };
            writer
                .write_all(head.as_bytes())
                .and_then(|()| writer.write_all(body.as_bytes()))
                .map_err(|e| FormatError::Write(e.to_string()))?;
            first = false;
        }
        Ok(changed)
    }

    fn chunk_error(&self, error: chunks::ChunkError) -> FormatError {
        let (kind, name) = (self.kind, self.name);
        match error {
            chunks::ChunkError::Read => damaged(kind),
            chunks::ChunkError::TooLarge => too_large(kind, name),
            chunks::ChunkError::Encoding { utf16: true } => FormatError::unsupported(format!(
                "The {kind} document stores {name} as UTF-16, which is not supported"
            )),
            chunks::ChunkError::Encoding { utf16: false } => FormatError::corrupt(format!(
                "The file is not a valid {kind} document: {name} is not valid UTF-8"
            )),
            chunks::ChunkError::TooDeep => self.parse_error("elements nested too deeply"),
            chunks::ChunkError::Unclosed(open) => self.parse_error(&format!(
                "the document ends before <{open}> is closed (the file may be truncated)"
            )),
        }
    }

    fn parse_error(&self, detail: &str) -> FormatError {
        let (kind, name) = (self.kind, self.name);
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
    }
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

/// The message of a part larger than [`MAX_PART_SIZE`].
fn too_large(kind: &str, name: &str) -> FormatError {
    FormatError::unsupported(format!(
        "The {kind} document is too large to translate ({name} is over {} MiB)",
        MAX_PART_SIZE >> 20
    ))
}

/// Entry `index` (`name`) opened for reading, refused when encrypted or
/// when its header claims more than [`MAX_PART_SIZE`] (reading it stops
/// past that, whatever the header claims).
fn open_entry<'a>(
    kind: &str,
    archive: &'a mut ZipArchive<Cursor<&[u8]>>,
    index: usize,
    name: &str,
) -> Result<impl Read + 'a, FormatError> {
    let file = archive.by_index(index).map_err(|e| zip_error(kind, e))?;
    if file.encrypted() {
        return Err(FormatError::unsupported(format!(
            "The {kind} document is password-protected"
        )));
    }
    if file.size() > MAX_PART_SIZE {
        return Err(too_large(kind, name));
    }
    Ok(file.take(MAX_PART_SIZE + 1))
}

/// The bytes of entry `index` (`name`), refused when encrypted or larger
/// than [`MAX_PART_SIZE`] (whatever its header claims).
pub(crate) fn read_entry(
    kind: &str,
    archive: &mut ZipArchive<Cursor<&[u8]>>,
    index: usize,
    name: &str,
) -> Result<Vec<u8>, FormatError> {
    let mut bytes = Vec::new();
    open_entry(kind, archive, index, name)?
        .read_to_end(&mut bytes)
        .map_err(|_| damaged(kind))?;
    if bytes.len() as u64 > MAX_PART_SIZE {
        return Err(too_large(kind, name));
    }
    Ok(bytes)
}
