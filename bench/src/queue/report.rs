//! What a run prints as it goes: the header, then a line per burn-down and per
//! latency test as each finishes. The tables and targets at the end are in
//! [`super::summary`].

use super::bench::Bench;
use super::raw::RAW_TRANSPORT;
use super::results::{Burn, LatencyRow, LatencyStats, Mode};
use super::settings::Transport;
use super::{Plan, QUEUE};

pub(super) fn fmt_int(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub(super) fn fmt_rate(b: Option<Burn>) -> String {
    match b {
        Some(b) if b.capped => format!("{}*", fmt_int(b.rate().round() as usize)),
        Some(b) => fmt_int(b.rate().round() as usize),
        None => "-".into(),
    }
}

/// The header: the machine, the server, the connections and the settings compared.
pub(super) async fn print_header(b: &Bench, plan: &Plan) -> anyhow::Result<()> {
    let version: String = sqlx::query_scalar("SHOW server_version")
        .fetch_one(&b.obs)
        .await?;
    let sync: String = sqlx::query_scalar("SHOW synchronous_commit")
        .fetch_one(&b.obs)
        .await?;
    let ssl: String = sqlx::query_scalar("SHOW ssl").fetch_one(&b.obs).await?;
    let tls_default = {
        let p = b.pool(Transport::Url, 1).await?;
        let on: Option<bool> =
            sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
                .fetch_optional(&p)
                .await?;
        p.close().await;
        on.unwrap_or(false)
    };
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    println!(
        "tolk-bench queue — Tolk's queue (apalis-postgres 1.0) vs Graphile Worker vs raw SKIP LOCKED"
    );
    println!(
        "PostgreSQL {version} (ssl={ssl}, synchronous_commit={sync}), database {}, {cpus} CPUs, load average {}",
        b.db_name,
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "Connections: the platform's handling of this URL gives TLS {}; raw loop and Graphile use the {}. Queue `{QUEUE}`; payload = the document job's fields + seq + timestamp.",
        if tls_default { "on" } else { "off" },
        RAW_TRANSPORT.label()
    );
    println!(
        "Burn-down: {} no-op jobs, {} per INSERT; latency: {} jobs open loop at {}/s, {} sequential samples.\n",
        fmt_int(plan.jobs),
        fmt_int(b.chunk),
        fmt_int(plan.latency_jobs),
        plan.args.rate,
        fmt_int(plan.sequential)
    );
    println!(
        "Tolk settings (apalis-postgres as worker/src/run.rs builds it: queue name, unique worker names, heartbeat 5 s × 3):"
    );
    for s in &plan.settings {
        println!(
            "  {:<9}{}{}",
            s.key,
            s.describe(),
            if s.is_platform() {
                "   ← the platform's defaults"
            } else {
                ""
            }
        );
    }
    println!();

    Ok(())
}

pub(super) fn print_burn(system: &str, key: &str, mode: Mode, n: usize, b: &Burn) {
    println!(
        "  {system:<9}{key:<11}{:<11} {:>8} jobs in {:>6.2} s = {:>8} jobs/s{}  (inserts {:>5.2} s = {:>7}/s){}",
        mode.label(),
        fmt_int(b.jobs),
        b.secs,
        fmt_rate(Some(*b)),
        if b.capped { " (time cap)" } else { "" },
        b.insert_secs,
        fmt_int((n as f64 / b.insert_secs.max(1e-9)).round() as usize),
        b.noise.warning()
    );
}

fn fmt_stats(x: &Option<LatencyStats>) -> String {
    match x {
        Some(l) => format!(
            "p50 {:>7.2}  p95 {:>7.2}  p99 {:>7.2}  max {:>7.2}  mean {:>7.2} ms",
            l.p50, l.p95, l.p99, l.max, l.mean
        ),
        None => "-".into(),
    }
}

pub(super) fn print_latency(r: &LatencyRow) {
    let started = if r.started < r.total {
        format!(
            "   only {} of {} started within the cap (lower bound)",
            fmt_int(r.started),
            fmt_int(r.total)
        )
    } else {
        String::new()
    };
    println!(
        "  {:<9}{:<11} enqueue → start: {}{}{}",
        r.system,
        r.test,
        fmt_stats(&r.start),
        started,
        r.noise.warning()
    );
    println!(
        "  {:<20}  commit → start: {}",
        "",
        fmt_stats(&r.after_commit)
    );
    println!(
        "  {:<20}    enqueue call: {}{}",
        "",
        fmt_stats(&r.enqueue),
        r.offered
            .map(|o| format!("   (offered {o:.0}/s)"))
            .unwrap_or_default()
    );
}
