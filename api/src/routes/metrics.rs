//! `GET /metrics`: Prometheus text format.
//!
//! Figures come from PostgreSQL (the queue and the documents table), so any API
//! replica reports the same cluster-wide numbers, whichever process ran the jobs.

use std::fmt::Write as _;

use axum::Router;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tolk_storage::queue_stats::{self, Finished};
use tolk_storage::{documents, queue};

use crate::{ApiError, AppState};

/// Upper bounds (seconds) of the job duration histogram.
const BUCKETS: [f64; 10] = [0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 900.0];
/// Window of the duration histogram.
const WINDOW_SECS: f64 = 3600.0;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new().route("/metrics", get(metrics))
}

async fn metrics(State(state): State<AppState>) -> Result<Response, ApiError> {
    let jobs = queue::counts(&state.db).await?;
    let docs = documents::counts_by_status(&state.db).await?;
    let durations = documents::recent_durations(&state.db, WINDOW_SECS).await?;
    let loops = queue::loop_liveness(&state.db, state.worker_heartbeat.saturating_mul(3)).await?;
    let finished = queue_stats::finished(&state.db).await?;
    let oldest = queue_stats::oldest_waiting(&state.db).await?;
    let mut body = render(&jobs, &docs, &durations);
    render_loops(&loops, &mut body);
    render_kinds(&finished, &oldest, &mut body);
    Ok((
        [(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        body,
    )
        .into_response())
}

fn render(
    jobs: &[(String, String, i64)],
    docs: &[(String, i64)],
    durations: &[(String, f64)],
) -> String {
    let mut out = String::new();
    out.push_str(
        "# HELP tolk_queue_jobs Queue rows by queue and state.\n# TYPE tolk_queue_jobs gauge\n",
    );
    for (q, s, n) in jobs {
        let _ = writeln!(out, "tolk_queue_jobs{{queue=\"{q}\",state=\"{s}\"}} {n}");
    }
    out.push_str("# HELP tolk_queue_depth Jobs waiting to run (pending or retrying) by queue.\n# TYPE tolk_queue_depth gauge\n");
    let mut depth: std::collections::BTreeMap<&str, i64> = std::collections::BTreeMap::new();
    for (q, s, n) in jobs {
        let e = depth.entry(q.as_str()).or_default();
        if s == "Pending" || s == "Failed" || s == "Queued" {
            *e += n;
        }
    }
    for (q, n) in depth {
        let _ = writeln!(out, "tolk_queue_depth{{queue=\"{q}\"}} {n}");
    }
    out.push_str("# HELP tolk_documents Documents by state.\n# TYPE tolk_documents gauge\n");
    for state in ["queued", "translating", "done", "error"] {
        let n = docs
            .iter()
            .find(|(s, _)| s == state)
            .map(|(_, n)| *n)
            .unwrap_or(0);
        let _ = writeln!(out, "tolk_documents{{state=\"{state}\"}} {n}");
    }
    out.push_str(
        "# HELP tolk_job_duration_seconds Duration of document jobs finished in the last hour.\n# TYPE tolk_job_duration_seconds histogram\n",
    );
    for outcome in ["done", "error"] {
        let secs: Vec<f64> = durations
            .iter()
            .filter(|(s, _)| s == outcome)
            .map(|(_, d)| *d)
            .collect();
        for b in BUCKETS {
            let n = secs.iter().filter(|d| **d <= b).count();
            let _ = writeln!(
                out,
                "tolk_job_duration_seconds_bucket{{kind=\"translate-document\",outcome=\"{outcome}\",le=\"{b}\"}} {n}"
            );
        }
        let _ = writeln!(
            out,
            "tolk_job_duration_seconds_bucket{{kind=\"translate-document\",outcome=\"{outcome}\",le=\"+Inf\"}} {}",
            secs.len()
        );
        let _ = writeln!(
            out,
            "tolk_job_duration_seconds_sum{{kind=\"translate-document\",outcome=\"{outcome}\"}} {}",
            secs.iter().sum::<f64>()
        );
        let _ = writeln!(
            out,
            "tolk_job_duration_seconds_count{{kind=\"translate-document\",outcome=\"{outcome}\"}} {}",
            secs.len()
        );
    }
    out
}

/// A metric family of [`render_loops`]: name, help, type, and its value of a
/// queue's loops.
type Family = (
    &'static str,
    &'static str,
    &'static str,
    fn(&queue::QueueLoops) -> i64,
);

/// `tolk_workers_live` (worker loops that heartbeated within 3 periods, in
/// every process), `tolk_worker_concurrency` (jobs those loops run at once)
/// and `tolk_worker_loop_restarts_total` by queue; every queue the workers
/// serve is listed, with 0 when nothing runs it.
fn render_loops(loops: &[queue::QueueLoops], out: &mut String) {
    let mut by_queue: std::collections::BTreeMap<&str, Option<&queue::QueueLoops>> =
        queue::QUEUES.iter().map(|q| (*q, None)).collect();
    for l in loops {
        by_queue.insert(l.queue.as_str(), Some(l));
    }
    let families: [Family; 3] = [
        (
            "tolk_workers_live",
            "Worker loops with a heartbeat in the last 3 heartbeat periods, across all processes.",
            "gauge",
            |l| l.live,
        ),
        (
            "tolk_worker_concurrency",
            "Jobs the live worker loops of a queue run at once, across all processes.",
            "gauge",
            |l| l.concurrency,
        ),
        (
            "tolk_worker_loop_restarts_total",
            "Worker loops started again after ending on an error, across all processes.",
            "counter",
            |l| l.restarts,
        ),
    ];
    for (name, help, kind, value) in families {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (q, l) in &by_queue {
            let _ = writeln!(out, "{name}{{queue=\"{q}\"}} {}", l.map_or(0, value));
        }
    }
}

/// Per queue: `tolk_queue_oldest_waiting_seconds` (every queue, 0 when none
/// waits), `tolk_queue_jobs_finished_total` by outcome and the
/// `tolk_queue_job_run_seconds` histogram with the buckets of its kind
/// ([`queue_stats::bounds_of`]).
fn render_kinds(finished: &[Finished], oldest: &[(String, f64)], out: &mut String) {
    out.push_str("# HELP tolk_queue_oldest_waiting_seconds How long the oldest due job of the queue has waited to start.\n# TYPE tolk_queue_oldest_waiting_seconds gauge\n");
    for q in queue::QUEUES {
        let secs = oldest.iter().find(|(n, _)| n == q).map_or(0.0, |(_, s)| *s);
        let _ = writeln!(
            out,
            "tolk_queue_oldest_waiting_seconds{{queue=\"{q}\"}} {secs:.3}"
        );
    }
    out.push_str("# HELP tolk_queue_jobs_finished_total Jobs finished by queue and outcome (done; failed: killed or out of attempts).\n# TYPE tolk_queue_jobs_finished_total counter\n");
    for f in finished {
        let _ = writeln!(
            out,
            "tolk_queue_jobs_finished_total{{queue=\"{}\",outcome=\"{}\"}} {}",
            f.queue, f.outcome, f.jobs
        );
    }
    out.push_str("# HELP tolk_queue_job_run_seconds Run time of finished jobs (fetch to end) by queue and outcome.\n# TYPE tolk_queue_job_run_seconds histogram\n");
    for f in finished {
        let labels = format!("queue=\"{}\",outcome=\"{}\"", f.queue, f.outcome);
        for b in queue_stats::bounds_of(&f.queue) {
            let _ = writeln!(
                out,
                "tolk_queue_job_run_seconds_bucket{{{labels},le=\"{b}\"}} {}",
                f.at_most(*b)
            );
        }
        let _ = writeln!(
            out,
            "tolk_queue_job_run_seconds_bucket{{{labels},le=\"+Inf\"}} {}",
            f.jobs
        );
        let _ = writeln!(
            out,
            "tolk_queue_job_run_seconds_sum{{{labels}}} {}",
            f.seconds
        );
        let _ = writeln!(
            out,
            "tolk_queue_job_run_seconds_count{{{labels}}} {}",
            f.jobs
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_depth_states_and_histogram() {
        let jobs = vec![
            ("translate-document".to_owned(), "Pending".to_owned(), 3),
            ("translate-document".to_owned(), "Done".to_owned(), 7),
        ];
        let docs = vec![("done".to_owned(), 7)];
        let durations = vec![("done".to_owned(), 0.7), ("done".to_owned(), 20.0)];
        let text = render(&jobs, &docs, &durations);
        assert!(text.contains("tolk_queue_depth{queue=\"translate-document\"} 3"));
        assert!(text.contains("tolk_documents{state=\"done\"} 7"));
        assert!(text.contains("tolk_documents{state=\"error\"} 0"));
        assert!(text.contains("outcome=\"done\",le=\"1\"} 1"));
        assert!(text.contains("outcome=\"done\",le=\"+Inf\"} 2"));
    }

    #[test]
    fn renders_every_queue_s_live_loops_concurrency_and_restarts() {
        let mut text = String::new();
        let loops = queue::QueueLoops {
            queue: "import-tmx".to_owned(),
            live: 2,
            restarts: 5,
            concurrency: 6,
        };
        render_loops(&[loops], &mut text);
        assert!(text.contains("tolk_workers_live{queue=\"import-tmx\"} 2"));
        assert!(text.contains("tolk_worker_concurrency{queue=\"import-tmx\"} 6"));
        assert!(text.contains("tolk_worker_concurrency{queue=\"voice-translate\"} 0"));
        assert!(text.contains("tolk_worker_loop_restarts_total{queue=\"import-tmx\"} 5"));
        assert!(text.contains("tolk_workers_live{queue=\"translate-document\"} 0"));
        assert!(text.contains("tolk_worker_loop_restarts_total{queue=\"export-tmx\"} 0"));
    }

    #[test]
    fn renders_each_kind_s_age_totals_and_its_own_buckets() {
        let mut buckets = vec![0; queue_stats::RUN_TIME_BOUNDS.len() + 1];
        buckets[1] = 2; // (0.1, 0.25]
        buckets[7] = 1; // (10, 30]
        let quality = Finished {
            queue: "evaluate-quality".into(),
            outcome: "done".into(),
            jobs: 3,
            seconds: 12.5,
            buckets,
        };
        let mut text = String::new();
        render_kinds(&[quality], &[("voice-translate".into(), 42.0)], &mut text);
        assert!(
            text.contains("tolk_queue_oldest_waiting_seconds{queue=\"voice-translate\"} 42.000")
        );
        assert!(text.contains("tolk_queue_oldest_waiting_seconds{queue=\"import-tmx\"} 0.000"));
        assert!(text.contains(
            "tolk_queue_jobs_finished_total{queue=\"evaluate-quality\",outcome=\"done\"} 3"
        ));
        let q = "queue=\"evaluate-quality\",outcome=\"done\"";
        assert!(text.contains(&format!(
            "tolk_queue_job_run_seconds_bucket{{{q},le=\"0.25\"}} 2"
        )));
        assert!(text.contains(&format!(
            "tolk_queue_job_run_seconds_bucket{{{q},le=\"10\"}} 2"
        )));
        assert!(text.contains(&format!(
            "tolk_queue_job_run_seconds_bucket{{{q},le=\"30\"}} 3"
        )));
        assert!(text.contains(&format!(
            "tolk_queue_job_run_seconds_bucket{{{q},le=\"+Inf\"}} 3"
        )));
        assert!(text.contains(&format!("tolk_queue_job_run_seconds_sum{{{q}}} 12.5")));
        // Quality's buckets start below a second; documents' at one.
        assert!(!text.contains("le=\"3600\""));
    }
}
