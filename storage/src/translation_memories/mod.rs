//! Translation memories (tables `translation_memories`,
//! `translation_memory_units`): listing, reading, paging through segments,
//! deletion, bulk loading (COPY) for TMX imports, a consistent stream of units
//! for exports, and exact/fuzzy lookups for translation.
//!
//! * [`lang`]: language codes of memories (lower-case bases and DeepL's variants);
//! * [`score`]: the fuzzy-match score (an edit-distance ratio, 0–100);
//! * [`words`]: word-bigram keys of the fuzzy-match candidate index;
//! * [`jobs`]: the import and export jobs' public state.

pub mod jobs;
pub mod lang;
pub mod score;
pub mod words;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::StorageError;

/// A translation memory (no units).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Memory {
    /// Public id.
    pub id: Uuid,
    /// Owner.
    pub organization_id: Uuid,
    /// Display name.
    pub name: String,
    /// Lower-case base code of the source language.
    pub source_language: String,
    /// Lower-case target language codes, sorted.
    pub target_languages: Vec<String>,
    /// Units stored.
    pub segment_count: i64,
    /// The imported TMX header (JSON of `tolk_formats::tmx::Header`).
    pub header: serde_json::Value,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

/// A page of memories and the organization's total.
pub async fn list(
    pool: &PgPool,
    organization_id: Uuid,
    page: i64,
    page_size: i64,
) -> Result<(Vec<Memory>, i64), StorageError> {
    let rows = sqlx::query_as::<_, Memory>(
        "SELECT id, organization_id, name, source_language, target_languages, segment_count,
                header, created_at, updated_at
         FROM translation_memories WHERE organization_id = $1
         ORDER BY created_at, id OFFSET $2 LIMIT $3",
    )
    .bind(organization_id)
    .bind(page.saturating_mul(page_size))
    .bind(page_size)
    .fetch_all(pool)
    .await?;
    let total: i64 =
        sqlx::query_scalar("SELECT count(*) FROM translation_memories WHERE organization_id = $1")
            .bind(organization_id)
            .fetch_one(pool)
            .await?;
    Ok((rows, total))
}

/// A memory of an organization.
pub async fn get(
    pool: &PgPool,
    organization_id: Uuid,
    id: Uuid,
) -> Result<Option<Memory>, StorageError> {
    Ok(sqlx::query_as::<_, Memory>(
        "SELECT id, organization_id, name, source_language, target_languages, segment_count,
                header, created_at, updated_at
         FROM translation_memories WHERE id = $1 AND organization_id = $2",
    )
    .bind(id)
    .bind(organization_id)
    .fetch_optional(pool)
    .await?)
}

/// Deletes a memory and its units; false when it does not exist (for this organization).
pub async fn delete(pool: &PgPool, organization_id: Uuid, id: Uuid) -> Result<bool, StorageError> {
    let mut tx = pool.begin().await?;
    let gone =
        sqlx::query("DELETE FROM translation_memories WHERE id = $1 AND organization_id = $2")
            .bind(id)
            .bind(organization_id)
            .execute(&mut *tx)
            .await?
            .rows_affected()
            == 1;
    if gone {
        sqlx::query("DELETE FROM translation_memory_units WHERE memory_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM translation_memory_words WHERE memory_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(gone)
}

/// One stored unit as the segments listing shows it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Segment {
    /// Position of the unit in its memory (0-based, the cursor).
    pub unit_no: i32,
    /// Plain source text.
    pub source_text: String,
    /// `{target language: plain text}`.
    pub targets: sqlx::types::Json<BTreeMap<String, String>>,
    /// When it was stored.
    pub created_at: DateTime<Utc>,
}

/// Up to `limit` segments after unit `after` (exclusive), in order; with
/// `filter`, only those whose source or a target contains the text
/// (case-insensitive unless `case_sensitive`).
pub async fn segments(
    pool: &PgPool,
    memory_id: Uuid,
    after: Option<i32>,
    limit: i64,
    filter: Option<(&str, bool)>,
) -> Result<Vec<Segment>, StorageError> {
    let (pattern, case_sensitive) = match filter {
        Some((text, cs)) => (Some(format!("%{}%", like_escape(text))), cs),
        None => (None, false),
    };
    Ok(sqlx::query_as::<_, Segment>(
        r#"SELECT unit_no, source_text, targets, created_at
           FROM translation_memory_units
           WHERE memory_id = $1 AND unit_no > $2
             AND ($3::text IS NULL
                  OR (CASE WHEN $4 THEN source_text LIKE $3 ELSE source_text ILIKE $3 END)
                  OR EXISTS (SELECT 1 FROM jsonb_each_text(targets) t
                             WHERE CASE WHEN $4 THEN t.value LIKE $3 ELSE t.value ILIKE $3 END))
           ORDER BY unit_no LIMIT $5"#,
    )
    .bind(memory_id)
    .bind(after.unwrap_or(-1))
    .bind(pattern)
    .bind(case_sensitive)
    .bind(limit)
    .fetch_all(pool)
    .await?)
}

fn like_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A memory being imported.
#[derive(Debug, Clone)]
pub struct NewMemory {
    /// Its id (decided when the import job was created).
    pub id: Uuid,
    /// Owner.
    pub organization_id: Uuid,
    /// Display name.
    pub name: String,
    /// Lower-case base code of the source language.
    pub source_language: String,
    /// The TMX header as JSON.
    pub header: serde_json::Value,
}

/// Inserts the memory row of an import (in the import's transaction; its
/// targets and count are set by [`finish_import`]).
pub async fn insert(conn: &mut PgConnection, m: &NewMemory) -> Result<(), StorageError> {
    sqlx::query(
        "INSERT INTO translation_memories (id, organization_id, name, source_language,
             target_languages, header)
         VALUES ($1, $2, $3, $4, '{}', $5)",
    )
    .bind(m.id)
    .bind(m.organization_id)
    .bind(&m.name)
    .bind(&m.source_language)
    .bind(&m.header)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// The COPY statement whose rows [`copy_row`] writes.
pub const COPY_UNITS: &str = "COPY translation_memory_units (memory_id, unit_no, source_text, targets, unit, words) FROM STDIN";

/// Appends one unit to a COPY (text format) buffer. `targets_json` and
/// `unit_json` are JSON documents; `words` are [`words::keys`] of the source.
pub fn copy_row(
    out: &mut Vec<u8>,
    memory_id: &Uuid,
    unit_no: i32,
    source_text: &str,
    targets_json: &str,
    unit_json: &str,
    words: &[i32],
) {
    let mut id = Uuid::encode_buffer();
    out.extend_from_slice(memory_id.hyphenated().encode_lower(&mut id).as_bytes());
    out.push(b'\t');
    out.extend_from_slice(unit_no.to_string().as_bytes());
    out.push(b'\t');
    copy_escape(out, source_text);
    out.push(b'\t');
    copy_escape(out, targets_json);
    out.push(b'\t');
    copy_escape(out, unit_json);
    out.push(b'\t');
    words::array_literal(out, words);
    out.push(b'\n');
}

/// Escapes a value for COPY's text format.
fn copy_escape(out: &mut Vec<u8>, s: &str) {
    for &b in s.as_bytes() {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => out.push(b),
        }
    }
}

/// Fills `translation_memory_words` for a memory whose units were loaded (in
/// the import's transaction): the bigram keys found in at least two units,
/// with their counts. PostgreSQL aggregates (spilling to disk if it must), so
/// the importer keeps no per-key state whatever the file's size.
pub async fn count_keys(conn: &mut PgConnection, memory_id: Uuid) -> Result<u64, StorageError> {
    let res = sqlx::query(
        "INSERT INTO translation_memory_words (memory_id, word, df)
         SELECT $1, w, count(*) FROM translation_memory_units, unnest(words) AS w
         WHERE memory_id = $1 GROUP BY w HAVING count(*) > 1",
    )
    .bind(memory_id)
    .execute(&mut *conn)
    .await?;
    Ok(res.rows_affected())
}

/// Sets an imported memory's target languages and unit count.
pub async fn finish_import(
    conn: &mut PgConnection,
    id: Uuid,
    target_languages: &[String],
    segment_count: i64,
) -> Result<(), StorageError> {
    sqlx::query(
        "UPDATE translation_memories SET target_languages = $2, segment_count = $3, updated_at = now()
         WHERE id = $1",
    )
    .bind(id)
    .bind(target_languages)
    .bind(segment_count)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Every unit of a memory (JSON of `tolk_formats::tmx::Unit`), in order, read
/// as a stream. Run it on a connection in a REPEATABLE READ transaction
/// together with the memory's row for a consistent export.
pub fn units<'c>(
    conn: &'c mut PgConnection,
    memory_id: Uuid,
) -> BoxStream<'c, Result<String, StorageError>> {
    sqlx::query_scalar::<_, String>(
        "SELECT unit::text FROM translation_memory_units WHERE memory_id = $1 ORDER BY unit_no",
    )
    .bind(memory_id)
    .fetch(conn)
    .map_err(StorageError::from)
    .boxed()
}

/// A memory by id only (workers).
pub async fn get_any(conn: &mut PgConnection, id: Uuid) -> Result<Option<Memory>, StorageError> {
    Ok(sqlx::query_as::<_, Memory>(
        "SELECT id, organization_id, name, source_language, target_languages, segment_count,
                header, created_at, updated_at
         FROM translation_memories WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?)
}

/// A stored translation found for a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match {
    /// The target text stored.
    pub target_text: String,
    /// The stored source it was found by.
    pub source_text: String,
    /// The [`score`] (100 = exact).
    pub score: u8,
}

/// Rarest keys a fuzzy lookup reads, at most.
pub const MAX_RARE_KEYS: usize = 12;
/// Candidate units read for a fuzzy lookup, at most.
pub const FUZZY_CANDIDATES: i64 = 200;
/// Candidates scored in Rust (the most trigram-similar of those read).
pub const FUZZY_SCORED: i64 = 10;

/// The best stored translation into `target_language` for `text` scoring at
/// least `threshold` (see [`score::score`]).
///
/// 1. Exact: the btree index on `(memory_id, md5(source_text))`.
/// 2. Fuzzy, by word bigrams ([`words::keys`]): a unit reaching the threshold
///    differs from the text in at most `k = ⌊n × (100 − threshold) / 100⌋` of
///    its `n` words, so in at most `2k` of its bigrams; it therefore contains
///    at least one of any `2k + 1` of the text's bigrams. The `2k + 1` rarest
///    (frequencies from `translation_memory_words`, which lists the bigrams
///    seen at least twice; the others count as 1; at most [`MAX_RARE_KEYS`])
///    are looked up in the GIN index. Up to [`FUZZY_CANDIDATES`] such units
///    whose length can reach the threshold are ranked by pg_trgm's
///    `similarity()` and the [`FUZZY_SCORED`] best are scored.
pub async fn lookup(
    pool: &PgPool,
    memory_id: Uuid,
    target_language: &str,
    text: &str,
    threshold: u8,
) -> Result<Option<Match>, StorageError> {
    let exact: Option<String> = sqlx::query_scalar(
        "SELECT targets ->> $3 FROM translation_memory_units
         WHERE memory_id = $1 AND md5(source_text) = md5($2) AND source_text = $2
           AND targets ? $3
         ORDER BY unit_no LIMIT 1",
    )
    .bind(memory_id)
    .bind(text)
    .bind(target_language)
    .fetch_optional(pool)
    .await?;
    if let Some(target_text) = exact {
        return Ok(Some(Match {
            target_text,
            source_text: text.to_owned(),
            score: 100,
        }));
    }
    if threshold >= 100 || !score::can_reach(text, threshold) {
        return Ok(None);
    }
    let tokens = words::tokens(text);
    let keys = words::keys_of(&tokens);
    if keys.is_empty() {
        return Ok(None);
    }
    let t = usize::from(threshold.max(1));
    let changed_words = tokens.len() * (100 - t) / 100;
    let budget = if tokens.len() > 1 {
        2 * changed_words
    } else {
        changed_words
    };
    // Frequencies of the keys seen at least twice; the others count as 1
    // (seen once, or not at all).
    let frequent: Vec<(i32, i32)> = sqlx::query_as(
        "SELECT word, df FROM translation_memory_words WHERE memory_id = $1 AND word = ANY($2)",
    )
    .bind(memory_id)
    .bind(&keys)
    .fetch_all(pool)
    .await?;
    let df: std::collections::HashMap<i32, i32> = frequent.into_iter().collect();
    let mut ranked: Vec<(i32, i32)> = keys
        .iter()
        .map(|k| (df.get(k).copied().unwrap_or(1), *k))
        .collect();
    ranked.sort_unstable();
    let pick = (budget + 1).min(ranked.len()).min(MAX_RARE_KEYS);
    let rare: Vec<i32> = ranked[..pick].iter().map(|(_, k)| *k).collect();
    let len = text.chars().count();
    let min_len = i32::try_from(len * t / 100).unwrap_or(i32::MAX);
    let max_len = i32::try_from((len * 100).div_ceil(t)).unwrap_or(i32::MAX);
    let candidates: Vec<(String, String)> = sqlx::query_as(
        "SELECT source_text, target_text FROM (
             SELECT u.unit_no, u.source_text, u.targets ->> $3 AS target_text
             FROM translation_memory_units u
             WHERE u.memory_id = $1 AND u.words && $2::int4[] AND u.targets ? $3
               AND length(u.source_text) BETWEEN $5 AND $6
             LIMIT $7) c
         ORDER BY similarity(source_text, $4) DESC, unit_no LIMIT $8",
    )
    .bind(memory_id)
    .bind(&rare)
    .bind(target_language)
    .bind(text)
    .bind(min_len)
    .bind(max_len)
    .bind(FUZZY_CANDIDATES)
    .bind(FUZZY_SCORED)
    .fetch_all(pool)
    .await?;
    // The first best candidate (the most trigram-similar among equal scores).
    Ok(candidates
        .into_iter()
        .rev()
        .map(|(source_text, target_text)| {
            let s = score::score(text, &source_text);
            Match {
                target_text,
                source_text,
                score: s,
            }
        })
        .filter(|m| m.score >= threshold)
        .max_by_key(|m| m.score))
}

/// The memory a document job applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentMemory {
    /// The memory.
    pub memory_id: Uuid,
    /// Its target language serving the document's target language.
    pub target_language: String,
    /// Minimum score applied.
    pub threshold: u8,
}

/// Records the memory of a document (in the upload's transaction).
pub async fn attach_to_document(
    conn: &mut PgConnection,
    document_id: &str,
    m: &DocumentMemory,
) -> Result<(), StorageError> {
    sqlx::query(
        "INSERT INTO document_translation_memories (document_id, memory_id, target_language, threshold)
         VALUES ($1, $2, $3, $4)",
    )
    .bind(document_id)
    .bind(m.memory_id)
    .bind(&m.target_language)
    .bind(i16::from(m.threshold))
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// The memory a document applies, if any.
pub async fn for_document(
    pool: &PgPool,
    document_id: &str,
) -> Result<Option<DocumentMemory>, StorageError> {
    let row: Option<(Uuid, String, i16)> = sqlx::query_as(
        "SELECT memory_id, target_language, threshold FROM document_translation_memories
         WHERE document_id = $1",
    )
    .bind(document_id)
    .fetch_optional(pool)
    .await?;
    Ok(
        row.map(|(memory_id, target_language, threshold)| DocumentMemory {
            memory_id,
            target_language,
            threshold: u8::try_from(threshold).unwrap_or(100),
        }),
    )
}
