//! Usage analytics for administrators: `GET /v2/admin/analytics` and
//! `GET /v2/admin/analytics/custom-tags` (admin keys only).
//!
//! Dates are ISO 8601 days (UTC); a report covers `start_date` through
//! `end_date`, both included; `end_date - start_date` may not exceed 366 days.

use std::collections::HashMap;
use std::fmt;
use std::io::Write as _;

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use bytes::Bytes;
use chrono::{Datelike, NaiveDate};
use futures::StreamExt;
use serde::{Serialize, Serializer};
use tokio::sync::{mpsc, oneshot};
use tolk_storage::analytics::{self, Figures, Group, GroupSink, Grouping};

use crate::auth::AdminKey;
use crate::{ApiError, AppState};

/// Longest range, in days between `start_date` and `end_date`.
pub const MAX_RANGE_DAYS: i64 = 366;

/// The 400 message of a range over [`MAX_RANGE_DAYS`] (the reference wording).
pub const RANGE_TOO_LONG: &str = "Bad request. Reason: Date range cannot exceed 366 days";

/// The 400 message of an end before the start.
pub const END_BEFORE_START: &str = "Bad request. Reason: end_date must not be before start_date";

/// The 400 message of an unsupported `group_by` (the reference wording).
pub const BAD_GROUP_BY: &str =
    "Value for 'group_by' not supported. Allowed: '', 'key', 'key_and_day'.";

/// The 400 message of an unsupported `aggregate_by` (the reference wording).
pub const BAD_AGGREGATE_BY: &str =
    "Value for 'aggregate_by' not supported. Allowed: '', 'period', 'day'.";

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/v2/admin/analytics", get(usage_report))
        .route("/v2/admin/analytics/custom-tags", get(custom_tags))
}

/// The query parameters (the last value of a repeated one wins).
fn params(query: Option<&str>) -> Result<HashMap<String, String>, ApiError> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query.unwrap_or(""))
        .map_err(|e| ApiError::bad(format!("Invalid query string: {e}")))?;
    Ok(pairs.into_iter().collect())
}

fn date(p: &HashMap<String, String>, name: &str) -> Result<NaiveDate, ApiError> {
    let value = p
        .get(name)
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| ApiError::bad(format!("Parameter '{name}' is required.")))?;
    NaiveDate::parse_from_str(value, "%Y-%m-%d")
        .ok()
        .filter(|_| value.len() == 10)
        .ok_or_else(|| {
            ApiError::bad(format!(
                "Value for '{name}' must be an ISO 8601 date (YYYY-MM-DD), got '{value}'."
            ))
        })
}

/// `start_date` and `end_date`, checked.
fn range(p: &HashMap<String, String>) -> Result<(NaiveDate, NaiveDate), ApiError> {
    let start = date(p, "start_date")?;
    let end = date(p, "end_date")?;
    if end < start {
        return Err(ApiError::bad(END_BEFORE_START));
    }
    if (end - start).num_days() > MAX_RANGE_DAYS {
        return Err(ApiError::bad(RANGE_TOO_LONG));
    }
    Ok((start, end))
}

fn grouping(p: &HashMap<String, String>) -> Result<Grouping, ApiError> {
    match p.get("group_by").map(|v| v.trim()).unwrap_or("") {
        "" => Ok(Grouping::None),
        "key" => Ok(Grouping::Key),
        "key_and_day" => Ok(Grouping::KeyAndDay),
        _ => Err(ApiError::bad(BAD_GROUP_BY)),
    }
}

/// `aggregate_by`: true for `day`.
fn by_day(p: &HashMap<String, String>) -> Result<bool, ApiError> {
    match p.get("aggregate_by").map(|v| v.trim()).unwrap_or("") {
        "" | "period" => Ok(false),
        "day" => Ok(true),
        _ => Err(ApiError::bad(BAD_AGGREGATE_BY)),
    }
}

fn page(p: &HashMap<String, String>) -> Result<u32, ApiError> {
    match p.get("page").map(|v| v.trim()).filter(|v| !v.is_empty()) {
        None => Ok(1),
        Some(v) => v.parse::<u32>().ok().filter(|n| *n >= 1).ok_or_else(|| {
            ApiError::bad(format!(
                "Value for 'page' must be a positive integer, got '{v}'."
            ))
        }),
    }
}

/// Milliseconds as minutes, to two decimals (as the reference shows them).
fn minutes(ms: i64) -> f64 {
    (ms as f64 / 600.0).round() / 100.0
}

/// "2025-09-29T00:00:00Z": the start of a UTC day as the description's
/// `date-time` format (RFC 3339) wants it. (The reference's own example of
/// `start_date` lacks the `Z`; its schema does not allow that.)
struct Midnight(NaiveDate);

impl Serialize for Midnight {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Display for Midnight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}T00:00:00Z", self.0.format("%Y-%m-%d"))
    }
}

/// Usage figures of the usage report.
#[derive(Debug, Serialize)]
struct UsageFigures {
    total_characters: i64,
    text_translation_characters: i64,
    document_translation_characters: i64,
    text_improvement_characters: i64,
    speech_to_text_minutes: f64,
    speech_to_speech_minutes: f64,
    text_to_speech_characters: i64,
}

impl From<Figures> for UsageFigures {
    fn from(f: Figures) -> Self {
        Self {
            // Every kind counted against a key's character limit.
            total_characters: f.text_translation_characters
                + f.document_translation_characters
                + f.text_improvement_characters
                + f.text_to_speech_characters,
            text_translation_characters: f.text_translation_characters,
            document_translation_characters: f.document_translation_characters,
            text_improvement_characters: f.text_improvement_characters,
            speech_to_text_minutes: minutes(f.speech_to_text_milliseconds),
            speech_to_speech_minutes: minutes(f.speech_to_speech_milliseconds),
            text_to_speech_characters: f.text_to_speech_characters,
        }
    }
}

/// The masked form of a key id: its first and last four characters.
pub fn mask(key_id: &str) -> String {
    let chars: Vec<char> = key_id.chars().collect();
    if chars.len() <= 8 {
        return "****".to_owned();
    }
    let head: String = chars[..4].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}****{tail}")
}

/// Writes a JSON value (infallible for these types into a Vec).
fn json_into<T: Serialize>(out: &mut Vec<u8>, value: &T) {
    if let Err(e) = serde_json::to_writer(&mut *out, value) {
        tracing::error!(error = %e, "JSON encoding failed");
    }
}

/// Encodes the usage report while its groups stream in (large `key_and_day`
/// reports are hundreds of thousands of items): the groups first, the total
/// last (JSON members have no order).
struct ReportWriter<'a> {
    out: Vec<u8>,
    labels: &'a HashMap<String, String>,
    /// Key of the previous group, and its encoded `"api_key":…,"api_key_label":…,`.
    last_key: String,
    prefix: Vec<u8>,
    first: bool,
    /// Full chunks not handed on yet.
    full: Vec<Bytes>,
    /// Where full chunks go (the response body), at most [`CHUNKS_AHEAD`] ahead
    /// of the client.
    chunks: mpsc::Sender<Result<Bytes, std::io::Error>>,
}

impl GroupSink for ReportWriter<'_> {
    fn group(&mut self, g: Group<'_>) {
        if self.first {
            self.first = false;
        } else {
            self.out.push(b',');
        }
        if g.api_key_id != self.last_key {
            self.last_key.clear();
            self.last_key.push_str(g.api_key_id);
            self.prefix.clear();
            self.prefix.extend_from_slice(b"{\"api_key\":");
            json_into(&mut self.prefix, &mask(g.api_key_id));
            self.prefix.extend_from_slice(b",\"api_key_label\":");
            let label = self.labels.get(g.api_key_id).map_or("", String::as_str);
            json_into(&mut self.prefix, &label);
            self.prefix.push(b',');
        }
        self.out.extend_from_slice(&self.prefix);
        if let Some(day) = g.day {
            write_usage_date(&mut self.out, day);
        }
        self.out.extend_from_slice(b"\"usage\":");
        write_figures(&mut self.out, g.figures);
        self.out.push(b'}');
        if self.out.len() >= CHUNK {
            let chunk = std::mem::replace(&mut self.out, Vec::with_capacity(CHUNK + 1024));
            self.full.push(Bytes::from(chunk));
        }
    }

    async fn flush(&mut self) {
        for chunk in self.full.drain(..) {
            // The receiver gone means the client went away: the rest is dropped.
            let _ = self.chunks.send(Ok(chunk)).await;
        }
    }
}

/// Bytes of report encoded before they are handed to the response body.
const CHUNK: usize = 64 * 1024;

/// Chunks encoded ahead of the client. Without a bound, the encoder (faster than
/// the socket) held most of a year's `key_and_day` report (about 100 MB) in
/// memory at once, every page of it freshly faulted in.
const CHUNKS_AHEAD: usize = 4;

/// `"usage_date":"YYYY-MM-DDT00:00:00Z",`
fn write_usage_date(out: &mut Vec<u8>, day: NaiveDate) {
    fn digits(out: &mut Vec<u8>, n: u32, width: u32) {
        for p in (0..width).rev() {
            out.push(b'0' + ((n / 10u32.pow(p)) % 10) as u8);
        }
    }
    out.extend_from_slice(b"\"usage_date\":\"");
    match u32::try_from(day.year()) {
        Ok(y) if y <= 9999 => digits(out, y, 4),
        _ => {
            let _ = write!(out, "{:04}", day.year());
        }
    }
    out.push(b'-');
    digits(out, day.month(), 2);
    out.push(b'-');
    digits(out, day.day(), 2);
    out.extend_from_slice(b"T00:00:00Z\",");
}

/// [`UsageFigures`] of `f` as JSON, byte for byte what serde_json writes, without
/// its per-field machinery (a year of 1,000 keys by day is 366,000 of these).
fn write_figures(out: &mut Vec<u8>, f: Figures) {
    let u = UsageFigures::from(f);
    let mut n = itoa::Buffer::new();
    let float = |out: &mut Vec<u8>, v: f64| write_minutes(out, v);
    out.extend_from_slice(b"{\"total_characters\":");
    out.extend_from_slice(n.format(u.total_characters).as_bytes());
    out.extend_from_slice(b",\"text_translation_characters\":");
    out.extend_from_slice(n.format(u.text_translation_characters).as_bytes());
    out.extend_from_slice(b",\"document_translation_characters\":");
    out.extend_from_slice(n.format(u.document_translation_characters).as_bytes());
    out.extend_from_slice(b",\"text_improvement_characters\":");
    out.extend_from_slice(n.format(u.text_improvement_characters).as_bytes());
    out.extend_from_slice(b",\"speech_to_text_minutes\":");
    float(out, u.speech_to_text_minutes);
    out.extend_from_slice(b",\"speech_to_speech_minutes\":");
    float(out, u.speech_to_speech_minutes);
    out.extend_from_slice(b",\"text_to_speech_characters\":");
    out.extend_from_slice(n.format(u.text_to_speech_characters).as_bytes());
    out.push(b'}');
}

/// A value of [`minutes`] as serde_json writes it (the shortest decimal that
/// reads back as the same `f64`, by ryu), without ryu's general algorithm: such
/// a value is a whole number of hundredths `c`, and below 10^13 hundredths the
/// decimal `c / 100` itself is that shortest form (no decimal with fewer digits
/// is within the `f64`'s rounding interval). ryu took a fifth of the API's CPU
/// on a year's `key_and_day` report (perf); unit-tested against serde_json.
fn write_minutes(out: &mut Vec<u8>, v: f64) {
    let hundredths = (v * 100.0).round();
    if !v.is_finite() || hundredths.abs() >= 1e13 || hundredths / 100.0 != v {
        if v.is_finite() {
            out.extend_from_slice(ryu::Buffer::new().format_finite(v).as_bytes());
        } else {
            out.extend_from_slice(b"null");
        }
        return;
    }
    if v.is_sign_negative() {
        out.push(b'-');
    }
    // Exact: |hundredths| < 10^13 < 2^53.
    let c = hundredths.abs() as u64;
    let mut n = itoa::Buffer::new();
    out.extend_from_slice(n.format(c / 100).as_bytes());
    out.push(b'.');
    let frac = (c % 100) as u8;
    out.push(b'0' + frac / 10);
    if !frac.is_multiple_of(10) {
        out.push(b'0' + frac % 10);
    }
}

/// `GET /v2/admin/analytics?start_date&end_date&group_by`.
///
/// The body streams: groups are encoded in a task as rows arrive from
/// PostgreSQL and sent in chunks of [`CHUNK`] bytes while the rest is read. A
/// failure before the first chunk is an error response; a later one (the
/// database gone mid-report) aborts the body, which the client sees as a
/// truncated response rather than a wrong report.
async fn usage_report(
    State(state): State<AppState>,
    AdminKey(admin): AdminKey,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let p = params(query.as_deref())?;
    let (start, end) = range(&p)?;
    let grouping = grouping(&p)?;
    // This process's batched ledger entries first.
    state.usage_appender.flush().await?;
    let labels = if grouping == Grouping::None {
        HashMap::new()
    } else {
        analytics::key_labels(&state.db, admin.organization_id).await?
    };
    let (chunks, mut rx) = mpsc::channel(CHUNKS_AHEAD);
    let (done_tx, done_rx) = oneshot::channel::<Result<(), ApiError>>();
    let db = state.db.clone();
    let organization_id = admin.organization_id;
    tokio::spawn(async move {
        let mut w = ReportWriter {
            out: Vec::with_capacity(CHUNK + 1024),
            labels: &labels,
            last_key: String::new(),
            prefix: Vec::new(),
            first: true,
            full: Vec::new(),
            chunks: chunks.clone(),
        };
        w.out.extend_from_slice(b"{\"usage_report\":{");
        match grouping {
            Grouping::None => {}
            Grouping::Key => w
                .out
                .extend_from_slice(b"\"group_by\":\"key\",\"key_usages\":["),
            Grouping::KeyAndDay => w
                .out
                .extend_from_slice(b"\"group_by\":\"key_and_day\",\"key_and_day_usages\":["),
        }
        let total =
            analytics::usage_report(&db, organization_id, start, end, grouping, &mut w).await;
        let total = match total {
            Ok(total) => total,
            Err(e) => {
                tracing::error!(error = %e, "usage report failed");
                // Chunks not handed on are dropped: the client sees a status
                // (nothing sent yet) or a truncated body, never a wrong report.
                let _ = chunks
                    .send(Err(std::io::Error::other("usage report failed")))
                    .await;
                let _ = done_tx.send(Err(e.into()));
                return;
            }
        };
        w.flush().await;
        let mut out = w.out;
        if grouping != Grouping::None {
            out.extend_from_slice(b"],");
        }
        out.extend_from_slice(b"\"total_usage\":");
        write_figures(&mut out, total);
        let _ = write!(
            out,
            ",\"start_date\":\"{}\",\"end_date\":\"{}\"}}}}",
            Midnight(start),
            Midnight(end)
        );
        let _ = chunks.send(Ok(Bytes::from(out))).await;
        let _ = done_tx.send(Ok(()));
    });
    // Wait for the first chunk (or the end): an early failure is still a status.
    let first = match rx.recv().await {
        Some(Ok(chunk)) => chunk,
        Some(Err(_)) | None => {
            return Err(match done_rx.await {
                Ok(Err(e)) => e,
                _ => ApiError::Internal("usage report failed".to_owned()),
            });
        }
    };
    let rest = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    let body = futures::stream::once(async move { Ok(first) }).chain(rest);
    Ok((
        [(CONTENT_TYPE, "application/json")],
        Body::from_stream(body),
    )
        .into_response())
}

/// Breakdown of a custom-tag item (no document translation, as in the reference).
#[derive(Debug, Serialize)]
struct TagBreakdown {
    total_characters: i64,
    text_translation_characters: i64,
    text_improvement_characters: i64,
    speech_to_text_minutes: f64,
    speech_to_speech_minutes: f64,
    text_to_speech_characters: i64,
}

#[derive(Serialize)]
struct TagItem {
    custom_tag: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage_date: Option<Midnight>,
    breakdown: TagBreakdown,
}

#[derive(Serialize)]
struct TagReportData {
    aggregate_by: &'static str,
    start_date: Midnight,
    end_date: Midnight,
    next_page: Option<u32>,
    usage: Vec<TagItem>,
}

#[derive(Serialize)]
struct TagReportBody {
    custom_tag_usage_report: TagReportData,
}

/// `GET /v2/admin/analytics/custom-tags?start_date&end_date&aggregate_by&page`.
async fn custom_tags(
    State(state): State<AppState>,
    AdminKey(admin): AdminKey,
    RawQuery(query): RawQuery,
) -> Result<Json<TagReportBody>, ApiError> {
    let p = params(query.as_deref())?;
    let (start, end) = range(&p)?;
    let by_day = by_day(&p)?;
    let page = page(&p)?;
    state.usage_appender.flush().await?;
    let (items, more) = analytics::tag_report(
        &state.db,
        admin.organization_id,
        start,
        end,
        by_day,
        page,
        state.analytics_page_size,
    )
    .await?;
    let usage = items
        .into_iter()
        .map(|t| TagItem {
            custom_tag: t.custom_tag,
            usage_date: t.day.map(Midnight),
            breakdown: TagBreakdown {
                total_characters: t.figures.text_translation_characters
                    + t.figures.text_improvement_characters
                    + t.figures.text_to_speech_characters,
                text_translation_characters: t.figures.text_translation_characters,
                text_improvement_characters: t.figures.text_improvement_characters,
                speech_to_text_minutes: minutes(t.figures.speech_to_text_milliseconds),
                speech_to_speech_minutes: minutes(t.figures.speech_to_speech_milliseconds),
                text_to_speech_characters: t.figures.text_to_speech_characters,
            },
        })
        .collect();
    Ok(Json(TagReportBody {
        custom_tag_usage_report: TagReportData {
            aggregate_by: if by_day { "day" } else { "period" },
            start_date: Midnight(start),
            end_date: Midnight(end),
            next_page: more.then_some(page + 1),
            usage,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(q: &str) -> HashMap<String, String> {
        params(Some(q)).unwrap_or_default()
    }

    fn err<T: fmt::Debug>(r: Result<T, ApiError>) -> String {
        match r {
            Ok(v) => panic!("accepted: {v:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn ranges_follow_the_rules() {
        assert!(range(&p("start_date=2025-01-01&end_date=2026-01-02")).is_ok()); // 366 days
        assert_eq!(
            err(range(&p("start_date=2025-01-01&end_date=2026-01-03"))),
            RANGE_TOO_LONG
        );
        assert_eq!(
            err(range(&p("start_date=2025-01-02&end_date=2025-01-01"))),
            END_BEFORE_START
        );
        assert!(range(&p("start_date=2025-01-01&end_date=2025-01-01")).is_ok());
        assert!(err(range(&p("end_date=2025-01-01"))).contains("'start_date'"));
        assert!(err(range(&p("start_date=2025-01-01"))).contains("'end_date'"));
        assert!(err(range(&p("start_date=2025-1-1&end_date=2025-01-01"))).contains("'start_date'"));
        assert!(err(range(&p("start_date=2025-01-01&end_date=01/02/2025"))).contains("'end_date'"));
    }

    #[test]
    fn choices_list_their_allowed_values() {
        assert_eq!(grouping(&p("")).ok(), Some(Grouping::None));
        assert_eq!(grouping(&p("group_by=")).ok(), Some(Grouping::None));
        assert_eq!(
            grouping(&p("group_by=key_and_day")).ok(),
            Some(Grouping::KeyAndDay)
        );
        assert_eq!(err(grouping(&p("group_by=day"))), BAD_GROUP_BY);
        assert_eq!(by_day(&p("aggregate_by=day")).ok(), Some(true));
        assert_eq!(by_day(&p("aggregate_by=period")).ok(), Some(false));
        assert_eq!(err(by_day(&p("aggregate_by=key"))), BAD_AGGREGATE_BY);
        assert_eq!(page(&p("page=3")).ok(), Some(3));
        assert!(err(page(&p("page=0"))).contains("'page'"));
        assert!(err(page(&p("page=x"))).contains("'page'"));
    }

    #[test]
    fn figures_encode_as_serde_does() {
        for (t, d, i, stt, sts, tts) in [
            (0, 0, 0, 0, 0, 0),
            (12_345, 7, 1, 6_447_600, 299, 42),
            (i64::MAX / 4, 0, 3, 300, 900, 0),
            (-5, 0, 0, -600, 1, -3),
            (1, 2, 3, 123_456_789_012, 59_999, 1_000_000),
        ] {
            let f = Figures {
                text_translation_characters: t,
                document_translation_characters: d,
                text_improvement_characters: i,
                speech_to_text_milliseconds: stt,
                speech_to_speech_milliseconds: sts,
                text_to_speech_characters: tts,
            };
            let mut ours = Vec::new();
            write_figures(&mut ours, f);
            let theirs = serde_json::to_vec(&UsageFigures::from(f)).unwrap_or_default();
            assert_eq!(
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&theirs)
            );
        }
        for (y, m, d) in [(2025, 1, 1), (2026, 12, 31), (999, 2, 3)] {
            let day = NaiveDate::from_ymd_opt(y, m, d).unwrap_or_default();
            let mut ours = Vec::new();
            write_usage_date(&mut ours, day);
            let theirs = format!("\"usage_date\":\"{}\",", Midnight(day));
            assert_eq!(String::from_utf8_lossy(&ours), theirs);
        }
    }

    #[test]
    fn minutes_encode_as_serde_does() {
        let check = |ms: i64| {
            let v = minutes(ms);
            let mut ours = Vec::new();
            write_minutes(&mut ours, v);
            let theirs = serde_json::to_vec(&v).unwrap_or_default();
            assert_eq!(
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&theirs),
                "{ms} ms"
            );
        };
        // Every hundredth up to 10,000 minutes, either sign (-0.0 included).
        for c in -1_000_000..=1_000_000i64 {
            check(c * 600);
            check(c * 600 + 299);
        }
        // Large sums, up to where the shortcut hands over to ryu and beyond.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            check((x >> 3) as i64 % 1_000_000_000_000_000);
        }
        for ms in [599_999_999_999_700, 600_000_000_000_000, i64::MAX, i64::MIN] {
            check(ms);
        }
        for v in [0.1, 1.0 / 3.0, f64::NAN, f64::INFINITY] {
            let mut ours = Vec::new();
            write_minutes(&mut ours, v);
            let theirs = serde_json::to_vec(&v).unwrap_or_default();
            assert_eq!(ours, theirs, "{v}");
        }
    }

    #[test]
    fn masks_and_minutes() {
        assert_eq!(mask("dc88aaaaaaaaaaaa3a2c"), "dc88****3a2c");
        assert_eq!(mask("short"), "****");
        assert_eq!(minutes(6_447_600), 107.46);
        let d = NaiveDate::from_ymd_opt(2025, 9, 29).unwrap_or_default();
        assert_eq!(Midnight(d).to_string(), "2025-09-29T00:00:00Z");
    }
}
