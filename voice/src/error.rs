//! Errors of the speech engines.

/// Why a speech operation failed.
#[derive(Debug, thiserror::Error)]
pub enum VoiceError {
    /// The input audio cannot be used (corrupt, unknown format, silent, too long).
    #[error("{0}")]
    BadAudio(String),
    /// The request cannot be served (empty text, unsupported option).
    #[error("{0}")]
    BadRequest(String),
    /// An engine (espeak-ng, pocketsphinx) failed or is missing.
    #[error("{0}")]
    Engine(String),
}

impl VoiceError {
    /// True when the caller's input is at fault (a 400), false for engine failures.
    pub fn is_client_error(&self) -> bool {
        matches!(self, Self::BadAudio(_) | Self::BadRequest(_))
    }
}
