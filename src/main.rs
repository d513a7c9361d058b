//! `tolk`: one binary with subcommands api, worker, scheduler, up, migrate, admin.

mod cli;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use tokio::sync::watch;

use cli::{AdminCommand, ApiArgs, AuthArgs, Cli, Command, Common, SchedulerArgs, WorkerArgs};
use tolk_api::rate_limit::{RateLimit, RateLimiter};
use tolk_engine::{
    ApertiumConfig, ApertiumEngine, ApyEngine, DeeplEngine, Engine, HttpEngineConfig, OpenAiEngine,
    Translator,
};
use tolk_storage::db::{self, DatabaseSettings};
use tolk_storage::objects::Objects;
use tolk_storage::{PgPool, keys};

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    init_tracing(&cli.common.log_format);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(run(cli))
}

fn init_tracing(format: &str) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        EnvFilter::new("info,sqlx=warn,apalis=warn,apalis_core=warn,apalis_postgres=warn")
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    if format == "json" {
        builder.json().init();
    } else {
        builder.init();
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let common = cli.common;
    match cli.command {
        Command::Migrate => {
            let pool = connect(&common).await?;
            db::migrate(&pool).await.context("running migrations")?;
            tracing::info!("migrations applied");
            Ok(())
        }
        Command::Admin {
            command:
                AdminCommand::CreateKey {
                    label,
                    admin,
                    organization,
                },
        } => {
            let pool = connect(&common).await?;
            db::migrate(&pool).await.context("running migrations")?;
            let org = keys::ensure_organization(&pool, &organization).await?;
            let key = keys::create(&pool, org, &label, admin).await?;
            println!("{}", key.secret);
            Ok(())
        }
        Command::Admin {
            command:
                AdminCommand::CreateUser {
                    email,
                    password,
                    name,
                    admin,
                    domain,
                },
        } => {
            let pool = connect(&common).await?;
            db::migrate(&pool).await.context("running migrations")?;
            let authority = tolk_storage::auth::authorities::ensure(&pool, &domain).await?;
            let digest =
                tolk_auth::passwords::hash(password, tolk_auth::passwords::DEFAULT_COST).await?;
            let permissions = if admin {
                tolk_storage::auth::users::SYS_ADMIN
            } else {
                0
            };
            let user = tolk_storage::auth::users::create(
                &pool,
                authority.id,
                email.trim(),
                &name,
                &digest,
                permissions,
            )
            .await?
            .with_context(|| format!("a user with the email {email} already exists"))?;
            println!(
                "{}",
                serde_json::json!({ "id": user.id, "email": user.email })
            );
            Ok(())
        }
        Command::Admin {
            command:
                AdminCommand::CreateApp {
                    name,
                    redirect_uris,
                    scopes,
                    skip_authorization,
                    public,
                    domain,
                },
        } => {
            let pool = connect(&common).await?;
            db::migrate(&pool).await.context("running migrations")?;
            let authority = tolk_storage::auth::authorities::ensure(&pool, &domain).await?;
            let uid = random_hex(16);
            let secret = (!public).then(|| random_hex(32));
            let digest = secret.as_deref().map(tolk_storage::auth::digest);
            let scopes: Vec<String> = scopes
                .split([' ', ','])
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            let redirect_uris: Vec<String> = redirect_uris
                .into_iter()
                .filter(|u| !u.is_empty())
                .collect();
            tolk_storage::auth::applications::create(
                &pool,
                tolk_storage::auth::applications::NewApplication {
                    authority_id: authority.id,
                    name: &name,
                    uid: &uid,
                    secret_digest: digest.as_deref(),
                    redirect_uris: &redirect_uris,
                    scopes: &scopes,
                    skip_authorization,
                },
            )
            .await?;
            let mut out = serde_json::json!({ "uid": uid, "name": name });
            if let Some(secret) = secret {
                out["secret"] = serde_json::json!(secret);
            }
            println!("{out}");
            Ok(())
        }
        Command::Auth {
            listen,
            no_migrate,
            auth,
        } => {
            let pool = connect(&common).await?;
            if !no_migrate {
                db::migrate(&pool).await.context("running migrations")?;
            }
            let stop = shutdown_channel();
            let state = auth_state(&common, &auth, pool)?;
            let listener = tokio::net::TcpListener::bind(listen)
                .await
                .with_context(|| format!("binding {listen}"))?;
            tracing::info!(listen = %listen, "auth service listening");
            axum::serve(listener, tolk_auth::router(state))
                .with_graceful_shutdown(stopped(stop))
                .await
                .context("serving HTTP")
        }
        Command::Api(api) => {
            let pool = connect(&common).await?;
            if !api.no_migrate {
                db::migrate(&pool).await.context("running migrations")?;
            }
            let stop = shutdown_channel();
            // Without a usable key (production without JWT_SECRET) the API still
            // serves API keys; only Bearer tokens are refused.
            let bearer = match verifier(&common) {
                Ok(v) => Some(v),
                Err(e) => {
                    tracing::warn!(error = %format!("{e:#}"), "Bearer tokens are not accepted");
                    None
                }
            };
            let services = Services::open(&common, pool).await?;
            serve_api(api, services, bearer, None, stop).await
        }
        Command::Worker(worker) => {
            let pool = connect(&common).await?;
            let stop = shutdown_channel();
            let services = Services::open(&common, pool).await?;
            run_worker(worker, services, stop).await
        }
        Command::Scheduler(args) => {
            // Maintenance needs the database and the object store only: no
            // engines, so a scheduler host needs no Apertium.
            let pool = connect(&common).await?;
            let stop = shutdown_channel();
            let objects =
                Objects::open(&common.object_store).context("opening the object store")?;
            run_scheduler(args, pool, objects, heartbeat(&common), stop).await;
            Ok(())
        }
        Command::Up {
            api,
            auth,
            worker,
            scheduler,
        } => {
            let pool = connect(&common).await?;
            if !api.no_migrate {
                db::migrate(&pool).await.context("running migrations")?;
            }
            let (stop_all, stop) = shutdown_sender();
            let auth_state = auth_state(&common, &auth, pool.clone())?;
            let bearer = Some(auth_state.verifier().clone());
            let auth_routes = tolk_auth::router(auth_state);
            let services = Services::open(&common, pool).await?;
            // The API can fail (its address taken, its listener broken); then
            // the worker and scheduler stop too, and the process exits non-zero.
            let api_services = services.clone();
            let api_stop = stop.clone();
            let api_task = async move {
                let served =
                    serve_api(api, api_services, bearer, Some(auth_routes), api_stop).await;
                if let Err(e) = &served {
                    tracing::error!(error = %format!("{e:#}"), "the API stopped; stopping the worker and scheduler");
                    let _ = stop_all.send(true);
                }
                served
            };
            let worker_task = run_worker(worker, services.clone(), stop.clone());
            let scheduler_task = run_scheduler(
                scheduler,
                services.db.clone(),
                services.objects.clone(),
                services.heartbeat,
                stop.clone(),
            );
            let (a, w, ()) = tokio::join!(api_task, worker_task, scheduler_task);
            a.and(w)
        }
    }
}

fn random_hex(bytes: usize) -> String {
    use rand::RngCore;
    use std::fmt::Write;
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    buf.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn is_production(common: &Common) -> bool {
    tolk_auth::config::is_production(&common.sg_env)
}

/// The Bearer token verifier of the API (the auth service's public key).
fn verifier(common: &Common) -> anyhow::Result<tolk_auth::tokens::Verifier> {
    tolk_auth::tokens::Verifier::from_settings(
        common.jwt_secret.as_deref(),
        &common.jwt_issuer,
        is_production(common),
    )
    .context("loading JWT_SECRET")
}

/// The auth service's state from the settings.
fn auth_state(
    common: &Common,
    auth: &AuthArgs,
    pool: PgPool,
) -> anyhow::Result<tolk_auth::AuthState> {
    let config = tolk_auth::AuthConfig {
        jwt_secret: common.jwt_secret.clone(),
        jwt_issuer: common.jwt_issuer.clone(),
        cookie_session_secret: auth.cookie_session_secret.clone(),
        production: is_production(common),
        session_timeout_minutes: auth.session_timeout_minutes,
        redis_url: common.redis_url.clone().filter(|u| !u.is_empty()),
        login_events_channel: auth.login_events_channel.clone(),
        platform_uri: auth.platform_uri.clone(),
        mcp_registration_limit: auth.mcp_registration_limit,
        mcp_client_id_hosts: auth.mcp_client_id_hosts.clone(),
        bcrypt_cost: tolk_auth::passwords::DEFAULT_COST,
    };
    tolk_auth::AuthState::new(pool, config).context("starting the auth service")
}

/// What the three roles share.
#[derive(Clone)]
struct Services {
    db: PgPool,
    objects: Objects,
    translator: Arc<Translator>,
    espeak: tolk_voice::tts::Espeak,
    lame: std::path::PathBuf,
    recognizer: tolk_voice::asr::Recognizer,
    redis_url: Option<String>,
    /// The workers' heartbeat period.
    heartbeat: Duration,
}

impl Services {
    async fn open(common: &Common, db: PgPool) -> anyhow::Result<Self> {
        let objects = Objects::open(&common.object_store).context("opening the object store")?;
        tracing::info!(store = objects.description(), "object store");
        let translator = open_engines(common)
            .await
            .context("loading the translation engines")?;
        let espeak = tolk_voice::tts::Espeak::new(&common.espeak);
        let recognizer =
            tolk_voice::asr::Recognizer::new(&common.pocketsphinx, &common.pocketsphinx_model);
        if let Err(e) = recognizer.check() {
            tracing::warn!(error = %e, "speech recognition unavailable: voice jobs will fail");
        }
        Ok(Self {
            db,
            objects,
            translator: Arc::new(translator),
            espeak,
            lame: common.lame.clone(),
            recognizer,
            redis_url: common.redis_url.clone().filter(|u| !u.is_empty()),
            heartbeat: heartbeat(common),
        })
    }
}

/// The engines of `--engines`, in that order, behind one [`Translator`].
async fn open_engines(common: &Common) -> anyhow::Result<Translator> {
    let timeout = Duration::from_secs(common.engine_timeout_secs.max(1));
    let http = |url: &str, pairs: &[String]| HttpEngineConfig {
        pairs: pairs.to_vec(),
        timeout,
        concurrency: common.engine_concurrency.max(1),
        queue: common.engine_queue,
        ..HttpEngineConfig::new(url)
    };
    let mut engines: Vec<Arc<dyn Engine>> = Vec::new();
    for name in &common.engines {
        let name = name.trim().to_ascii_lowercase();
        let engine: Arc<dyn Engine> = match name.as_str() {
            "" => continue,
            "apertium" => {
                let mut config = ApertiumConfig {
                    modes_dir: common.apertium_modes.clone(),
                    timeout,
                    queue: common.engine_queue,
                    ..ApertiumConfig::default()
                };
                if let Some(n) = common.apertium_pipelines {
                    config.pipelines_per_pair = n.max(1);
                }
                Arc::new(ApertiumEngine::new(config)?)
            }
            "deepl" => {
                let url = common
                    .deepl_url
                    .as_deref()
                    .context("engine deepl needs TOLK_DEEPL_URL")?;
                let mut config = http(url, &common.deepl_pairs);
                config.api_key = common.deepl_key.clone();
                Arc::new(DeeplEngine::new(config)?)
            }
            "openai" => {
                let url = common
                    .openai_url
                    .as_deref()
                    .context("engine openai needs TOLK_OPENAI_URL")?;
                let mut config = http(url, &common.openai_pairs);
                config.api_key = common.openai_key.clone();
                config.model = common.openai_model.clone();
                Arc::new(OpenAiEngine::new(config)?)
            }
            "apy" => {
                let url = common
                    .apy_url
                    .as_deref()
                    .context("engine apy needs TOLK_APY_URL")?;
                Arc::new(ApyEngine::connect(http(url, &common.apy_pairs)).await?)
            }
            other => anyhow::bail!(
                "unknown engine '{other}' in TOLK_ENGINES (known: apertium, deepl, openai, apy)"
            ),
        };
        tracing::info!(
            engine = engine.name(),
            pairs = engine.pairs().len(),
            "engine ready"
        );
        engines.push(engine);
    }
    Ok(Translator::new(engines)?)
}

async fn connect(common: &Common) -> anyhow::Result<PgPool> {
    let settings = DatabaseSettings {
        database_url: common.database_url.clone(),
        pg_database_url: common.pg_database_url.clone(),
        host: common.pg_host.clone(),
        port: common.pg_port,
        db: common.pg_db.clone(),
        user: common.pg_user.clone(),
        password: common.pg_password.clone(),
    };
    let options = settings
        .connect_options()
        .context("reading the database settings")?;
    db::connect_waiting(
        options,
        common.db_connections,
        Duration::from_millis(common.db_acquire_timeout_ms.max(100)),
    )
    .await
    .context("connecting to PostgreSQL")
}

/// A channel that flips to true on SIGINT or SIGTERM.
fn shutdown_channel() -> watch::Receiver<bool> {
    shutdown_sender().1
}

/// [`shutdown_channel`], with a sender to flip it from inside the process too.
fn shutdown_sender() -> (Arc<watch::Sender<bool>>, watch::Receiver<bool>) {
    let (tx, rx) = watch::channel(false);
    let tx = Arc::new(tx);
    let signalled = tx.clone();
    tokio::spawn(async move {
        let ctrl_c = tokio::signal::ctrl_c();
        #[cfg(unix)]
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(e) => {
                    tracing::error!(error = %e, "cannot listen for SIGTERM");
                    std::future::pending::<()>().await;
                }
            }
        };
        #[cfg(not(unix))]
        let term = std::future::pending::<()>();
        tokio::select! {
            _ = ctrl_c => {}
            () = term => {}
        }
        tracing::info!("shutting down");
        let _ = signalled.send(true);
    });
    (tx, rx)
}

async fn stopped(mut rx: watch::Receiver<bool>) {
    let _ = rx.wait_for(|v| *v).await;
}

async fn serve_api(
    args: ApiArgs,
    s: Services,
    bearer: Option<tolk_auth::tokens::Verifier>,
    extra: Option<axum::Router>,
    stop: watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("binding {}", args.listen))?;
    tracing::info!(listen = %args.listen, "API listening");
    let rate = RateLimit {
        per_second: args.rate_limit_per_second.max(0.0),
        burst: args.rate_limit_burst.max(1),
    };
    let rate_limiter = match &s.redis_url {
        Some(url) => RateLimiter::shared(rate, url)
            .context("reading REDIS_URL for the shared rate limits")?,
        None => {
            tracing::warn!(
                "REDIS_URL is not set: per-key rate limits are kept in this process only, \
                 not shared between API replicas"
            );
            RateLimiter::local(rate)
        }
    };
    tracing::info!(
        per_second = rate.per_second,
        burst = rate.burst,
        shared = rate_limiter.is_shared(),
        "per-key rate limit"
    );
    let usage_appender = tolk_storage::usage_appender::UsageAppender::start(
        s.db.clone(),
        tolk_storage::usage_appender::AppenderConfig {
            max_delay: std::time::Duration::from_millis(args.ledger_batch_ms),
            ..Default::default()
        },
    );
    let state = tolk_api::AppState {
        enqueuer: tolk_storage::enqueuer::Enqueuer::start(&s.db),
        db: s.db,
        objects: s.objects,
        translator: s.translator,
        speller: std::sync::Arc::new(tolk_write::Speller::new(&args.hunspell_dir)),
        max_upload_bytes: args.max_upload_bytes,
        voice: tolk_api::routes::voice::VoiceSettings {
            espeak: s.espeak.clone(),
            lame: s.lame.clone(),
            recognizer: s.recognizer.clone(),
            max_upload_bytes: args.max_voice_upload_bytes,
            max_audio_seconds: args.max_voice_seconds,
            stream_idle: Duration::from_secs(args.voice_stream_idle_secs.max(1)),
            public_url: args.public_url.clone(),
        },
        rate_limiter,
        analytics_page_size: args.analytics_page_size.max(1),
        record_usage: true,
        ledger_writes: args.ledger_writes.into(),
        usage_appender,
        glossary_cache: std::sync::Arc::new(tolk_pipeline::GlossaryCache::new(
            args.glossary_cache_mb.saturating_mul(1024 * 1024),
        )),
        bearer,
        worker_heartbeat: s.heartbeat,
    };
    tolk_api::serve_with(listener, state, extra, stopped(stop))
        .await
        .context("serving HTTP")
}

async fn run_worker(
    args: WorkerArgs,
    s: Services,
    stop: watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let config = tolk_worker::WorkerConfig {
        concurrency: args.concurrency.max(1),
        lanes: args.lanes.max(1),
        batch_size: args.batch_size.map(|b| b.max(1)),
        heartbeat: s.heartbeat,
        ..Default::default()
    };
    let state = tolk_worker::WorkerState {
        db: s.db,
        objects: s.objects,
        translator: s.translator,
        espeak: s.espeak,
        recognizer: s.recognizer,
    };
    tolk_worker::run(config, state, stopped(stop)).await;
    Ok(())
}

/// The workers' heartbeat period from the settings.
fn heartbeat(common: &Common) -> Duration {
    Duration::from_secs(common.heartbeat_secs.max(1))
}

async fn run_scheduler(
    args: SchedulerArgs,
    db: PgPool,
    objects: Objects,
    heartbeat: Duration,
    stop: watch::Receiver<bool>,
) {
    let config = tolk_scheduler::SchedulerConfig {
        tick: Duration::from_secs(args.tick_secs.max(1)),
        keep_documents: Duration::from_secs(args.retention_days.max(1) * 24 * 3600),
        keep_done_jobs: Duration::from_secs(args.keep_done_jobs_secs),
        keep_failed_jobs: Duration::from_secs(args.keep_failed_jobs_hours * 3600),
        dead_worker_after: heartbeat.saturating_mul(3),
        ..Default::default()
    };
    tolk_scheduler::run(config, db, objects, stopped(stop)).await;
}
