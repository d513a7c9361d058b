//! The error type of every filter.

/// Why a document could not be read or written back.
///
/// The `Display` text is meant for end users (it is shown as the document's
/// `error_message` by the API), so every message is a full sentence that names
/// the problem without internal jargon.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// The input is damaged or is not a document of the announced format.
    #[error("{0}")]
    Corrupt(String),
    /// The input is a valid file, but uses a feature or variant that is not supported.
    #[error("{0}")]
    Unsupported(String),
    /// `merge` got a different number of translated segments than `extract` produced.
    #[error(
        "The translation does not match the document: expected {expected} translated segments, got {got}"
    )]
    Mismatch {
        /// Number of segments of the document.
        expected: usize,
        /// Number of translated segments given to `merge`.
        got: usize,
    },
    /// Writing the translated document failed (should not happen for valid input).
    #[error("The translated document could not be written: {0}")]
    Write(String),
}

impl FormatError {
    pub(crate) fn corrupt(message: impl Into<String>) -> Self {
        FormatError::Corrupt(message.into())
    }

    pub(crate) fn unsupported(message: impl Into<String>) -> Self {
        FormatError::Unsupported(message.into())
    }
}
