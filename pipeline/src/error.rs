//! What can go wrong in the pipeline. Each caller turns these into its own
//! answer (an HTTP status, a job outcome); the source errors are kept.

use tolk_engine::EngineError;
use tolk_storage::StorageError;
use uuid::Uuid;

/// Why a translation through the pipeline failed.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The engines failed or refused the request.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The database failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// A glossary does not exist (for this organization).
    #[error("the glossary {0} does not exist")]
    GlossaryNotFound(Uuid),
    /// A glossary has no dictionary for the pair.
    #[error("the glossary {id} has no dictionary for the language pair {from}→{to}")]
    NoDictionary {
        /// The glossary.
        id: Uuid,
        /// Lower-case base code of the source language.
        from: String,
        /// Lower-case base code of the target language.
        to: String,
    },
    /// Glossaries cannot serve the language pair at all.
    #[error("Glossaries do not support the pair {from}→{to}.")]
    GlossaryPair {
        /// Source language as given.
        from: String,
        /// Target language as given.
        to: String,
    },
    /// A style rule list does not exist (for this organization).
    #[error("the style rule list {0} does not exist")]
    StyleNotFound(Uuid),
    /// A style rule list is for another target language.
    #[error(
        "Style rule list '{id}' is for language '{language}', which does not match target_lang '{target}'."
    )]
    StyleLanguage {
        /// The list.
        id: Uuid,
        /// The list's language.
        language: String,
        /// The requested target language (upper case).
        target: String,
    },
    /// A translation memory does not exist (for this organization).
    #[error("the translation memory {0} does not exist")]
    MemoryNotFound(Uuid),
    /// A translation memory does not cover the pair.
    #[error("Translation memory '{id}' does not cover the language pair: {reason}.")]
    MemoryPair {
        /// The memory.
        id: Uuid,
        /// What it covers instead, in words.
        reason: String,
    },
    /// The engines answered with another number of texts than they were sent.
    #[error("the engine returned {got} texts for {sent}")]
    Mismatch {
        /// Texts sent.
        sent: usize,
        /// Texts received.
        got: usize,
    },
}

impl PipelineError {
    /// Whether a later attempt may succeed (an engine or the database failing
    /// for now); every other error is the request's.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Engine(e) => e.is_transient(),
            Self::Storage(_) | Self::Mismatch { .. } => true,
            _ => false,
        }
    }
}
