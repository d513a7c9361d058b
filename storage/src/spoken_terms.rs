//! Spoken terms: named collections of term lists (one per language) that
//! bias speech recognition. An organization's own; listed oldest first, lists
//! in the order given.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use crate::StorageError;

/// A collection with its lists.
#[derive(Debug, Clone, PartialEq)]
pub struct SpokenTerms {
    /// Its id.
    pub id: Uuid,
    /// Its name.
    pub name: String,
    /// Its keyword-spotting threshold, when it sets one (else the
    /// recogniser's default).
    pub keyword_threshold: Option<f64>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// Its lists, in the order given.
    pub lists: Vec<TermList>,
}

/// One language's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermList {
    /// ISO 639-1 code, lower case.
    pub lang: String,
    /// The terms, in order.
    pub terms: Vec<String>,
}

/// Creates a collection with its lists.
pub async fn create(
    pool: &PgPool,
    organization_id: Uuid,
    name: &str,
    keyword_threshold: Option<f64>,
    lists: &[TermList],
) -> Result<SpokenTerms, StorageError> {
    let id = Uuid::new_v4();
    let mut tx = pool.begin().await?;
    sqlx::query!(
        "INSERT INTO spoken_terms (id, organization_id, name, keyword_threshold)
         VALUES ($1, $2, $3, $4)",
        id,
        organization_id,
        name,
        keyword_threshold
    )
    .execute(&mut *tx)
    .await?;
    for list in lists {
        put_in(&mut tx, id, list).await?;
    }
    tx.commit().await?;
    Ok(SpokenTerms {
        id,
        name: name.to_owned(),
        keyword_threshold,
        created_at: Utc::now(),
        lists: lists.to_vec(),
    })
}

async fn put_in(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    id: Uuid,
    list: &TermList,
) -> Result<(), StorageError> {
    sqlx::query!(
        r#"INSERT INTO spoken_term_lists (spoken_terms_id, lang, terms) VALUES ($1, $2, $3)
           ON CONFLICT (spoken_terms_id, lang) DO UPDATE SET terms = EXCLUDED.terms"#,
        id,
        list.lang,
        &list.terms
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The collections of an organization, oldest first.
pub async fn list(pool: &PgPool, organization_id: Uuid) -> Result<Vec<SpokenTerms>, StorageError> {
    let ids = sqlx::query_scalar!(
        "SELECT id FROM spoken_terms WHERE organization_id = $1 ORDER BY created_at, id",
        organization_id
    )
    .fetch_all(pool)
    .await?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(s) = get(pool, organization_id, id).await? {
            out.push(s);
        }
    }
    Ok(out)
}

/// One collection; `None` when unknown or another organization's.
pub async fn get(
    pool: &PgPool,
    organization_id: Uuid,
    id: Uuid,
) -> Result<Option<SpokenTerms>, StorageError> {
    let Some(row) = sqlx::query!(
        "SELECT id, name, keyword_threshold, created_at FROM spoken_terms
         WHERE id = $1 AND organization_id = $2",
        id,
        organization_id
    )
    .fetch_optional(pool)
    .await?
    else {
        return Ok(None);
    };
    let lists = sqlx::query_as!(
        TermList,
        "SELECT lang, terms FROM spoken_term_lists WHERE spoken_terms_id = $1 ORDER BY position",
        id
    )
    .fetch_all(pool)
    .await?;
    Ok(Some(SpokenTerms {
        id: row.id,
        name: row.name,
        keyword_threshold: row.keyword_threshold,
        created_at: row.created_at,
        lists,
    }))
}

/// Renames a collection, sets its threshold (`Some(None)` clears it) and
/// merges lists into it (a list replaces the one of its language); `None`
/// when unknown or another organization's.
pub async fn update(
    pool: &PgPool,
    organization_id: Uuid,
    id: Uuid,
    (name, keyword_threshold): (Option<&str>, Option<Option<f64>>),
    lists: &[TermList],
) -> Result<Option<SpokenTerms>, StorageError> {
    let mut tx = pool.begin().await?;
    let found = sqlx::query_scalar!(
        r#"UPDATE spoken_terms SET name = COALESCE($3, name),
               keyword_threshold = CASE WHEN $4 THEN $5 ELSE keyword_threshold END
           WHERE id = $1 AND organization_id = $2 RETURNING id"#,
        id,
        organization_id,
        name,
        keyword_threshold.is_some(),
        keyword_threshold.flatten()
    )
    .fetch_optional(&mut *tx)
    .await?;
    if found.is_none() {
        return Ok(None);
    }
    for list in lists {
        put_in(&mut tx, id, list).await?;
    }
    tx.commit().await?;
    get(pool, organization_id, id).await
}

/// Deletes a collection; false when unknown or another organization's.
pub async fn delete(pool: &PgPool, organization_id: Uuid, id: Uuid) -> Result<bool, StorageError> {
    let done = sqlx::query!(
        "DELETE FROM spoken_terms WHERE id = $1 AND organization_id = $2",
        id,
        organization_id
    )
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Deletes one language's list; `None` when the collection is unknown, else
/// whether the list existed.
pub async fn delete_list(
    pool: &PgPool,
    organization_id: Uuid,
    id: Uuid,
    lang: &str,
) -> Result<Option<bool>, StorageError> {
    if get(pool, organization_id, id).await?.is_none() {
        return Ok(None);
    }
    let done = sqlx::query!(
        "DELETE FROM spoken_term_lists WHERE spoken_terms_id = $1 AND lang = $2",
        id,
        lang
    )
    .execute(pool)
    .await?;
    Ok(Some(done.rows_affected() == 1))
}
