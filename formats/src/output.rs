//! What a translated document is delivered as (an upload's `output_format`)
//! and how it becomes that: as translated, SubRip and WebVTT into each other
//! and a PDF reflowed into a Word document (done here, [`convert`]), or
//! another office format or PDF made by LibreOffice from the translated
//! document ([`Conversion::Office`], run by the worker).

use crate::{DocumentFormat, Fonts, FormatError, encoding, pdf, subtitles};

/// A format a translated document can be delivered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Output {
    /// A document format (PDF too, made by LibreOffice from office
    /// documents).
    Document(DocumentFormat),
}

impl Output {
    /// The output format of a file extension (`"pdf"`, `"docx"`…),
    /// case-insensitive; a leading dot is tolerated.
    pub fn from_extension(ext: &str) -> Option<Self> {
        DocumentFormat::from_extension(ext).map(Self::Document)
    }

    /// The canonical file extension, without dot.
    pub fn extension(&self) -> &'static str {
        match self {
            Self::Document(f) => f.extension(),
        }
    }

    /// The media type of a delivered document.
    pub fn content_type(&self) -> &'static str {
        match self {
            Self::Document(f) => f.content_type(),
        }
    }
}

/// How a translated document of one format becomes another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conversion {
    /// None: it is delivered as translated.
    Same,
    /// SubRip and WebVTT into each other ([`convert`]).
    Subtitles,
    /// A PDF reflowed into an editable Word document ([`convert`]):
    /// paragraphs, headings, lists, runs and images in reading order.
    Reflow,
    /// LibreOffice opens the translated document ([`office_input`]) with
    /// the import filter `import` (by its extension when `None`) and saves it
    /// with `export` (a `--convert-to` argument).
    Office {
        /// The import filter (`--infilter`).
        import: Option<&'static str>,
        /// The export filter (`--convert-to`).
        export: &'static str,
    },
}

/// LibreOffice's import filter for a translated document of `from` that it
/// converts: HTML as a Writer document (not Writer/Web, which exports
/// neither Word nor a paged PDF), text as UTF-8 ([`office_input`]).
fn office_import(from: DocumentFormat) -> Option<&'static str> {
    match from {
        DocumentFormat::Html => Some("HTML (StarWriter)"),
        DocumentFormat::Txt => Some("Text (encoded):UTF8"),
        _ => None,
    }
}

/// How a translated document of `from` is delivered as `to`; `None` when
/// it cannot be. Beside the document's own format: SubRip ↔ WebVTT; Word
/// from PDF (reflowed here); PDF
/// from word-processing, presentation, spreadsheet, HTML and text
/// documents; Word from OpenDocument text, RTF, HTML and text.
pub fn conversion(from: DocumentFormat, to: Output) -> Option<Conversion> {
    use DocumentFormat::*;
    match to {
        Output::Document(to) if to == from => Some(Conversion::Same),
        Output::Document(Vtt) if from == Srt => Some(Conversion::Subtitles),
        Output::Document(Srt) if from == Vtt => Some(Conversion::Subtitles),
        Output::Document(Docx) if from == Pdf => Some(Conversion::Reflow),
        Output::Document(Docx) if matches!(from, Odt | Rtf | Html | Txt) => {
            Some(Conversion::Office {
                import: office_import(from),
                export: "docx:MS Word 2007 XML",
            })
        }
        Output::Document(Pdf)
            if matches!(
                from,
                Docx | Odt | Rtf | Html | Txt | Pptx | Odp | Xlsx | Xlsm | Ods
            ) =>
        {
            Some(Conversion::Office {
                import: office_import(from),
                export: "pdf",
            })
        }
        _ => None,
    }
}

/// Whether a translated document of `from` can be delivered as `to` (see
/// [`conversion`]).
pub fn can_convert(from: DocumentFormat, to: Output) -> bool {
    conversion(from, to).is_some()
}

/// A translated SubRip or WebVTT file as the other, or a translated PDF as a
/// Word document (`fonts` measure the PDF's standard fonts), or as it is
/// when `to` is its own format.
pub fn convert(
    bytes: Vec<u8>,
    from: DocumentFormat,
    to: Output,
    fonts: Option<&Fonts>,
) -> Result<Vec<u8>, FormatError> {
    let kind = |f: DocumentFormat| match f {
        DocumentFormat::Srt => Some(subtitles::Kind::Srt),
        DocumentFormat::Vtt => Some(subtitles::Kind::Vtt),
        _ => None,
    };
    match (conversion(from, to), to) {
        (Some(Conversion::Same), _) => Ok(bytes),
        (Some(Conversion::Reflow), _) => pdf::reflow::to_docx(&bytes, fonts),
        (Some(Conversion::Subtitles), Output::Document(to)) => match (kind(from), kind(to)) {
            (Some(a), Some(b)) => subtitles::convert(a, b, &bytes),
            _ => Err(unsupported(from, Output::Document(to))),
        },
        _ => Err(unsupported(from, to)),
    }
}

/// The bytes LibreOffice is given for a translated document of `from`: text
/// as UTF-8 (a text file is written in its source's encoding, which
/// LibreOffice would have to guess), anything else as it is.
pub fn office_input(from: DocumentFormat, bytes: Vec<u8>) -> Vec<u8> {
    match from {
        DocumentFormat::Txt => encoding::decode(&bytes, None).text.into_bytes(),
        _ => bytes,
    }
}

fn unsupported(from: DocumentFormat, to: Output) -> FormatError {
    FormatError::unsupported(format!(
        "Conversion from {} to {} is not supported.",
        from.extension(),
        to.extension()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use DocumentFormat::*;

    #[test]
    fn each_format_is_delivered_as_itself_and_as_what_libreoffice_makes_of_it() {
        assert_eq!(Output::from_extension(".PDF"), Some(Output::Document(Pdf)));
        assert_eq!(Output::from_extension("docx"), Some(Output::Document(Docx)));
        assert_eq!(Output::from_extension("exe"), None);
        assert_eq!(Output::Document(Pdf).content_type(), "application/pdf");
        assert_eq!(
            conversion(Json, Output::Document(Json)),
            Some(Conversion::Same)
        );
        assert_eq!(
            conversion(Srt, Output::Document(Vtt)),
            Some(Conversion::Subtitles)
        );
        assert_eq!(
            conversion(Pdf, Output::Document(Docx)),
            Some(Conversion::Reflow)
        );
        assert!(matches!(
            conversion(Html, Output::Document(Docx)),
            Some(Conversion::Office {
                import: Some("HTML (StarWriter)"),
                ..
            })
        ));
        assert!(matches!(
            conversion(Pptx, Output::Document(Pdf)),
            Some(Conversion::Office {
                import: None,
                export: "pdf"
            })
        ));
        for (from, to) in [
            (Srt, Output::Document(Pdf)),
            (Json, Output::Document(Pdf)),
            (Xliff, Output::Document(Docx)),
            (Docx, Output::Document(Odt)),
            (Pptx, Output::Document(Docx)),
            (Pdf, Output::Document(Pptx)),
        ] {
            assert!(!can_convert(from, to), "{from:?} → {to:?}");
            let err = convert(Vec::new(), from, to, None).expect_err("refused");
            assert!(err.to_string().contains("is not supported"), "{err}");
        }
    }

    #[test]
    fn text_reaches_libreoffice_as_utf8() {
        let latin = b"Caf\xe9 con leche\n".to_vec();
        assert_eq!(office_input(Txt, latin), "Café con leche\n".as_bytes());
        assert_eq!(office_input(Docx, vec![0xe9]), vec![0xe9]);
    }
}
