//! `/admin/ui/workers`: the worker loops of every process — queue, host,
//! process, concurrency, last heartbeat, jobs in flight.

use axum::extract::State;
use axum::response::Html;
use maud::html;
use tolk_storage::queue_admin;

use super::{Operator, Refused, Tab, ago, page, time};
use crate::AppState;

/// Loops listed at most.
const LIMIT: i64 = 500;

pub(super) async fn show(
    State(state): State<AppState>,
    operator: Operator,
) -> Result<Html<String>, Refused> {
    let loops = queue_admin::worker_loops(&state.db, LIMIT).await?;
    let dead_after = chrono::Duration::from_std(state.worker_heartbeat.saturating_mul(3))
        .unwrap_or(chrono::Duration::seconds(15));
    let now = chrono::Utc::now();
    let content = html! {
        @if loops.is_empty() {
            p { "No worker loop is recorded: start " code { "tolk worker" } "." }
        } @else {
            table {
                caption { "Worker loops (live: a heartbeat within 3 heartbeat periods)" }
                thead {
                    tr {
                        th scope="col" { "Queue" }
                        th scope="col" { "Host" }
                        th scope="col" { "Process" }
                        th scope="col" { "Jobs at once" }
                        th scope="col" { "Jobs in flight" }
                        th scope="col" { "Last heartbeat" }
                        th scope="col" { "Started" }
                        th scope="col" { "Loop" }
                    }
                }
                tbody {
                    @for l in &loops {
                        @let live = l.last_seen.is_some_and(|t| now - t < dead_after);
                        tr {
                            td { (l.queue) }
                            td { (l.host) }
                            td.n { (l.pid) }
                            td.n { (l.concurrency) }
                            td.n { a href={ "/admin/ui/jobs?worker=" (l.name) } { (l.in_flight) } }
                            @match l.last_seen {
                                Some(t) if live => td { (ago(t)) }
                                Some(t) => td.bad { "dead: " (ago(t)) }
                                None => td.bad { "gone" }
                            }
                            td { (time(l.started_at)) }
                            td { code { (l.name) } }
                        }
                    }
                }
            }
        }
    };
    Ok(page(&operator, Tab::Workers, "Workers", content))
}
