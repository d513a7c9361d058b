//! Document filters for Tolk: bytes in, segments out, translated bytes back.
//!
//! [`extract`] splits a document into translatable **segments** (strings in
//! the [`inline`] markup: XML-escaped text with `<g id="N">…</g>` spans and
//! `<x id="N"/>` placeholders) and a private **skeleton** holding everything
//! else. [`Extracted::merge`] puts translated segments back into the skeleton
//! and returns the translated document. [`translate`] does both batch by
//! batch, handing each batch of segments to a translator and writing it back
//! as it returns: Office and OpenDocument packages a chunk of a part at a
//! time, so memory does not grow with the document. The crate is pure: no
//! I/O, no async.
//!
//! Supported formats:
//!
//! * **txt** — UTF-8 text; one segment per non-blank line (see [`txt`](crate::DocumentFormat::Txt));
//! * **html** — one segment per block of text with its inline elements as
//!   tags, plus translatable attributes (`alt`, `title`…);
//! * **docx** — one segment per Word paragraph with its runs, hyperlinks and
//!   fields as tags; body, headers, footers, footnotes and endnotes;
//! * **pptx** — one segment per DrawingML paragraph of the slides, speaker
//!   notes, SmartArt data and charts; masters and layouts left as they are;
//! * **xlsx, xlsm** — shared and inline strings (plain and rich), cell
//!   comments, drawings and charts; formulas, numbers and macros untouched;
//! * **odt, odp, ods** — paragraphs and headings of `content.xml` and
//!   `styles.xml`, spans as tags; `mimetype` first and stored;
//! * **srt, vtt** — one segment per subtitle cue, inline markup as tags,
//!   timings and WebVTT's header and blocks untouched (`subtitles`);
//! * **json** — every string value (never a key), placeholders and ICU
//!   skeletons as tags, spliced into the original text;
//! * **md** — one segment per block of text (pulldown-cmark offsets),
//!   inline markup as tags, code and HTML blocks untouched;
//! * **properties** — every value of a Java properties file, escapes read
//!   and written back, placeholders as tags;
//! * **strings** — every value of an Apple `.strings` file, format
//!   specifiers as tags, UTF-16 kept;
//! * **xlf, xliff, sdlxliff, mqxliff** — XLIFF 1.2 and 2.x: every translatable source
//!   gets a target, inline codes as tags (`xliff`);
//! * **resx** — the text values of a .NET resource file, typed, binary and
//!   designer entries untouched, placeholders as tags;
//! * **yml, yaml** — the scalar values of a YAML file in their own styles,
//!   keys, comments and anchors untouched, a Rails locale key renamed;
//! * **xml, dita, ditamap** — elements holding text as segments, ITS 2.0
//!   `translate` (local and `//name` global rules) and DITA's
//!   `translate="no"` and code elements honoured (`its`);
//! * **idml** — InDesign stories: one segment per paragraph
//!   (`ParagraphStyleRange` up to a `Br`), runs as tags; `mimetype` first
//!   and stored (`idml`);
//! * **mif** — FrameMaker: one segment per paragraph of the text flows,
//!   table cells and footnotes, over its lines; MIF 7 in FrameRoman (`mif`);
//! * **rtf** — one segment per paragraph (body, headers, footers,
//!   footnotes, comments, shape text), formatting groups as tags, text in
//!   its fonts' code pages (`rtf`);
//! * **zip** — SCORM packages: HTML pages and XML files by their filters, the
//!   manifest's titles; every other entry byte for byte (`scorm`);
//! * **pdf** — one segment per paragraph of the pages (lines grouped from
//!   the content streams' glyphs), the outline's titles, Title and Subject;
//!   the original text removed and the translation set in its box in an
//!   embedded subset of one of [`ExtractOptions::fonts`] (`pdf`).
//!
//! ```
//! use tolk_formats::{extract, DocumentFormat};
//!
//! let doc = extract(DocumentFormat::Txt, b"Hello\n\nWorld\n").unwrap();
//! assert_eq!(doc.segments(), ["Hello", "World"]);
//! let out = doc.merge(&["Hallo".into(), "Welt".into()]).unwrap();
//! assert_eq!(out, b"Hallo\n\nWelt\n");
//! ```

#![deny(missing_docs)]

mod android;
mod archive;
mod bidi;
#[cfg(test)]
mod contract;
mod cut;
mod docx;
mod encoding;
mod error;
mod filter;
mod html;
mod idml;
mod images;
pub mod inline;
mod its;
mod json;
mod markdown;
mod mif;
mod odf;
mod output;
mod package;
mod pdf;
pub mod placeholders;
mod pptx;
mod properties;
mod resx;
#[cfg(test)]
mod robustness;
mod rtf;
mod scorm;
mod slots;
mod stream;
mod strings;
mod subtitles;
#[cfg(test)]
mod testdoc;
pub mod tmx;
mod txt;
mod watermark;
mod xliff;
mod xlsx;
mod xml;
mod xpath;
mod yaml;

pub use error::FormatError;
pub use images::{Ocr, Recognizer, tesseract_language};
pub use output::{Conversion, Output, can_convert, conversion, convert, office_input};
pub use pdf::fonts::Fonts;
pub use pdf::{MAX_PAGES as PDF_MAX_PAGES, page_count as pdf_page_count};
pub use stream::{TranslateError, Translation, Translator, sample, translate};
pub use watermark::{MARK, MARK_PROPERTY, can_mark, mark};

/// A document format handled by [`extract`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DocumentFormat {
    /// Plain UTF-8 text (`.txt`).
    Txt,
    /// HTML (`.html`, `.htm`), UTF-8.
    Html,
    /// Word Office Open XML (`.docx`).
    Docx,
    /// PowerPoint Office Open XML (`.pptx`).
    Pptx,
    /// Excel Office Open XML (`.xlsx`).
    Xlsx,
    /// Excel Office Open XML with macros (`.xlsm`); the macros are kept as
    /// they are.
    Xlsm,
    /// OpenDocument text (`.odt`).
    Odt,
    /// OpenDocument presentation (`.odp`).
    Odp,
    /// OpenDocument spreadsheet (`.ods`).
    Ods,
    /// SubRip subtitles (`.srt`).
    Srt,
    /// WebVTT subtitles (`.vtt`).
    Vtt,
    /// JSON localization files (`.json`).
    Json,
    /// Markdown (`.md`, `.markdown`).
    Markdown,
    /// Java properties (`.properties`).
    Properties,
    /// Apple strings (`.strings`).
    Strings,
    /// XLIFF 1.2 or 2.x (`.xlf`, `.xliff`, `.sdlxliff`, memoQ's `.mqxliff`).
    Xliff,
    /// .NET resources (`.resx`).
    Resx,
    /// YAML (`.yml`, `.yaml`).
    Yaml,
    /// Generic XML with ITS 2.0 (`.xml`).
    Xml,
    /// DITA topics and maps (`.dita`, `.ditamap`).
    Dita,
    /// Rich Text Format (`.rtf`).
    Rtf,
    /// Adobe InDesign Markup (`.idml`).
    Idml,
    /// FrameMaker Maker Interchange Format (`.mif`).
    Mif,
    /// SCORM packages (`.zip` with an `imsmanifest.xml`).
    Scorm,
    /// PDF (`.pdf`): translated in place, page by page.
    Pdf,
    /// PNG images (`.png`): their text read by OCR, the translation painted
    /// over it.
    Png,
    /// JPEG images (`.jpg`, `.jpeg`), as PNG.
    Jpeg,
}

impl DocumentFormat {
    /// The format of a file extension (`"txt"`, `"html"`, `"htm"`, `"docx"`),
    /// case-insensitive; a leading dot is tolerated.
    pub fn from_extension(ext: &str) -> Option<Self> {
        let ext = ext.strip_prefix('.').unwrap_or(ext).to_ascii_lowercase();
        filter::FORMATS
            .iter()
            .find(|row| row.extensions.contains(&ext.as_str()))
            .map(|row| row.format)
    }

    /// Every file extension a document may have, in the order they are
    /// listed to users.
    pub fn extensions() -> impl Iterator<Item = &'static str> {
        filter::FORMATS
            .iter()
            .flat_map(|row| row.extensions.iter().copied())
    }

    /// The format of a file name, by its extension (`"report.DOCX"` → `Docx`).
    pub fn from_filename(name: &str) -> Option<Self> {
        let (_, ext) = name.rsplit_once('.')?;
        Self::from_extension(ext)
    }

    /// Why a file of a known but unsupported kind is refused, naming what to
    /// upload instead; `None` for any other name.
    pub fn unsupported_kind(name: &str) -> Option<&'static str> {
        let (_, ext) = name.rsplit_once('.')?;
        match ext.to_ascii_lowercase().as_str() {
            "ttx" => Some(
                "Trados TagEditor files (.ttx) are not supported: open the file in Trados Studio and export it as .sdlxliff, or convert it to XLIFF, then upload that.",
            ),
            "txml" => Some(
                "Wordfast Pro 3 files (.txml) are not supported: export the project from Wordfast as XLIFF (.txlf or .xlf) and upload that.",
            ),
            _ => None,
        }
    }

    /// The canonical file extension, without dot.
    pub fn extension(&self) -> &'static str {
        filter::row(*self).extensions[0]
    }

    /// The MIME type of a document of this format (as produced by `merge`).
    pub fn content_type(&self) -> &'static str {
        filter::row(*self).media_type
    }

    /// Whether documents of this format are ZIP packages, translated a
    /// chunk of a part at a time (Office, OpenDocument, InDesign).
    pub fn is_package(&self) -> bool {
        filter::of(*self).package().is_some()
    }
}

/// Splits a document into segments and a skeleton.
///
/// Fails with [`FormatError::Corrupt`] when `input` is not a readable
/// document of `format`, or [`FormatError::Unsupported`] for valid files
/// using an unsupported variant (e.g. a password-protected Word file).
pub fn extract(format: DocumentFormat, input: &[u8]) -> Result<Extracted, FormatError> {
    extract_with(format, input, ExtractOptions::default())
}

/// How a document is read, where the format has a choice (an upload's
/// `input_conversion_options`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtractOptions {
    /// JSON: identifier-shaped placeholders (`{name}`, `%s`) are translated
    /// with the text instead of kept verbatim (`json-placeholders:translate`).
    /// ICU skeletons are kept either way.
    pub translate_json_placeholders: bool,
    /// The document's source language, when it is given (a DeepL code):
    /// Office Open XML runs marked (`w:lang`, DrawingML `lang`) and HTML
    /// elements marked (`lang`, below `<html>`) with another language keep
    /// their text as written.
    pub source_language: Option<String>,
    /// The language the document is translated into (a DeepL code), when
    /// known: bilingual files (XLIFF) keep the targets a translator settled
    /// only when they are in that language.
    pub target_language: Option<String>,
    /// Bilingual files (XLIFF): every target is translated anew, settled ones
    /// too (`xliff-targets:overwrite`); by default approved, confirmed,
    /// final, signed-off, translated and locked targets are kept.
    pub overwrite_targets: bool,
    /// The encoding of a text document whose bytes do not say theirs (no
    /// byte-order mark, no declaration), when the caller knows it: a piece
    /// of a cut Latin-1 file is read as the whole file was. `None`: found
    /// from the bytes.
    pub encoding: Option<&'static encoding_rs::Encoding>,
    /// The fonts a translated PDF's text is set in (the one closest to
    /// each paragraph's original font that covers its translation); a PDF
    /// with text to translate cannot be written back without them (an
    /// image's translation is painted in them too).
    pub fonts: Option<Fonts>,
    /// What reads the text of images (PNG, JPEG); without it an image is
    /// refused.
    pub ocr: Option<Ocr>,
}

/// [`extract`] with options.
pub fn extract_with(
    format: DocumentFormat,
    input: &[u8],
    options: ExtractOptions,
) -> Result<Extracted, FormatError> {
    let document = filter::of(format).extract(input, &options)?;
    Ok(Extracted {
        format,
        document,
        language: None,
    })
}

/// An extracted document: its segments and the skeleton to merge them into.
pub struct Extracted {
    format: DocumentFormat,
    document: filter::Document,
    /// BCP 47 tag marked on translated text, where the format records one.
    language: Option<String>,
}

impl Extracted {
    /// An extracted document of `format` (filters made of other filters).
    pub(crate) fn of(format: DocumentFormat, document: filter::Document) -> Self {
        Self {
            format,
            document,
            language: None,
        }
    }

    /// The format of the document.
    pub fn format(&self) -> DocumentFormat {
        self.format
    }

    /// What the filter leaves untranslated and why, a sentence each (text a
    /// PDF shows in a Type3 font, say); empty when nothing.
    pub fn notes(&self) -> &[String] {
        &self.document.notes
    }

    /// Marks translated text with the target language where the format
    /// records one (Word's `w:lang`, DrawingML's `lang` per run; XLIFF's
    /// target language), so
    /// spell checkers and screen readers treat it as such. `target_lang` is a
    /// DeepL code (`ES`, `EN-US`, `ZH-HANS`), written as BCP 47 (`es`,
    /// `en-US`, `zh-Hans`).
    #[must_use]
    pub fn with_target_language(mut self, target_lang: &str) -> Self {
        self.language = Some(tolk_lang::bcp47(target_lang));
        self
    }

    /// The translatable segments, in document order, in [`inline`] markup.
    ///
    /// Only segments holding some non-whitespace text are listed.
    pub fn segments(&self) -> &[String] {
        &self.document.segments
    }

    /// Builds the translated document from one translation per segment (same
    /// order and count as [`segments`](Self::segments)).
    ///
    /// Translations may move, drop or duplicate tags, or be malformed: the
    /// merge never fails because of their content (see [`inline::parse`]).
    /// A translation identical to its source segment reproduces the original
    /// bytes of that unit.
    pub fn merge(&self, translated: &[String]) -> Result<Vec<u8>, FormatError> {
        self.document.merge(translated, self.language.as_deref())
    }
}

impl std::fmt::Debug for Extracted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extracted")
            .field("format", &self.format)
            .field("segments", &self.document.segments.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_is_found_by_its_own_extension() {
        for row in filter::FORMATS {
            for ext in row.extensions {
                assert_eq!(DocumentFormat::from_extension(ext), Some(row.format));
            }
            assert_eq!(
                DocumentFormat::from_extension(row.format.extension()),
                Some(row.format),
            );
        }
        let listed: usize = filter::FORMATS.iter().map(|r| r.extensions.len()).sum();
        assert_eq!(DocumentFormat::extensions().count(), listed);
    }

    #[test]
    fn formats_by_extension_and_name() {
        assert_eq!(
            DocumentFormat::from_extension("DOCX"),
            Some(DocumentFormat::Docx)
        );
        assert_eq!(
            DocumentFormat::from_extension("htm"),
            Some(DocumentFormat::Html)
        );
        assert_eq!(
            DocumentFormat::from_extension("Html"),
            Some(DocumentFormat::Html)
        );
        assert_eq!(
            DocumentFormat::from_extension("txt"),
            Some(DocumentFormat::Txt)
        );
        assert_eq!(
            DocumentFormat::from_extension(".txt"),
            Some(DocumentFormat::Txt)
        );
        assert_eq!(DocumentFormat::from_extension(""), None);
        assert_eq!(
            DocumentFormat::from_extension("pdf"),
            Some(DocumentFormat::Pdf)
        );
        assert_eq!(
            DocumentFormat::from_filename("a.b.Report.DocX"),
            Some(DocumentFormat::Docx)
        );
        assert_eq!(
            DocumentFormat::from_filename("index.htm"),
            Some(DocumentFormat::Html)
        );
        assert_eq!(DocumentFormat::from_filename("README"), None);
        for format in [
            DocumentFormat::Txt,
            DocumentFormat::Html,
            DocumentFormat::Docx,
        ] {
            assert_eq!(
                DocumentFormat::from_extension(format.extension()),
                Some(format)
            );
            assert!(!format.content_type().is_empty());
        }
        // No charset: results keep their source's encoding.
        assert_eq!(DocumentFormat::Html.content_type(), "text/html");
        assert_eq!(DocumentFormat::Txt.content_type(), "text/plain");
    }

    #[test]
    fn extracted_can_move_between_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Extracted>();
        assert_send_sync::<FormatError>();
    }

    #[test]
    fn merge_checks_the_segment_count() {
        let doc = extract(DocumentFormat::Txt, b"one\ntwo\n").unwrap();
        assert_eq!(doc.format(), DocumentFormat::Txt);
        let err = doc.merge(&["eins".into()]).unwrap_err();
        assert_eq!(
            err,
            FormatError::Mismatch {
                expected: 2,
                got: 1
            }
        );
        assert!(err.to_string().contains("expected 2"));
    }
}
