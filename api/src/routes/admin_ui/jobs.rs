//! `/admin/ui/jobs`: queue rows by state, queue or worker loop, or one job
//! found by its id or its document's id, with its last result (a failure's
//! error).

use std::collections::HashMap;

use axum::Form;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{Html, Redirect};
use maud::{Markup, html};
use tolk_storage::{lifecycle, queue, queue_admin};

use super::{Operator, Refused, STATES, Tab, page, time};
use crate::AppState;

/// Jobs listed at most.
const LIMIT: i64 = 200;

/// Operator actions listed at most.
const ACTIONS: i64 = 20;

pub(super) async fn show(
    State(state): State<AppState>,
    operator: Operator,
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
    let actions = queue_admin::actions(&state.db, ACTIONS).await?;
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
                caption {
                    (jobs.len()) @if jobs.len() == 1 { " job" } @else { " jobs" }
                    ", the latest enqueued first (at most " (LIMIT) ")"
                }
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
                        th scope="col" { "Action" }
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
                            td {
                                @let failed_for_good = j.status == "Killed" || (j.status == "Failed" && j.attempts >= j.max_attempts);
                                @if j.status == "Pending" || (j.status == "Failed" && !failed_for_good) {
                                    (action_button(&j.id, "cancel", "Cancel", &operator.token))
                                } @else if failed_for_good {
                                    (action_button(&j.id, "retry", "Retry", &operator.token))
                                }
                            }
                        }
                    }
                }
            }
        }
        @if !actions.is_empty() {
            table {
                caption { "Operator actions, the latest first" }
                thead {
                    tr {
                        th scope="col" { "When" }
                        th scope="col" { "Admin key" }
                        th scope="col" { "Action" }
                        th scope="col" { "Job" }
                        th scope="col" { "Queue" }
                        th scope="col" { "Outcome" }
                    }
                }
                tbody {
                    @for a in &actions {
                        tr {
                            td { (time(a.at)) }
                            td { code { (a.api_key_id) } }
                            td { (a.action) }
                            td { code { (a.job_id) } }
                            td { (a.queue.as_deref().unwrap_or("")) }
                            td { (a.outcome) }
                        }
                    }
                }
            }
        }
    };
    Ok(page(&operator, Tab::Jobs, "Jobs", content))
}

/// `POST /admin/ui/jobs/{id}/cancel` and `…/retry` (form: the page's
/// `token`), then the job is shown again:
///
/// - cancel: a job that waits ends, its record at once (each kind's lost-job
///   sweep);
/// - retry: a job that ended in failure runs again, its record waiting again
///   ([`queue_admin::retry`]); the queue's idle workers are woken.
///
/// A job in another state is left as it is; the refusal is recorded too.
pub(super) async fn act(
    State(state): State<AppState>,
    operator: Operator,
    headers: HeaderMap,
    Path((id, action)): Path<(String, String)>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Redirect, Refused> {
    if form.get("token") != Some(&operator.token) || !same_origin(&headers) {
        return Err(Refused::Forged);
    }
    match action.as_str() {
        "cancel" => {
            let cancelled = queue_admin::cancel(&state.db, &id, &operator.key_id).await?;
            tracing::info!(job = %id, admin = %operator.key_id, cancelled = cancelled.is_some(), "operator cancel");
            if cancelled.is_some() {
                for kind in lifecycle::JOB_KINDS {
                    kind.fail_lost(&state.db).await?;
                }
            }
        }
        "retry" => {
            let retried = queue_admin::retry(&state.db, &id, &operator.key_id).await?;
            tracing::info!(job = %id, admin = %operator.key_id, retried = retried.is_some(), "operator retry");
            if let Some(queue_name) = retried {
                queue::notify_enqueued(&state.db, &queue_name).await?;
            }
        }
        _ => return Err(Refused::NotFound),
    }
    let id: String = url_escape(&id);
    Ok(Redirect::to(&format!("/admin/ui/jobs?q={id}")))
}

/// A form posting `action` on job `id` with the page's token.
fn action_button(id: &str, action: &str, label: &str, token: &str) -> Markup {
    html! {
        form method="post" action={ "/admin/ui/jobs/" (id) "/" (action) } {
            input type="hidden" name="token" value=(token);
            button type="submit" aria-label={ (label) " job " (id) } { (label) }
        }
    }
}

/// Whether a request's `Origin`, when it has one, is this host.
pub(super) fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get("origin").and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let host = headers
        .get("host")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let origin_host = origin.split_once("://").map_or(origin, |(_, rest)| rest);
    !host.is_empty() && origin_host.eq_ignore_ascii_case(host)
}

/// `text` as a URL query value.
fn url_escape(text: &str) -> String {
    serde_urlencoded::to_string([("", text)])
        .map(|s| s.trim_start_matches('=').to_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_host_may_send_actions() {
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut h = HeaderMap::new();
            for (k, v) in pairs {
                h.insert(*k, axum::http::HeaderValue::from_static(v));
            }
            h
        };
        assert!(same_origin(&headers(&[("host", "127.0.0.1:8080")])));
        assert!(same_origin(&headers(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "http://127.0.0.1:8080")
        ])));
        assert!(!same_origin(&headers(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "https://evil.example")
        ])));
        assert!(!same_origin(&headers(&[("origin", "null")])));
        assert_eq!(url_escape("a b&c"), "a+b%26c");
    }
}
