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

/// The password of the bench user.
const PASSWORD: &str = "bench password";

/// The secret of the bench's confidential client.
const CLIENT_SECRET: &str = "bench-client-secret-0123456789abcdef";

/// Sets up the tenant and the services, then measures the service and the
/// baseline and prints the figures and their ratios.
async fn measure(
    args: &AuthArgs,
    database: &ThrowawayDb,
    duration: Duration,
    threads: usize,
) -> Result<()> {
    let db = database.connect(32).await?;
    let tenant = create_tenant(&db, args.bcrypt_cost).await?;
    let services = start_services(args, database, &db).await?;
    let token = first_token(&services, &tenant).await?;
    print_header(args, &services.keys, duration, threads);
    let run = Run {
        args,
        duration,
        threads,
    };
    let service = measure_service(&run, &services, &token).await?;
    let baseline = measure_baseline(&run, &services.keys, &token, &tenant);
    print_ratios(&service, &baseline);
    Ok(())
}

/// What every measurement runs with.
struct Run<'a> {
    args: &'a AuthArgs,
    duration: Duration,
    threads: usize,
}

/// The tenant's credentials: the user's bcrypt digest and an API key.
struct Tenant {
    digest: String,
    api_key: String,
}

/// Creates the tenant, a user, a confidential client and an API key.
async fn create_tenant(db: &sqlx::PgPool, bcrypt_cost: u32) -> Result<Tenant> {
    let authority = tolk_storage::auth::authorities::ensure(db, "localhost").await?;
    let digest = tolk_auth::passwords::hash(PASSWORD.to_owned(), bcrypt_cost).await?;
    tolk_storage::auth::users::create(db, authority.id, "bench@example.com", "Bench", &digest, 0)
        .await?
        .context("user exists")?;
    let scopes = vec!["public".to_owned(), "translate".to_owned()];
    tolk_storage::auth::applications::create(
        db,
        tolk_storage::auth::applications::NewApplication {
            authority_id: authority.id,
            name: "bench",
            uid: "bench-client",
            secret_digest: Some(&tolk_storage::auth::digest(CLIENT_SECRET)),
            redirect_uris: &[],
            scopes: &scopes,
            skip_authorization: true,
        },
    )
    .await?;
    let org = tolk_storage::keys::ensure_organization(db, "bench").await?;
    let api_key = tolk_storage::keys::create(db, org, "bench", false)
        .await?
        .secret;
    Ok(Tenant { digest, api_key })
}

/// The auth service and the API running in this process, and the client
/// that reaches them.
struct Services {
    verifier: tolk_auth::tokens::Verifier,
    keys: tolk_auth::tokens::SigningKeys,
    auth_base: String,
    api_base: String,
    http: reqwest::Client,
    /// Keeps the API serving until dropped.
    _stop_tx: tokio::sync::watch::Sender<bool>,
}

/// Serves the auth service and the API in this process (development RSA key)
/// on loopback, and builds the HTTP client.
async fn start_services(
    args: &AuthArgs,
    database: &ThrowawayDb,
    db: &sqlx::PgPool,
) -> Result<Services> {
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
    let api_state = tolk_api::AppState {
        bearer: Some(verifier.clone()),
        ..crate::app::api_state(db.clone(), objects, translator, 1024 * 1024)
    };
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let api_base = crate::app::serve(api_state, stop).await?;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .pool_max_idle_per_host(args.clients.max(1))
        .build()?;
    Ok(Services {
        verifier,
        keys,
        auth_base,
        api_base,
        http,
        _stop_tx,
    })
}

/// The token the service issued, its claims, and how they are checked.
struct Token {
    access: String,
    claims: serde_json::Value,
    validation: jsonwebtoken::Validation,
    api_key: String,
}

/// The client_credentials form of the bench client.
fn cc_form() -> Vec<(&'static str, &'static str)> {
    vec![
        ("grant_type", "client_credentials"),
        ("client_id", "bench-client"),
        ("client_secret", CLIENT_SECRET),
        ("scope", "public translate"),
    ]
}

/// Gets one token to look at and to verify over and over, and checks that
/// the API takes it and the API key.
async fn first_token(services: &Services, tenant: &Tenant) -> Result<Token> {
    let Services {
        verifier,
        keys,
        auth_base,
        api_base,
        http,
        ..
    } = services;
    let res = http
        .post(format!("{auth_base}/auth/token"))
        .form(&cc_form())
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
    let api_key = &tenant.api_key;
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
    Ok(Token {
        access,
        claims,
        validation,
        api_key: api_key.clone(),
    })
}

/// Prints the title, the set-up and the load average at start.
fn print_header(
    args: &AuthArgs,
    keys: &tolk_auth::tokens::SigningKeys,
    duration: Duration,
    threads: usize,
) {
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
}

/// The service's figures.
struct ServiceRates {
    issue: Rate,
    bearer: Rate,
    keyed: Rate,
    verify: Rate,
    signin: Rate,
}

/// Measures the service (HTTP on loopback, PostgreSQL) and prints each figure.
async fn measure_service(
    run: &Run<'_>,
    services: &Services,
    token: &Token,
) -> Result<ServiceRates> {
    println!("service (HTTP on loopback, PostgreSQL):");
    let issue = measure_issue(run, services).await?;
    println!(
        "{}",
        issue.line("client_credentials tokens (POST /auth/token)")
    );
    let (bearer, keyed) = measure_usage(run, services, token).await?;
    let access = &token.access;
    let verify = bare(run.threads, run.duration, || {
        let _ = services.verifier.verify(access);
    });
    println!(
        "{}",
        verify.line("Verifier::verify (in process, all cores)")
    );
    let signin = measure_signin(run, services).await?;
    println!(
        "{}",
        signin.line(&format!(
            "sign-ins (POST /auth/signin, bcrypt {})",
            run.args.bcrypt_cost
        ))
    );
    Ok(ServiceRates {
        issue,
        bearer,
        keyed,
        verify,
        signin,
    })
}

/// Token issuance: concurrent client_credentials posts to `/auth/token`.
async fn measure_issue(run: &Run<'_>, services: &Services) -> Result<Rate> {
    let http = services.http.clone();
    let url = format!("{}/auth/token", services.auth_base);
    let form: Vec<(String, String)> = cc_form()
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    hammer(run.args.clients, run.duration, move || {
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
    .await
}

/// `GET /v2/usage` with the Bearer token, then with the API key (for scale);
/// prints both figures.
async fn measure_usage(run: &Run<'_>, services: &Services, token: &Token) -> Result<(Rate, Rate)> {
    let get_usage = |auth: String| {
        let http = services.http.clone();
        let url = format!("{}/v2/usage", services.api_base);
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
        run.args.clients,
        run.duration,
        get_usage(format!("Bearer {}", token.access)),
    )
    .await?;
    println!("{}", bearer.line("GET /v2/usage with the Bearer token"));
    let keyed = hammer(
        run.args.clients,
        run.duration,
        get_usage(format!("DeepL-Auth-Key {}", token.api_key)),
    )
    .await?;
    println!(
        "{}",
        keyed.line("GET /v2/usage with an API key (for scale)")
    );
    Ok((bearer, keyed))
}

/// Sign-ins: concurrent posts to `/auth/signin` (at most two clients a core).
async fn measure_signin(run: &Run<'_>, services: &Services) -> Result<Rate> {
    let http = services.http.clone();
    let url = format!("{}/auth/signin", services.auth_base);
    hammer(
        run.args.clients.min(run.threads * 2),
        run.duration,
        move || {
            let http = http.clone();
            let url = url.clone();
            async move {
                let res = http
                    .post(&url)
                    .json(&serde_json::json!({"email": "bench@example.com", "password": PASSWORD}))
                    .send()
                    .await?;
                if res.status() != reqwest::StatusCode::ACCEPTED {
                    bail!("signin: {}", res.status());
                }
                Ok(())
            }
        },
    )
    .await
}

/// The baseline's figures.
struct BaselineRates {
    sign: Rate,
    decode: Rate,
    bcrypt: Rate,
}

/// Measures the bare library loops (all cores, same key and claims) and
/// prints each figure.
fn measure_baseline(
    run: &Run<'_>,
    keys: &tolk_auth::tokens::SigningKeys,
    token: &Token,
    tenant: &Tenant,
) -> BaselineRates {
    let (threads, duration) = (run.threads, run.duration);
    println!("baseline (bare loops in this process, all cores, same key and claims):");
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    header.kid = Some(keys.kid.clone());
    let sign = bare(threads, duration, || {
        let _ = jsonwebtoken::encode(&header, &token.claims, &keys.encoding);
    });
    println!("{}", sign.line("jsonwebtoken::encode RS256"));
    let decode = bare(threads, duration, || {
        let _ = jsonwebtoken::decode::<serde_json::Value>(
            &token.access,
            &keys.decoding,
            &token.validation,
        );
    });
    println!("{}", decode.line("jsonwebtoken::decode RS256"));
    let hash = tenant.digest.clone();
    let bcrypt = bare(threads, duration, || {
        let _ = bcrypt::verify(PASSWORD, &hash);
    });
    println!(
        "{}",
        bcrypt.line(&format!("bcrypt::verify (cost {})", run.args.bcrypt_cost))
    );
    BaselineRates {
        sign,
        decode,
        bcrypt,
    }
}

/// Prints the ratios service / baseline and the load average at the end.
fn print_ratios(service: &ServiceRates, baseline: &BaselineRates) {
    println!("ratios (service / baseline):");
    println!(
        "  client_credentials tokens / bare RS256 signs      {:>6.3}",
        ratio(&service.issue, &baseline.sign)
    );
    println!(
        "  Bearer GET /v2/usage / bare RS256 verifies        {:>6.3}",
        ratio(&service.bearer, &baseline.decode)
    );
    println!(
        "  Bearer GET /v2/usage / API-key GET /v2/usage      {:>6.3}",
        ratio(&service.bearer, &service.keyed)
    );
    println!(
        "  Verifier::verify / bare RS256 verifies            {:>6.3}",
        ratio(&service.verify, &baseline.decode)
    );
    println!(
        "  sign-ins / bare bcrypt verifies                   {:>6.3}",
        ratio(&service.signin, &baseline.bcrypt)
    );
    println!("  load average at end: {}", load_average());
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
