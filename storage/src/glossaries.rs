//! Glossaries (tables `glossaries` and `glossary_dictionaries`): v2 single-pair
//! and v3 multilingual glossaries of an organization. Languages are lower-case
//! DeepL base codes; entries are kept in their order as two parallel arrays.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use crate::StorageError;

/// The entries of one language pair, as validated by the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDictionary {
    /// Lower-case DeepL base code of the source language.
    pub source_lang: String,
    /// Lower-case DeepL base code of the target language.
    pub target_lang: String,
    /// Source terms, in order, unique.
    pub sources: Vec<String>,
    /// Target terms, `targets[i]` for `sources[i]`.
    pub targets: Vec<String>,
}

impl NewDictionary {
    /// UTF-8 bytes of all terms.
    pub fn size_bytes(&self) -> i64 {
        self.sources
            .iter()
            .chain(&self.targets)
            .map(|t| t.len() as i64)
            .sum()
    }
}

/// Meta information of one dictionary (no entries).
#[derive(Debug, Clone)]
pub struct DictionaryInfo {
    /// Source language code.
    pub source_lang: String,
    /// Target language code.
    pub target_lang: String,
    /// Number of entries.
    pub entry_count: i32,
    /// When this dictionary was created or last replaced.
    pub created_at: DateTime<Utc>,
}

/// A glossary with the meta information of its dictionaries.
#[derive(Debug, Clone)]
pub struct Glossary {
    /// Glossary id.
    pub id: Uuid,
    /// Name.
    pub name: String,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Dictionaries, ordered by language pair.
    pub dictionaries: Vec<DictionaryInfo>,
}

/// The entries of one dictionary.
#[derive(Debug, Clone)]
pub struct Entries {
    /// Source language code.
    pub source_lang: String,
    /// Target language code.
    pub target_lang: String,
    /// Source terms.
    pub sources: Vec<String>,
    /// Target terms.
    pub targets: Vec<String>,
}

/// Why a write was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The organization already has the maximum number of glossaries.
    TooManyGlossaries,
    /// The glossary would exceed the size limit.
    TooLarge,
    /// No such glossary (for this organization).
    NotFound,
}

/// Creates a glossary with its dictionaries, unless the organization already
/// has `max_glossaries` glossaries or the entries exceed `max_bytes`.
pub async fn create(
    pool: &PgPool,
    organization_id: Uuid,
    name: &str,
    dictionaries: &[NewDictionary],
    max_glossaries: i64,
    max_bytes: i64,
) -> Result<Result<Glossary, Refusal>, StorageError> {
    if dictionaries
        .iter()
        .map(NewDictionary::size_bytes)
        .sum::<i64>()
        > max_bytes
    {
        return Ok(Err(Refusal::TooLarge));
    }
    let mut tx = pool.begin().await?;
    // Serializes creations of one organization, so the count below is exact.
    sqlx::query!(
        "SELECT id FROM organizations WHERE id = $1 FOR UPDATE",
        organization_id
    )
    .fetch_optional(&mut *tx)
    .await?;
    let count = sqlx::query_scalar!(
        r#"SELECT count(*) AS "n!" FROM glossaries WHERE organization_id = $1"#,
        organization_id
    )
    .fetch_one(&mut *tx)
    .await?;
    if count >= max_glossaries {
        return Ok(Err(Refusal::TooManyGlossaries));
    }
    let id = Uuid::new_v4();
    sqlx::query!(
        "INSERT INTO glossaries (id, organization_id, name) VALUES ($1, $2, $3)",
        id,
        organization_id,
        name
    )
    .execute(&mut *tx)
    .await?;
    for d in dictionaries {
        upsert_in(&mut tx, id, d).await?;
    }
    tx.commit().await?;
    Ok(get(pool, organization_id, id)
        .await?
        .ok_or(Refusal::NotFound))
}

async fn upsert_in(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    glossary_id: Uuid,
    d: &NewDictionary,
) -> Result<(), StorageError> {
    sqlx::query!(
        r#"INSERT INTO glossary_dictionaries
               (glossary_id, source_lang, target_lang, sources, targets, size_bytes)
           VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (glossary_id, source_lang, target_lang) DO UPDATE
           SET sources = EXCLUDED.sources, targets = EXCLUDED.targets,
               size_bytes = EXCLUDED.size_bytes, created_at = now()"#,
        glossary_id,
        d.source_lang,
        d.target_lang,
        &d.sources,
        &d.targets,
        d.size_bytes()
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// All glossaries of an organization, oldest first.
pub async fn list(pool: &PgPool, organization_id: Uuid) -> Result<Vec<Glossary>, StorageError> {
    let rows = sqlx::query!(
        r#"SELECT g.id, g.name, g.created_at,
                  d.source_lang AS "source_lang?", d.target_lang AS "target_lang?",
                  cardinality(d.sources) AS "entry_count?", d.created_at AS "dict_created_at?"
           FROM glossaries g
           LEFT JOIN glossary_dictionaries d ON d.glossary_id = g.id
           WHERE g.organization_id = $1
           ORDER BY g.created_at, g.id, d.position"#,
        organization_id
    )
    .fetch_all(pool)
    .await?;
    let mut out: Vec<Glossary> = Vec::new();
    for r in rows {
        if out.last().is_none_or(|g| g.id != r.id) {
            out.push(Glossary {
                id: r.id,
                name: r.name,
                created_at: r.created_at,
                dictionaries: Vec::new(),
            });
        }
        if let (Some(s), Some(t), Some(n), Some(c), Some(g)) = (
            r.source_lang,
            r.target_lang,
            r.entry_count,
            r.dict_created_at,
            out.last_mut(),
        ) {
            g.dictionaries.push(DictionaryInfo {
                source_lang: s,
                target_lang: t,
                entry_count: n,
                created_at: c,
            });
        }
    }
    Ok(out)
}

/// One glossary of an organization; `None` when unknown or another's.
pub async fn get(
    pool: &PgPool,
    organization_id: Uuid,
    id: Uuid,
) -> Result<Option<Glossary>, StorageError> {
    let Some(g) = sqlx::query!(
        "SELECT id, name, created_at FROM glossaries WHERE id = $1 AND organization_id = $2",
        id,
        organization_id
    )
    .fetch_optional(pool)
    .await?
    else {
        return Ok(None);
    };
    let dictionaries = sqlx::query_as!(
        DictionaryInfo,
        r#"SELECT source_lang, target_lang, cardinality(sources) AS "entry_count!", created_at
           FROM glossary_dictionaries WHERE glossary_id = $1
           ORDER BY position"#,
        id
    )
    .fetch_all(pool)
    .await?;
    Ok(Some(Glossary {
        id: g.id,
        name: g.name,
        created_at: g.created_at,
        dictionaries,
    }))
}

/// The entries of a glossary's dictionaries, all of them or only the pair
/// given; `None` when the glossary is unknown or another organization's.
pub async fn entries(
    pool: &PgPool,
    organization_id: Uuid,
    id: Uuid,
    pair: Option<(&str, &str)>,
) -> Result<Option<Vec<Entries>>, StorageError> {
    if get_exists(pool, organization_id, id).await?.is_none() {
        return Ok(None);
    }
    let (s, t) = pair.unzip();
    Ok(Some(
        sqlx::query_as!(
            Entries,
            r#"SELECT source_lang, target_lang, sources, targets FROM glossary_dictionaries
               WHERE glossary_id = $1
                 AND ($2::text IS NULL OR source_lang = $2)
                 AND ($3::text IS NULL OR target_lang = $3)
               ORDER BY position"#,
            id,
            s,
            t
        )
        .fetch_all(pool)
        .await?,
    ))
}

async fn get_exists(
    pool: &PgPool,
    organization_id: Uuid,
    id: Uuid,
) -> Result<Option<Uuid>, StorageError> {
    Ok(sqlx::query_scalar!(
        "SELECT id FROM glossaries WHERE id = $1 AND organization_id = $2",
        id,
        organization_id
    )
    .fetch_optional(pool)
    .await?)
}

/// Deletes a glossary; false when unknown or another organization's.
pub async fn delete(pool: &PgPool, organization_id: Uuid, id: Uuid) -> Result<bool, StorageError> {
    let done = sqlx::query!(
        "DELETE FROM glossaries WHERE id = $1 AND organization_id = $2",
        id,
        organization_id
    )
    .execute(pool)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Edits a glossary: a new name and/or dictionaries. With `merge`, entries of
/// an existing pair are merged (a given source term replaces the old entry,
/// new ones are appended); without, the pair's dictionary is replaced.
pub async fn update(
    pool: &PgPool,
    organization_id: Uuid,
    id: Uuid,
    name: Option<&str>,
    dictionaries: &[NewDictionary],
    merge: bool,
    max_bytes: i64,
) -> Result<Result<Glossary, Refusal>, StorageError> {
    let mut tx = pool.begin().await?;
    let found = sqlx::query_scalar!(
        "SELECT id FROM glossaries WHERE id = $1 AND organization_id = $2 FOR UPDATE",
        id,
        organization_id
    )
    .fetch_optional(&mut *tx)
    .await?;
    if found.is_none() {
        return Ok(Err(Refusal::NotFound));
    }
    // Every change bumps the version (API replicas cache terms keyed by it).
    sqlx::query!(
        "UPDATE glossaries SET name = COALESCE($2, name), version = version + 1 WHERE id = $1",
        id,
        name
    )
    .execute(&mut *tx)
    .await?;
    for d in dictionaries {
        let mut d = d.clone();
        if merge {
            let old = sqlx::query!(
                r#"SELECT sources, targets FROM glossary_dictionaries
                   WHERE glossary_id = $1 AND source_lang = $2 AND target_lang = $3"#,
                id,
                d.source_lang,
                d.target_lang
            )
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(old) = old {
                d = merged(old.sources, old.targets, d);
            }
        }
        upsert_in(&mut tx, id, &d).await?;
    }
    let size = sqlx::query_scalar!(
        r#"SELECT coalesce(sum(size_bytes), 0)::bigint AS "n!" FROM glossary_dictionaries
           WHERE glossary_id = $1"#,
        id
    )
    .fetch_one(&mut *tx)
    .await?;
    if size > max_bytes {
        return Ok(Err(Refusal::TooLarge));
    }
    tx.commit().await?;
    Ok(get(pool, organization_id, id)
        .await?
        .ok_or(Refusal::NotFound))
}

/// Old entries updated by the new ones (same source: new target), new sources appended.
fn merged(sources: Vec<String>, targets: Vec<String>, new: NewDictionary) -> NewDictionary {
    let mut out = NewDictionary {
        source_lang: new.source_lang,
        target_lang: new.target_lang,
        sources,
        targets,
    };
    for (s, t) in new.sources.into_iter().zip(new.targets) {
        match out.sources.iter().position(|o| *o == s) {
            Some(i) => out.targets[i] = t,
            None => {
                out.sources.push(s);
                out.targets.push(t);
            }
        }
    }
    out
}

/// Deletes one dictionary; `None` when the glossary is unknown, else whether
/// the pair existed.
pub async fn delete_dictionary(
    pool: &PgPool,
    organization_id: Uuid,
    id: Uuid,
    source_lang: &str,
    target_lang: &str,
) -> Result<Option<bool>, StorageError> {
    let mut tx = pool.begin().await?;
    let bumped = sqlx::query_scalar!(
        "UPDATE glossaries SET version = version + 1 WHERE id = $1 AND organization_id = $2 RETURNING id",
        id,
        organization_id
    )
    .fetch_optional(&mut *tx)
    .await?;
    if bumped.is_none() {
        return Ok(None);
    }
    let done = sqlx::query!(
        r#"DELETE FROM glossary_dictionaries
           WHERE glossary_id = $1 AND source_lang = $2 AND target_lang = $3"#,
        id,
        source_lang,
        target_lang
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Some(done.rows_affected() > 0))
}

/// The current versions of the organization's glossaries among `ids` (a
/// missing glossary is absent from the answer). Every change to a glossary
/// bumps its version.
pub async fn versions(
    pool: &PgPool,
    organization_id: Uuid,
    ids: &[Uuid],
) -> Result<Vec<(Uuid, i64)>, StorageError> {
    Ok(sqlx::query!(
        "SELECT id, version FROM glossaries WHERE organization_id = $1 AND id = ANY($2)",
        organization_id,
        ids
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|r| (r.id, r.version))
    .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_replaces_and_appends() {
        let new = NewDictionary {
            source_lang: "en".into(),
            target_lang: "de".into(),
            sources: vec!["b".into(), "c".into()],
            targets: vec!["B2".into(), "C".into()],
        };
        let m = merged(
            vec!["a".into(), "b".into()],
            vec!["A".into(), "B".into()],
            new,
        );
        assert_eq!(m.sources, ["a", "b", "c"]);
        assert_eq!(m.targets, ["A", "B2", "C"]);
        assert_eq!(m.size_bytes(), 1 + 1 + 1 + 1 + 2 + 1);
    }
}
