//! Translation memories in `/v2/translate`: every segment (each text, or each
//! line with `split_sentences=1`) whose best match in the memory scores at
//! least `translation_memory_threshold` takes the memory's translation instead
//! of the engine's; the others go to the engine as usual.
//!
//! The score is `tolk_storage::translation_memories::score` (an edit-distance
//! ratio, 0–100, floored; 100 = identical); candidates come from the exact
//! index and from pg_trgm's similarity index. A threshold below 50 counts as
//! 50; the default is 75.

use futures::{StreamExt, TryStreamExt};
use tolk_storage::translation_memories::{self as memories, lang};
use uuid::Uuid;

use crate::{ApiError, AppState};

/// Threshold used when the request gives none.
pub const DEFAULT_THRESHOLD: u8 = 75;
/// Lowest threshold applied (lower values count as this).
pub const MIN_THRESHOLD: u8 = 50;
/// Lookups run at once for one request.
const CONCURRENT_LOOKUPS: usize = 8;

/// A memory resolved for a request.
#[derive(Debug, Clone)]
pub struct MemoryUse {
    /// The memory.
    pub memory_id: Uuid,
    /// Its source language (lower-case base).
    pub source_language: String,
    /// Its target language serving the request.
    pub target: String,
    /// Minimum score applied.
    pub threshold: u8,
}

/// Resolves `id` for the pair: 404 when the memory does not exist (for this
/// organization) or does not cover the pair (rule 3 of the spec).
pub async fn resolve(
    state: &AppState,
    organization_id: Uuid,
    id: &str,
    source_lang: Option<&str>,
    target_lang: &str,
    threshold: Option<u8>,
) -> Result<MemoryUse, ApiError> {
    let memory = super::load(state, organization_id, id).await?;
    if let Some(source) = source_lang
        && lang::base(source) != memory.source_language
    {
        return Err(ApiError::NotFound(format!(
            "Translation memory '{id}' does not cover the language pair: its source language is {}.",
            memory.source_language
        )));
    }
    let target = lang::covering(&memory.target_languages, target_lang).ok_or_else(|| {
        ApiError::NotFound(format!(
            "Translation memory '{id}' does not cover the language pair: it has no target language {} (it has {}).",
            target_lang.to_ascii_uppercase(),
            memory.target_languages.join(", ")
        ))
    })?;
    Ok(MemoryUse {
        memory_id: memory.id,
        source_language: memory.source_language.clone(),
        target: target.to_owned(),
        threshold: threshold.unwrap_or(DEFAULT_THRESHOLD).max(MIN_THRESHOLD),
    })
}

/// The memory's translation of each segment that has a good enough match.
pub async fn matches(
    state: &AppState,
    memory: &MemoryUse,
    segments: &[String],
) -> Result<Vec<Option<String>>, ApiError> {
    let db = state.db.clone();
    let memory_id = memory.memory_id;
    let threshold = memory.threshold;
    let target = memory.target.clone();
    futures::stream::iter(segments.iter().cloned().map(move |s| {
        let db = db.clone();
        let target = target.clone();
        async move { lookup_one(db, memory_id, target, threshold, s).await }
    }))
    .buffered(CONCURRENT_LOOKUPS)
    .try_collect()
    .await
}

async fn lookup_one(
    db: sqlx::PgPool,
    memory_id: Uuid,
    target: String,
    threshold: u8,
    s: String,
) -> Result<Option<String>, ApiError> {
    {
        let text = s.trim();
        if text.is_empty() {
            return Ok(None);
        }
        let found = memories::lookup(&db, memory_id, &target, text, threshold).await?;
        // Keep the segment's surrounding whitespace.
        Ok::<_, ApiError>(found.map(|m| {
            let lead = &s[..s.len() - s.trim_start().len()];
            let trail = &s[s.trim_end().len()..];
            format!("{lead}{}{trail}", m.target_text)
        }))
    }
}
