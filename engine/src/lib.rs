//! Translation engines behind one trait, DeepL language codes, and routing
//! between language pairs with pivots.
//!
//! * [`Translator`] is what the API and the workers use: it takes DeepL
//!   codes (`EN`, `EN-US`, `PT-BR`), detects the source language when none is
//!   given, finds the shortest route over the pairs of all engines (EN→PT is
//!   `eng-spa` then `es-pt` when no direct pair exists) and runs it.
//! * [`Engine`] is the trait of one backend. [`ApertiumEngine`] runs the
//!   installed Apertium pairs as long-lived null-flush process pipelines,
//!   batching many texts into each block.
//! * [`TagHandling::Xml`] keeps inline tags through translation, attached to
//!   the words they wrap.
//!
//! ```no_run
//! # async fn demo() -> Result<(), tolk_engine::EngineError> {
//! use tolk_engine::{ApertiumConfig, TagHandling, TranslateRequest, Translator};
//!
//! let translator = Translator::apertium(ApertiumConfig::default())?;
//! let res = translator
//!     .translate(TranslateRequest {
//!         source_lang: Some("EN".into()),
//!         target_lang: "PT-BR".into(),
//!         texts: vec!["The <g id=\"1\">big</g> dog runs.".into()],
//!         tag_handling: TagHandling::Xml,
//!         ..Default::default()
//!     })
//!     .await?;
//! assert_eq!(res.route, ["eng-spa", "es-pt_BR"]);
//! # Ok(()) }
//! ```

#![deny(missing_docs)]

mod apertium;
mod detect;
mod engine;
mod error;
pub mod glossary;
pub mod lang;
mod markup;
mod route;
mod tags;
mod translator;
mod upstream;

pub use apertium::{ApertiumConfig, ApertiumEngine};
pub use engine::{Engine, Feature, Formality, Pair, TagHandling, TranslateOptions, Vocabulary};
pub use error::EngineError;
pub use lang::Lang;
pub use tags::{MAX_TAG_DEPTH, MarkupOptions, round_trip as markup_round_trip};
pub use translator::{LanguageInfo, Languages, TranslateRequest, TranslateResponse, Translator};
pub use upstream::{ApyEngine, DeeplEngine, Gate, HttpEngineConfig, OpenAiEngine};

#[cfg(test)]
mod tests;
