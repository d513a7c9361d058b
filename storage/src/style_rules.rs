//! Style rule lists (table `style_rules`) of an organization. The configured
//! rules are a jsonb object (category → rule → option) and the custom
//! instructions a jsonb array of `{id, label, prompt, source_language?}`,
//! both validated by the caller. Every change bumps `version` and
//! `updated_at`.

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

use crate::StorageError;

/// A stored style rule list.
#[derive(Debug, Clone)]
pub struct StyleRuleList {
    /// Id.
    pub id: Uuid,
    /// Name.
    pub name: String,
    /// Language: a root (`en`) or a variant (`en-GB`).
    pub language: String,
    /// Incremented on every change.
    pub version: i32,
    /// Category → rule → option.
    pub configured_rules: Value,
    /// Array of `{id, label, prompt, source_language?}`.
    pub custom_instructions: Value,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

/// Creates a list.
pub async fn create(
    pool: &PgPool,
    organization_id: Uuid,
    name: &str,
    language: &str,
    configured_rules: &Value,
    custom_instructions: &Value,
) -> Result<StyleRuleList, StorageError> {
    Ok(sqlx::query_as!(
        StyleRuleList,
        r#"INSERT INTO style_rules (id, organization_id, name, language, configured_rules, custom_instructions)
           VALUES ($1, $2, $3, $4, $5, $6)
           RETURNING id, name, language, version, configured_rules, custom_instructions,
                     created_at, updated_at"#,
        Uuid::new_v4(),
        organization_id,
        name,
        language,
        configured_rules,
        custom_instructions
    )
    .fetch_one(pool)
    .await?)
}

/// One page of the organization's lists, oldest first.
pub async fn list(
    pool: &PgPool,
    organization_id: Uuid,
    offset: i64,
    limit: i64,
) -> Result<Vec<StyleRuleList>, StorageError> {
    Ok(sqlx::query_as!(
        StyleRuleList,
        r#"SELECT id, name, language, version, configured_rules, custom_instructions,
                  created_at, updated_at
           FROM style_rules WHERE organization_id = $1
           ORDER BY created_at, id OFFSET $2 LIMIT $3"#,
        organization_id,
        offset,
        limit
    )
    .fetch_all(pool)
    .await?)
}

/// A list; `None` when unknown or another organization's.
pub async fn get(
    pool: &PgPool,
    organization_id: Uuid,
    id: Uuid,
) -> Result<Option<StyleRuleList>, StorageError> {
    Ok(sqlx::query_as!(
        StyleRuleList,
        r#"SELECT id, name, language, version, configured_rules, custom_instructions,
                  created_at, updated_at
           FROM style_rules WHERE id = $1 AND organization_id = $2"#,
        id,
        organization_id
    )
    .fetch_optional(pool)
    .await?)
}

/// Changes the name and/or the configured rules; `None` when unknown.
pub async fn update(
    pool: &PgPool,
    organization_id: Uuid,
    id: Uuid,
    name: Option<&str>,
    configured_rules: Option<&Value>,
) -> Result<Option<StyleRuleList>, StorageError> {
    Ok(sqlx::query_as!(
        StyleRuleList,
        r#"UPDATE style_rules
           SET name = COALESCE($3, name),
               configured_rules = COALESCE($4, configured_rules),
               version = version + 1, updated_at = now()
           WHERE id = $1 AND organization_id = $2
           RETURNING id, name, language, version, configured_rules, custom_instructions,
                     created_at, updated_at"#,
        id,
        organization_id,
        name,
        configured_rules
    )
    .fetch_optional(pool)
    .await?)
}

/// Edits the custom instructions under a row lock: `edit` gets the array and
/// returns what the caller wants back, or `None` to change nothing (for
/// example an unknown instruction). `Ok(None)` when the list is unknown.
pub async fn edit_instructions<R>(
    pool: &PgPool,
    organization_id: Uuid,
    id: Uuid,
    edit: impl FnOnce(&mut Vec<Value>) -> Option<R>,
) -> Result<Option<Option<R>>, StorageError> {
    let mut tx = pool.begin().await?;
    let Some(current) = sqlx::query_scalar!(
        "SELECT custom_instructions FROM style_rules WHERE id = $1 AND organization_id = $2 FOR UPDATE",
        id,
        organization_id
    )
    .fetch_optional(&mut *tx)
    .await?
    else {
        return Ok(None);
    };
    let mut items = match current {
        Value::Array(a) => a,
        _ => Vec::new(),
    };
    let Some(out) = edit(&mut items) else {
        return Ok(Some(None));
    };
    sqlx::query!(
        r#"UPDATE style_rules SET custom_instructions = $2, version = version + 1, updated_at = now()
           WHERE id = $1"#,
        id,
        Value::Array(items)
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Some(Some(out)))
}

/// Deletes a list; false when unknown or another organization's.
pub async fn delete(pool: &PgPool, organization_id: Uuid, id: Uuid) -> Result<bool, StorageError> {
    let done = sqlx::query!(
        "DELETE FROM style_rules WHERE id = $1 AND organization_id = $2",
        id,
        organization_id
    )
    .execute(pool)
    .await?;
    Ok(done.rows_affected() > 0)
}
