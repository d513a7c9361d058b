//! `tolk-bench auth`: the auth service's hot paths against bare library loops in
//! the same process, with the same key.
//!
//! The auth service (`tolk_auth::router`) and the API (`tolk_api`, Bearer tokens
//! on) are served in this process on loopback, on a throwaway database. Measured,
//! each for `--seconds`:
//!
//! 1. Token issuance: `--clients` concurrent HTTP clients posting
//!    `grant_type=client_credentials` to `/auth/token` (client authentication,
//!    signing, the token row) — tokens/s.
//! 2. Token verification: `GET /v2/usage` with `Authorization: Bearer` (the API's
//!    whole Bearer path: signature, scope, revocation check, the metering key) and,
//!    for scale, the same route with an API key; and `Verifier::verify` (the
//!    signature and claims check alone) on every core — verifications/s.
//! 3. Sign-in: `POST /auth/signin` with the bcrypt cost in use — sign-ins/s.
//!
//! The baseline, on every core: `jsonwebtoken::encode` / `decode` (RS256) of the
//! very claims the service issued, with the same key, and `bcrypt::verify` of a
//! digest at the same cost. Ratios service / baseline are printed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use tolk_engine::{ApertiumConfig, Translator};
use tolk_storage::objects::Objects;

use tolk_storage::throwaway::ThrowawayDb;

/// Options of the auth benchmark.
#[derive(Debug, Args)]
pub struct AuthArgs {
    /// Concurrent HTTP clients.
    #[arg(long, default_value_t = 16)]
    clients: usize,
    /// Seconds per measurement.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// bcrypt cost of the user's digest (the service's default when not given).
    #[arg(long, default_value_t = tolk_auth::passwords::DEFAULT_COST)]
    bcrypt_cost: u32,
    /// Admin URL of the local PostgreSQL (a throwaway database is created and dropped).
    #[arg(long, default_value = "postgres://postgres@127.0.0.1:5432/postgres")]
    database_url: String,
    /// Apertium modes folder (the API needs a translator; not used here).
    #[arg(long, default_value = "/usr/share/apertium/modes")]
    modes: std::path::PathBuf,
}

/// Operations per second and latency percentiles of one measurement.
struct Rate {
    ops: u64,
    elapsed: Duration,
    p50: Option<Duration>,
    p99: Option<Duration>,
}

impl Rate {
    fn per_second(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64()
    }

    fn line(&self, what: &str) -> String {
        let lat = match (self.p50, self.p99) {
            (Some(a), Some(b)) => format!(
                "  p50 {:.2} ms  p99 {:.2} ms",
                a.as_secs_f64() * 1e3,
                b.as_secs_f64() * 1e3
            ),
            _ => String::new(),
        };
        format!(
            "  {what:<48} {:>10.1} /s  ({} in {:.1} s){lat}",
            self.per_second(),
            self.ops,
            self.elapsed.as_secs_f64()
        )
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Option<Duration> {
    if sorted.is_empty() {
        return None;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i.min(sorted.len() - 1)).copied()
}

/// `clients` tasks calling `op` until `duration` is over; any failure aborts.
async fn hammer<F, Fut>(clients: usize, duration: Duration, op: F) -> Result<Rate>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<()>> + Send,
{
    let op = Arc::new(op);
    let start = Instant::now();
    let deadline = start + duration;
    let mut tasks = Vec::with_capacity(clients);
    for _ in 0..clients {
        let op = op.clone();
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            while Instant::now() < deadline {
                let t = Instant::now();
                op().await?;
                lat.push(t.elapsed());
            }
            anyhow::Ok(lat)
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await??);
    }
    let elapsed = start.elapsed();
    all.sort();
    Ok(Rate {
        ops: all.len() as u64,
        elapsed,
        p50: percentile(&all, 0.5),
        p99: percentile(&all, 0.99),
    })
}

/// `op` in a loop on `threads` OS threads for `duration`.
fn bare<F>(threads: usize, duration: Duration, op: F) -> Rate
where
    F: Fn() + Sync,
{
    let count = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    op();
                    count.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        std::thread::sleep(duration);
        stop.store(true, Ordering::Relaxed);
    });
    Rate {
        ops: count.load(Ordering::Relaxed),
        elapsed: start.elapsed(),
        p50: None,
        p99: None,
    }
}

fn ratio(a: &Rate, b: &Rate) -> f64 {
    a.per_second() / b.per_second()
}

/// Runs the benchmark.
pub async fn run(args: AuthArgs) -> Result<()> {
    let duration = Duration::from_secs_f64(args.seconds);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let database = ThrowawayDb::create(
        &args.database_url,
        &format!("tolk_bench_auth_{}", std::process::id()),
    )
    .await?;
    let result = measure(&args, &database, duration, threads).await;
    database.drop_database().await?;
    let _ = std::fs::remove_dir_all(std::env::temp_dir().join(&database.name));
    result
}

async fn measure(
    args: &AuthArgs,
    database: &ThrowawayDb,
    duration: Duration,
    threads: usize,
) -> Result<()> {
    let db = database.connect(32).await?;

    // The tenant, a user, a confidential client, an API key.
    let authority = tolk_storage::auth::authorities::ensure(&db, "localhost").await?;
    let password = "bench password";
    let digest = tolk_auth::passwords::hash(password.to_owned(), args.bcrypt_cost).await?;
    tolk_storage::auth::users::create(&db, authority.id, "bench@example.com", "Bench", &digest, 0)
        .await?
        .context("user exists")?;
    let secret = "bench-client-secret-0123456789abcdef";
    let scopes = vec!["public".to_owned(), "translate".to_owned()];
    tolk_storage::auth::applications::create(
        &db,
        tolk_storage::auth::applications::NewApplication {
            authority_id: authority.id,
            name: "bench",
            uid: "bench-client",
            secret_digest: Some(&tolk_storage::auth::digest(secret)),
            redirect_uris: &[],
            scopes: &scopes,
            skip_authorization: true,
        },
    )
    .await?;
    let org = tolk_storage::keys::ensure_organization(&db, "bench").await?;
    let api_key = tolk_storage::keys::create(&db, org, "bench", false)
        .await?
        .secret;

    // The auth service and the API, in this process (development RSA key).
    let auth_state = tolk_auth::AuthState::new(db.clone(), tolk_auth::AuthConfig::default())?;
    let verifier = auth_state.verifier().clone();
    let keys = auth_state.keys().clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let auth_base = format!("http://{}", listener.local_addr()?);
    let router = tolk_auth::router(auth_state);
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router).await {
            eprintln!("auth: {e}");
        }
    });
    let dir = std::env::temp_dir().join(&database.name);
    let objects = Objects::open(&dir.join("objects").display().to_string())?;
    let translator = Arc::new(Translator::apertium(ApertiumConfig {
        modes_dir: args.modes.clone(),
        ..ApertiumConfig::default()
    })?);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let api_base = format!("http://{}", listener.local_addr()?);
    let api_state = tolk_api::AppState {
        bearer: Some(verifier.clone()),
        ..crate::app::api_state(db.clone(), objects, translator, 1024 * 1024)
    };
    let (_stop_tx, mut stop) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        let stopped = async move {
            let _ = stop.wait_for(|v| *v).await;
        };
        if let Err(e) = tolk_api::serve(listener, api_state, stopped).await {
            eprintln!("api: {e}");
        }
    });
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .pool_max_idle_per_host(args.clients.max(1))
        .build()?;

    // One token to look at, and to verify over and over.
    let cc_form: Vec<(&str, &str)> = vec![
        ("grant_type", "client_credentials"),
        ("client_id", "bench-client"),
        ("client_secret", secret),
        ("scope", "public translate"),
    ];
    let res = http
        .post(format!("{auth_base}/auth/token"))
        .form(&cc_form)
        .send()
        .await?;
    if !res.status().is_success() {
        bail!("client_credentials: {} {}", res.status(), res.text().await?);
    }
    let body: serde_json::Value = res.json().await?;
    let access = body["access_token"]
        .as_str()
        .context("no access_token")?
        .to_owned();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    validation.validate_aud = false;
    let claims =
        jsonwebtoken::decode::<serde_json::Value>(&access, &keys.decoding, &validation)?.claims;
    verifier
        .verify(&access)
        .context("the service's own token")?;
    for (what, auth) in [
        ("bearer", format!("Bearer {access}")),
        ("key", format!("DeepL-Auth-Key {api_key}")),
    ] {
        let res = http
            .get(format!("{api_base}/v2/usage"))
            .header("authorization", auth)
            .send()
            .await?;
        if !res.status().is_success() {
            bail!("/v2/usage with {what}: {}", res.status());
        }
    }

    println!("tolk-bench auth");
    println!(
        "  {} cores, {} HTTP clients, {:.1} s per figure, RS256 with the {} key ({} bits), bcrypt cost {}",
        threads,
        args.clients,
        duration.as_secs_f64(),
        if keys.development {
            "development"
        } else {
            "configured"
        },
        rsa_bits(&keys.jwk),
        args.bcrypt_cost
    );
    println!("  load average at start: {}", load_average());

    println!("service (HTTP on loopback, PostgreSQL):");
    let issue = {
        let http = http.clone();
        let url = format!("{auth_base}/auth/token");
        let form: Vec<(String, String)> = cc_form
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        hammer(args.clients, duration, move || {
            let http = http.clone();
            let url = url.clone();
            let form = form.clone();
            async move {
                let res = http.post(&url).form(&form).send().await?;
                if !res.status().is_success() {
                    bail!("token: {}", res.status());
                }
                res.bytes().await?;
                Ok(())
            }
        })
        .await?
    };
    println!(
        "{}",
        issue.line("client_credentials tokens (POST /auth/token)")
    );

    let get_usage = |auth: String| {
        let http = http.clone();
        let url = format!("{api_base}/v2/usage");
        move || {
            let http = http.clone();
            let url = url.clone();
            let auth = auth.clone();
            async move {
                let res = http.get(&url).header("authorization", auth).send().await?;
                if !res.status().is_success() {
                    bail!("usage: {}", res.status());
                }
                res.bytes().await?;
                Ok(())
            }
        }
    };
    let bearer = hammer(
        args.clients,
        duration,
        get_usage(format!("Bearer {access}")),
    )
    .await?;
    println!("{}", bearer.line("GET /v2/usage with the Bearer token"));
    let keyed = hammer(
        args.clients,
        duration,
        get_usage(format!("DeepL-Auth-Key {api_key}")),
    )
    .await?;
    println!(
        "{}",
        keyed.line("GET /v2/usage with an API key (for scale)")
    );
    let verify = bare(threads, duration, || {
        let _ = verifier.verify(&access);
    });
    println!(
        "{}",
        verify.line("Verifier::verify (in process, all cores)")
    );

    let signin = {
        let http = http.clone();
        let url = format!("{auth_base}/auth/signin");
        hammer(args.clients.min(threads * 2), duration, move || {
            let http = http.clone();
            let url = url.clone();
            async move {
                let res = http
                    .post(&url)
                    .json(&serde_json::json!({"email": "bench@example.com", "password": password}))
                    .send()
                    .await?;
                if res.status() != reqwest::StatusCode::ACCEPTED {
                    bail!("signin: {}", res.status());
                }
                Ok(())
            }
        })
        .await?
    };
    println!(
        "{}",
        signin.line(&format!(
            "sign-ins (POST /auth/signin, bcrypt {})",
            args.bcrypt_cost
        ))
    );

    println!("baseline (bare loops in this process, all cores, same key and claims):");
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    header.kid = Some(keys.kid.clone());
    let sign = bare(threads, duration, || {
        let _ = jsonwebtoken::encode(&header, &claims, &keys.encoding);
    });
    println!("{}", sign.line("jsonwebtoken::encode RS256"));
    let decode = bare(threads, duration, || {
        let _ = jsonwebtoken::decode::<serde_json::Value>(&access, &keys.decoding, &validation);
    });
    println!("{}", decode.line("jsonwebtoken::decode RS256"));
    let hash = digest.clone();
    let bcrypt_rate = bare(threads, duration, || {
        let _ = bcrypt::verify(password, &hash);
    });
    println!(
        "{}",
        bcrypt_rate.line(&format!("bcrypt::verify (cost {})", args.bcrypt_cost))
    );

    println!("ratios (service / baseline):");
    println!(
        "  client_credentials tokens / bare RS256 signs      {:>6.3}",
        ratio(&issue, &sign)
    );
    println!(
        "  Bearer GET /v2/usage / bare RS256 verifies        {:>6.3}",
        ratio(&bearer, &decode)
    );
    println!(
        "  Bearer GET /v2/usage / API-key GET /v2/usage      {:>6.3}",
        ratio(&bearer, &keyed)
    );
    println!(
        "  Verifier::verify / bare RS256 verifies            {:>6.3}",
        ratio(&verify, &decode)
    );
    println!(
        "  sign-ins / bare bcrypt verifies                   {:>6.3}",
        ratio(&signin, &bcrypt_rate)
    );
    println!("  load average at end: {}", load_average());
    Ok(())
}

/// The RSA modulus size of a JWK (its `n`, base64url).
fn rsa_bits(jwk: &jsonwebtoken::jwk::Jwk) -> usize {
    match &jwk.algorithm {
        jsonwebtoken::jwk::AlgorithmParameters::RSA(p) => p.n.len() * 6 / 8 * 8,
        _ => 0,
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}
