//! The summary after every run: the throughput and latency tables, and the
//! targets (figures, not assertions: a missed target prints MISS).

use super::report::{fmt_int, fmt_rate};
use super::results::{Burn, LatencyRow, LatencyStats, ThroughputRow};
use super::settings::TUNED;

fn verdict(ok: bool) -> &'static str {
    if ok { "PASS" } else { "MISS" }
}

fn ratio(a: Option<Burn>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a.rate() / b),
        _ => "-".into(),
    }
}

/// The best rates to compare Tolk's with: the raw loop's and Graphile's best
/// preset's (with its key), processing and end to end.
struct Best {
    raw_processing: Option<f64>,
    raw_e2e: Option<f64>,
    graphile_processing: Option<(String, f64)>,
    graphile_e2e: Option<(String, f64)>,
}

impl Best {
    pub(super) fn of(rows: &[ThroughputRow]) -> Self {
        let best = |sys: &str, f: fn(&ThroughputRow) -> Option<Burn>| {
            rows.iter()
                .filter(|r| r.system == sys)
                .filter_map(|r| f(r).map(|b| (r.key.clone(), b.rate())))
                .max_by(|a, b| a.1.total_cmp(&b.1))
        };
        let raw = rows.iter().find(|r| r.system == "raw");
        Self {
            raw_processing: raw.and_then(|r| r.processing).map(|b| b.rate()),
            raw_e2e: raw.and_then(|r| r.e2e).map(|b| b.rate()),
            graphile_processing: best("Graphile", |r| r.processing),
            graphile_e2e: best("Graphile", |r| r.e2e),
        }
    }
}

/// The tables and the targets, after every run.
pub(super) fn print_report(
    rows: &[ThroughputRow],
    lat: &[LatencyRow],
    n: usize,
    graphile_version: &str,
) {
    let best = Best::of(rows);
    print_throughput_table(rows, n, &best);
    if !lat.is_empty() {
        print_latency_table(lat);
    }
    println!("\n== Summary: targets (figures, not assertions) ==");
    println!("  {:<72}{:>12}{:>12}  result", "line", "figure", "target");
    print_throughput_targets(rows, &best);
    print_latency_targets(lat);
    if lat.iter().any(|r| r.system == "Graphile") {
        println!(
            "  (Graphile Worker {graphile_version}: its latency rows above are the reference; no target.)"
        );
    }
}

fn print_throughput_table(rows: &[ThroughputRow], n: usize, best: &Best) {
    println!(
        "\n== Throughput, jobs/s, {} no-op jobs (* = stopped at the time cap: jobs started / time) ==",
        fmt_int(n)
    );
    println!(
        "  {:<9}{:<10}{:>11}{:>11}  {:>11}  {:>11}  setting",
        "system", "key", "processing", "end to end", "/Graphile", "/raw"
    );
    for r in rows {
        let (vs_g, vs_raw) = if r.system == "Tolk" {
            (
                format!(
                    "{} / {}",
                    ratio(r.processing, best.graphile_processing.as_ref().map(|g| g.1)),
                    ratio(r.e2e, best.graphile_e2e.as_ref().map(|g| g.1))
                ),
                format!(
                    "{} / {}",
                    ratio(r.processing, best.raw_processing),
                    ratio(r.e2e, best.raw_e2e)
                ),
            )
        } else {
            (String::new(), String::new())
        };
        println!(
            "  {:<9}{:<10}{:>11}{:>11}  {:>11}  {:>11}  {}",
            r.system,
            r.key,
            fmt_rate(r.processing),
            fmt_rate(r.e2e),
            vs_g,
            vs_raw,
            r.detail
        );
    }
    println!(
        "  (/Graphile and /raw: Tolk's rate over Graphile's best preset and over the raw loop, processing / end to end.)"
    );
}

fn print_latency_table(lat: &[LatencyRow]) {
    println!(
        "\n== Latency, ms: enqueue → handler start (commit → start = minus the enqueue call) =="
    );
    println!(
        "  {:<9}{:<12}{:<10}{:>10}{:>10}{:>10}{:>10}  {:>12}{:>10}  {:>12}{:>10}",
        "system",
        "test",
        "key",
        "p50",
        "p95",
        "p99",
        "max",
        "commit→ p50",
        "p99",
        "enqueue p50",
        "p99"
    );
    for r in lat {
        let key = r.detail.split_whitespace().next().unwrap_or("");
        let g = |x: &Option<LatencyStats>, f: fn(&LatencyStats) -> f64| {
            x.as_ref()
                .map_or("-".to_owned(), |l| format!("{:.2}", f(l)))
        };
        println!(
            "  {:<9}{:<12}{:<10}{:>10}{:>10}{:>10}{:>10}  {:>12}{:>10}  {:>12}{:>10}{}",
            r.system,
            r.test,
            if r.system == "Tolk" { key } else { "defaults" },
            g(&r.start, |l| l.p50),
            g(&r.start, |l| l.p95),
            g(&r.start, |l| l.p99),
            g(&r.start, |l| l.max),
            g(&r.after_commit, |l| l.p50),
            g(&r.after_commit, |l| l.p99),
            g(&r.enqueue, |l| l.p50),
            g(&r.enqueue, |l| l.p99),
            if r.started < r.total {
                format!("   ({} of {} started)", r.started, r.total)
            } else {
                String::new()
            }
        );
    }
}

/// One line of the targets.
fn target_line(name: String, fig: String, target: &str, ok: bool) {
    println!("  {:<72}{:>12}{:>12}  {}", name, fig, target, verdict(ok));
}

/// The target line of Tolk's `rate` over Graphile's best preset's (if it ran).
fn vs_graphile(tag: &str, what: &str, rate: f64, graphile: &Option<(String, f64)>) {
    if let Some((gk, g)) = graphile {
        target_line(
            format!("Tolk {tag}: {what} / Graphile {gk}"),
            format!("{:.2}×", rate / g),
            "≥ 1.00×",
            rate >= *g,
        );
    }
}

/// The throughput targets of the platform's defaults and the tuned setting.
fn print_throughput_targets(rows: &[ThroughputRow], best: &Best) {
    for t in rows
        .iter()
        .filter(|r| r.system == "Tolk" && (r.key == "platform" || r.key == TUNED))
    {
        let tag = if t.key == "platform" {
            "platform defaults"
        } else {
            "tuned"
        };
        let star = |b: Burn| if b.capped { "*" } else { "" };
        if let Some(e) = t.e2e {
            target_line(
                format!("Tolk {tag}: burn-down end to end"),
                format!("{}{}/s", fmt_int(e.rate().round() as usize), star(e)),
                "≥ 10,000/s",
                e.rate() >= 10_000.0 && !e.capped,
            );
            vs_graphile(tag, "end to end", e.rate(), &best.graphile_e2e);
        }
        if let Some(p) = t.processing {
            vs_graphile(tag, "processing", p.rate(), &best.graphile_processing);
            if let Some(r) = best.raw_processing {
                target_line(
                    format!("Tolk {tag}: processing / raw SKIP LOCKED"),
                    format!("{:.0} %", 100.0 * p.rate() / r),
                    "≥ 25 %",
                    p.rate() >= 0.25 * r,
                );
            }
        }
    }
}

/// The latency targets of Tolk's latency rows.
fn print_latency_targets(lat: &[LatencyRow]) {
    for r in lat.iter().filter(|r| r.system == "Tolk") {
        let key = r.detail.split_whitespace().next().unwrap_or("");
        let tag = if key == "platform" {
            "platform defaults"
        } else {
            key
        };
        let all = r.started == r.total;
        let suffix = if all { "" } else { " (not all started)" };
        let p99_limit = if r.test == "open loop" { 25.0 } else { 20.0 };
        if let Some(s) = &r.start {
            target_line(
                format!("Tolk {tag}: {} enqueue → start p50{suffix}", r.test),
                format!("{:.2} ms", s.p50),
                "≤ 5 ms",
                all && s.p50 <= 5.0,
            );
            target_line(
                format!("Tolk {tag}: {} enqueue → start p99{suffix}", r.test),
                format!("{:.2} ms", s.p99),
                if r.test == "open loop" {
                    "≤ 25 ms"
                } else {
                    "≤ 20 ms"
                },
                all && s.p99 <= p99_limit,
            );
        }
        if r.test == "open loop"
            && let Some(c) = &r.after_commit
        {
            target_line(
                format!("Tolk {tag}: open loop commit → start p50{suffix}"),
                format!("{:.2} ms", c.p50),
                "≤ 5 ms",
                all && c.p50 <= 5.0,
            );
            target_line(
                format!("Tolk {tag}: open loop commit → start p99{suffix}"),
                format!("{:.2} ms", c.p99),
                "≤ 25 ms",
                all && c.p99 <= 25.0,
            );
        }
    }
}
