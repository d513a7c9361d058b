//! What a translation is customised with, and how each is loaded: glossary
//! terms ([`glossary`]), a style rule list ([`style`]) and a translation
//! memory ([`memory`]).

pub mod glossary;
pub mod memory;
pub mod style;

use std::sync::Arc;

use tolk_engine::glossary::Terms;
use tolk_style::StyleRules;

use memory::MemoryUse;

/// The customisations of one translation; the default is none.
#[derive(Debug, Clone, Default)]
pub struct Customizations {
    /// Glossary terms for the pair (empty: none).
    pub terms: Arc<Terms>,
    /// The style rule list, if any.
    pub style: Option<StyleRules>,
    /// The translation memory, if any.
    pub memory: Option<MemoryUse>,
}
