//! The mark of machine translation on a delivered document
//! (`enable_watermark`): a visible line on every page or slide, and a
//! document property saying the same, for Word, PowerPoint and PDF output.
//! Each format's mark is its own module (`docx::watermark`,
//! `pptx::watermark`, `pdf::watermark`); the rest of the document is kept
//! as it is.

use crate::{DocumentFormat, FormatError, Output};

/// The text of the mark.
pub const MARK: &str = "Machine translated with Tolk";
/// The name of the document property holding [`MARK`] (a custom property
/// of Office documents, an entry of a PDF's information dictionary).
pub const MARK_PROPERTY: &str = "MachineTranslation";

/// Whether a document delivered as `output` can carry the mark.
pub fn can_mark(output: Output) -> bool {
    matches!(
        output,
        Output::Document(DocumentFormat::Docx | DocumentFormat::Pptx | DocumentFormat::Pdf)
    )
}

/// The delivered document `bytes` (of `output`) with the mark.
pub fn mark(output: Output, bytes: &[u8]) -> Result<Vec<u8>, FormatError> {
    match output {
        Output::Document(DocumentFormat::Docx) => {
            crate::docx::watermark::mark(bytes, MARK, MARK_PROPERTY)
        }
        Output::Document(DocumentFormat::Pptx) => {
            crate::pptx::watermark::mark(bytes, MARK, MARK_PROPERTY)
        }
        Output::Document(DocumentFormat::Pdf) => {
            crate::pdf::watermark::mark(bytes, MARK, MARK_PROPERTY)
        }
        Output::Document(other) => Err(FormatError::unsupported(format!(
            "A {} document cannot carry a watermark (docx, pptx and pdf can).",
            other.extension()
        ))),
    }
}

#[cfg(test)]
mod tests;
