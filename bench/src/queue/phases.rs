//! The comparisons, in order: throughput (burn-downs of the raw loop, each Tolk
//! setting and each Graphile preset), then latency (open loop, then sequential).

use super::Plan;
use super::bench::Bench;
use super::graphile::GraphileCfg;
use super::raw::{RAW_BATCH, RAW_TRANSPORT, raw_burn};
use super::report::{print_burn, print_latency};
use super::results::{Burn, LatencyRow, Mode, ThroughputRow};
use super::settings::{TUNED, TolkSetting};
use super::tolk::{tolk_burn, tolk_openloop, tolk_sequential};

/// Graphile's batching preset, as its detail reads.
const BATCHED: &str = "batching preset: localQueue.size 500, complete/failJobBatchDelay 0";

/// Graphile Worker's side, on the raw loop's transport.
fn graphile<'a>(b: &'a Bench, plan: &'a Plan) -> GraphileCfg<'a> {
    GraphileCfg {
        dir: &plan.args.node_dir,
        url: b.url(RAW_TRANSPORT),
        concurrency: plan.args.graphile_concurrency,
    }
}

/// Runs a burn-down in both modes, printing each, and returns their row.
async fn burn_down<F, Fut>(
    system: &str,
    key: String,
    detail: String,
    n: usize,
    burn: F,
) -> anyhow::Result<ThroughputRow>
where
    F: Fn(Mode) -> Fut,
    Fut: Future<Output = anyhow::Result<Burn>>,
{
    let p = burn(Mode::Processing).await?;
    print_burn(system, &key, Mode::Processing, n, &p);
    let e = burn(Mode::EndToEnd).await?;
    print_burn(system, &key, Mode::EndToEnd, n, &e);
    Ok(ThroughputRow {
        system: system.into(),
        key,
        detail,
        processing: Some(p),
        e2e: Some(e),
    })
}

/// The burn-downs: the raw ceiling first, then Tolk's settings, then Graphile's
/// presets.
pub(super) async fn throughput(b: &Bench, plan: &Plan) -> anyhow::Result<Vec<ThroughputRow>> {
    let (args, n) = (&plan.args, plan.jobs);
    let mut rows = Vec::new();
    println!("== 1. Throughput (burn-down) ==");
    if !args.skip_raw {
        let detail = format!(
            "claim {RAW_BATCH} FOR UPDATE SKIP LOCKED + complete batch, {} consumers, {}",
            args.raw_consumers,
            RAW_TRANSPORT.label()
        );
        let burn = |mode| raw_burn(b, args.raw_consumers, n, mode);
        rows.push(burn_down("raw", "raw".into(), detail, n, burn).await?);
    }
    for s in &plan.settings {
        let burn = |mode| tolk_burn(b, s, n, mode);
        rows.push(burn_down("Tolk", s.key.clone(), s.describe(), n, burn).await?);
    }
    if !args.skip_graphile {
        let graphile = graphile(b, plan);
        let mut runs = vec![
            (
                "default".to_owned(),
                "default",
                1,
                "defaults (no local queue, no batched completion)",
            ),
            ("batched".to_owned(), "batched", 1, BATCHED),
        ];
        for &p in args.graphile_processes.iter().filter(|&&p| p > 1) {
            runs.push((format!("batched×{p}"), "batched", p, BATCHED));
        }
        for (key, preset, processes, detail) in runs {
            let detail = format!(
                "{detail}; concurrency {}, pool {}, {processes} Node process{}",
                args.graphile_concurrency,
                args.graphile_concurrency + 1,
                if processes == 1 { "" } else { "es" }
            );
            let burn = |mode| graphile.burn(b, preset, processes, n, mode);
            rows.push(burn_down("Graphile", key, detail, n, burn).await?);
        }
    }
    Ok(rows)
}

/// The latency tests of the platform's setting, `tuned` and those of `--only`:
/// open loop, then sequential, each followed by Graphile's. Returns the rows and
/// Graphile Worker's version ("?" when it did not run).
pub(super) async fn latency(b: &Bench, plan: &Plan) -> anyhow::Result<(Vec<LatencyRow>, String)> {
    let args = &plan.args;
    let mut rows = Vec::new();
    let mut graphile_version = String::from("?");
    let mut push = |r: LatencyRow| {
        print_latency(&r);
        rows.push(r);
    };
    println!("\n== 2. Latency (enqueue → handler start) ==");
    let settings: Vec<&TolkSetting> = plan
        .settings
        .iter()
        .filter(|s| s.is_platform() || s.key == TUNED || args.only.contains(&s.key))
        .collect();
    let graphile = graphile(b, plan);
    for (test, n) in [
        ("openloop", plan.latency_jobs),
        ("sequential", plan.sequential),
    ] {
        for s in &settings {
            push(match test {
                "openloop" => tolk_openloop(b, s, n, args.rate).await?,
                _ => tolk_sequential(b, s, n).await?,
            });
        }
        if !args.skip_graphile {
            let (r, version) = graphile
                .latency(b, test, n, args.rate, args.graphile_concurrency)
                .await?;
            graphile_version = version;
            push(r);
        }
    }
    Ok((rows, graphile_version))
}
