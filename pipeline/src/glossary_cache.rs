//! A cache of glossary terms, so that a translation does not load (and index)
//! every entry of its glossaries again (one per API process).
//!
//! Entries are keyed by the request's glossaries and language pair and carry
//! the `version` of each glossary they were built from. Every write to a
//! glossary (rename, patch, replaced or deleted dictionary) bumps its
//! `version` column in PostgreSQL, so a request first reads the current
//! versions (one small indexed query, which also tells whether the glossaries
//! still exist) and uses the cached terms only when every version matches:
//! a change made through any API replica is seen by all of them at once, and
//! nothing stale is ever served. The versions are read before the entries, so
//! a cached value is never older than its key.
//!
//! Memory is bounded by the UTF-8 bytes of the cached terms
//! (`TOLK_GLOSSARY_CACHE_MB`); the least recently used entries go first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tolk_engine::glossary::Terms;
use uuid::Uuid;

/// Default bound of the cached terms, in bytes (64 MiB).
pub const DEFAULT_MAX_BYTES: usize = 64 * 1024 * 1024;

/// Which terms: the request's glossaries in order, and the language pair.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    /// Glossary ids, in the request's order (an earlier glossary wins).
    pub ids: Vec<Uuid>,
    /// Lower-case base code of the source language.
    pub source: String,
    /// Lower-case base code of the target language.
    pub target: String,
}

struct Entry {
    versions: Vec<i64>,
    terms: Arc<Terms>,
    bytes: usize,
    last_used: u64,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<Key, Entry>,
    bytes: usize,
    clock: u64,
}

/// The cache (one per API process).
pub struct GlossaryCache {
    max_bytes: usize,
    inner: Mutex<Inner>,
}

impl Default for GlossaryCache {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_BYTES)
    }
}

impl GlossaryCache {
    /// A cache holding at most `max_bytes` of terms (0 disables it).
    pub fn new(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            inner: Mutex::default(),
        }
    }

    /// The cached terms for `key`, if they were built from exactly `versions`.
    pub fn get(&self, key: &Key, versions: &[i64]) -> Option<Arc<Terms>> {
        let mut inner = self.inner.lock().ok()?;
        inner.clock += 1;
        let now = inner.clock;
        let entry = inner.entries.get_mut(key)?;
        if entry.versions != versions {
            return None;
        }
        entry.last_used = now;
        Some(entry.terms.clone())
    }

    /// Stores terms built from `versions` (`bytes`: UTF-8 bytes of their
    /// entries), evicting the least recently used entries beyond the bound.
    pub fn put(&self, key: Key, versions: Vec<i64>, terms: Arc<Terms>, bytes: usize) {
        if bytes > self.max_bytes {
            return;
        }
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.clock += 1;
        let now = inner.clock;
        if let Some(old) = inner.entries.remove(&key) {
            inner.bytes -= old.bytes;
        }
        while inner.bytes + bytes > self.max_bytes {
            let Some(oldest) = inner
                .entries
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(e) = inner.entries.remove(&oldest) {
                inner.bytes -= e.bytes;
            }
        }
        inner.bytes += bytes;
        inner.entries.insert(
            key,
            Entry {
                versions,
                terms,
                bytes,
                last_used: now,
            },
        );
    }

    /// Bytes of terms cached now.
    pub fn bytes(&self) -> usize {
        self.inner.lock().map_or(0, |i| i.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u128) -> Key {
        Key {
            ids: vec![Uuid::from_u128(n)],
            source: "en".into(),
            target: "de".into(),
        }
    }

    fn terms() -> Arc<Terms> {
        Arc::new(Terms::new([("cat".to_owned(), "Katze".to_owned())]))
    }

    #[test]
    fn hit_only_with_the_same_versions() {
        let c = GlossaryCache::new(100);
        c.put(key(1), vec![3], terms(), 10);
        assert!(c.get(&key(1), &[3]).is_some());
        assert!(c.get(&key(1), &[4]).is_none(), "a newer version is a miss");
        assert!(c.get(&key(2), &[3]).is_none());
    }

    #[test]
    fn bounded_by_bytes_least_recently_used_first() {
        let c = GlossaryCache::new(25);
        c.put(key(1), vec![1], terms(), 10);
        c.put(key(2), vec![1], terms(), 10);
        assert!(c.get(&key(1), &[1]).is_some());
        c.put(key(3), vec![1], terms(), 10);
        assert!(
            c.get(&key(2), &[1]).is_none(),
            "least recently used evicted"
        );
        assert!(c.get(&key(1), &[1]).is_some() && c.get(&key(3), &[1]).is_some());
        assert_eq!(c.bytes(), 20);
        c.put(key(4), vec![1], terms(), 26);
        assert!(
            c.get(&key(4), &[1]).is_none(),
            "larger than the bound: not cached"
        );
    }
}
