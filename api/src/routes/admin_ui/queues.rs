//! `/admin/ui`: every queue's jobs by state, its oldest waiting job, its
//! finished jobs and their mean run time, its live worker loops, and its last
//! hour (jobs finished and their run time by five minutes, drawn as bars).

use std::collections::BTreeMap;

use axum::extract::State;
use axum::response::Html;
use maud::{Markup, html};
use tolk_storage::{queue, queue_stats};

use super::{Operator, Refused, STATES, Tab, chart, page};
use crate::AppState;

/// One queue's figures.
#[derive(Default)]
struct Row {
    states: BTreeMap<String, i64>,
    oldest: f64,
    done: i64,
    failed: i64,
    seconds: f64,
    loops: Option<queue::QueueLoops>,
    hour: queue_stats::LastHour,
}

pub(super) async fn show(
    State(state): State<AppState>,
    operator: Operator,
) -> Result<Html<String>, Refused> {
    let rows = gather(&state).await?;
    let content = html! {
        (by_state(&rows))
        (served(&rows))
        (last_hour(&rows))
    };
    Ok(page(&operator, Tab::Queues, "Queues", content))
}

/// Every queue's figures, read at once.
async fn gather(state: &AppState) -> Result<BTreeMap<String, Row>, Refused> {
    // Each on a connection of its own: the page waits for the slowest (the
    // count of rows by state), not for their sum.
    let (counts, oldest, finished, loops, hours) = tokio::try_join!(
        queue::counts(&state.db),
        queue_stats::oldest_waiting(&state.db),
        queue_stats::finished(&state.db),
        queue::loop_liveness(&state.db, state.worker_heartbeat.saturating_mul(3)),
        queue_stats::last_hour(&state.db),
    )?;
    let mut rows: BTreeMap<String, Row> = queue::QUEUES
        .iter()
        .map(|q| ((*q).to_owned(), Row::default()))
        .collect();
    for (q, status, n) in counts {
        rows.entry(q).or_default().states.insert(status, n);
    }
    for (q, age) in oldest {
        rows.entry(q).or_default().oldest = age;
    }
    for f in finished {
        let row = rows.entry(f.queue).or_default();
        match f.outcome.as_str() {
            "done" => row.done += f.jobs,
            _ => row.failed += f.jobs,
        }
        row.seconds += f.seconds;
    }
    for l in loops {
        let queue = l.queue.clone();
        rows.entry(queue).or_default().loops = Some(l);
    }
    for (q, hour) in hours {
        rows.entry(q).or_default().hour = hour;
    }
    Ok(rows)
}

/// The table of jobs by queue and state.
fn by_state(rows: &BTreeMap<String, Row>) -> Markup {
    html! {
        table {
            caption { "Jobs by queue and state (queue rows not pruned yet)" }
            thead { tr { th scope="col" { "Queue" } @for s in STATES { th scope="col" { (s) } } } }
            tbody {
                @for (q, row) in rows {
                    tr {
                        th scope="row" { a href={ "/admin/ui/jobs?queue=" (q) } { (q) } }
                        @for s in STATES {
                            td.n { (row.states.get(s).copied().unwrap_or(0)) }
                        }
                    }
                }
            }
        }
    }
}

/// The table of waiting, finished and served jobs by queue.
fn served(rows: &BTreeMap<String, Row>) -> Markup {
    html! {
        table {
            caption { "Waiting, finished and served" }
            thead {
                tr {
                    th scope="col" { "Queue" }
                    th scope="col" { "Oldest waiting" }
                    th scope="col" { "Finished done" }
                    th scope="col" { "Finished failed" }
                    th scope="col" { "Mean run time" }
                    th scope="col" { "Live worker loops" }
                    th scope="col" { "Jobs at once" }
                    th scope="col" { "Loop restarts" }
                }
            }
            tbody {
                @for (q, row) in rows {
                    @let live = row.loops.as_ref().map_or(0, |l| l.live);
                    @let finished = row.done + row.failed;
                    tr {
                        th scope="row" { (q) }
                        td.n { (format!("{:.0} s", row.oldest)) }
                        td.n { (row.done) }
                        td.n { (row.failed) }
                        td.n {
                            @if finished > 0 { (format!("{:.2} s", row.seconds / finished as f64)) } @else { "–" }
                        }
                        @if live == 0 && row.oldest > 0.0 {
                            td.n.bad { "0 (jobs wait)" }
                        } @else {
                            td.n { (live) }
                        }
                        td.n { (row.loops.as_ref().map_or(0, |l| l.concurrency)) }
                        td.n { (row.loops.as_ref().map_or(0, |l| l.restarts)) }
                    }
                }
            }
        }
    }
}

/// The table of each queue's last hour.
fn last_hour(rows: &BTreeMap<String, Row>) -> Markup {
    html! {
        table {
            caption { "The last hour (finished jobs by five minutes, the latest on the right)" }
            thead {
                tr {
                    th scope="col" { "Queue" }
                    th scope="col" { "Done" }
                    th scope="col" { "Failed" }
                    th scope="col" { "Per minute" }
                    th scope="col" { "Mean run time" }
                    th scope="col" { "Jobs by five minutes" }
                    th scope="col" { "Mean run time by five minutes" }
                }
            }
            tbody {
                @for (q, row) in rows {
                    @let h = &row.hour;
                    @let done: i64 = h.done.iter().sum();
                    @let failed: i64 = h.failed.iter().sum();
                    tr {
                        th scope="row" { (q) }
                        td.n { (done) }
                        @if failed > 0 { td.n.bad { (failed) } } @else { td.n { "0" } }
                        td.n { (format!("{:.1}", h.jobs() as f64 / 60.0)) }
                        td.n { @if let Some(m) = h.mean_seconds() { (format!("{m:.2} s")) } @else { "–" } }
                        td { (jobs_chart(q, h)) }
                        td { (run_time_chart(q, h)) }
                    }
                }
            }
        }
    }
}

/// Bars of the jobs finished per slice, failed ones stacked in red on the
/// done.
fn jobs_chart(queue: &str, h: &queue_stats::LastHour) -> Markup {
    let label = format!(
        "{queue}: {} done and {} failed in the last hour",
        h.done.iter().sum::<i64>(),
        h.failed.iter().sum::<i64>()
    );
    let titles: Vec<String> = (0..queue_stats::SLICES)
        .map(|i| {
            format!(
                "{} min ago: {} done, {} failed",
                minutes_ago(i),
                h.done[i],
                h.failed[i]
            )
        })
        .collect();
    chart::bars(
        &label,
        &[
            chart::Series::new(h.done.map(|n| n as f64).to_vec(), chart::BLUE),
            chart::Series::new(h.failed.map(|n| n as f64).to_vec(), chart::RED),
        ],
        &titles,
    )
}

/// Bars of the mean run time per slice.
fn run_time_chart(queue: &str, h: &queue_stats::LastHour) -> Markup {
    let means: Vec<Option<f64>> = (0..queue_stats::SLICES)
        .map(|i| {
            let jobs = h.done[i] + h.failed[i];
            (jobs > 0).then(|| h.seconds[i] / jobs as f64)
        })
        .collect();
    let label = match h.mean_seconds() {
        Some(m) => format!("{queue}: mean run time {m:.2} s over the last hour"),
        None => format!("{queue}: no job finished in the last hour"),
    };
    let titles: Vec<String> = means
        .iter()
        .enumerate()
        .map(|(i, m)| match m {
            Some(m) => format!("{} min ago: {m:.2} s", minutes_ago(i)),
            None => format!("{} min ago: none finished", minutes_ago(i)),
        })
        .collect();
    let values = means.iter().map(|m| m.unwrap_or(0.0)).collect();
    chart::bars(&label, &[chart::Series::new(values, chart::GREEN)], &titles)
}

/// How long ago slice `i` began, in minutes.
fn minutes_ago(i: usize) -> i64 {
    (queue_stats::SLICES - i) as i64 * i64::from(queue_stats::SLICE_MINUTES)
}
