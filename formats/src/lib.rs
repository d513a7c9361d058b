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
//!   `translate="no"` and code elements honoured (`xmldoc`);
//! * **idml** — InDesign stories: one segment per paragraph
//!   (`ParagraphStyleRange` up to a `Br`), runs as tags; `mimetype` first
//!   and stored (`idml`);
//! * **mif** — FrameMaker: one segment per paragraph of the text flows,
//!   table cells and footnotes, over its lines; MIF 7 in FrameRoman (`mif`);
//! * **rtf** — one segment per paragraph (body, headers, footers,
//!   footnotes, comments, shape text), formatting groups as tags, text in
//!   its fonts' code pages (`rtf`);
//! * **zip** — SCORM packages: HTML pages and XML files by their filters, the
//!   manifest's titles; every other entry byte for byte (`scorm`).
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
#[cfg(test)]
mod contract;
mod cut;
mod docx;
mod encoding;
mod error;
mod html;
mod idml;
pub mod inline;
mod json;
mod markdown;
mod mif;
mod odf;
mod ooxml;
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
pub mod tmx;
mod txt;
mod xliff;
mod xlsx;
mod xml;
mod xmldoc;
mod xpath;
mod yaml;

pub use error::FormatError;
pub use stream::{TranslateError, Translator, sample, translate};

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
}

/// The file extensions of the formats.
const EXTENSIONS: &[(&str, DocumentFormat)] = &[
    ("txt", DocumentFormat::Txt),
    ("html", DocumentFormat::Html),
    ("htm", DocumentFormat::Html),
    ("docx", DocumentFormat::Docx),
    ("pptx", DocumentFormat::Pptx),
    ("xlsx", DocumentFormat::Xlsx),
    ("xlsm", DocumentFormat::Xlsm),
    ("odt", DocumentFormat::Odt),
    ("odp", DocumentFormat::Odp),
    ("ods", DocumentFormat::Ods),
    ("srt", DocumentFormat::Srt),
    ("vtt", DocumentFormat::Vtt),
    ("json", DocumentFormat::Json),
    ("md", DocumentFormat::Markdown),
    ("markdown", DocumentFormat::Markdown),
    ("properties", DocumentFormat::Properties),
    ("strings", DocumentFormat::Strings),
    ("xlf", DocumentFormat::Xliff),
    ("xliff", DocumentFormat::Xliff),
    ("sdlxliff", DocumentFormat::Xliff),
    ("mqxliff", DocumentFormat::Xliff),
    ("txlf", DocumentFormat::Xliff),
    ("xlf2", DocumentFormat::Xliff),
    ("resx", DocumentFormat::Resx),
    ("yml", DocumentFormat::Yaml),
    ("yaml", DocumentFormat::Yaml),
    ("xml", DocumentFormat::Xml),
    ("dita", DocumentFormat::Dita),
    ("ditamap", DocumentFormat::Dita),
    ("rtf", DocumentFormat::Rtf),
    ("idml", DocumentFormat::Idml),
    ("mif", DocumentFormat::Mif),
    ("zip", DocumentFormat::Scorm),
];

impl DocumentFormat {
    /// The format of a file extension (`"txt"`, `"html"`, `"htm"`, `"docx"`),
    /// case-insensitive; a leading dot is tolerated.
    pub fn from_extension(ext: &str) -> Option<Self> {
        let ext = ext.strip_prefix('.').unwrap_or(ext).to_ascii_lowercase();
        EXTENSIONS
            .iter()
            .find(|(e, _)| *e == ext)
            .map(|(_, format)| *format)
    }

    /// Every file extension a document may have, in the order they are
    /// listed to users.
    pub fn extensions() -> impl Iterator<Item = &'static str> {
        EXTENSIONS.iter().map(|(e, _)| *e)
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
        match self {
            Self::Txt => "txt",
            Self::Html => "html",
            Self::Docx => "docx",
            Self::Pptx => "pptx",
            Self::Xlsx => "xlsx",
            Self::Xlsm => "xlsm",
            Self::Odt => "odt",
            Self::Odp => "odp",
            Self::Ods => "ods",
            Self::Srt => "srt",
            Self::Vtt => "vtt",
            Self::Json => "json",
            Self::Markdown => "md",
            Self::Properties => "properties",
            Self::Strings => "strings",
            Self::Xliff => "xlf",
            Self::Resx => "resx",
            Self::Yaml => "yml",
            Self::Xml => "xml",
            Self::Dita => "dita",
            Self::Rtf => "rtf",
            Self::Idml => "idml",
            Self::Mif => "mif",
            Self::Scorm => "zip",
        }
    }

    /// The MIME type of a document of this format (as produced by `merge`).
    pub fn content_type(&self) -> &'static str {
        match self {
            // No charset: a result is written in its source's encoding (the
            // byte-order mark or the page's meta element says which).
            Self::Txt => "text/plain",
            Self::Html => "text/html",
            Self::Docx => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            Self::Pptx => {
                "application/vnd.openxmlformats-officedocument.presentationml.presentation"
            }
            Self::Xlsx => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            Self::Xlsm => "application/vnd.ms-excel.sheet.macroEnabled.12",
            Self::Odt => "application/vnd.oasis.opendocument.text",
            Self::Odp => "application/vnd.oasis.opendocument.presentation",
            Self::Ods => "application/vnd.oasis.opendocument.spreadsheet",
            Self::Srt => "application/x-subrip",
            Self::Vtt => "text/vtt",
            Self::Json => "application/json",
            Self::Markdown => "text/markdown",
            Self::Properties => "text/x-java-properties",
            Self::Strings => "text/plain",
            Self::Xliff => "application/x-xliff+xml",
            Self::Resx => "application/xml",
            Self::Yaml => "application/yaml",
            Self::Xml => "application/xml",
            Self::Dita => "application/dita+xml",
            Self::Rtf => "application/rtf",
            Self::Idml => "application/vnd.adobe.indesign-idml-package",
            Self::Mif => "application/vnd.mif",
            Self::Scorm => "application/zip",
        }
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
}

/// [`extract`] with options.
pub fn extract_with(
    format: DocumentFormat,
    input: &[u8],
    options: ExtractOptions,
) -> Result<Extracted, FormatError> {
    let (segments, skeleton) = match format {
        DocumentFormat::Txt => {
            let (segments, skeleton) = txt::extract(input)?;
            (segments, Skeleton::Txt(skeleton))
        }
        DocumentFormat::Html => {
            let (segments, skeleton) = html::extract(input, options.source_language.as_deref())?;
            (segments, Skeleton::Html(skeleton))
        }
        DocumentFormat::Srt | DocumentFormat::Vtt => {
            let kind = if format == DocumentFormat::Srt {
                subtitles::Kind::Srt
            } else {
                subtitles::Kind::Vtt
            };
            let (segments, skeleton) = subtitles::extract(kind, input)?;
            (segments, Skeleton::Subtitles(skeleton))
        }
        DocumentFormat::Json => {
            let (segments, skeleton) = json::extract(input, options.translate_json_placeholders)?;
            (segments, Skeleton::Json(skeleton))
        }
        DocumentFormat::Markdown => {
            let (segments, skeleton) = markdown::extract(input)?;
            (segments, Skeleton::Markdown(skeleton))
        }
        DocumentFormat::Properties => {
            let (segments, skeleton) = properties::extract(input)?;
            (segments, Skeleton::Properties(skeleton))
        }
        DocumentFormat::Strings => {
            let (segments, skeleton) = strings::extract(input)?;
            (segments, Skeleton::Strings(skeleton))
        }
        DocumentFormat::Xliff => {
            let (segments, skeleton) = xliff::extract(input, &options)?;
            (segments, Skeleton::Xliff(skeleton))
        }
        DocumentFormat::Resx => {
            let (segments, skeleton) = resx::extract(input)?;
            (segments, Skeleton::Resx(skeleton))
        }
        DocumentFormat::Yaml => {
            let (segments, skeleton) = yaml::extract(input)?;
            (segments, Skeleton::Yaml(skeleton))
        }
        DocumentFormat::Rtf => {
            let (segments, skeleton) = rtf::extract(input)?;
            (segments, Skeleton::Rtf(skeleton))
        }
        DocumentFormat::Mif => {
            let (segments, skeleton) = mif::extract(input)?;
            (segments, Skeleton::Mif(skeleton))
        }
        DocumentFormat::Xml if android::is_android(input) => {
            let (segments, skeleton) = android::extract(input)?;
            (segments, Skeleton::Android(skeleton))
        }
        DocumentFormat::Xml | DocumentFormat::Dita => {
            let (segments, skeleton) = xmldoc::extract(input)?;
            (segments, Skeleton::XmlDoc(skeleton))
        }
        DocumentFormat::Scorm => {
            let (segments, skeleton) = scorm::extract(input)?;
            (segments, Skeleton::Scorm(skeleton))
        }
        office => match package(office) {
            Some(package) => {
                let source = options.source_language.as_deref();
                let (segments, skeleton) = ooxml::extract(package, input, source)?;
                (segments, Skeleton::Ooxml(skeleton))
            }
            None => return Err(FormatError::unsupported("The format has no filter")),
        },
    };
    Ok(Extracted {
        format,
        segments,
        skeleton,
        language: None,
    })
}

/// The package of a ZIP-based (Office Open XML or OpenDocument) format.
fn package(format: DocumentFormat) -> Option<&'static ooxml::Package> {
    match format {
        DocumentFormat::Txt
        | DocumentFormat::Html
        | DocumentFormat::Srt
        | DocumentFormat::Vtt
        | DocumentFormat::Json
        | DocumentFormat::Markdown
        | DocumentFormat::Properties
        | DocumentFormat::Strings
        | DocumentFormat::Xliff
        | DocumentFormat::Resx
        | DocumentFormat::Yaml
        | DocumentFormat::Xml
        | DocumentFormat::Dita
        | DocumentFormat::Rtf
        | DocumentFormat::Mif
        | DocumentFormat::Scorm => None,
        DocumentFormat::Docx => Some(&docx::PACKAGE),
        DocumentFormat::Pptx => Some(&pptx::PACKAGE),
        DocumentFormat::Xlsx => Some(&xlsx::XLSX),
        DocumentFormat::Xlsm => Some(&xlsx::XLSM),
        DocumentFormat::Odt => Some(&odf::ODT),
        DocumentFormat::Odp => Some(&odf::ODP),
        DocumentFormat::Ods => Some(&odf::ODS),
        DocumentFormat::Idml => Some(&idml::PACKAGE),
    }
}

/// An extracted document: its segments and the skeleton to merge them into.
pub struct Extracted {
    format: DocumentFormat,
    segments: Vec<String>,
    skeleton: Skeleton,
    /// BCP 47 tag marked on translated text, where the format records one.
    language: Option<String>,
}

enum Skeleton {
    Txt(txt::Skeleton),
    Html(html::Skeleton),
    Subtitles(subtitles::Skeleton),
    Json(json::Skeleton),
    Markdown(markdown::Skeleton),
    Properties(properties::Skeleton),
    Strings(strings::Skeleton),
    Xliff(xliff::Skeleton),
    Resx(resx::Skeleton),
    Android(android::Skeleton),
    Yaml(yaml::Skeleton),
    XmlDoc(xmldoc::Skeleton),
    Rtf(rtf::Skeleton),
    Mif(mif::Skeleton),
    Scorm(scorm::Skeleton),
    Ooxml(ooxml::Skeleton),
}

impl Extracted {
    /// An extracted document of `format` (filters made of other filters).
    pub(crate) fn of(format: DocumentFormat, segments: Vec<String>, skeleton: Skeleton) -> Self {
        Self {
            format,
            segments,
            skeleton,
            language: None,
        }
    }

    /// The format of the document.
    pub fn format(&self) -> DocumentFormat {
        self.format
    }

    /// Marks translated text with the target language where the format
    /// records one (Word's `w:lang`, DrawingML's `lang` per run; XLIFF's
    /// target language), so
    /// spell checkers and screen readers treat it as such. `target_lang` is a
    /// DeepL code (`ES`, `EN-US`, `ZH-HANS`), written as BCP 47 (`es`,
    /// `en-US`, `zh-Hans`).
    #[must_use]
    pub fn with_target_language(mut self, target_lang: &str) -> Self {
        self.language = Some(bcp47(target_lang));
        self
    }

    /// The translatable segments, in document order, in [`inline`] markup.
    ///
    /// Only segments holding some non-whitespace text are listed.
    pub fn segments(&self) -> &[String] {
        &self.segments
    }

    /// Builds the translated document from one translation per segment (same
    /// order and count as [`segments`](Self::segments)).
    ///
    /// Translations may move, drop or duplicate tags, or be malformed: the
    /// merge never fails because of their content (see [`inline::parse`]).
    /// A translation identical to its source segment reproduces the original
    /// bytes of that unit.
    pub fn merge(&self, translated: &[String]) -> Result<Vec<u8>, FormatError> {
        if translated.len() != self.segments.len() {
            return Err(FormatError::Mismatch {
                expected: self.segments.len(),
                got: translated.len(),
            });
        }
        match &self.skeleton {
            Skeleton::Txt(skeleton) => Ok(skeleton.merge(&self.segments, translated)),
            Skeleton::Html(skeleton) => Ok(skeleton.merge(&self.segments, translated)),
            Skeleton::Subtitles(skeleton) => Ok(skeleton.merge(&self.segments, translated)),
            Skeleton::Json(skeleton) => Ok(skeleton.merge(&self.segments, translated)),
            Skeleton::Markdown(skeleton) => Ok(skeleton.merge(&self.segments, translated)),
            Skeleton::Properties(skeleton) => Ok(skeleton.merge(&self.segments, translated)),
            Skeleton::Strings(skeleton) => Ok(skeleton.merge(&self.segments, translated)),
            Skeleton::Xliff(skeleton) => Ok(skeleton.merge(translated, self.language.as_deref())),
            Skeleton::Resx(skeleton) => Ok(skeleton.merge(&self.segments, translated)),
            Skeleton::Android(skeleton) => Ok(skeleton.merge(&self.segments, translated)),
            Skeleton::XmlDoc(skeleton) => Ok(skeleton.merge(&self.segments, translated)),
            Skeleton::Rtf(skeleton) => Ok(skeleton.merge(&self.segments, translated)),
            Skeleton::Mif(skeleton) => Ok(skeleton.merge(&self.segments, translated)),
            Skeleton::Scorm(skeleton) => skeleton.merge(translated),
            Skeleton::Yaml(skeleton) => {
                Ok(skeleton.merge(&self.segments, translated, self.language.as_deref()))
            }
            Skeleton::Ooxml(skeleton) => skeleton.merge(translated, self.language.as_deref()),
        }
    }
}

/// Lower-case base of a language code (`fr-FR` → `fr`, `EN` → `en`).
pub(crate) fn base_language(code: &str) -> String {
    code.trim()
        .split(['-', '_'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// Whether a translated document of `from` can be delivered as `to` (an
/// upload's `output_format`): the same format, or SubRip and WebVTT into
/// each other.
pub fn can_convert(from: DocumentFormat, to: DocumentFormat) -> bool {
    from == to
        || matches!(
            (from, to),
            (DocumentFormat::Srt, DocumentFormat::Vtt) | (DocumentFormat::Vtt, DocumentFormat::Srt)
        )
}

/// A document of `from` as `to` (see [`can_convert`]).
pub fn convert(
    bytes: Vec<u8>,
    from: DocumentFormat,
    to: DocumentFormat,
) -> Result<Vec<u8>, FormatError> {
    let kind = |f: DocumentFormat| match f {
        DocumentFormat::Srt => Some(subtitles::Kind::Srt),
        DocumentFormat::Vtt => Some(subtitles::Kind::Vtt),
        _ => None,
    };
    if from == to {
        return Ok(bytes);
    }
    match (kind(from), kind(to)) {
        (Some(a), Some(b)) => subtitles::convert(a, b, &bytes),
        _ => Err(FormatError::unsupported(format!(
            "Conversion from {} to {} is not supported.",
            from.extension(),
            to.extension()
        ))),
    }
}

/// A DeepL language code as a BCP 47 tag: `EN-US` → `en-US`, `ZH-HANS` →
/// `zh-Hans`.
pub fn bcp47(code: &str) -> String {
    let mut parts = code.split(['-', '_']);
    let mut tag = parts.next().unwrap_or("").to_ascii_lowercase();
    for part in parts {
        tag.push('-');
        if part.len() == 4 {
            let (first, rest) = part.split_at(1);
            tag.push_str(&first.to_ascii_uppercase());
            tag.push_str(&rest.to_ascii_lowercase());
        } else {
            tag.push_str(&part.to_ascii_uppercase());
        }
    }
    tag
}

impl std::fmt::Debug for Extracted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extracted")
            .field("format", &self.format)
            .field("segments", &self.segments.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deepl_codes_become_bcp47_tags() {
        assert_eq!(bcp47("ES"), "es");
        assert_eq!(bcp47("EN-US"), "en-US");
        assert_eq!(bcp47("pt-br"), "pt-BR");
        assert_eq!(bcp47("ZH-HANS"), "zh-Hans");
    }

    #[test]
    fn every_format_is_found_by_its_own_extension() {
        for (ext, format) in EXTENSIONS {
            assert_eq!(DocumentFormat::from_extension(ext), Some(*format));
            assert_eq!(
                DocumentFormat::from_extension(format.extension()),
                Some(*format),
                "{ext}"
            );
        }
        assert_eq!(DocumentFormat::extensions().count(), EXTENSIONS.len());
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
        assert_eq!(DocumentFormat::from_extension("pdf"), None);
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
