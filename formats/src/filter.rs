//! The filter contract every format keeps (Okapi's `IFilter` is the
//! model), and the registry of formats: one [`Row`] per format.
//!
//! A [`Filter`] reads a document into **segments** (in [`crate::inline`]
//! markup: text with its inline codes as tags) and a [`Skeleton`] that
//! writes translations of them back. [`Filter::walk`] goes through a
//! document batch by batch: by default whole, or piece by piece when the
//! filter can [`cut`](Filter::cut) a large one; package formats (Office,
//! OpenDocument, IDML) go a chunk of a part at a time instead.
//!
//! Adding a format is one module implementing [`Filter`], one variant of
//! [`DocumentFormat`] and one row of [`FORMATS`]; the conformance and
//! mutation tests then require a sample of it.

use std::cell::RefCell;

use crate::cut::{self, Cut};
use crate::package::{self, Package};
use crate::{
    DocumentFormat, ExtractOptions, FormatError, android, html, images, its, json, markdown, mif,
    pdf, properties, resx, rtf, scorm, strings, subtitles, txt, xliff, yaml,
};

/// What a filter keeps of a document to write its translation back:
/// everything but the segments.
pub(crate) trait Skeleton: Send + Sync {
    /// The translated document: `translated` holds one translation per
    /// segment of `source` (the segments the filter read), `lang` the BCP 47
    /// tag marked on translated text where the format records a language.
    fn merge(
        &self,
        source: &[String],
        translated: &[String],
        lang: Option<&str>,
    ) -> Result<Vec<u8>, FormatError>;
}

/// A skeleton that writes translations back from the source segments
/// alone: it marks no language and cannot fail.
pub(crate) trait Merge: Send + Sync {
    /// The translated document (see [`Skeleton::merge`]).
    fn merge(&self, source: &[String], translated: &[String]) -> Vec<u8>;
}

impl<T: Merge> Skeleton for T {
    fn merge(
        &self,
        source: &[String],
        translated: &[String],
        _lang: Option<&str>,
    ) -> Result<Vec<u8>, FormatError> {
        Ok(Merge::merge(self, source, translated))
    }
}

/// A document as a filter reads it.
pub(crate) struct Document {
    /// The translatable segments, in document order.
    pub segments: Vec<String>,
    /// Everything else.
    pub skeleton: Box<dyn Skeleton>,
    /// What the filter leaves untranslated, and why (a sentence each), for
    /// the job's notes.
    pub notes: Vec<String>,
}

impl Document {
    /// A document of `segments` and `skeleton`.
    pub(crate) fn new(segments: Vec<String>, skeleton: impl Skeleton + 'static) -> Self {
        Self {
            segments,
            skeleton: Box::new(skeleton),
            notes: Vec::new(),
        }
    }

    /// The document with notes of what it leaves untranslated.
    pub(crate) fn with_notes(mut self, notes: Vec<String>) -> Self {
        self.notes = notes;
        self
    }

    /// The document with one translation per segment, refused when the
    /// counts differ.
    pub(crate) fn merge(
        &self,
        translated: &[String],
        lang: Option<&str>,
    ) -> Result<Vec<u8>, FormatError> {
        if translated.len() != self.segments.len() {
            return Err(FormatError::Mismatch {
                expected: self.segments.len(),
                got: translated.len(),
            });
        }
        self.skeleton.merge(&self.segments, translated, lang)
    }
}

impl<S: Skeleton + 'static> From<(Vec<String>, S)> for Document {
    fn from((segments, skeleton): (Vec<String>, S)) -> Self {
        Self::new(segments, skeleton)
    }
}

/// The translator stopped a walk; its caller holds the reason.
#[derive(Debug)]
pub(crate) struct Halt;

/// What a walk hands each batch to: the batch's segments and the share (0
/// to 1) of the document read so far; one translation per segment back.
pub(crate) type Batches<'t> = dyn FnMut(&[String], f32) -> Result<Vec<String>, Halt> + 't;

/// Why a walk stopped.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The document could not be read or written.
    Format(FormatError),
    /// The translator stopped it.
    Halted,
}

impl From<FormatError> for Stop {
    fn from(e: FormatError) -> Self {
        Stop::Format(e)
    }
}

/// How a walk goes through a document.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Walk<'a> {
    /// How the document is read.
    pub options: &'a ExtractOptions,
    /// The BCP 47 tag marked on translated text, where the format records
    /// one.
    pub lang: Option<&'a str>,
    /// Whether the translated document is written (else it is only read).
    pub write: bool,
    /// Where the notes of the documents read go.
    pub notes: Option<&'a RefCell<Vec<String>>>,
}

impl Walk<'_> {
    /// Keeps the notes of a document read.
    fn note(&self, doc: &Document) {
        if let Some(notes) = self.notes {
            notes.borrow_mut().extend(doc.notes.iter().cloned());
        }
    }
}

/// A format's filter.
pub(crate) trait Filter: Sync {
    /// Reads `input` into segments and a skeleton; a clear
    /// [`FormatError`] when it is not a readable document of the format.
    fn extract(&self, input: &[u8], options: &ExtractOptions) -> Result<Document, FormatError>;

    /// Where a large document is cut into pieces of about `size` bytes,
    /// each a document of its own for [`Filter::extract`]; `None` (the
    /// default) reads it whole.
    fn cut(&self, _input: &[u8], _size: usize) -> Option<Cut> {
        None
    }

    /// Goes through the document batch by batch, each batch's segments to
    /// `batches`, and (when `walk.write`) writes the translated document.
    /// By default a batch is the whole document or one piece of its
    /// [`cut`](Filter::cut).
    fn walk(
        &self,
        input: &[u8],
        walk: &Walk<'_>,
        batches: &mut Batches<'_>,
    ) -> Result<Option<Vec<u8>>, Stop> {
        in_pieces(self, input, walk, batches)
    }

    /// The ZIP package of a package format (which [`Filter::walk`] goes
    /// through a chunk of a part at a time); `None` for the others.
    fn package(&self) -> Option<&'static Package> {
        None
    }
}

/// [`Filter::walk`] of a document read whole, or piece by piece when the
/// filter cuts it (every piece read first, so that damage anywhere fails the
/// document before any of it is translated).
fn in_pieces<F: Filter + ?Sized>(
    filter: &F,
    input: &[u8],
    walk: &Walk<'_>,
    batches: &mut Batches<'_>,
) -> Result<Option<Vec<u8>>, Stop> {
    let Some(cut) = filter.cut(input, cut::PIECE_SIZE) else {
        let doc = filter.extract(input, walk.options)?;
        walk.note(&doc);
        let translated = translate(&doc, 1.0, batches)?;
        return Ok(match walk.write {
            true => Some(doc.merge(&translated, walk.lang)?),
            false => None,
        });
    };
    let count = cut.pieces.len();
    let options = ExtractOptions {
        encoding: cut.read_in().or(walk.options.encoding),
        ..walk.options.clone()
    };
    // Every piece is read once before the first is translated, one at a
    // time: a file damaged anywhere fails before the engine sees any of it
    // (as a file read whole does), still holding one piece at a time.
    if walk.write {
        for index in 0..count {
            filter.extract(&cut.document(input, index), &options)?;
        }
    }
    let mut out = cut::Written::new(&cut, if walk.write { input.len() * 5 / 4 } else { 0 });
    for (index, piece) in cut.pieces.iter().enumerate() {
        let document = cut.document(input, index);
        let doc = filter.extract(&document, &options)?;
        walk.note(&doc);
        drop(document);
        let read = piece.end as f32 / input.len().max(1) as f32;
        let translated = translate(&doc, read, batches)?;
        if !walk.write {
            continue;
        }
        let merged = doc.merge(&translated, walk.lang)?;
        let own = cut.own_output(&merged, index).ok_or_else(|| {
            FormatError::corrupt(format!(
                "The file could not be written back piece by piece (piece {} of {count})",
                index + 1
            ))
        })?;
        out.piece(own);
        out.file_bytes(cut.separator(input, index));
    }
    Ok(walk.write.then(|| out.finish()))
}

/// The translations of a document's segments (none asked when it has none).
fn translate(doc: &Document, read: f32, batches: &mut Batches<'_>) -> Result<Vec<String>, Stop> {
    if doc.segments.is_empty() {
        return Ok(Vec::new());
    }
    batches(&doc.segments, read).map_err(|Halt| Stop::Halted)
}

/// Where a large document is cut into pieces of about a size ([`crate::cut`]).
pub(crate) type Cutter = fn(&[u8], usize) -> Option<Cut>;

/// A filter of a format's functions: how it reads a document, and where a
/// large one is cut.
pub(crate) struct Functions {
    /// Reads a document.
    pub extract: fn(&[u8], &ExtractOptions) -> Result<Document, FormatError>,
    /// Cuts a large one into pieces.
    pub cut: Option<Cutter>,
}

impl Filter for Functions {
    fn extract(&self, input: &[u8], options: &ExtractOptions) -> Result<Document, FormatError> {
        (self.extract)(input, options)
    }

    fn cut(&self, input: &[u8], size: usize) -> Option<Cut> {
        self.cut.and_then(|cut| cut(input, size))
    }
}

/// The filter of a ZIP package (Office Open XML, OpenDocument, IDML):
/// translated a chunk of a part at a time ([`package::translate`]).
pub(crate) struct PackageFilter(pub &'static Package);

impl Filter for PackageFilter {
    fn extract(&self, input: &[u8], options: &ExtractOptions) -> Result<Document, FormatError> {
        let source = options.source_language.as_deref();
        let (segments, skeleton) = package::extract(self.0, input, source)?;
        Ok(Document::new(segments, skeleton))
    }

    fn walk(
        &self,
        input: &[u8],
        walk: &Walk<'_>,
        batches: &mut Batches<'_>,
    ) -> Result<Option<Vec<u8>>, Stop> {
        let pass = package::Pass {
            source: walk.options.source_language.as_deref(),
            lang: walk.lang,
            chunk_size: package::CHUNK_SIZE,
            write: walk.write,
        };
        package::translate(self.0, input, pass, batches).map_err(|e| match e {
            package::Stop::Format(e) => Stop::Format(e),
            package::Stop::Translator(Halt) => Stop::Halted,
        })
    }

    fn package(&self) -> Option<&'static Package> {
        Some(self.0)
    }
}

/// One format of the registry.
pub(crate) struct Row {
    /// The format.
    pub format: DocumentFormat,
    /// Its file extensions, the canonical one first.
    pub extensions: &'static [&'static str],
    /// The media type of its documents (as written by the filter).
    pub media_type: &'static str,
    /// Its filter.
    pub filter: &'static dyn Filter,
}

/// Every format, in the order of [`DocumentFormat`]'s variants (the order
/// extensions are listed to users).
pub(crate) static FORMATS: &[Row] = &[
    Row {
        format: DocumentFormat::Txt,
        extensions: &["txt"],
        // No charset: a result is written in its source's encoding (the
        // byte-order mark says which).
        media_type: "text/plain",
        filter: &Functions {
            extract: |input, _| txt::extract(input).map(Document::from),
            cut: Some(cut::lines),
        },
    },
    Row {
        format: DocumentFormat::Html,
        extensions: &["html", "htm"],
        // No charset: the page's meta element or byte-order mark says it.
        media_type: "text/html",
        filter: &Functions {
            extract: |input, options| {
                html::extract(input, options.source_language.as_deref()).map(Document::from)
            },
            cut: Some(cut::html),
        },
    },
    Row {
        format: DocumentFormat::Docx,
        extensions: &["docx"],
        media_type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        filter: &PackageFilter(&crate::docx::PACKAGE),
    },
    Row {
        format: DocumentFormat::Pptx,
        extensions: &["pptx"],
        media_type: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        filter: &PackageFilter(&crate::pptx::PACKAGE),
    },
    Row {
        format: DocumentFormat::Xlsx,
        extensions: &["xlsx"],
        media_type: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        filter: &PackageFilter(&crate::xlsx::XLSX),
    },
    Row {
        format: DocumentFormat::Xlsm,
        extensions: &["xlsm"],
        media_type: "application/vnd.ms-excel.sheet.macroEnabled.12",
        filter: &PackageFilter(&crate::xlsx::XLSM),
    },
    Row {
        format: DocumentFormat::Odt,
        extensions: &["odt"],
        media_type: "application/vnd.oasis.opendocument.text",
        filter: &PackageFilter(&crate::odf::ODT),
    },
    Row {
        format: DocumentFormat::Odp,
        extensions: &["odp"],
        media_type: "application/vnd.oasis.opendocument.presentation",
        filter: &PackageFilter(&crate::odf::ODP),
    },
    Row {
        format: DocumentFormat::Ods,
        extensions: &["ods"],
        media_type: "application/vnd.oasis.opendocument.spreadsheet",
        filter: &PackageFilter(&crate::odf::ODS),
    },
    Row {
        format: DocumentFormat::Srt,
        extensions: &["srt"],
        media_type: "application/x-subrip",
        filter: &Functions {
            extract: |input, _| subtitles::extract(subtitles::Kind::Srt, input).map(Document::from),
            cut: Some(cut::srt),
        },
    },
    Row {
        format: DocumentFormat::Vtt,
        extensions: &["vtt"],
        media_type: "text/vtt",
        filter: &Functions {
            extract: |input, _| subtitles::extract(subtitles::Kind::Vtt, input).map(Document::from),
            cut: Some(cut::vtt),
        },
    },
    Row {
        format: DocumentFormat::Json,
        extensions: &["json"],
        media_type: "application/json",
        filter: &Functions {
            extract: |input, options| {
                json::extract(input, options.translate_json_placeholders).map(Document::from)
            },
            cut: Some(cut::json),
        },
    },
    Row {
        format: DocumentFormat::Markdown,
        extensions: &["md", "markdown"],
        media_type: "text/markdown",
        filter: &Functions {
            extract: |input, _| markdown::extract(input).map(Document::from),
            cut: Some(cut::markdown),
        },
    },
    Row {
        format: DocumentFormat::Properties,
        extensions: &["properties"],
        media_type: "text/x-java-properties",
        filter: &Functions {
            extract: |input, options| {
                properties::extract(input, options.encoding).map(Document::from)
            },
            cut: Some(cut::properties),
        },
    },
    Row {
        format: DocumentFormat::Strings,
        extensions: &["strings"],
        media_type: "text/plain",
        filter: &Functions {
            extract: |input, _| strings::extract(input).map(Document::from),
            cut: Some(cut::strings),
        },
    },
    Row {
        format: DocumentFormat::Xliff,
        extensions: &["xlf", "xliff", "sdlxliff", "mqxliff", "txlf", "xlf2"],
        media_type: "application/x-xliff+xml",
        filter: &Functions {
            extract: |input, options| xliff::extract(input, options).map(Document::from),
            cut: Some(cut::xliff),
        },
    },
    Row {
        format: DocumentFormat::Resx,
        extensions: &["resx"],
        media_type: "application/xml",
        filter: &Functions {
            extract: |input, _| resx::extract(input).map(Document::from),
            cut: Some(cut::resx),
        },
    },
    Row {
        format: DocumentFormat::Yaml,
        extensions: &["yml", "yaml"],
        media_type: "application/yaml",
        filter: &Functions {
            extract: |input, _| yaml::extract(input).map(Document::from),
            cut: Some(cut::yaml),
        },
    },
    Row {
        format: DocumentFormat::Xml,
        extensions: &["xml"],
        media_type: "application/xml",
        filter: &Functions {
            extract: |input, _| match android::is_android(input) {
                true => android::extract(input).map(Document::from),
                false => its::extract(input).map(Document::from),
            },
            cut: Some(cut::xml),
        },
    },
    Row {
        format: DocumentFormat::Dita,
        extensions: &["dita", "ditamap"],
        media_type: "application/dita+xml",
        filter: &Functions {
            extract: |input, _| its::extract(input).map(Document::from),
            cut: Some(cut::xml_tree),
        },
    },
    Row {
        format: DocumentFormat::Rtf,
        extensions: &["rtf"],
        media_type: "application/rtf",
        filter: &Functions {
            extract: |input, _| rtf::extract(input).map(Document::from),
            cut: Some(cut::rtf),
        },
    },
    Row {
        format: DocumentFormat::Idml,
        extensions: &["idml"],
        media_type: "application/vnd.adobe.indesign-idml-package",
        filter: &PackageFilter(&crate::idml::PACKAGE),
    },
    Row {
        format: DocumentFormat::Mif,
        extensions: &["mif"],
        media_type: "application/vnd.mif",
        filter: &Functions {
            extract: |input, _| mif::extract(input).map(Document::from),
            cut: Some(cut::mif),
        },
    },
    Row {
        format: DocumentFormat::Scorm,
        extensions: &["zip"],
        media_type: "application/zip",
        filter: &Functions {
            extract: |input, _| scorm::extract(input).map(Document::from),
            cut: None,
        },
    },
    Row {
        format: DocumentFormat::Pdf,
        extensions: &["pdf"],
        media_type: "application/pdf",
        filter: &Functions {
            extract: pdf::extract,
            cut: None,
        },
    },
    Row {
        format: DocumentFormat::Png,
        extensions: &["png"],
        media_type: "image/png",
        filter: &Functions {
            extract: images::extract_png,
            cut: None,
        },
    },
    Row {
        format: DocumentFormat::Jpeg,
        extensions: &["jpg", "jpeg"],
        media_type: "image/jpeg",
        filter: &Functions {
            extract: images::extract_jpeg,
            cut: None,
        },
    },
];

/// The row of `format`.
pub(crate) fn row(format: DocumentFormat) -> &'static Row {
    // The rows follow the variants (a test keeps them so).
    &FORMATS[format as usize]
}

/// The filter of `format`.
pub(crate) fn of(format: DocumentFormat) -> &'static dyn Filter {
    row(format).filter
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_the_variants_and_name_distinct_extensions() {
        let mut seen = std::collections::HashSet::new();
        for (index, row) in FORMATS.iter().enumerate() {
            assert_eq!(row.format as usize, index, "{:?}", row.format);
            assert!(!row.extensions.is_empty(), "{:?}", row.format);
            for ext in row.extensions {
                assert!(seen.insert(*ext), "{ext} listed twice");
                assert_eq!(*ext, ext.to_ascii_lowercase());
            }
        }
        assert_eq!(FORMATS.len(), DocumentFormat::Jpeg as usize + 1);
    }
}
