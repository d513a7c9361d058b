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

/// The `formality` option of a request, in DeepL's terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Formality {
    /// No preference.
    #[default]
    Default,
    /// Formal; an error when the target has no formality support.
    More,
    /// Informal; an error when the target has no formality support.
    Less,
    /// Formal where supported, else the default.
    PreferMore,
    /// Informal where supported, else the default.
    PreferLess,
}

impl Formality {
    /// Parses a DeepL value (`default`, `more`, `less`, `prefer_more`,
    /// `prefer_less`; `formal`/`informal` as aliases, case-insensitive).
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "default" => Some(Self::Default),
            "more" | "formal" => Some(Self::More),
            "less" | "informal" => Some(Self::Less),
            "prefer_more" => Some(Self::PreferMore),
            "prefer_less" => Some(Self::PreferLess),
            _ => None,
        }
    }

    /// Whether the request fails when the engine cannot honour it.
    pub fn is_strict(self) -> bool {
        matches!(self, Self::More | Self::Less)
    }

    /// The wanted register, if any: `Some(true)` formal, `Some(false)` informal.
    pub fn wants_formal(self) -> Option<bool> {
        match self {
            Self::Default => None,
            Self::More | Self::PreferMore => Some(true),
            Self::Less | Self::PreferLess => Some(false),
        }
    }

    /// The DeepL wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::More => "more",
            Self::Less => "less",
            Self::PreferMore => "prefer_more",
            Self::PreferLess => "prefer_less",
        }
    }
}

/// Request options beyond the texts, handed to every engine of the route.
/// Engines use what they can; the [`Translator`](crate::Translator) makes
/// sure that strict options (formality `more`/`less`, custom instructions)
/// only reach engines that support them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct TranslateOptions {
    /// Wanted register.
    pub formality: Formality,
    /// Extra context that helps translation and is not translated itself.
    pub context: Option<String>,
    /// Free-text instructions for engines driven by a language model.
    pub custom_instructions: Vec<String>,
    /// DeepL `model_type` as requested (`quality_optimized`, …).
    pub model_type: Option<String>,
    /// A style rule list in words (its configured rules and custom
    /// instructions, see `tolk_style`). Unlike `custom_instructions` these are
    /// a preference: engines that can follow them do, the others ignore them
    /// (Tolk applies the deterministic rules itself after any engine).
    pub style_instructions: Vec<String>,
    /// Mark the words of the source the engine's dictionary does not know
    /// (`*word`, as Apertium marks them) in the translation, where they
    /// stand untranslated; without it they are written as in the source.
    /// The translator does the marking (see [`Engine::known_words`]); engines
    /// ignore the flag.
    pub mark_unknown: bool,
}

/// What a dictionary knows of one text's words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vocabulary {
    /// Words (runs of letters) in the text.
    pub words: usize,
    /// How many of them the dictionary knows as words of the language: not
    /// only as a name, a letter of the alphabet or a part of compounds.
    pub known: usize,
    /// How many of them it knows as grammar words (determiners, pronouns,
    /// prepositions, conjunctions, auxiliary verbs): the most frequent words
    /// of a language, and the ones that tell close languages apart.
    pub grammar: usize,
    /// The words the dictionary does not know at all, as written, in order of
    /// first appearance, each once.
    pub unknown: Vec<String>,
}

impl Vocabulary {
    /// Share (0–1) of the text's words the dictionary knows; 0 for a text
    /// without words.
    pub fn share_known(&self) -> f64 {
        if self.words == 0 {
            return 0.0;
        }
        self.known.min(self.words) as f64 / self.words as f64
    }
}

/// Optional features an engine may support on a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feature {
    /// The `formality` option changes the output.
    Formality,
    /// `custom_instructions` are followed.
    CustomInstructions,
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

/// A translation backend: Apertium pipelines, or an HTTP upstream (a
/// DeepL-compatible API, an OpenAI-compatible model, Apertium-APY).
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
        options: &TranslateOptions,
    ) -> Result<Vec<String>, EngineError>;

    /// Whether the engine supports `feature` on `pair` (default: no).
    fn supports(&self, pair: &Pair, feature: Feature) -> bool {
        let _ = (pair, feature);
        false
    }

    /// Operating-system ids of the processes the engine currently runs
    /// (diagnostics; empty for engines without local processes).
    fn process_ids(&self) -> Vec<u32> {
        Vec::new()
    }

    /// For each text, which of its words the engine's dictionary of the
    /// language `base` (ISO 639-3) knows; `None` when the engine has no
    /// dictionary of that language (default). Language detection weighs
    /// short texts with it (n-gram statistics alone cannot tell them apart),
    /// and `mark_unknown` marks the words it does not know.
    async fn known_words(&self, base: &str, texts: &[String]) -> Option<Vec<Vocabulary>> {
        let _ = (base, texts);
        None
    }

    /// Whether the engine can rewrite text within `lang` itself (a language
    /// model), for `/v2/write/rephrase`; default no.
    fn can_rephrase(&self, lang: &Lang) -> bool {
        let _ = lang;
        false
    }

    /// Rewrites `texts` in `lang`, following `instructions` (writing style,
    /// tone). One output per input, in order. Only called when
    /// [`Engine::can_rephrase`] says yes.
    async fn rephrase(
        &self,
        lang: &Lang,
        texts: Vec<String>,
        instructions: &[String],
    ) -> Result<Vec<String>, EngineError> {
        let _ = (texts, instructions);
        Err(EngineError::Failed(format!(
            "engine {} cannot rephrase {}",
            self.name(),
            lang.base
        )))
    }
}
