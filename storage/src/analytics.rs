//! Usage reports for administrators, read from the rollup plus the ledger
//! entries it has not reached yet, in one snapshot (see [`crate::rollup`]): a
//! report always equals the ledger.

use std::collections::{BTreeMap, HashMap};
use std::ops::AddAssign;

use chrono::{DateTime, Datelike, Days, NaiveDate, Utc};
use futures::TryStreamExt;
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
    /// Characters of text-to-speech.
    pub text_to_speech_characters: i64,
}

impl AddAssign for Figures {
    fn add_assign(&mut self, o: Self) {
        self.text_translation_characters += o.text_translation_characters;
        self.document_translation_characters += o.document_translation_characters;
        self.text_improvement_characters += o.text_improvement_characters;
        self.speech_to_text_milliseconds += o.speech_to_text_milliseconds;
        self.speech_to_speech_milliseconds += o.speech_to_speech_milliseconds;
        self.text_to_speech_characters += o.text_to_speech_characters;
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

/// One group of a usage report, as it is streamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group<'a> {
    /// The key.
    pub api_key_id: &'a str,
    /// The UTC day (with [`Grouping::KeyAndDay`] only).
    pub day: Option<NaiveDate>,
    /// Its usage.
    pub figures: Figures,
}

/// Where [`usage_report`] sends its groups.
pub trait GroupSink: Send {
    /// The next group, in key then day order.
    fn group(&mut self, g: Group<'_>);

    /// Awaited after each rollup row (one key's month, at most 31 groups): a sink
    /// that passes the encoded report on waits here for its reader, so a large
    /// report streams at the reader's pace instead of piling up in memory.
    fn flush(&mut self) -> impl std::future::Future<Output = ()> + Send;
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

/// Labels of the organization's keys, by key id.
pub async fn key_labels(
    pool: &PgPool,
    organization_id: Uuid,
) -> Result<HashMap<String, String>, StorageError> {
    Ok(sqlx::query!(
        "SELECT key_id, label FROM api_keys WHERE organization_id = $1",
        organization_id
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|r| (r.key_id, r.label))
    .collect())
}

/// Tail groups not emitted yet, in (key, day) order.
type Pending = BTreeMap<(String, Option<NaiveDate>), Figures>;

/// Emits the pending groups that sort before `(key, day)`, then returns the
/// pending figures of exactly `(key, day)`, if any.
fn drain_before(
    pending: &mut Pending,
    key: &str,
    day: Option<NaiveDate>,
    sink: &mut impl GroupSink,
) -> Option<Figures> {
    while let Some(entry) = pending.first_entry() {
        let (k, d) = entry.key();
        match (k.as_str(), *d).cmp(&(key, day)) {
            std::cmp::Ordering::Less => {
                let ((k, d), f) = entry.remove_entry();
                sink.group(Group {
                    api_key_id: &k,
                    day: d,
                    figures: f,
                });
            }
            std::cmp::Ordering::Equal => return Some(entry.remove()),
            std::cmp::Ordering::Greater => return None,
        }
    }
    None
}

/// Emits the per-key group of `key` (its rollup figures `f` plus its tail).
fn emit_key(pending: &mut Pending, key: &str, mut f: Figures, sink: &mut impl GroupSink) {
    if let Some(extra) = drain_before(pending, key, None, sink) {
        f += extra;
    }
    sink.group(Group {
        api_key_id: key,
        day: None,
        figures: f,
    });
}

/// Bytes of one day in `usage_key_month.figures`.
const PACKED_DAY: usize = 48;

/// One day of `usage_key_month.figures`: six big-endian int8.
fn unpack(packed: &[u8]) -> Figures {
    let at = |n: usize| {
        packed
            .get(n * 8..n * 8 + 8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map_or(0, i64::from_be_bytes)
    };
    figures([at(0), at(1), at(2), at(3), at(4), at(5)])
}

/// Figures in the order of the rollup's columns.
fn figures([t, d, i, stt, sts, tts]: [i64; 6]) -> Figures {
    Figures {
        text_translation_characters: t,
        document_translation_characters: d,
        text_improvement_characters: i,
        speech_to_text_milliseconds: stt,
        speech_to_speech_milliseconds: sts,
        text_to_speech_characters: tts,
    }
}

/// The usage not rolled up yet (ledger entries past the rollup's watermark)
/// of `organization_id` between `from` and `until`: its total, and its
/// groups by `grouping`, to merge with the rollup's.
async fn tail(
    conn: &mut sqlx::PgConnection,
    organization_id: Uuid,
    (from, until): (DateTime<Utc>, DateTime<Utc>),
    grouping: Grouping,
) -> Result<(Figures, Pending), StorageError> {
    // A parameter, not a join: the planner then reads the tail by the `tx` index.
    let watermark = sqlx::query_scalar!("SELECT watermark FROM usage_rollup_state")
        .fetch_one(&mut *conn)
        .await?;
    let tail = sqlx::query!(
        r#"SELECT e.api_key_id, (e.created_at AT TIME ZONE 'UTC')::date AS "day!",
                  COALESCE(sum(e.amount) FILTER (WHERE e.kind = 'text_translation_characters'), 0)::bigint AS "t!",
                  COALESCE(sum(e.amount) FILTER (WHERE e.kind = 'document_translation_characters'), 0)::bigint AS "d!",
                  COALESCE(sum(e.amount) FILTER (WHERE e.kind = 'text_improvement_characters'), 0)::bigint AS "i!",
                  COALESCE(sum(e.amount) FILTER (WHERE e.kind = 'speech_to_text_milliseconds'), 0)::bigint AS "stt!",
                  COALESCE(sum(e.amount) FILTER (WHERE e.kind = 'speech_to_speech_milliseconds'), 0)::bigint AS "sts!",
                  COALESCE(sum(e.amount) FILTER (WHERE e.kind = 'text_to_speech_characters'), 0)::bigint AS "tts!"
           FROM usage_events e
           WHERE e.tx >= $4 AND e.organization_id = $1
             AND e.created_at >= $2 AND e.created_at < $3
           GROUP BY 1, 2"#,
        organization_id,
        from,
        until,
        watermark
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut total = Figures::default();
    let mut pending = Pending::new();
    for r in tail {
        let f = figures([r.t, r.d, r.i, r.stt, r.sts, r.tts]);
        total += f;
        let group = match grouping {
            Grouping::None => continue,
            Grouping::Key => (r.api_key_id, None),
            Grouping::KeyAndDay => (r.api_key_id, Some(r.day)),
        };
        *pending.entry(group).or_default() += f;
    }
    Ok((total, pending))
}

/// The usage of `organization_id` from day `start` through day `end` (UTC, both
/// included): gives `sink` every group (none with [`Grouping::None`]) in key then
/// day order, as rows arrive from PostgreSQL (so a large report is encoded while
/// the database still reads it), and returns the total.
pub async fn usage_report(
    pool: &PgPool,
    organization_id: Uuid,
    start: NaiveDate,
    end: NaiveDate,
    grouping: Grouping,
    sink: &mut impl GroupSink,
) -> Result<Figures, StorageError> {
    let (from, until) = bounds(start, end);
    // One snapshot for the watermark, the rollup and the tail. No sorts: the
    // rollup rows come in the order of their primary key (an index scan). With
    // statistics taken before a large rollup (autovacuum had not analyzed the
    // table yet in `tolk-bench analytics`) the planner expected 3 rows, chose a
    // bitmap scan and sorted the rows on disk, several times slower.
    let mut tx = pool
        .begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; SET LOCAL enable_sort = off")
        .await?;
    let (mut total, mut pending) = tail(&mut tx, organization_id, (from, until), grouping).await?;

    // The rollup per key and month: one row holds a key's days of a month, so a
    // year of 1,000 keys is 13,000 rows rather than 366,000.
    let first_month = start.with_day(1).unwrap_or(start);
    let mut rows = sqlx::query!(
        r#"SELECT api_key_id, month, days, figures
           FROM usage_key_month
           WHERE organization_id = $1 AND month >= $2 AND month <= $3
           ORDER BY api_key_id, month"#,
        organization_id,
        first_month,
        end
    )
    .fetch(&mut *tx);
    // Grouping::Key: the key being summed, its figures so far.
    let mut key_sum: Option<(String, Figures)> = None;
    while let Some(r) = rows.try_next().await? {
        if grouping == Grouping::Key
            && key_sum.as_ref().is_some_and(|(k, _)| *k != r.api_key_id)
            && let Some((k, f)) = key_sum.take()
        {
            emit_key(&mut pending, &k, f, sink);
        }
        for (dom, packed) in r.days.iter().zip(r.figures.chunks_exact(PACKED_DAY)) {
            let Some(day) = r.month.with_day(u32::from(*dom)) else {
                continue;
            };
            if day < start || day > end {
                continue;
            }
            let mut f = unpack(packed);
            total += f;
            match grouping {
                Grouping::None => {}
                Grouping::Key => {
                    key_sum
                        .get_or_insert_with(|| (r.api_key_id.clone(), Figures::default()))
                        .1 += f;
                }
                Grouping::KeyAndDay => {
                    if !pending.is_empty()
                        && let Some(extra) =
                            drain_before(&mut pending, &r.api_key_id, Some(day), sink)
                    {
                        f += extra;
                    }
                    sink.group(Group {
                        api_key_id: &r.api_key_id,
                        day: Some(day),
                        figures: f,
                    });
                }
            }
        }
        sink.flush().await;
    }
    drop(rows);
    if let Some((k, f)) = key_sum.take() {
        emit_key(&mut pending, &k, f, sink);
    }
    // Groups only the tail has, after the last rollup group (key ids are
    // lowercase hex, so byte order is the database's order too).
    for ((k, d), f) in std::mem::take(&mut pending) {
        sink.group(Group {
            api_key_id: &k,
            day: d,
            figures: f,
        });
    }
    tx.commit().await?;
    Ok(total)
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
    // One snapshot for the watermark, the rollup and the tail.
    let mut tx = pool
        .begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        .await?;
    let watermark = sqlx::query_scalar!("SELECT watermark FROM usage_rollup_state")
        .fetch_one(&mut *tx)
        .await?;
    let rows = sqlx::query!(
        r#"SELECT custom_tag AS "custom_tag!", day,
                  sum(t)::bigint AS "t!", sum(d)::bigint AS "d!", sum(i)::bigint AS "i!",
                  sum(stt)::bigint AS "stt!", sum(sts)::bigint AS "sts!", sum(tts)::bigint AS "tts!"
           FROM (
             SELECT custom_tag, CASE WHEN $4 THEN day END AS day,
                    text_translation_characters AS t, document_translation_characters AS d,
                    text_improvement_characters AS i, speech_to_text_milliseconds AS stt,
                    speech_to_speech_milliseconds AS sts, text_to_speech_characters AS tts
             FROM usage_tag_day
             WHERE organization_id = $1 AND day >= $2::date AND day <= $3::date
             UNION ALL
             SELECT e.custom_tag,
                    CASE WHEN $4 THEN (e.created_at AT TIME ZONE 'UTC')::date END,
                    CASE WHEN e.kind = 'text_translation_characters' THEN e.amount ELSE 0 END,
                    CASE WHEN e.kind = 'document_translation_characters' THEN e.amount ELSE 0 END,
                    CASE WHEN e.kind = 'text_improvement_characters' THEN e.amount ELSE 0 END,
                    CASE WHEN e.kind = 'speech_to_text_milliseconds' THEN e.amount ELSE 0 END,
                    CASE WHEN e.kind = 'speech_to_speech_milliseconds' THEN e.amount ELSE 0 END,
                    CASE WHEN e.kind = 'text_to_speech_characters' THEN e.amount ELSE 0 END
             FROM usage_events e
             WHERE e.tx >= $9 AND e.organization_id = $1 AND e.custom_tag IS NOT NULL
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
        offset,
        watermark
    )
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    let more = rows.len() as i64 > page_size;
    let items = rows
        .into_iter()
        .take(page_size as usize)
        .map(|r| TagUsage {
            custom_tag: r.custom_tag,
            day: r.day,
            figures: figures([r.t, r.d, r.i, r.stt, r.sts, r.tts]),
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
    fn tail_groups_are_merged_in_order() {
        let d = |n: u32| NaiveDate::from_ymd_opt(2026, 1, n);
        let mut pending = Pending::new();
        pending.insert(("a".to_owned(), d(1)), figures([1, 0, 0, 0, 0, 0]));
        pending.insert(("b".to_owned(), d(2)), figures([2, 0, 0, 0, 0, 0]));
        pending.insert(("c".to_owned(), d(1)), figures([4, 0, 0, 0, 0, 0]));
        struct Seen(Vec<(String, Option<NaiveDate>)>);
        impl GroupSink for Seen {
            fn group(&mut self, g: Group<'_>) {
                self.0.push((g.api_key_id.to_owned(), g.day));
            }
            async fn flush(&mut self) {}
        }
        let mut seen = Seen(Vec::new());
        // Rollup row ("b", 2): "a" is emitted before it, ("b", 2) merged into it.
        let merged = drain_before(&mut pending, "b", d(2), &mut seen);
        assert_eq!(merged, Some(figures([2, 0, 0, 0, 0, 0])));
        assert_eq!(drain_before(&mut pending, "b", d(3), &mut seen), None);
        assert_eq!(seen.0, [("a".to_owned(), d(1))]);
        assert_eq!(pending.len(), 1);
    }

    #[test]
    fn packed_days_unpack() {
        let mut packed = Vec::new();
        for v in [1_i64, -2, 3_000_000_000_000, 0, i64::MAX, 7] {
            packed.extend_from_slice(&v.to_be_bytes());
        }
        assert_eq!(
            unpack(&packed),
            figures([1, -2, 3_000_000_000_000, 0, i64::MAX, 7])
        );
        assert_eq!(unpack(&packed[..16]), figures([1, -2, 0, 0, 0, 0]));
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
