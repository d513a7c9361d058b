//! The error type of every engine and of the router.

/// Why a translation (or a routing question) could not be answered.
///
/// The `Display` texts are written to be shown to API clients as they are.
///
/// (`Display` and `Error` are written out by hand: thiserror would take the
/// `source` field of [`EngineError::UnsupportedPair`] for an error source.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineError {
    /// A language code is not known at all (e.g. `XX`), or not valid in that
    /// field (e.g. a target-only variant where none exists).
    UnknownLanguage {
        /// The request field that held the code: `source_lang` or `target_lang`.
        field: &'static str,
        /// The code as given.
        code: String,
    },
    /// Both languages are known, but no engine (directly or through pivot
    /// languages) translates between them.
    UnsupportedPair {
        /// DeepL code of the source language, e.g. `EN`.
        source: String,
        /// DeepL code of the target language, e.g. `JA`.
        target: String,
        /// DeepL codes of the sources that do reach the target (sorted).
        reachable_from: Vec<String>,
    },
    /// Source and target are the same language (variants ignored: `EN` → `EN-GB`).
    SameLanguage {
        /// DeepL code of the language.
        lang: String,
    },
    /// No `source_lang` was given and the language of the text could not be
    /// detected among the supported source languages.
    DetectionFailed,
    /// Transient failure: an engine process died, timed out or is overloaded.
    /// The same request may succeed when retried.
    Unavailable(String),
    /// Transient: the engine's bounded queue is full. Retry later.
    Overloaded(String),
    /// Transient: the engine did not answer in time.
    Timeout(String),
    /// The request asks for something the engines of its route cannot do
    /// (formality `more`/`less`, custom instructions); the message names the
    /// parameter and is shown to clients as it is.
    Unsupported(String),
    /// The text's tags nest deeper than [`crate::MAX_TAG_DEPTH`]: refused
    /// before any work (a hostile request must not exhaust the stack).
    MarkupTooDeep {
        /// The limit that was exceeded.
        limit: usize,
    },
    /// Permanent failure of this request.
    Failed(String),
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnknownLanguage { field, .. } => write!(f, "Value for '{field}' not supported."),
            Self::UnsupportedPair {
                source,
                target,
                reachable_from,
            } => {
                write!(
                    f,
                    "No translation route from {source} to {target} is available"
                )?;
                if reachable_from.is_empty() {
                    write!(f, "; no installed source language reaches {target}")
                } else {
                    write!(
                        f,
                        "; {target} can be translated from {}",
                        reachable_from.join(", ")
                    )
                }
            }
            Self::SameLanguage { lang } => {
                write!(f, "Source and target language are the same ({lang})")
            }
            Self::DetectionFailed => {
                f.write_str("The source language could not be detected; please specify source_lang")
            }
            Self::Unavailable(why) => write!(f, "Translation engine unavailable: {why}"),
            Self::Overloaded(why) => write!(f, "Translation engine overloaded: {why}"),
            Self::Timeout(why) => write!(f, "Translation engine timed out: {why}"),
            Self::Unsupported(message) => f.write_str(message),
            Self::MarkupTooDeep { limit } => write!(
                f,
                "Invalid markup: tags are nested more than {limit} levels deep (the limit)"
            ),
            Self::Failed(why) => write!(f, "Translation failed: {why}"),
        }
    }
}

impl std::error::Error for EngineError {}

impl EngineError {
    /// Whether retrying the same request later may succeed.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::Unavailable(_) | Self::Overloaded(_) | Self::Timeout(_)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_problem() {
        let e = EngineError::UnsupportedPair {
            source: "EN".into(),
            target: "JA".into(),
            reachable_from: Vec::new(),
        };
        assert_eq!(
            e.to_string(),
            "No translation route from EN to JA is available; no installed source language reaches JA"
        );
        let e = EngineError::UnsupportedPair {
            source: "EN".into(),
            target: "NL".into(),
            reachable_from: vec!["AF".into()],
        };
        assert_eq!(
            e.to_string(),
            "No translation route from EN to NL is available; NL can be translated from AF"
        );
        let e = EngineError::UnknownLanguage {
            field: "target_lang",
            code: "XX".into(),
        };
        assert_eq!(e.to_string(), "Value for 'target_lang' not supported.");
        let e = EngineError::SameLanguage { lang: "ES".into() };
        assert_eq!(
            e.to_string(),
            "Source and target language are the same (ES)"
        );
        assert!(EngineError::Unavailable("x".into()).is_transient());
        assert!(!EngineError::Failed("x".into()).is_transient());
        assert!(!EngineError::DetectionFailed.is_transient());
    }
}
