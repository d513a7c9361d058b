//! `tolk-bench analytics`: usage analytics over a large ledger, and the cost of
//! metering on `/v2/translate`.
//!
//! 1. A throwaway database gets 1,000 developer keys and a ledger of 10 million
//!    entries (by default) spread uniformly over the last 366 days, every kind,
//!    30 % with one of 50 custom tags; the scheduler's rollup is run to the end,
//!    then a small tail (entries not rolled up yet) is added, as in production.
//! 2. The API (in this process, on loopback) answers
//!    `GET /v2/admin/analytics?group_by=key_and_day` over the 366-day range:
//!    response time p50/p90 (whole body read), items and bytes; also without
//!    grouping, per key, and the custom-tag report.
//! 3. Metering overhead: the same `/v2/translate` requests, alternated between
//!    an API that writes the ledger and one that does not (`record_usage`
//!    off, the only difference), on the same database; the ratio of the p50
//!    latencies (target: metering adds < 5 %). For the platform's default
//!    (batched ledger writes, `tolk_storage::usage_appender`), for a key with a
//!    character limit (reservation + ledger entry in one transaction), and for
//!    the per-request modes `TOLK_LEDGER_WRITES=durable` and `async-commit`.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use clap::Args;
use tolk_api::LedgerWrites;
use tolk_engine::{ApertiumConfig, Translator};
use tolk_storage::objects::Objects;

use tolk_storage::throwaway::ThrowawayDb;

/// Options of the analytics benchmark.
#[derive(Debug, Args)]
pub struct AnalyticsArgs {
    /// Ledger entries to generate.
    #[arg(long, default_value_t = 10_000_000)]
    entries: i64,
    /// Developer keys the entries are spread over.
    #[arg(long, default_value_t = 1_000)]
    keys: i64,
    /// Analytics requests per report kind.
    #[arg(long, default_value_t = 15)]
    requests: usize,
    /// Translate requests per variant (with and without the ledger write).
    #[arg(long, default_value_t = 400)]
    translations: usize,
    /// Admin URL of the local PostgreSQL (a throwaway database is created and dropped).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432/postgres")]
    database_url: String,
    /// Apertium modes folder.
    #[arg(long, default_value = "/usr/share/apertium/modes")]
    modes: std::path::PathBuf,
    /// Keep the database afterwards (to rerun with `--reuse`).
    #[arg(long)]
    keep: bool,
    /// Reuse the database of a previous `--keep` run instead of generating.
    #[arg(long)]
    reuse: bool,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Generates the keys and the ledger; returns the admin credential.
async fn generate(db: &sqlx::PgPool, args: &AnalyticsArgs) -> Result<String> {
    let org = tolk_storage::keys::ensure_organization(db, "bench").await?;
    let admin = tolk_storage::keys::create(db, org, "bench admin", true).await?;
    // Key ids shaped like real ones (32 hex digits); their secrets are never used.
    sqlx::query!(
        r#"INSERT INTO api_keys (key_id, organization_id, label, digest, is_admin)
           SELECT md5('bench-key-' || i), $1, 'bench key ' || i, 'unused', false
           FROM generate_series(1, $2::bigint) AS i"#,
        org,
        args.keys
    )
    .execute(db)
    .await?;
    let key_ids: Vec<String> = sqlx::query_scalar!(
        "SELECT key_id FROM api_keys WHERE organization_id = $1 AND NOT is_admin",
        org
    )
    .fetch_all(db)
    .await?;
    let today = chrono::Utc::now().date_naive();
    let start = (today - chrono::Days::new(365))
        .and_time(chrono::NaiveTime::MIN)
        .and_utc();
    let chunk = 1_000_000_i64;
    let mut done = 0_i64;
    let t0 = Instant::now();
    while done < args.entries {
        let n = chunk.min(args.entries - done);
        sqlx::query!(
            r#"INSERT INTO usage_events (organization_id, api_key_id, kind, amount, custom_tag, created_at)
               SELECT $1, ($2::text[])[1 + floor(random() * cardinality($2::text[]))::int],
                      k.kind,
                      CASE WHEN k.kind LIKE '%milliseconds' THEN 1000 + floor(random() * 120000)::bigint
                           ELSE 1 + floor(random() * 2000)::bigint END,
                      CASE WHEN random() < 0.3 THEN 'tag-' || floor(random() * 50)::int END,
                      $3::timestamptz + random() * (now() - $3::timestamptz)
               FROM generate_series(1, $4::bigint) AS i,
                    LATERAL (SELECT (ARRAY['text_translation_characters',
                                           'document_translation_characters',
                                           'text_improvement_characters',
                                           'speech_to_text_milliseconds',
                                           'speech_to_speech_milliseconds'])
                                    [width_bucket(random() + i * 0, ARRAY[0.7, 0.8, 0.9, 0.97]::float8[]) + 1]
                                    AS kind) k"#,
            org,
            &key_ids,
            start,
            n
        )
        .execute(db)
        .await?;
        done += n;
        eprintln!(
            "  ledger: {done} entries ({:.0} s)",
            t0.elapsed().as_secs_f64()
        );
    }
    sqlx::query!("ANALYZE usage_events").execute(db).await?;
    Ok(admin.secret)
}

/// Rolls the ledger up until (almost) nothing is left in the tail.
async fn roll_up(db: &sqlx::PgPool) -> Result<()> {
    let t0 = Instant::now();
    let mut total = 0;
    loop {
        let r = tolk_storage::rollup::roll_up(db).await?;
        total += r.entries;
        let left = sqlx::query_scalar!(
            r#"SELECT count(*) AS "n!" FROM usage_events e, usage_rollup_state s
               WHERE e.tx >= s.watermark"#
        )
        .fetch_one(db)
        .await?;
        if left == 0 {
            break;
        }
        if t0.elapsed() > Duration::from_secs(600) {
            bail!(
                "{left} entries still not rolled up (a long transaction elsewhere holds xmin back?)"
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    sqlx::query!("ANALYZE usage_key_day").execute(db).await?;
    sqlx::query!("ANALYZE usage_tag_day").execute(db).await?;
    eprintln!(
        "  rollup: {total} entries in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Adds `n` entries for today (the tail the rollup has not reached yet).
async fn tail(db: &sqlx::PgPool, n: i64) -> Result<()> {
    sqlx::query!(
        r#"INSERT INTO usage_events (organization_id, api_key_id, kind, amount, custom_tag)
           SELECT k.organization_id, k.key_id, 'text_translation_characters', 100,
                  CASE WHEN i % 3 = 0 THEN 'tag-' || (i % 50) END
           FROM generate_series(1, $1::bigint) AS i
           JOIN LATERAL (SELECT key_id, organization_id FROM api_keys
                         WHERE NOT is_admin ORDER BY key_id OFFSET (i % 1000) LIMIT 1) k ON true"#,
        n
    )
    .execute(db)
    .await?;
    Ok(())
}

/// Times `requests` GETs of `url` until the last body byte is read (the body
/// is read chunk by chunk and dropped, as `curl -o /dev/null` does: gathering
/// the whole body into one buffer would time this client's copying on the same
/// cores as the server). Returns sorted durations, the body size and the body
/// of one more, untimed request.
async fn time_get(
    http: &reqwest::Client,
    url: &str,
    auth: &str,
    requests: usize,
) -> Result<(Vec<Duration>, usize, serde_json::Value)> {
    let mut times = Vec::with_capacity(requests);
    for _ in 0..requests {
        let t = Instant::now();
        let mut res = http.get(url).header("Authorization", auth).send().await?;
        let status = res.status();
        let mut size = 0;
        while let Some(chunk) = res.chunk().await? {
            size += chunk.len();
        }
        times.push(t.elapsed());
        if !status.is_success() || size == 0 {
            bail!("{url} answered {status} ({size} bytes)");
        }
    }
    times.sort();
    let body = http
        .get(url)
        .header("Authorization", auth)
        .send()
        .await?
        .error_for_status()?
        .bytes()
        .await?;
    Ok((times, body.len(), bytes_to_json(&body)))
}

fn bytes_to_json(b: &[u8]) -> serde_json::Value {
    serde_json::from_slice(b).unwrap_or(serde_json::Value::Null)
}

/// Starts an API in this process; returns its base URL.
async fn start_api(
    db: sqlx::PgPool,
    translator: Arc<Translator>,
    objects: Objects,
    record_usage: bool,
    ledger_writes: LedgerWrites,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Result<String> {
    let state = tolk_api::AppState {
        record_usage,
        ledger_writes,
        ..crate::app::api_state(db, objects, translator, 1024 * 1024)
    };
    crate::app::serve(state, stop).await
}

/// p50 of translate requests on two APIs, alternated request by request.
async fn translate_ab(
    http: &reqwest::Client,
    with: &str,
    without: &str,
    auth: &str,
    text: &str,
    n: usize,
) -> Result<(Duration, Duration, Duration, Duration)> {
    let body = serde_json::json!({
        "text": [text],
        "source_lang": "EN",
        "target_lang": "ES"
    });
    let mut a = Vec::with_capacity(n);
    let mut b = Vec::with_capacity(n);
    // Warm-up (pipelines, connections).
    for base in [with, without] {
        for _ in 0..20 {
            http.post(format!("{base}/v2/translate"))
                .header("Authorization", auth)
                .json(&body)
                .send()
                .await?
                .error_for_status()?;
        }
    }
    for i in 0..n * 2 {
        let (base, out) = if i % 2 == 0 {
            (with, &mut a)
        } else {
            (without, &mut b)
        };
        let t = Instant::now();
        let res = http
            .post(format!("{base}/v2/translate"))
            .header("Authorization", auth)
            .json(&body)
            .send()
            .await?;
        let status = res.status();
        let _ = res.bytes().await?;
        out.push(t.elapsed());
        if !status.is_success() {
            bail!("translate answered {status}");
        }
    }
    a.sort();
    b.sort();
    let mean = |v: &[Duration]| v.iter().sum::<Duration>() / (v.len().max(1) as u32);
    Ok((percentile(&a, 0.5), percentile(&b, 0.5), mean(&a), mean(&b)))
}

/// Runs the benchmark.
pub async fn run(args: AnalyticsArgs) -> Result<()> {
    let db_name = "tolk_bench_analytics";
    let database = open_database(&args, db_name).await?;
    let db = database.connect(16).await?;
    let ledger = prepare_ledger(&db, &args).await?;

    let dir = std::env::temp_dir().join(db_name);
    let apis = start_apis(&db, &args, &dir).await?;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()?;
    let auth = format!("DeepL-Auth-Key {}", ledger.admin);

    report_analytics(&http, &apis.with, &auth, &args, &ledger).await?;
    measure_metering(&db, &http, &apis, &args).await?;

    let _ = apis.stop_tx.send(true);
    db.close().await;
    if !args.keep {
        database.drop_database().await?;
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}

/// The throwaway database: the one of a previous `--keep` run (migrated) with
/// `--reuse`, else a new one.
async fn open_database(args: &AnalyticsArgs, db_name: &str) -> Result<ThrowawayDb> {
    Ok(if args.reuse {
        let database = ThrowawayDb::existing(&args.database_url, db_name);
        database.migrate().await?;
        database
    } else {
        ThrowawayDb::create(&args.database_url, db_name).await?
    })
}

/// The ledger as measured: the admin credential and the entry counts.
struct Ledger {
    admin: String,
    entries: i64,
    tail_entries: i64,
}

/// Generates the ledger (or, with `--reuse`, makes a fresh admin key), rolls
/// it up, adds the tail and counts the entries.
async fn prepare_ledger(db: &sqlx::PgPool, args: &AnalyticsArgs) -> Result<Ledger> {
    let admin = if args.reuse {
        // A fresh admin key in the existing bench organization.
        let org = tolk_storage::keys::ensure_organization(db, "bench").await?;
        tolk_storage::keys::create(db, org, "bench admin", true)
            .await?
            .secret
    } else {
        eprintln!(
            "generating {} ledger entries over {} keys …",
            args.entries, args.keys
        );
        generate(db, args).await?
    };
    roll_up(db).await?;
    tail(db, 2_000).await?;
    let (entries, tail_entries) = {
        let r = sqlx::query!(
            r#"SELECT count(*) AS "all!",
                      count(*) FILTER (WHERE tx >= (SELECT watermark FROM usage_rollup_state)) AS "tail!"
               FROM usage_events"#
        )
        .fetch_one(db)
        .await?;
        (r.all, r.tail)
    };
    Ok(Ledger {
        admin,
        entries,
        tail_entries,
    })
}

/// Base URLs of the four APIs, and the sender that stops them.
struct Apis {
    /// Meters with batched ledger writes (the platform's default).
    with: String,
    /// Meters with `TOLK_LEDGER_WRITES=durable`.
    with_durable: String,
    /// Meters with `TOLK_LEDGER_WRITES=async-commit`.
    with_async: String,
    /// Does not meter.
    without: String,
    stop_tx: tokio::sync::watch::Sender<bool>,
}

/// Starts the APIs: the platform's default (batched ledger writes), the two
/// per-request modes of TOLK_LEDGER_WRITES, and an API that does not meter at all.
async fn start_apis(db: &sqlx::PgPool, args: &AnalyticsArgs, dir: &Path) -> Result<Apis> {
    let objects = Objects::open(&dir.join("objects").display().to_string())?;
    let translator = Arc::new(Translator::apertium(ApertiumConfig {
        modes_dir: args.modes.clone(),
        ..ApertiumConfig::default()
    })?);
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let mut apis = Vec::new();
    for (record, writes) in [
        (true, LedgerWrites::Batched),
        (true, LedgerWrites::Durable),
        (true, LedgerWrites::AsyncCommit),
        (false, LedgerWrites::Batched),
    ] {
        apis.push(
            start_api(
                db.clone(),
                translator.clone(),
                objects.clone(),
                record,
                writes,
                stop.clone(),
            )
            .await?,
        );
    }
    let [with, with_durable, with_async, without] =
        <[String; 4]>::try_from(apis).map_err(|_| anyhow::anyhow!("four APIs were started"))?;
    Ok(Apis {
        with,
        with_durable,
        with_async,
        without,
        stop_tx,
    })
}

/// Prints the ledger's figures, then times each analytics report over the
/// 366-day range and prints its figures and the target.
async fn report_analytics(
    http: &reqwest::Client,
    with: &str,
    auth: &str,
    args: &AnalyticsArgs,
    ledger: &Ledger,
) -> Result<()> {
    let today = chrono::Utc::now().date_naive();
    let start = today - chrono::Days::new(365);
    let range = format!("start_date={start}&end_date={today}");
    println!("tolk-bench analytics");
    println!(
        "  ledger: {} entries ({} not rolled up yet), {} keys, {start} .. {today} (366 days)",
        ledger.entries, ledger.tail_entries, args.keys
    );
    let mut key_and_day_p50 = Duration::ZERO;
    for (name, query) in [
        ("key_and_day", format!("{range}&group_by=key_and_day")),
        ("key", format!("{range}&group_by=key")),
        ("total", range.clone()),
        ("custom-tags day", format!("{range}&aggregate_by=day")),
    ] {
        let path = if name.starts_with("custom") {
            "/v2/admin/analytics/custom-tags"
        } else {
            "/v2/admin/analytics"
        };
        let url = format!("{with}{path}?{query}");
        // One untimed request first (caches warm).
        time_get(http, &url, auth, 1).await?;
        let (times, size, body) = time_get(http, &url, auth, args.requests).await?;
        let items = body["usage_report"]["key_and_day_usages"]
            .as_array()
            .or(body["usage_report"]["key_usages"].as_array())
            .or(body["custom_tag_usage_report"]["usage"].as_array())
            .map_or(0, Vec::len);
        if name == "key_and_day" {
            key_and_day_p50 = percentile(&times, 0.5);
            let total = &body["usage_report"]["total_usage"]["total_characters"];
            println!("  total_characters reported: {total}");
        }
        println!(
            "  analytics {name:<16} p50 {:>8.1} ms  p90 {:>8.1} ms  ({items} items, {:.1} MB)",
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.9)),
            size as f64 / 1e6
        );
    }
    println!(
        "  target: key_and_day p50 < 200 ms → {}",
        if key_and_day_p50 < Duration::from_millis(200) {
            "met"
        } else {
            "NOT met"
        }
    );
    Ok(())
}

/// The paragraph of the long translate requests (fifteen sentences).
fn paragraph() -> String {
    [
        "The teacher reads the long letter in the village every morning.",
        "The family buys a big house near the station in the summer.",
        "The doctor finds the old book after the meeting with the friends.",
        "The student wants a new car before the dinner on the weekend.",
        "The farmer sells the red apple near the station every morning.",
        "The woman visits a small garden in the village in the summer.",
        "The man opens the white door after the meeting with the friends.",
        "The government needs a good school in the village on the weekend.",
        "The child likes the green tree near the station before the dinner.",
        "The city sees a cold river in the summer with the friends.",
        "The cat reads the quiet street every morning after the meeting.",
        "The dog buys a beautiful picture near the station on the weekend.",
        "The teacher finds the long letter before the dinner in the village.",
        "The family wants the old book every morning in the summer.",
        "The doctor likes a new car with the friends near the station.",
    ]
    .join(" ")
}

/// Metering overhead: an unlimited key (ledger insert) and a limited one
/// (reservation + ledger insert in one transaction + hold delete), each
/// request alternated between a metering API and one that does not meter;
/// prints the ratios and the target.
async fn measure_metering(
    db: &sqlx::PgPool,
    http: &reqwest::Client,
    apis: &Apis,
    args: &AnalyticsArgs,
) -> Result<()> {
    let org = tolk_storage::keys::ensure_organization(db, "bench").await?;
    let plain = tolk_storage::keys::create(db, org, "bench translate", false).await?;
    let limited = tolk_storage::keys::create(db, org, "bench limited", false).await?;
    tolk_storage::keys::set_limits(
        db,
        org,
        &limited.key.key_id,
        tolk_storage::keys::Limits {
            characters: Some(1_000_000_000),
            ..Default::default()
        },
    )
    .await?;
    let sentence = "The teacher reads the long letter in the village every morning.";
    let paragraph = paragraph();
    let long = paragraph.chars().count();
    let rows: [(String, &_, &str, &str); 6] = [
        (
            "unlimited key, 64 characters, batched (default)".to_owned(),
            &plain,
            sentence,
            &apis.with,
        ),
        (
            format!("unlimited key, {long} characters, batched (default)"),
            &plain,
            &paragraph,
            &apis.with,
        ),
        (
            "limited key, 64 characters".to_owned(),
            &limited,
            sentence,
            &apis.with,
        ),
        (
            "unlimited key, 64 characters, TOLK_LEDGER_WRITES=durable".to_owned(),
            &plain,
            sentence,
            &apis.with_durable,
        ),
        (
            format!("unlimited key, {long} characters, TOLK_LEDGER_WRITES=durable"),
            &plain,
            &paragraph,
            &apis.with_durable,
        ),
        (
            "unlimited key, 64 characters, TOLK_LEDGER_WRITES=async-commit".to_owned(),
            &plain,
            sentence,
            &apis.with_async,
        ),
    ];
    for (name, key, text, with) in rows {
        let auth = format!("DeepL-Auth-Key {}", key.secret);
        let (p50_with, p50_without, mean_with, mean_without) =
            translate_ab(http, with, &apis.without, &auth, text, args.translations).await?;
        let ratio = p50_with.as_secs_f64() / p50_without.as_secs_f64();
        println!(
            "  /v2/translate ({name}): p50 {:.2} ms with the ledger write, {:.2} ms without → ratio {ratio:.3} (overhead {:+.1} %; means {:.2} / {:.2} ms)",
            ms(p50_with),
            ms(p50_without),
            (ratio - 1.0) * 100.0,
            ms(mean_with),
            ms(mean_without)
        );
    }
    println!("  target: metering overhead < 5 %");
    Ok(())
}
