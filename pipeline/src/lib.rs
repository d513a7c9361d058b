//! The one translation pipeline of Tolk, below the API and the worker.
//!
//! Every translation (a `/v2/translate` request, a document's segments, a
//! quality evaluation's back-translation, a voice job's transcript) goes
//! through [`Pipeline::translate`]:
//!
//! 1. texts cut into lines when the caller asks for it ([`lines`]); soft
//!    hyphens taken out of words, and put back in the words the translation
//!    keeps (`hyphens`);
//! 2. segments with a good enough translation-memory match take the memory's
//!    translation ([`customizations::memory`]);
//! 3. glossary terms of the others, and spans no engine may change (URLs,
//!    e-mail addresses, file paths, placeholders: [`protect`]), are wrapped
//!    so the engines pass them through ([`tolk_engine::glossary`]);
//! 4. the engines translate them, in chunks, a few in flight, reporting
//!    progress ([`chunks`]); what the engines introduced that the source
//!    shows to be an artefact (doubled spaces, stray capitals) is repaired
//!    ([`repair`]);
//! 5. terms are released, memory matches put back in place, lines joined;
//! 6. the style rule list's deterministic rules run last.
//!
//! What a translation is customised with is loaded by the same crate
//! ([`Pipeline::glossary_terms`], [`Pipeline::style_rules`],
//! [`Pipeline::memory`]), so that a route and a job resolve glossaries, style
//! lists and memories the same way. Callers only parse, authorise, bill and
//! answer.

#![deny(missing_docs)]

pub mod chunks;
pub mod customizations;
mod error;
pub mod glossary_cache;
mod hyphens;
pub mod lines;
pub mod protect;
pub mod repair;
mod translate;

use sqlx::PgPool;
use tolk_engine::Translator;

pub use customizations::Customizations;
pub use customizations::memory::{DEFAULT_THRESHOLD, MIN_THRESHOLD, MemoryUse};
pub use error::PipelineError;
pub use glossary_cache::GlossaryCache;
pub use translate::{NoProgress, Progress, Request, Translated};

/// What the pipeline runs on: the database (memories, glossaries, style
/// lists), the engines and, in the API, the glossary cache. Borrowed from the
/// caller's state; cheap to make for each use.
#[derive(Clone, Copy)]
pub struct Pipeline<'a> {
    /// PostgreSQL.
    pub db: &'a PgPool,
    /// The engines.
    pub translator: &'a Translator,
    /// Glossary terms already built, when the caller keeps a cache.
    pub glossary_cache: Option<&'a GlossaryCache>,
}
