//! Per-key usage limits, checked atomically (tables `usage_holds`, `api_keys`).
//!
//! A key's usage in the current period (the UTC calendar month, as DeepL's
//! "one-month usage period") is read from the rollup plus the ledger entries
//! the rollup has not reached yet, in one statement (one snapshot), so it always
//! equals the ledger.
//!
//! A request against a key with a limit first *reserves* its amount: under a
//! row lock on the key (`FOR NO KEY UPDATE`, so ledger inserts of the key are
//! not blocked) it counts usage + the holds of requests still in flight and, if
//! the amount fits, inserts a hold and commits. When the request has succeeded,
//! [`settle`] appends the ledger entry and deletes the hold in one transaction;
//! on failure [`release`] deletes the hold. So concurrent requests can never
//! together pass the limit: **the bound on overshoot is 0** for amounts known
//! before the work starts (text translation, speech by declared duration). A
//! hold left by a crashed process counts until it expires
//! ([`HOLD_TTL`](HOLD_TTL)), which can only refuse, never over-admit.
//!
//! Keys without a limit take no lock and write no hold: their only metering
//! cost is the ledger insert.

use std::time::Duration;

use sqlx::{PgConnection, PgPool};

use crate::StorageError;
use crate::keys::{ApiKey, Limits};
use crate::usage::{self, UsageEvent, kind};

/// How long a hold counts when its request never settles or releases it.
pub const HOLD_TTL: Duration = Duration::from_secs(600);

/// What a limit is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meter {
    /// Characters: text translation, document translation, text improvement,
    /// text to speech.
    Characters,
    /// Milliseconds of speech-to-text.
    SpeechToText,
    /// Milliseconds of speech-to-speech.
    SpeechToSpeech,
}

impl Meter {
    /// The name stored in `usage_holds.meter`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Characters => "characters",
            Self::SpeechToText => "speech_to_text_milliseconds",
            Self::SpeechToSpeech => "speech_to_speech_milliseconds",
        }
    }

    /// The ledger kinds counted against this meter.
    pub fn kinds(self) -> &'static [&'static str] {
        match self {
            Self::Characters => &[
                kind::TEXT_TRANSLATION,
                kind::DOCUMENT_TRANSLATION,
                kind::TEXT_IMPROVEMENT,
                kind::TEXT_TO_SPEECH,
            ],
            Self::SpeechToText => &[kind::SPEECH_TO_TEXT],
            Self::SpeechToSpeech => &[kind::SPEECH_TO_SPEECH],
        }
    }

    /// The meter a ledger kind counts against.
    pub fn of_kind(kind: &str) -> Option<Self> {
        [Self::Characters, Self::SpeechToText, Self::SpeechToSpeech]
            .into_iter()
            .find(|m| m.kinds().contains(&kind))
    }

    /// This meter's limit among a key's limits.
    pub fn limit(self, limits: &Limits) -> Option<i64> {
        match self {
            Self::Characters => limits.characters,
            Self::SpeechToText => limits.speech_to_text_milliseconds,
            Self::SpeechToSpeech => limits.speech_to_speech_milliseconds,
        }
    }
}

/// An amount reserved for a request in flight (or nothing, for a key without a
/// limit on the meter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hold {
    /// The `usage_holds` row, when one was written.
    pub id: Option<i64>,
}

/// The key's limit is reached: the request must be refused (HTTP 456).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitReached {
    /// Usage of the period, holds included.
    pub used: i64,
    /// The limit.
    pub limit: i64,
}

/// Usage of `meter` by the key in the current period, from the ledger (rollup +
/// entries not rolled up yet), without holds.
pub async fn period_usage(
    conn: &mut PgConnection,
    api_key_id: &str,
    meter: Meter,
) -> Result<i64, StorageError> {
    usage_in_period(conn, api_key_id, meter, false).await
}

/// Period usage, plus the live holds when `with_holds`: one statement, so one
/// snapshot (a hold being settled is counted either as a hold or as a ledger
/// entry, never both, never neither).
async fn usage_in_period(
    conn: &mut PgConnection,
    api_key_id: &str,
    meter: Meter,
    with_holds: bool,
) -> Result<i64, StorageError> {
    Ok(sqlx::query_scalar!(
        r#"SELECT (
             COALESCE((SELECT sum(CASE $2::text
                          WHEN 'characters' THEN d.text_translation_characters
                               + d.document_translation_characters + d.text_improvement_characters
                               + d.text_to_speech_characters
                          WHEN 'speech_to_text_milliseconds' THEN d.speech_to_text_milliseconds
                          ELSE d.speech_to_speech_milliseconds END)
                       FROM usage_key_day d
                       WHERE d.api_key_id = $1
                         AND d.day >= date_trunc('month', now() AT TIME ZONE 'UTC')::date), 0)
           + COALESCE((SELECT sum(e.amount) FROM usage_events e
                       WHERE e.api_key_id = $1
                         AND e.tx >= (SELECT watermark FROM usage_rollup_state)
                         AND e.kind = ANY($3)
                         AND e.created_at >= date_trunc('month', now() AT TIME ZONE 'UTC')
                                             AT TIME ZONE 'UTC'), 0)
           + CASE WHEN $4 THEN
               COALESCE((SELECT sum(h.amount) FROM usage_holds h
                         WHERE h.api_key_id = $1 AND h.meter = $2 AND h.expires_at > now()), 0)
             ELSE 0 END
           )::bigint AS "used!""#,
        api_key_id,
        meter.name(),
        meter.kinds() as &[&str],
        with_holds
    )
    .fetch_one(&mut *conn)
    .await?)
}

/// Reserves `amount` of `meter` for a request of `key`. A key without a limit on
/// the meter gets an empty hold at no cost. `Err(LimitReached)` inside `Ok` when
/// the key's limit is reached or `amount` does not fit in what remains.
pub async fn reserve(
    pool: &PgPool,
    key: &ApiKey,
    meter: Meter,
    amount: i64,
) -> Result<Result<Hold, LimitReached>, StorageError> {
    if meter.limit(&key.limits).is_none() {
        return Ok(Ok(Hold { id: None }));
    }
    let mut tx = pool.begin().await?;
    // A hold lost with a crash of PostgreSQL itself is harmless (its request
    // fails with the database): no need to wait for the WAL flush.
    sqlx::query!(r#"SELECT set_config('synchronous_commit', 'off', true) AS "v!""#)
        .fetch_one(&mut *tx)
        .await?;
    // The lock orders concurrent reservations of this key; the limit is read
    // again under it (an administrator may have changed it since authentication).
    let Some(row) = sqlx::query!(
        r#"SELECT character_limit, speech_to_text_milliseconds_limit,
                  speech_to_speech_milliseconds_limit
           FROM api_keys WHERE key_id = $1 FOR NO KEY UPDATE"#,
        key.key_id
    )
    .fetch_optional(&mut *tx)
    .await?
    else {
        return Ok(Ok(Hold { id: None }));
    };
    let limits = Limits {
        characters: row.character_limit,
        speech_to_text_milliseconds: row.speech_to_text_milliseconds_limit,
        speech_to_speech_milliseconds: row.speech_to_speech_milliseconds_limit,
    };
    let Some(limit) = meter.limit(&limits) else {
        tx.commit().await?;
        return Ok(Ok(Hold { id: None }));
    };
    let used = usage_in_period(&mut tx, &key.key_id, meter, true).await?;
    if used >= limit || used.saturating_add(amount) > limit {
        tx.rollback().await?;
        return Ok(Err(LimitReached { used, limit }));
    }
    let ttl = HOLD_TTL.as_secs_f64();
    let id = sqlx::query_scalar!(
        r#"INSERT INTO usage_holds (api_key_id, meter, amount, expires_at)
           VALUES ($1, $2, $3, now() + make_interval(secs => $4))
           RETURNING id"#,
        key.key_id,
        meter.name(),
        amount,
        ttl
    )
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Ok(Hold { id: Some(id) }))
}

/// Appends the ledger entry of a finished request and drops its hold, in one
/// transaction (the amount moves from "held" to "used" atomically). With
/// `durable` the commit waits for the WAL flush as every other write does; without,
/// it does not (see [`usage::record_relaxed`]: a crash of PostgreSQL itself can then
/// lose the last fraction of a second of billing entries).
pub async fn settle(
    pool: &PgPool,
    hold: Hold,
    event: &UsageEvent<'_>,
    durable: bool,
) -> Result<(), StorageError> {
    match hold.id {
        None => {
            let mut conn = pool.acquire().await?;
            if durable {
                usage::record(&mut conn, event).await
            } else {
                usage::record_relaxed(&mut conn, event).await
            }
        }
        // One statement (its own transaction): one round trip instead of four
        // (BEGIN, INSERT, DELETE, COMMIT) after the request's work.
        Some(id) => {
            sqlx::query!(
                r#"WITH released AS (DELETE FROM usage_holds WHERE id = $7)
                   INSERT INTO usage_events
                       (organization_id, api_key_id, kind, amount, custom_tag, document_id)
                   SELECT $1, $2, $3, $4, $5, $6
                   FROM (SELECT CASE WHEN $8 THEN ''
                                ELSE set_config('synchronous_commit', 'off', true) END) AS relaxed
                   ON CONFLICT (document_id, kind) WHERE document_id IS NOT NULL DO NOTHING"#,
                event.organization_id,
                event.api_key_id,
                event.kind,
                event.amount,
                event.custom_tag,
                event.document_id,
                id,
                durable
            )
            .execute(pool)
            .await?;
            Ok(())
        }
    }
}

/// Drops the hold of a request that failed (nothing is billed).
pub async fn release(pool: &PgPool, hold: Hold) -> Result<(), StorageError> {
    if let Some(id) = hold.id {
        sqlx::query!("DELETE FROM usage_holds WHERE id = $1", id)
            .execute(pool)
            .await?;
    }
    Ok(())
}

/// Whether the key's limit on `meter` is already reached (for work whose size is
/// only known after it is done, such as documents: they are refused once the
/// limit is reached, and billed in full when they finish).
pub async fn reached(
    pool: &PgPool,
    key: &ApiKey,
    meter: Meter,
) -> Result<Option<LimitReached>, StorageError> {
    let Some(limit) = meter.limit(&key.limits) else {
        return Ok(None);
    };
    let mut conn = pool.acquire().await?;
    let used = usage_in_period(&mut conn, &key.key_id, meter, true).await?;
    Ok((used >= limit).then_some(LimitReached { used, limit }))
}

/// Deletes holds that expired more than an hour ago (scheduler housekeeping).
pub async fn purge_expired_holds(pool: &PgPool) -> Result<u64, StorageError> {
    Ok(
        sqlx::query!("DELETE FROM usage_holds WHERE expires_at < now() - interval '1 hour'")
            .execute(pool)
            .await?
            .rows_affected(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_counts_against_one_meter() {
        for k in kind::ALL {
            assert!(Meter::of_kind(k).is_some(), "{k}");
        }
        assert_eq!(
            Meter::of_kind(kind::TEXT_IMPROVEMENT),
            Some(Meter::Characters)
        );
        assert_eq!(Meter::of_kind("bogus"), None);
    }

    #[test]
    fn limits_are_picked_per_meter() {
        let l = Limits {
            characters: Some(1),
            speech_to_text_milliseconds: Some(2),
            speech_to_speech_milliseconds: None,
        };
        assert_eq!(Meter::Characters.limit(&l), Some(1));
        assert_eq!(Meter::SpeechToText.limit(&l), Some(2));
        assert_eq!(Meter::SpeechToSpeech.limit(&l), None);
    }
}
