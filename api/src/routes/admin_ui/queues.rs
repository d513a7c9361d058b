//! `/admin/ui`: every queue's jobs by state, its oldest waiting job, its
//! finished jobs and their mean run time, its live worker loops.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::response::Html;
use maud::html;
use tolk_storage::{queue, queue_stats};

use super::{Operator, Refused, STATES, Tab, page};
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
}

pub(super) async fn show(
    State(state): State<AppState>,
    _: Operator,
) -> Result<Html<String>, Refused> {
    let counts = queue::counts(&state.db).await?;
    let oldest = queue_stats::oldest_waiting(&state.db).await?;
    let finished = queue_stats::finished(&state.db).await?;
    let loops = queue::loop_liveness(&state.db, state.worker_heartbeat.saturating_mul(3)).await?;
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
    let content = html! {
        table {
            caption { "Jobs by queue and state (queue rows not pruned yet)" }
            thead { tr { th scope="col" { "Queue" } @for s in STATES { th scope="col" { (s) } } } }
            tbody {
                @for (q, row) in &rows {
                    tr {
                        th scope="row" { a href={ "/admin/ui/jobs?queue=" (q) } { (q) } }
                        @for s in STATES {
                            td.n { (row.states.get(s).copied().unwrap_or(0)) }
                        }
                    }
                }
            }
        }
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
                @for (q, row) in &rows {
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
    };
    Ok(page(Tab::Queues, "Queues", content))
}
