//! Glossary terms of a translation: the entries of its glossaries for the
//! language pair, an earlier glossary winning over a later one. With a
//! [`GlossaryCache`](crate::GlossaryCache) the current versions are read first
//! (one small query that also tells whether the glossaries still exist) and
//! terms built from exactly those versions are reused.

use std::sync::Arc;

use tolk_engine::glossary::Terms;
use tolk_storage::glossaries;
use uuid::Uuid;

use crate::glossary_cache::Key;
use crate::{Pipeline, PipelineError};

/// Lower-case DeepL base code of a language, as glossary dictionaries store
/// languages (`EN-GB` → `en`); `None` for a code no engine knows.
pub fn dictionary_language(code: &str) -> Option<String> {
    tolk_engine::lang::parse_source(code)
        .ok()
        .and_then(|l| l.deepl_base())
        .map(|b| b.to_ascii_lowercase())
}

impl Pipeline<'_> {
    /// The terms of glossaries `ids` (in order) of `organization_id` for
    /// `source`→`target` (DeepL codes, any case, variants allowed). Empty for
    /// no glossaries.
    pub async fn glossary_terms(
        &self,
        organization_id: Uuid,
        ids: &[Uuid],
        source: &str,
        target: &str,
    ) -> Result<Arc<Terms>, PipelineError> {
        if ids.is_empty() {
            return Ok(Arc::default());
        }
        let (Some(s), Some(t)) = (dictionary_language(source), dictionary_language(target)) else {
            return Err(PipelineError::GlossaryPair {
                from: source.to_owned(),
                to: target.to_owned(),
            });
        };
        let Some(cache) = self.glossary_cache else {
            return Ok(Arc::new(
                self.load_terms(organization_id, ids, &s, &t).await?.0,
            ));
        };
        // Versions first, entries after: a cached value is never older than its key.
        let current = glossaries::versions(self.db, organization_id, ids).await?;
        let versions = ids
            .iter()
            .map(|id| {
                current
                    .iter()
                    .find(|(c, _)| c == id)
                    .map(|(_, v)| *v)
                    .ok_or(PipelineError::GlossaryNotFound(*id))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let key = Key {
            ids: ids.to_vec(),
            source: s,
            target: t,
        };
        if let Some(terms) = cache.get(&key, &versions) {
            return Ok(terms);
        }
        let (terms, bytes) = self
            .load_terms(organization_id, ids, &key.source, &key.target)
            .await?;
        let terms = Arc::new(terms);
        cache.put(key, versions, terms.clone(), bytes);
        Ok(terms)
    }

    /// Reads the entries and builds the terms; also returns their UTF-8 bytes.
    async fn load_terms(
        &self,
        organization_id: Uuid,
        ids: &[Uuid],
        s: &str,
        t: &str,
    ) -> Result<(Terms, usize), PipelineError> {
        let mut pairs = Vec::new();
        for id in ids {
            let dicts = glossaries::entries(self.db, organization_id, *id, Some((s, t)))
                .await?
                .ok_or(PipelineError::GlossaryNotFound(*id))?;
            let d = dicts
                .into_iter()
                .next()
                .ok_or_else(|| PipelineError::NoDictionary {
                    id: *id,
                    from: s.to_owned(),
                    to: t.to_owned(),
                })?;
            pairs.extend(d.sources.into_iter().zip(d.targets));
        }
        let bytes = pairs.iter().map(|(a, b)| a.len() + b.len()).sum();
        Ok((Terms::new(pairs), bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dictionaries_store_base_codes() {
        assert_eq!(dictionary_language("EN-GB").as_deref(), Some("en"));
        assert_eq!(dictionary_language("pt-br").as_deref(), Some("pt"));
        assert_eq!(dictionary_language("xx-nonsense"), None);
    }
}
