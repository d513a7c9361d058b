//! The [`Engine`] trait every translation backend implements.

use async_trait::async_trait;

use crate::{EngineError, Lang};

/// How the input texts treat markup.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum TagHandling {
    /// Plain text: `<` and `&` are ordinary characters.
    #[default]
    None,
    /// XML-escaped text with inline tags (`<g id="1">…</g>`, `<x id="2"/>`):
    /// tags survive translation and the output is well-formed.
    Xml,
}

/// One translation direction offered by an engine.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pair {
    /// The engine's name for the direction (an Apertium mode such as
    /// `es-pt_BR`); appears in [`TranslateResponse::route`](crate::TranslateResponse::route).
    pub id: String,
    /// Language of the input.
    pub source: Lang,
    /// Language of the output, with variant (`por` + `BR`).
    pub target: Lang,
}

/// A translation backend (Apertium pipelines today; HTTP upstreams such as a
/// DeepL-compatible API, an OpenAI-compatible model or Apertium-APY later).
///
/// The [`Translator`](crate::Translator) routes requests over the pairs of all
/// its engines, chaining pairs through pivot languages and falling back to
/// another engine when one is unavailable.
#[async_trait]
pub trait Engine: Send + Sync {
    /// Short name for logs and metrics (`apertium`).
    fn name(&self) -> &str;

    /// The directions this engine translates.
    fn pairs(&self) -> Vec<Pair>;

    /// Translates `texts` along `pair` (one of [`Engine::pairs`]). Returns
    /// exactly one output per input, in order; empty inputs give empty
    /// outputs.
    async fn translate(
        &self,
        pair: &Pair,
        texts: Vec<String>,
        tags: TagHandling,
    ) -> Result<Vec<String>, EngineError>;

    /// Operating-system ids of the processes the engine currently runs
    /// (diagnostics; empty for engines without local processes).
    fn process_ids(&self) -> Vec<u32> {
        Vec::new()
    }
}
