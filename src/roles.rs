//! The long-running roles: `tolk api`, `worker`, `scheduler`, `auth`, and
//! `up` (all of them in one process), each stopping on SIGINT or SIGTERM.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::sync::watch;
use tolk_storage::PgPool;
use tolk_storage::db;
use tolk_storage::objects::Objects;
use tolk_storage::rate_limit::{RateLimit, RateLimiter};

use crate::cli::{ApiArgs, AuthArgs, Common, SchedulerArgs, WorkerArgs};
use crate::services::{Services, auth_state, connect, heartbeat, verifier};

/// `tolk auth`: the auth service alone.
pub async fn auth(
    common: &Common,
    listen: std::net::SocketAddr,
    no_migrate: bool,
    auth: AuthArgs,
) -> anyhow::Result<()> {
    let pool = connect(common).await?;
    if !no_migrate {
        db::migrate(&pool).await.context("running migrations")?;
    }
    let stop = shutdown_channel();
    let state = auth_state(common, &auth, pool)?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("binding {listen}"))?;
    tracing::info!(listen = %listen, "auth service listening");
    // The peer address reaches handlers (the sign-in and client throttles).
    let app =
        tolk_auth::router(state).into_make_service_with_connect_info::<std::net::SocketAddr>();
    axum::serve(listener, app)
        .with_graceful_shutdown(stopped(stop))
        .await
        .context("serving HTTP")
}

/// `tolk api`: the translation API.
pub async fn api(common: &Common, api: ApiArgs) -> anyhow::Result<()> {
    let pool = connect(common).await?;
    if !api.no_migrate {
        db::migrate(&pool).await.context("running migrations")?;
    }
    let stop = shutdown_channel();
    // Without a usable key (production without JWT_SECRET) the API still
    // serves API keys; only Bearer tokens are refused.
    let bearer = match verifier(common) {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::warn!(error = %format!("{e:#}"), "Bearer tokens are not accepted");
            None
        }
    };
    let services = Services::open(common, pool).await?;
    services.check_speech();
    serve_api(api, services, bearer, None, stop).await
}

/// `tolk worker`: the job handlers.
pub async fn worker(common: &Common, worker: WorkerArgs) -> anyhow::Result<()> {
    let pool = connect(common).await?;
    let stop = shutdown_channel();
    let pools = pools(&worker)?;
    let services = Services::open(common, pool).await?;
    // A worker without voice jobs never needs the speech tools.
    if pools.runs(tolk_worker::Kind::Voice) {
        services.check_speech();
    }
    run_worker(worker, services, stop).await
}

/// `tolk scheduler`: maintenance. It needs the database and the object store
/// only: no engines, so a scheduler host needs no Apertium.
pub async fn scheduler(common: &Common, args: SchedulerArgs) -> anyhow::Result<()> {
    let pool = connect(common).await?;
    let stop = shutdown_channel();
    let objects = Objects::open(&common.object_store).context("opening the object store")?;
    run_scheduler(args, pool, objects, heartbeat(common), stop).await;
    Ok(())
}

/// `tolk up`: API (with the auth routes), worker and scheduler in one process.
/// The API can fail (its address taken, its listener broken); then the worker
/// and scheduler stop too, and the process exits non-zero.
pub async fn up(
    common: &Common,
    api: ApiArgs,
    auth: AuthArgs,
    worker: WorkerArgs,
    scheduler: SchedulerArgs,
) -> anyhow::Result<()> {
    let pool = connect(common).await?;
    if !api.no_migrate {
        db::migrate(&pool).await.context("running migrations")?;
    }
    let (stop_all, stop) = shutdown_sender();
    let auth_state = auth_state(common, &auth, pool.clone())?;
    let bearer = Some(auth_state.verifier().clone());
    let auth_routes = tolk_auth::router(auth_state);
    pools(&worker)?;
    let services = Services::open(common, pool).await?;
    services.check_speech();
    let api_services = services.clone();
    let api_stop = stop.clone();
    let api_task = async move {
        let served = serve_api(api, api_services, bearer, Some(auth_routes), api_stop).await;
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

/// The worker pools of `--queues` and `--concurrency`.
fn pools(args: &WorkerArgs) -> anyhow::Result<tolk_worker::Pools> {
    tolk_worker::Pools::parse(&args.queues, &args.concurrency)
        .context("reading --queues and --concurrency")
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

/// A listener on `addr` whose kernel queue holds `backlog` connections not
/// yet accepted (capped by the kernel at net.core.somaxconn), so a burst of
/// clients is queued rather than reset.
fn listen_on(addr: std::net::SocketAddr, backlog: u32) -> std::io::Result<tokio::net::TcpListener> {
    let socket = match addr {
        std::net::SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        std::net::SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(backlog.max(1))
}

async fn serve_api(
    args: ApiArgs,
    s: Services,
    bearer: Option<tolk_auth::tokens::Verifier>,
    extra: Option<axum::Router>,
    stop: watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let listener = listen_on(args.listen, args.listen_backlog)
        .with_context(|| format!("binding {}", args.listen))?;
    tracing::info!(listen = %args.listen, backlog = args.listen_backlog, "API listening");
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
        dashboard_sign_in: args.dashboard_client_id.clone().map(|client_id| {
            tolk_api::routes::admin_ui::DashboardSignIn {
                client_id,
                auth_url: args.dashboard_auth_url.clone(),
            }
        }),
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
    let pools = pools(&args)?;
    let config = tolk_worker::WorkerConfig {
        pools: Some(pools),
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
        office: tolk_worker::Office {
            program: args.soffice.clone(),
            timeout: Duration::from_secs(args.convert_timeout_secs.max(1)),
        },
        fonts: tolk_worker::PdfFonts::new(std::env::split_paths(&args.fonts_dirs).collect()),
        ocr: tolk_worker::Tesseract {
            program: args.tesseract.clone(),
            timeout: Duration::from_secs(args.ocr_timeout_secs.max(1)),
        },
    };
    tolk_worker::run(config, state, stopped(stop)).await;
    Ok(())
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
