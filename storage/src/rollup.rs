//! The usage rollup (tables `usage_key_day`, `usage_key_month`, `usage_tag_day`,
//! `usage_rollup_state`), maintained by the scheduler.
//!
//! Every ledger entry carries the 64-bit id of the transaction that appended it
//! (`usage_events.tx`). A round takes `xmin`, the oldest transaction id still
//! running: every transaction below it has ended, so every entry with
//! `tx < xmin` is visible now and no new one can appear. The round adds the
//! entries with `watermark <= tx < xmin` to the rollup and moves the watermark to
//! `xmin`, in one transaction. Readers take the rollup plus the entries with
//! `tx >= watermark` in one snapshot, which is therefore exactly the ledger.

use sqlx::PgPool;

use crate::StorageError;

/// What one round did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RollupRound {
    /// Ledger entries added to the rollup.
    pub entries: i64,
    /// The new watermark.
    pub watermark: i64,
}

/// Adds every ledger entry that can no longer change to the rollup.
pub async fn roll_up(pool: &PgPool) -> Result<RollupRound, StorageError> {
    let mut tx = pool.begin().await?;
    let old = sqlx::query_scalar!("SELECT watermark FROM usage_rollup_state FOR UPDATE")
        .fetch_one(&mut *tx)
        .await?;
    let new = sqlx::query_scalar!(
        r#"SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS "xmin!""#
    )
    .fetch_one(&mut *tx)
    .await?;
    if new <= old {
        tx.commit().await?;
        return Ok(RollupRound {
            entries: 0,
            watermark: old,
        });
    }
    let entries = roll_days(&mut tx, old, new).await?;
    roll_months(&mut tx, old, new).await?;
    roll_tags(&mut tx, old, new).await?;
    sqlx::query!(
        "UPDATE usage_rollup_state SET watermark = $1, rolled_up_at = now()",
        new
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(RollupRound {
        entries,
        watermark: new,
    })
}

/// Adds the ledger entries of transactions `old..new` to the rollup by key
/// and day; how many there were.
async fn roll_days(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    old: i64,
    new: i64,
) -> Result<i64, StorageError> {
    let entries = sqlx::query_scalar!(
        r#"WITH batch AS (
             SELECT organization_id, api_key_id, (created_at AT TIME ZONE 'UTC')::date AS day,
                    COALESCE(sum(amount) FILTER (WHERE kind = 'text_translation_characters'), 0) AS t,
                    COALESCE(sum(amount) FILTER (WHERE kind = 'document_translation_characters'), 0) AS d,
                    COALESCE(sum(amount) FILTER (WHERE kind = 'text_improvement_characters'), 0) AS i,
                    COALESCE(sum(amount) FILTER (WHERE kind = 'speech_to_text_milliseconds'), 0) AS stt,
                    COALESCE(sum(amount) FILTER (WHERE kind = 'speech_to_speech_milliseconds'), 0) AS sts,
                    COALESCE(sum(amount) FILTER (WHERE kind = 'text_to_speech_characters'), 0) AS tts,
                    count(*) AS n
             FROM usage_events WHERE tx >= $1 AND tx < $2
             GROUP BY 1, 2, 3
           ), ins AS (
             INSERT INTO usage_key_day AS u (organization_id, api_key_id, day,
                 text_translation_characters, document_translation_characters,
                 text_improvement_characters, speech_to_text_milliseconds,
                 speech_to_speech_milliseconds, text_to_speech_characters, entries)
             SELECT organization_id, api_key_id, day, t, d, i, stt, sts, tts, n FROM batch
             ON CONFLICT (organization_id, api_key_id, day) DO UPDATE SET
                 text_translation_characters = u.text_translation_characters + EXCLUDED.text_translation_characters,
                 document_translation_characters = u.document_translation_characters + EXCLUDED.document_translation_characters,
                 text_improvement_characters = u.text_improvement_characters + EXCLUDED.text_improvement_characters,
                 speech_to_text_milliseconds = u.speech_to_text_milliseconds + EXCLUDED.speech_to_text_milliseconds,
                 speech_to_speech_milliseconds = u.speech_to_speech_milliseconds + EXCLUDED.speech_to_speech_milliseconds,
                 text_to_speech_characters = u.text_to_speech_characters + EXCLUDED.text_to_speech_characters,
                 entries = u.entries + EXCLUDED.entries
             RETURNING 1
           )
           SELECT COALESCE(sum(n), 0)::bigint AS "n!" FROM batch"#,
        old,
        new
    )
    .fetch_one(&mut **tx)
    .await?;
    Ok(entries)
}

/// Rebuilds the month rollup of the months the entries of `old..new`
/// touched, from the day rollup just updated.
async fn roll_months(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    old: i64,
    new: i64,
) -> Result<(), StorageError> {
    sqlx::query!(
        r#"WITH touched AS (
             SELECT DISTINCT organization_id, api_key_id,
                    date_trunc('month', created_at AT TIME ZONE 'UTC')::date AS month
             FROM usage_events WHERE tx >= $1 AND tx < $2
           )
           INSERT INTO usage_key_month AS m (organization_id, api_key_id, month, days, figures)
           SELECT t.organization_id, t.api_key_id, t.month,
                  string_agg(set_byte('\x00'::bytea, 0, extract(day FROM k.day)::int), ''::bytea
                             ORDER BY k.day),
                  string_agg(int8send(k.text_translation_characters)
                             || int8send(k.document_translation_characters)
                             || int8send(k.text_improvement_characters)
                             || int8send(k.speech_to_text_milliseconds)
                             || int8send(k.speech_to_speech_milliseconds)
                             || int8send(k.text_to_speech_characters), ''::bytea ORDER BY k.day)
           FROM touched t
           JOIN usage_key_day k ON k.organization_id = t.organization_id
                AND k.api_key_id = t.api_key_id
                AND k.day >= t.month AND k.day < (t.month + interval '1 month')::date
           GROUP BY 1, 2, 3
           ON CONFLICT (organization_id, api_key_id, month) DO UPDATE SET
               days = EXCLUDED.days, figures = EXCLUDED.figures"#,
        old,
        new
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Adds the tagged ledger entries of `old..new` to the rollup by tag and day.
async fn roll_tags(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    old: i64,
    new: i64,
) -> Result<(), StorageError> {
    sqlx::query!(
        r#"WITH batch AS (
             SELECT organization_id, custom_tag, (created_at AT TIME ZONE 'UTC')::date AS day,
                    COALESCE(sum(amount) FILTER (WHERE kind = 'text_translation_characters'), 0) AS t,
                    COALESCE(sum(amount) FILTER (WHERE kind = 'document_translation_characters'), 0) AS d,
                    COALESCE(sum(amount) FILTER (WHERE kind = 'text_improvement_characters'), 0) AS i,
                    COALESCE(sum(amount) FILTER (WHERE kind = 'speech_to_text_milliseconds'), 0) AS stt,
                    COALESCE(sum(amount) FILTER (WHERE kind = 'speech_to_speech_milliseconds'), 0) AS sts,
                    COALESCE(sum(amount) FILTER (WHERE kind = 'text_to_speech_characters'), 0) AS tts,
                    count(*) AS n
             FROM usage_events WHERE tx >= $1 AND tx < $2 AND custom_tag IS NOT NULL
             GROUP BY 1, 2, 3
           )
           INSERT INTO usage_tag_day AS u (organization_id, custom_tag, day,
               text_translation_characters, document_translation_characters,
               text_improvement_characters, speech_to_text_milliseconds,
               speech_to_speech_milliseconds, text_to_speech_characters, entries)
           SELECT organization_id, custom_tag, day, t, d, i, stt, sts, tts, n FROM batch
           ON CONFLICT (organization_id, custom_tag, day) DO UPDATE SET
               text_translation_characters = u.text_translation_characters + EXCLUDED.text_translation_characters,
               document_translation_characters = u.document_translation_characters + EXCLUDED.document_translation_characters,
               text_improvement_characters = u.text_improvement_characters + EXCLUDED.text_improvement_characters,
               speech_to_text_milliseconds = u.speech_to_text_milliseconds + EXCLUDED.speech_to_text_milliseconds,
               speech_to_speech_milliseconds = u.speech_to_speech_milliseconds + EXCLUDED.speech_to_speech_milliseconds,
                 text_to_speech_characters = u.text_to_speech_characters + EXCLUDED.text_to_speech_characters,
               entries = u.entries + EXCLUDED.entries"#,
        old,
        new
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}
