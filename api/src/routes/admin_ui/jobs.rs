//! `/admin/ui/jobs`: queue rows by state, queue or worker loop, or one job
//! found by its id or its document's id, with its last result (a failure's
//! error).

use std::collections::HashMap;

use axum::extract::{Query, State};
use axum::response::Html;
use maud::html;
use tolk_storage::{queue, queue_admin};

use super::{Operator, Refused, Tab, page, time};
use crate::AppState;

/// Jobs listed at most.
const LIMIT: i64 = 200;

/// apalis' states a job can be listed by.
const STATES: [&str; 6] = ["Pending", "Queued", "Running", "Done", "Failed", "Killed"];

pub(super) async fn show(
    State(state): State<AppState>,
    _: Operator,
    Query(query): Query<HashMap<String, String>>,
) -> Result<Html<String>, Refused> {
    let given = |name: &str| query.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
    // Only known values narrow the list (anything else is shown as ignored).
    let status = given("status").filter(|s| STATES.contains(s));
    let queue_name = given("queue").filter(|q| queue::QUEUES.contains(q));
    let filter = queue_admin::JobFilter {
        status,
        queue: queue_name,
        worker: given("worker"),
        search: given("q"),
    };
    let jobs = queue_admin::jobs(&state.db, filter, LIMIT).await?;
    let content = html! {
        form method="get" action="/admin/ui/jobs" {
            label for="q" { "Job or document id" }
            input #q type="search" name="q" value=[filter.search];
            label for="status" { "State" }
            select #status name="status" {
                option value="" { "any" }
                @for s in STATES {
                    option value=(s) selected[status == Some(s)] { (s) }
                }
            }
            label for="queue" { "Queue" }
            select #queue name="queue" {
                option value="" { "any" }
                @for q in queue::QUEUES {
                    option value=(q) selected[queue_name == Some(q)] { (q) }
                }
            }
            @if let Some(w) = filter.worker {
                input type="hidden" name="worker" value=(w);
            }
            button type="submit" { "Show" }
        }
        @if jobs.is_empty() {
            p { "No job matches." }
        } @else {
            table {
                caption { (jobs.len()) " jobs, the latest first (at most " (LIMIT) ")" }
                thead {
                    tr {
                        th scope="col" { "Job" }
                        th scope="col" { "Queue" }
                        th scope="col" { "State" }
                        th scope="col" { "Attempts" }
                        th scope="col" { "Run at" }
                        th scope="col" { "Ended" }
                        th scope="col" { "Worker loop" }
                        th scope="col" { "Last result" }
                    }
                }
                tbody {
                    @for j in &jobs {
                        tr {
                            td { code { (j.id) } }
                            td { (j.queue) }
                            @if j.status == "Failed" || j.status == "Killed" {
                                td.bad { (j.status) }
                            } @else {
                                td { (j.status) }
                            }
                            td.n { (j.attempts) " / " (j.max_attempts) }
                            td { (time(j.run_at)) }
                            td { @if let Some(t) = j.done_at { (time(t)) } }
                            td { @if let Some(w) = &j.lock_by { code { (w) } } }
                            td { @if let Some(r) = &j.last_result { pre { (r) } } }
                        }
                    }
                }
            }
        }
    };
    Ok(page(Tab::Jobs, "Jobs", content))
}
