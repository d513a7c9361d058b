//! Engines behind HTTP: an upstream speaking the DeepL wire format, an
//! OpenAI-compatible chat-completions server, and Apertium-APY.
//!
//! Each has a bounded queue ([`Gate`]) and a per-request timeout: a full
//! queue is [`EngineError::Overloaded`], a timeout [`EngineError::Timeout`],
//! a refused connection or a 5xx answer [`EngineError::Unavailable`]; all
//! three are transient, so the [`Translator`](crate::Translator) falls back
//! to the next engine offering the pair.

mod apy;
mod deepl;
mod gate;
mod openai;

use std::time::Duration;

pub use apy::ApyEngine;
pub use deepl::DeeplEngine;
pub use gate::Gate;
pub use openai::OpenAiEngine;

use crate::{EngineError, Lang, Pair, lang};

/// Settings shared by the HTTP engines.
#[derive(Debug, Clone)]
pub struct HttpEngineConfig {
    /// Base address, e.g. `https://api.deepl.com`, `http://127.0.0.1:8000/v1`,
    /// `http://127.0.0.1:2737`.
    pub url: String,
    /// Credential: the DeepL auth key, or the bearer token of the chat server.
    pub api_key: Option<String>,
    /// Model name (chat-completions engine only).
    pub model: Option<String>,
    /// Pairs served, as DeepL codes `SOURCE:TARGET` (`EN:DE`, `DE:EN-US`).
    /// Apertium-APY lists its pairs itself when this is empty.
    pub pairs: Vec<String>,
    /// Longest time one upstream request may take.
    pub timeout: Duration,
    /// Upstream requests running at once.
    pub concurrency: usize,
    /// Requests waiting beyond those; more are refused (529).
    pub queue: usize,
}

impl HttpEngineConfig {
    /// A configuration with the defaults: 30 s timeout, 16 at once, 256 waiting.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            api_key: None,
            model: None,
            pairs: Vec::new(),
            timeout: Duration::from_secs(30),
            concurrency: 16,
            queue: 256,
        }
    }

    fn base(&self) -> &str {
        self.url.trim_end_matches('/')
    }
}

/// Parses `SOURCE:TARGET` DeepL code pairs into engine pairs named
/// `{engine}:{SOURCE}-{TARGET}`.
pub(crate) fn parse_pairs(engine: &str, specs: &[String]) -> Result<Vec<Pair>, EngineError> {
    specs
        .iter()
        .map(|spec| {
            let (s, t) = spec.split_once(':').ok_or_else(|| {
                EngineError::Failed(format!(
                    "{engine}: pair '{spec}' is not of the form SOURCE:TARGET (e.g. EN:DE)"
                ))
            })?;
            let bad = |e: EngineError| EngineError::Failed(format!("{engine}: pair '{spec}': {e}"));
            let source = lang::parse_source(s).map_err(bad)?;
            let target = lang::parse_target(t).map_err(bad)?;
            Ok(Pair {
                id: format!("{engine}:{}-{}", deepl_code(&source), deepl_code(&target)),
                source,
                target,
            })
        })
        .collect()
}

/// DeepL code of a language (`EN`, `EN-US`); the raw base otherwise.
pub(crate) fn deepl_code(l: &Lang) -> String {
    l.deepl_code()
        .unwrap_or_else(|| l.to_string().to_uppercase())
}

/// English name of a language with its variant, for prompts.
pub(crate) fn display_name(l: &Lang) -> String {
    let code = deepl_code(l);
    lang::target_codes(&l.plain())
        .into_iter()
        .find(|(c, _)| c.eq_ignore_ascii_case(&code))
        .map(|(_, n)| n)
        .or_else(|| l.name().map(str::to_owned))
        .unwrap_or(code)
}

/// Maps a transport error of `reqwest`.
pub(crate) fn transport_error(engine: &str, e: &reqwest::Error) -> EngineError {
    if e.is_timeout() {
        EngineError::Timeout(format!("{engine} did not answer in time"))
    } else {
        EngineError::Unavailable(format!("{engine}: {e}"))
    }
}

/// Maps an upstream error status: overload and unavailability are transient
/// (another engine may serve the request), other codes fail the request.
pub(crate) fn status_error(engine: &str, status: u16, body: &str) -> EngineError {
    let body: String = body.chars().take(300).collect();
    match status {
        429 | 529 => EngineError::Overloaded(format!("{engine} answered {status}: {body}")),
        504 => EngineError::Timeout(format!("{engine} answered {status}: {body}")),
        456 | 500..=599 => EngineError::Unavailable(format!("{engine} answered {status}: {body}")),
        _ => EngineError::Failed(format!("{engine} answered {status}: {body}")),
    }
}

/// An HTTP client for the engines.
pub(crate) fn client(timeout: Duration) -> Result<reqwest::Client, EngineError> {
    reqwest::Client::builder()
        .timeout(timeout)
        .pool_max_idle_per_host(64)
        .build()
        .map_err(|e| EngineError::Failed(format!("HTTP client: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_transient_or_permanent_errors() {
        assert!(matches!(
            status_error("x", 429, ""),
            EngineError::Overloaded(_)
        ));
        assert!(matches!(
            status_error("x", 529, ""),
            EngineError::Overloaded(_)
        ));
        assert!(matches!(
            status_error("x", 504, ""),
            EngineError::Timeout(_)
        ));
        assert!(matches!(
            status_error("x", 503, ""),
            EngineError::Unavailable(_)
        ));
        assert!(matches!(
            status_error("x", 456, ""),
            EngineError::Unavailable(_)
        ));
        assert!(
            matches!(status_error("x", 400, "bad"), EngineError::Failed(m) if m.contains("bad"))
        );
    }

    #[test]
    fn pairs_are_deepl_codes() {
        let pairs = parse_pairs("deepl", &["en:de".into(), "DE:EN-US".into()]).unwrap();
        assert_eq!(pairs[0].id, "deepl:EN-DE");
        assert_eq!(pairs[1].id, "deepl:DE-EN-US");
        assert_eq!(display_name(&pairs[1].target), "English (American)");
        assert!(parse_pairs("deepl", &["EN-DE".into()]).is_err());
        assert!(parse_pairs("deepl", &["EN:XX".into()]).is_err());
    }
}
