//! `tolk-bench dashboard`: the operator dashboard's pages over a queue of a
//! million jobs.
//!
//! 1. A throwaway database is migrated; an API in this process serves it on
//!    loopback. Each page of `/admin/ui` is timed on the empty queue first:
//!    the baseline of the same run.
//! 2. The queue gets `--jobs` rows (one million by default), spread over the
//!    platform's queues and the last week: 65 % done (a platform that keeps
//!    finished rows), 20 % killed or failed for good, 15 % waiting; a few
//!    running under live worker loops, an hour of finished minutes, operator
//!    actions. The tables are analyzed and vacuumed as autovacuum would.
//! 3. Each page is timed again: p50 and p95 of `--requests` sequential
//!    requests (whole body read), the ratio to the empty queue, and the target
//!    (p50 under 200 ms).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use tolk_engine::{ApertiumConfig, Translator};
use tolk_storage::objects::Objects;
use tolk_storage::throwaway::ThrowawayDb;

/// Options of the dashboard benchmark.
#[derive(Debug, Args)]
pub struct DashboardArgs {
    /// Queue rows to generate.
    #[arg(long, default_value_t = 1_000_000)]
    jobs: i64,
    /// Requests per page and state of the queue.
    #[arg(long, default_value_t = 20)]
    requests: usize,
    /// Admin URL of the local PostgreSQL (a throwaway database is created and dropped).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432/postgres")]
    database_url: String,
    /// Apertium modes folder (the engines page checks the engines).
    #[arg(long, default_value = "/usr/share/apertium/modes")]
    modes: std::path::PathBuf,
}

/// The page target: p50 under this many milliseconds.
const TARGET_MS: f64 = 200.0;

/// Runs the benchmark.
pub async fn run(args: DashboardArgs) -> Result<()> {
    let db_name = "tolk_bench_dashboard";
    let database = ThrowawayDb::create(&args.database_url, db_name).await?;
    let db = database.connect(8).await?;
    let dir = std::env::temp_dir().join(db_name);
    let result = measure(&db, &args, &dir).await;
    db.close().await;
    database.drop_database().await?;
    let _ = std::fs::remove_dir_all(&dir);
    result
}

async fn measure(db: &sqlx::PgPool, args: &DashboardArgs, dir: &std::path::Path) -> Result<()> {
    let org = tolk_storage::keys::ensure_organization(db, "bench").await?;
    let admin = tolk_storage::keys::create(db, org, "bench admin", true)
        .await?
        .secret;
    let translator = Arc::new(Translator::apertium(ApertiumConfig {
        modes_dir: args.modes.clone(),
        ..ApertiumConfig::default()
    })?);
    let objects = Objects::open(&dir.join("objects").display().to_string())?;
    let state = crate::app::api_state(db.clone(), objects, translator, 1024 * 1024);
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let base = crate::app::serve(state, stop).await?;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()?;
    let pages = [
        ("queues", "/admin/ui".to_owned()),
        ("workers", "/admin/ui/workers".to_owned()),
        ("jobs", "/admin/ui/jobs".to_owned()),
        ("jobs failed", "/admin/ui/jobs?status=Killed".to_owned()),
        (
            "jobs waiting",
            "/admin/ui/jobs?status=Pending&queue=translate-document".to_owned(),
        ),
        (
            "job by id",
            format!("/admin/ui/jobs?q={}", job_id(args.jobs / 2)),
        ),
        ("usage", "/admin/ui/usage".to_owned()),
        ("engines", "/admin/ui/engines".to_owned()),
    ];
    let get = |path: &str| {
        http.get(format!("{base}{path}"))
            .basic_auth("ops", Some(&admin))
    };
    // Warm up (the engines' processes start on their first check).
    for (_, path) in &pages {
        get(path).send().await?.error_for_status()?;
    }
    let mut empty = Vec::new();
    for (_, path) in &pages {
        empty.push(time(&get, path, args.requests).await?);
    }

    eprintln!("generating {} queue rows …", args.jobs);
    let t = Instant::now();
    generate(db, args.jobs).await?;
    eprintln!("  generated in {:.0} s", t.elapsed().as_secs_f64());

    println!("tolk-bench dashboard");
    println!(
        "  {} queue rows (65 % done, 20 % failed, 15 % waiting, over a week); {} requests per page",
        args.jobs, args.requests
    );
    println!(
        "  {:<14} {:>12} {:>12} {:>12} {:>8}   target p50 < {TARGET_MS:.0} ms",
        "page", "empty p50", "full p50", "full p95", "ratio"
    );
    let mut missed = Vec::new();
    for ((name, path), base_times) in pages.iter().zip(&empty) {
        let full = time(&get, path, args.requests).await?;
        let (p50, p95, e50) = (
            percentile(&full, 0.5),
            percentile(&full, 0.95),
            percentile(base_times, 0.5),
        );
        let met = p50 < TARGET_MS;
        if !met {
            missed.push(*name);
        }
        println!(
            "  {name:<14} {e50:>9.1} ms {p50:>9.1} ms {p95:>9.1} ms {:>7.1}×   {}",
            p50 / e50.max(0.001),
            if met { "met" } else { "MISSED" }
        );
    }
    let _ = stop_tx.send(true);
    if missed.is_empty() {
        println!("  every page met the target");
    } else {
        println!("  missed: {}", missed.join(", "));
    }
    Ok(())
}

/// Sequential requests to `path`, each body read whole: milliseconds, sorted.
async fn time(
    get: &impl Fn(&str) -> reqwest::RequestBuilder,
    path: &str,
    requests: usize,
) -> Result<Vec<f64>> {
    let mut times = Vec::with_capacity(requests);
    for _ in 0..requests {
        let t = Instant::now();
        let res = get(path).send().await?;
        let status = res.status();
        let body = res.bytes().await?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        if !status.is_success() || body.is_empty() {
            bail!("{path} answered {status}");
        }
    }
    times.sort_by(f64::total_cmp);
    Ok(times)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// The id of generated row `i` (26 characters, as a ULID).
fn job_id(i: i64) -> String {
    format!("BENCH{i:021}")
}

/// Fills the queue: `jobs` rows as the module note says, then the live
/// loops, the last hour's minutes and a few operator actions.
async fn generate(db: &sqlx::PgPool, jobs: i64) -> Result<()> {
    let queues: Vec<String> = tolk_storage::queue::QUEUES
        .iter()
        .map(|q| (*q).to_owned())
        .collect();
    let chunk = 200_000_i64;
    let mut from = 1_i64;
    while from <= jobs {
        let to = (from + chunk - 1).min(jobs);
        sqlx::query!(
            r#"INSERT INTO apalis.jobs (job, id, job_type, status, attempts, max_attempts, run_at,
                                      last_result, lock_at, done_at, priority, idempotency_key)
               SELECT convert_to('{"document_id":"' || md5(i::text) || '","target_lang":"ES"}', 'UTF8'),
                      'BENCH' || lpad(i::text, 21, '0'),
                      ($3::text[])[1 + i % cardinality($3::text[])],
                      CASE WHEN i % 100 < 65 THEN 'Done' WHEN i % 100 < 80 THEN 'Killed'
                           WHEN i % 100 < 85 THEN 'Failed' ELSE 'Pending' END,
                      CASE WHEN i % 100 < 80 THEN 1 WHEN i % 100 < 85 THEN 5 ELSE 0 END,
                      5,
                      now() - make_interval(secs => (i % 604800)::float8),
                      CASE WHEN i % 100 < 65 THEN '{"Ok": null}'::jsonb
                           WHEN i % 100 < 85 THEN '{"Err": "The document could not be read"}'::jsonb END,
                      CASE WHEN i % 100 < 85 THEN now() - make_interval(secs => (i % 604800)::float8) END,
                      CASE WHEN i % 100 < 85
                           THEN now() - make_interval(secs => (i % 604800)::float8 - (i % 120)) END,
                      0,
                      'bench:' || i
               FROM generate_series($1::int8, $2::int8) AS i"#,
            from,
            to,
            &queues
        )
        .execute(db)
        .await
        .context("generating queue rows")?;
        from = to + 1;
    }
    // Live loops, each running a job; the last hour's finished minutes; actions.
    for (n, queue) in queues.iter().enumerate() {
        let name = format!("bench-loop-{n}");
        sqlx::query!(
            "INSERT INTO apalis.workers (id, worker_type, storage_name, last_seen) VALUES ($1, $2, 'bench', now())",
            name,
            queue
        )
        .execute(db)
        .await?;
        sqlx::query!(
            "INSERT INTO worker_loops (name, queue, host, pid, concurrency) VALUES ($1, $2, 'bench', 1, 4)",
            name,
            queue
        )
        .execute(db)
        .await?;
        sqlx::query!(
            "UPDATE apalis.jobs SET status = 'Running', lock_by = $1, lock_at = now(), done_at = NULL
             WHERE id = (SELECT id FROM apalis.jobs WHERE job_type = $2 AND status = 'Pending' LIMIT 1)",
            name,
            queue
        )
        .execute(db)
        .await?;
    }
    sqlx::query!(
        r#"INSERT INTO queue_job_minutes (queue, outcome, minute, jobs, seconds)
           SELECT q, o, date_trunc('minute', now()) - make_interval(mins => m), 30, 45.0
           FROM unnest($1::text[]) AS q, unnest(ARRAY['done', 'failed']) AS o,
                generate_series(0, 119) AS m"#,
        &queues
    )
    .execute(db)
    .await?;
    sqlx::query!(
        r#"INSERT INTO operator_actions (api_key_id, action, job_id, queue, outcome)
           SELECT 'bench', 'retry', 'BENCH' || lpad(i::text, 21, '0'), 'translate-document', 'done'
           FROM generate_series(1, 1000) AS i"#
    )
    .execute(db)
    .await?;
    // The scheduler has counted the finished rows (its prune, keeping them).
    sqlx::query!("UPDATE queue_stats_watermark SET counted_until = now() - interval '8 days'")
        .execute(db)
        .await?;
    let week = Duration::from_secs(8 * 86_400);
    tolk_storage::queue::prune_finished(db, week, week).await?;
    for table in [
        "apalis.jobs",
        "apalis.workers",
        "worker_loops",
        "queue_job_minutes",
    ] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("VACUUM ANALYZE {table}")))
            .execute(db)
            .await?;
    }
    Ok(())
}
