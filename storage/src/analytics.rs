//! Usage reports for administrators, read from the rollup plus the ledger
//! entries it has not reached yet, in one snapshot (see [`crate::rollup`]): a
//! report always equals the ledger.

use std::collections::HashMap;
use std::ops::AddAssign;

use chrono::{DateTime, Days, NaiveDate, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use crate::StorageError;

/// Usage by kind (characters and milliseconds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Figures {
    /// Characters of text translation.
    pub text_translation_characters: i64,
    /// Characters of document translation.
    pub document_translation_characters: i64,
    /// Characters of text improvement.
    pub text_improvement_characters: i64,
    /// Milliseconds of speech-to-text.
    pub speech_to_text_milliseconds: i64,
    /// Milliseconds of speech-to-speech.
    pub speech_to_speech_milliseconds: i64,
}

impl AddAssign for Figures {
    fn add_assign(&mut self, o: Self) {
        self.text_translation_characters += o.text_translation_characters;
        self.document_translation_characters += o.document_translation_characters;
        self.text_improvement_characters += o.text_improvement_characters;
        self.speech_to_text_milliseconds += o.speech_to_text_milliseconds;
        self.speech_to_speech_milliseconds += o.speech_to_speech_milliseconds;
    }
}

/// Grouping of a usage report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    /// Totals only.
    None,
    /// Per key.
    Key,
    /// Per key and UTC day.
    KeyAndDay,
}

/// One group of a usage report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyUsage {
    /// The key.
    pub api_key_id: String,
    /// The UTC day (with [`Grouping::KeyAndDay`] only).
    pub day: Option<NaiveDate>,
    /// Its usage.
    pub figures: Figures,
}

/// An organization's usage over a range of days.
#[derive(Debug, Clone, Default)]
pub struct UsageReport {
    /// All usage of the range.
    pub total: Figures,
    /// The groups, ordered by key then day (empty with [`Grouping::None`]).
    pub groups: Vec<KeyUsage>,
    /// Labels of the organization's keys.
    pub labels: HashMap<String, String>,
}

/// One item of a custom-tag report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagUsage {
    /// The tag.
    pub custom_tag: String,
    /// The UTC day, when aggregated by day.
    pub day: Option<NaiveDate>,
    /// Its usage.
    pub figures: Figures,
}

/// Start of `start` and end of `end` (both UTC days, inclusive) as instants.
fn bounds(start: NaiveDate, end: NaiveDate) -> (DateTime<Utc>, DateTime<Utc>) {
    let from = start.and_time(chrono::NaiveTime::MIN).and_utc();
    let until = end
        .checked_add_days(Days::new(1))
        .unwrap_or(end)
        .and_time(chrono::NaiveTime::MIN)
        .and_utc();
    (from, until)
}

/// The usage of `organization_id` from day `start` through day `end` (UTC, both
/// included), grouped as asked.
pub async fn usage_report(
    pool: &PgPool,
    organization_id: Uuid,
    start: NaiveDate,
    end: NaiveDate,
    grouping: Grouping,
) -> Result<UsageReport, StorageError> {
    let (from, until) = bounds(start, end);
    let mut tx = pool.begin().await?;
    // One snapshot for the watermark, the rollup and the tail.
    sqlx::query!("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        .execute(&mut *tx)
        .await?;
    let tail = sqlx::query!(
        r#"SELECT e.api_key_id, (e.created_at AT TIME ZONE 'UTC')::date AS "day!",
                  COALESCE(sum(e.amount) FILTER (WHERE e.kind = 'text_translation_characters'), 0)::bigint AS "t!",
                  COALESCE(sum(e.amount) FILTER (WHERE e.kind = 'document_translation_characters'), 0)::bigint AS "d!",
                  COALESCE(sum(e.amount) FILTER (WHERE e.kind = 'text_improvement_characters'), 0)::bigint AS "i!",
                  COALESCE(sum(e.amount) FILTER (WHERE e.kind = 'speech_to_text_milliseconds'), 0)::bigint AS "stt!",
                  COALESCE(sum(e.amount) FILTER (WHERE e.kind = 'speech_to_speech_milliseconds'), 0)::bigint AS "sts!"
           FROM usage_events e, usage_rollup_state s
           WHERE e.tx >= s.watermark AND e.organization_id = $1
             AND e.created_at >= $2 AND e.created_at < $3
           GROUP BY 1, 2"#,
        organization_id,
        from,
        until
    )
    .fetch_all(&mut *tx)
    .await?;
    let mut report = UsageReport::default();
    let mut pending: HashMap<(String, Option<NaiveDate>), Figures> = HashMap::new();
    for r in tail {
        let f = Figures {
            text_translation_characters: r.t,
            document_translation_characters: r.d,
            text_improvement_characters: r.i,
            speech_to_text_milliseconds: r.stt,
            speech_to_speech_milliseconds: r.sts,
        };
        report.total += f;
        let group = match grouping {
            Grouping::None => continue,
            Grouping::Key => (r.api_key_id, None),
            Grouping::KeyAndDay => (r.api_key_id, Some(r.day)),
        };
        *pending.entry(group).or_default() += f;
    }

    match grouping {
        Grouping::None => {
            let r = sqlx::query!(
                r#"SELECT COALESCE(sum(text_translation_characters), 0)::bigint AS "t!",
                          COALESCE(sum(document_translation_characters), 0)::bigint AS "d!",
                          COALESCE(sum(text_improvement_characters), 0)::bigint AS "i!",
                          COALESCE(sum(speech_to_text_milliseconds), 0)::bigint AS "stt!",
                          COALESCE(sum(speech_to_speech_milliseconds), 0)::bigint AS "sts!"
                   FROM usage_key_day
                   WHERE organization_id = $1 AND day >= $2 AND day <= $3"#,
                organization_id,
                start,
                end
            )
            .fetch_one(&mut *tx)
            .await?;
            report.total += Figures {
                text_translation_characters: r.t,
                document_translation_characters: r.d,
                text_improvement_characters: r.i,
                speech_to_text_milliseconds: r.stt,
                speech_to_speech_milliseconds: r.sts,
            };
        }
        Grouping::Key => {
            let rows = sqlx::query!(
                r#"SELECT api_key_id,
                          sum(text_translation_characters)::bigint AS "t!",
                          sum(document_translation_characters)::bigint AS "d!",
                          sum(text_improvement_characters)::bigint AS "i!",
                          sum(speech_to_text_milliseconds)::bigint AS "stt!",
                          sum(speech_to_speech_milliseconds)::bigint AS "sts!"
                   FROM usage_key_day
                   WHERE organization_id = $1 AND day >= $2 AND day <= $3
                   GROUP BY api_key_id ORDER BY api_key_id"#,
                organization_id,
                start,
                end
            )
            .fetch_all(&mut *tx)
            .await?;
            report.groups.reserve(rows.len() + pending.len());
            for r in rows {
                let mut f = Figures {
                    text_translation_characters: r.t,
                    document_translation_characters: r.d,
                    text_improvement_characters: r.i,
                    speech_to_text_milliseconds: r.stt,
                    speech_to_speech_milliseconds: r.sts,
                };
                report.total += f;
                if let Some(extra) = pending.remove(&(r.api_key_id.clone(), None)) {
                    f += extra;
                }
                report.groups.push(KeyUsage {
                    api_key_id: r.api_key_id,
                    day: None,
                    figures: f,
                });
            }
        }
        Grouping::KeyAndDay => {
            let rows = sqlx::query!(
                r#"SELECT api_key_id, day, text_translation_characters AS t,
                          document_translation_characters AS d,
                          text_improvement_characters AS i,
                          speech_to_text_milliseconds AS stt,
                          speech_to_speech_milliseconds AS sts
                   FROM usage_key_day
                   WHERE organization_id = $1 AND day >= $2 AND day <= $3
                   ORDER BY api_key_id, day"#,
                organization_id,
                start,
                end
            )
            .fetch_all(&mut *tx)
            .await?;
            report.groups.reserve(rows.len() + pending.len());
            for r in rows {
                let mut f = Figures {
                    text_translation_characters: r.t,
                    document_translation_characters: r.d,
                    text_improvement_characters: r.i,
                    speech_to_text_milliseconds: r.stt,
                    speech_to_speech_milliseconds: r.sts,
                };
                report.total += f;
                if !pending.is_empty()
                    && let Some(extra) = pending.remove(&(r.api_key_id.clone(), Some(r.day)))
                {
                    f += extra;
                }
                report.groups.push(KeyUsage {
                    api_key_id: r.api_key_id,
                    day: Some(r.day),
                    figures: f,
                });
            }
        }
    }
    // Groups only the tail has (today's first entries of a key, typically).
    if !pending.is_empty() {
        report.groups.extend(
            pending
                .into_iter()
                .map(|((api_key_id, day), figures)| KeyUsage {
                    api_key_id,
                    day,
                    figures,
                }),
        );
        // Nearly sorted (two sorted runs): a merge.
        report
            .groups
            .sort_by(|a, b| (&a.api_key_id, a.day).cmp(&(&b.api_key_id, b.day)));
    }
    if grouping != Grouping::None {
        report.labels = sqlx::query!(
            "SELECT key_id, label FROM api_keys WHERE organization_id = $1",
            organization_id
        )
        .fetch_all(&mut *tx)
        .await?
        .into_iter()
        .map(|r| (r.key_id, r.label))
        .collect();
    }
    tx.commit().await?;
    Ok(report)
}

/// One page of the usage of `organization_id` per custom tag (and per UTC day
/// when `by_day`), from day `start` through day `end` (both included), ordered
/// by tag then day. `page` counts from 1. Returns the items and whether a
/// further page exists.
pub async fn tag_report(
    pool: &PgPool,
    organization_id: Uuid,
    start: NaiveDate,
    end: NaiveDate,
    by_day: bool,
    page: u32,
    page_size: u32,
) -> Result<(Vec<TagUsage>, bool), StorageError> {
    let (from, until) = bounds(start, end);
    let page_size = i64::from(page_size.max(1));
    let offset = i64::from(page.max(1) - 1) * page_size;
    // One statement: one snapshot for the rollup, the watermark and the tail.
    let rows = sqlx::query!(
        r#"SELECT custom_tag AS "custom_tag!", day,
                  sum(t)::bigint AS "t!", sum(d)::bigint AS "d!", sum(i)::bigint AS "i!",
                  sum(stt)::bigint AS "stt!", sum(sts)::bigint AS "sts!"
           FROM (
             SELECT custom_tag, CASE WHEN $4 THEN day END AS day,
                    text_translation_characters AS t, document_translation_characters AS d,
                    text_improvement_characters AS i, speech_to_text_milliseconds AS stt,
                    speech_to_speech_milliseconds AS sts
             FROM usage_tag_day
             WHERE organization_id = $1 AND day >= $2::date AND day <= $3::date
             UNION ALL
             SELECT e.custom_tag,
                    CASE WHEN $4 THEN (e.created_at AT TIME ZONE 'UTC')::date END,
                    CASE WHEN e.kind = 'text_translation_characters' THEN e.amount ELSE 0 END,
                    CASE WHEN e.kind = 'document_translation_characters' THEN e.amount ELSE 0 END,
                    CASE WHEN e.kind = 'text_improvement_characters' THEN e.amount ELSE 0 END,
                    CASE WHEN e.kind = 'speech_to_text_milliseconds' THEN e.amount ELSE 0 END,
                    CASE WHEN e.kind = 'speech_to_speech_milliseconds' THEN e.amount ELSE 0 END
             FROM usage_events e, usage_rollup_state s
             WHERE e.tx >= s.watermark AND e.organization_id = $1 AND e.custom_tag IS NOT NULL
               AND e.created_at >= $5 AND e.created_at < $6
           ) x
           GROUP BY custom_tag, day
           ORDER BY custom_tag, day
           LIMIT $7 OFFSET $8"#,
        organization_id,
        start,
        end,
        by_day,
        from,
        until,
        page_size + 1,
        offset
    )
    .fetch_all(pool)
    .await?;
    let more = rows.len() as i64 > page_size;
    let items = rows
        .into_iter()
        .take(page_size as usize)
        .map(|r| TagUsage {
            custom_tag: r.custom_tag,
            day: r.day,
            figures: Figures {
                text_translation_characters: r.t,
                document_translation_characters: r.d,
                text_improvement_characters: r.i,
                speech_to_text_milliseconds: r.stt,
                speech_to_speech_milliseconds: r.sts,
            },
        })
        .collect();
    Ok((items, more))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_cover_whole_days() {
        let d = |s: &str| s.parse::<NaiveDate>().unwrap_or_default();
        let (from, until) = bounds(d("2026-02-27"), d("2026-02-28"));
        assert_eq!(from.to_rfc3339(), "2026-02-27T00:00:00+00:00");
        assert_eq!(until.to_rfc3339(), "2026-03-01T00:00:00+00:00");
    }

    #[test]
    fn figures_add() {
        let mut a = Figures {
            text_translation_characters: 1,
            speech_to_text_milliseconds: 5,
            ..Figures::default()
        };
        a += a;
        assert_eq!(a.text_translation_characters, 2);
        assert_eq!(a.speech_to_text_milliseconds, 10);
    }
}
