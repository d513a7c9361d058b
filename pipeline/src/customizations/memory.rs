//! Translation memories: every segment whose best match in the memory scores
//! at least the threshold takes the memory's translation instead of the
//! engine's; the others go to the engines as usual.
//!
//! The score is `tolk_storage::translation_memories::score` (an edit-distance
//! ratio, 0–100, floored; 100 = identical); candidates come from the exact
//! index and from pg_trgm's similarity index. A threshold below
//! [`MIN_THRESHOLD`] counts as it; the default is [`DEFAULT_THRESHOLD`].
//!
//! A segment is looked up by its text without the whitespace around it, which
//! the memory's translation then gets back. Segments with markup are looked up
//! only when they carry no tag, by their text with entities resolved, and the
//! match comes back escaped.

use futures::{StreamExt, TryStreamExt};
use tolk_formats::inline;
use tolk_storage::translation_memories::{self as memories, DocumentMemory, lang};
use uuid::Uuid;

use crate::{Pipeline, PipelineError};

/// Threshold used when the request gives none.
pub const DEFAULT_THRESHOLD: u8 = 75;
/// Lowest threshold applied (lower values count as this).
pub const MIN_THRESHOLD: u8 = 50;
/// Lookups run at once for one translation.
const CONCURRENT_LOOKUPS: usize = 8;

/// A memory resolved for a translation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryUse {
    /// The memory.
    pub memory_id: Uuid,
    /// Its source language (lower-case base), when known.
    pub source_language: Option<String>,
    /// Its target language serving the translation.
    pub target: String,
    /// Minimum score applied.
    pub threshold: u8,
}

impl From<DocumentMemory> for MemoryUse {
    fn from(m: DocumentMemory) -> Self {
        Self {
            memory_id: m.memory_id,
            source_language: None,
            target: m.target_language,
            threshold: m.threshold,
        }
    }
}

impl From<&MemoryUse> for DocumentMemory {
    fn from(m: &MemoryUse) -> Self {
        Self {
            memory_id: m.memory_id,
            target_language: m.target.clone(),
            threshold: m.threshold,
        }
    }
}

impl Pipeline<'_> {
    /// Memory `id` of `organization_id` for the pair: it must exist and cover
    /// the pair (its source language when one is given, and the target).
    pub async fn memory(
        &self,
        organization_id: Uuid,
        id: Uuid,
        source_lang: Option<&str>,
        target_lang: &str,
        threshold: Option<u8>,
    ) -> Result<MemoryUse, PipelineError> {
        let memory = memories::get(self.db, organization_id, id)
            .await?
            .ok_or(PipelineError::MemoryNotFound(id))?;
        if let Some(source) = source_lang
            && lang::base(source) != memory.source_language
        {
            return Err(PipelineError::MemoryPair {
                id,
                reason: format!("its source language is {}", memory.source_language),
            });
        }
        let target = lang::covering(&memory.target_languages, target_lang).ok_or_else(|| {
            PipelineError::MemoryPair {
                id,
                reason: format!(
                    "it has no target language {} (it has {})",
                    target_lang.to_ascii_uppercase(),
                    memory.target_languages.join(", ")
                ),
            }
        })?;
        Ok(MemoryUse {
            memory_id: memory.id,
            source_language: Some(memory.source_language.clone()),
            target: target.to_owned(),
            threshold: threshold.unwrap_or(DEFAULT_THRESHOLD).max(MIN_THRESHOLD),
        })
    }

    /// The memory's translation of each segment that has a good enough match
    /// (`markup`: the segments carry inline tags and entities).
    pub async fn memory_matches(
        &self,
        memory: &MemoryUse,
        segments: &[String],
        markup: bool,
    ) -> Result<Vec<Option<String>>, PipelineError> {
        let pipeline = *self;
        futures::stream::iter(segments.iter().cloned())
            .map(move |s| async move { pipeline.lookup(memory, &s, markup).await })
            .buffered(CONCURRENT_LOOKUPS)
            .try_collect()
            .await
    }

    async fn lookup(
        &self,
        memory: &MemoryUse,
        segment: &str,
        markup: bool,
    ) -> Result<Option<String>, PipelineError> {
        if markup && segment.contains('<') {
            return Ok(None);
        }
        let text = if markup {
            inline::plain_text(segment)
        } else {
            segment.to_owned()
        };
        let core = text.trim();
        if core.is_empty() {
            return Ok(None);
        }
        let found = memories::lookup(
            self.db,
            memory.memory_id,
            &memory.target,
            core,
            memory.threshold,
        )
        .await?;
        Ok(found.map(|m| {
            let lead = &text[..text.len() - text.trim_start().len()];
            let trail = &text[text.trim_end().len()..];
            let out = format!("{lead}{}{trail}", m.target_text);
            if markup { inline::escape(&out) } else { out }
        }))
    }
}
