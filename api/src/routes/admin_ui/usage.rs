//! `/admin/ui/usage?days=30`: the organization's usage over the last days —
//! per day (characters by kind, stacked bars, and speech time) and per key
//! (its figures and its characters by day) — read as the analytics API reads
//! it (the rollup plus the ledger entries it has not reached).

use std::collections::{BTreeMap, HashMap};

use axum::extract::{Query, State};
use axum::response::Html;
use chrono::{Days, NaiveDate, Utc};
use maud::{Markup, html};
use tolk_storage::analytics::{self, Figures, Group, GroupSink, Grouping};

use super::chart::{self, Series};
use super::{Operator, Refused, Tab, page};
use crate::AppState;

/// The periods offered, in days.
const PERIODS: [u64; 3] = [7, 30, 90];

/// Usage groups of a report, by key and day.
#[derive(Default)]
struct Collect(Vec<(String, NaiveDate, Figures)>);

impl GroupSink for Collect {
    fn group(&mut self, g: Group<'_>) {
        if let Some(day) = g.day {
            self.0.push((g.api_key_id.to_owned(), day, g.figures));
        }
    }

    async fn flush(&mut self) {}
}

/// Characters of every kind.
fn characters(f: &Figures) -> i64 {
    f.text_translation_characters
        + f.document_translation_characters
        + f.text_improvement_characters
        + f.text_to_speech_characters
}

/// Seconds of speech, both kinds.
fn speech_seconds(f: &Figures) -> f64 {
    (f.speech_to_text_milliseconds + f.speech_to_speech_milliseconds) as f64 / 1000.0
}

pub(super) async fn show(
    State(state): State<AppState>,
    operator: Operator,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Html<String>, Refused> {
    let days = query
        .get("days")
        .and_then(|d| d.parse::<u64>().ok())
        .filter(|d| PERIODS.contains(d))
        .unwrap_or(30);
    let end = Utc::now().date_naive();
    let start = end.checked_sub_days(Days::new(days - 1)).unwrap_or(end);
    // Entries still batched in this process count too.
    state.usage_appender.flush().await?;
    let mut groups = Collect::default();
    let total = analytics::usage_report(
        &state.db,
        operator.organization_id,
        start,
        end,
        Grouping::KeyAndDay,
        &mut groups,
    )
    .await?;
    let labels = analytics::key_labels(&state.db, operator.organization_id).await?;
    let dates: Vec<NaiveDate> = start.iter_days().take_while(|d| *d <= end).collect();
    let mut by_day: BTreeMap<NaiveDate, Figures> = BTreeMap::new();
    let mut by_key: BTreeMap<String, BTreeMap<NaiveDate, Figures>> = BTreeMap::new();
    for (key, day, f) in groups.0 {
        *by_day.entry(day).or_default() += f;
        *by_key.entry(key).or_default().entry(day).or_default() += f;
    }
    let content = html! {
        form method="get" action="/admin/ui/usage" {
            label for="days" { "Period" }
            select #days name="days" {
                @for d in PERIODS {
                    option value=(d) selected[d == days] { "the last " (d) " days" }
                }
            }
            button type="submit" { "Show" }
        }
        p {
            "From " (start) " through " (end) " (UTC): "
            strong { (characters(&total)) " characters" }
            " and "
            strong { (format!("{:.1}", speech_seconds(&total))) " s of speech" }
            "."
        }
        h2 { "Characters per day" }
        p { "Text in blue, documents in green, improvement in purple, speech synthesis in brown." }
        (characters_chart("the organization", &dates, &by_day))
        @if by_day.is_empty() {
            p { "No usage in this period." }
        } @else {
            table {
                caption { "Usage per day, the latest first" }
                thead {
                    tr {
                        th scope="col" { "Day" }
                        th scope="col" { "Text characters" }
                        th scope="col" { "Document characters" }
                        th scope="col" { "Improvement characters" }
                        th scope="col" { "Speech synthesis characters" }
                        th scope="col" { "Speech-to-text seconds" }
                        th scope="col" { "Speech-to-speech seconds" }
                    }
                }
                tbody {
                    @for (day, f) in by_day.iter().rev() {
                        tr {
                            th scope="row" { (day) }
                            (figure_cells(f))
                        }
                    }
                }
            }
            table {
                caption { "Usage per key" }
                thead {
                    tr {
                        th scope="col" { "Key" }
                        th scope="col" { "Characters" }
                        th scope="col" { "Speech seconds" }
                        th scope="col" { "Characters per day" }
                    }
                }
                tbody {
                    @for (key, days) in &by_key {
                        @let sum = sum(days.values());
                        @let label = labels.get(key).map_or(key.as_str(), String::as_str);
                        tr {
                            th scope="row" { (label) " " code { (key) } }
                            td.n { (characters(&sum)) }
                            td.n { (format!("{:.1}", speech_seconds(&sum))) }
                            td { (characters_chart(label, &dates, days)) }
                        }
                    }
                }
            }
        }
    };
    Ok(page(&operator, Tab::Usage, "Usage", content))
}

/// The figures added up.
fn sum<'a>(figures: impl Iterator<Item = &'a Figures>) -> Figures {
    let mut total = Figures::default();
    for f in figures {
        total += *f;
    }
    total
}

/// The cells of one day's figures.
fn figure_cells(f: &Figures) -> Markup {
    let seconds = |ms: i64| format!("{:.1}", ms as f64 / 1000.0);
    html! {
        td.n { (f.text_translation_characters) }
        td.n { (f.document_translation_characters) }
        td.n { (f.text_improvement_characters) }
        td.n { (f.text_to_speech_characters) }
        td.n { (seconds(f.speech_to_text_milliseconds)) }
        td.n { (seconds(f.speech_to_speech_milliseconds)) }
    }
}

/// Bars of `who`'s characters on each of `dates`, stacked by kind.
fn characters_chart(
    who: &str,
    dates: &[NaiveDate],
    by_day: &BTreeMap<NaiveDate, Figures>,
) -> Markup {
    let figures: Vec<Figures> = dates
        .iter()
        .map(|d| by_day.get(d).copied().unwrap_or_default())
        .collect();
    let series = |pick: fn(&Figures) -> i64, color| {
        Series::new(figures.iter().map(|f| pick(f) as f64).collect(), color)
    };
    let titles: Vec<String> = dates
        .iter()
        .zip(&figures)
        .map(|(d, f)| format!("{d}: {} characters", characters(f)))
        .collect();
    let total: i64 = figures.iter().map(characters).sum();
    chart::bars(
        &format!("Characters of {who} per day: {total} in all"),
        &[
            series(|f| f.text_translation_characters, chart::BLUE),
            series(|f| f.document_translation_characters, chart::GREEN),
            series(|f| f.text_improvement_characters, chart::PURPLE),
            series(|f| f.text_to_speech_characters, chart::BROWN),
        ],
        &titles,
    )
}
