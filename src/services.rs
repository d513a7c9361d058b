//! What the roles share: the database connection, the engines, the object
//! store, the speech tools, the auth settings.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tolk_engine::{
    ApertiumConfig, ApertiumEngine, ApyEngine, DeeplEngine, Engine, HttpEngineConfig, OpenAiEngine,
    Translator,
};
use tolk_storage::PgPool;
use tolk_storage::db::{self, DatabaseSettings};
use tolk_storage::objects::Objects;

use crate::cli::{AuthArgs, Common};

/// Whether the settings say production (`SG_ENV`).
pub fn is_production(common: &Common) -> bool {
    tolk_auth::config::is_production(&common.sg_env)
}

/// The Bearer token verifier of the API (the auth service's public key).
pub fn verifier(common: &Common) -> anyhow::Result<tolk_auth::tokens::Verifier> {
    tolk_auth::tokens::Verifier::from_settings(
        common.jwt_secret.as_deref(),
        &common.jwt_issuer,
        is_production(common),
    )
    .context("loading JWT_SECRET")
}

/// The auth service's state from the settings.
pub fn auth_state(
    common: &Common,
    auth: &AuthArgs,
    pool: PgPool,
) -> anyhow::Result<tolk_auth::AuthState> {
    let config = tolk_auth::AuthConfig {
        jwt_secret: common.jwt_secret.clone(),
        jwt_issuer: common.jwt_issuer.clone(),
        cookie_session_secret: auth.sealing.cookie_session_secret.clone(),
        provider_token_keys: auth.sealing.provider_token_keys.clone(),
        saml_sp_signing: auth
            .saml_sp_key_file
            .clone()
            .zip(auth.saml_sp_cert_file.clone()),
        production: is_production(common),
        session_timeout_minutes: auth.session_timeout_minutes,
        redis_url: common.redis_url.clone().filter(|u| !u.is_empty()),
        login_events_channel: auth.login_events_channel.clone(),
        platform_uri: auth.platform_uri.clone(),
        mcp_registration_limit: auth.mcp_registration_limit,
        mcp_registration_ceiling: auth.mcp_registration_ceiling,
        mcp_client_id_hosts: auth.mcp_client_id_hosts.clone(),
        test_client_metadata_ca: auth.test_client_metadata_ca.clone(),
        test_client_metadata_loopback: auth.test_client_metadata_loopback,
        bcrypt_cost: tolk_auth::passwords::DEFAULT_COST,
    };
    tolk_auth::AuthState::new(pool, config).context("starting the auth service")
}

/// What the three roles share.
#[derive(Clone)]
pub struct Services {
    pub db: PgPool,
    pub objects: Objects,
    pub translator: Arc<Translator>,
    pub espeak: tolk_voice::tts::Espeak,
    pub lame: std::path::PathBuf,
    pub recognizer: tolk_voice::asr::Recognizer,
    pub redis_url: Option<String>,
    /// The workers' heartbeat period.
    pub heartbeat: Duration,
}

impl Services {
    /// Opens the object store, the engines and the speech tools.
    pub async fn open(common: &Common, db: PgPool) -> anyhow::Result<Self> {
        let objects = Objects::open(&common.object_store).context("opening the object store")?;
        tracing::info!(store = objects.description(), "object store");
        let translator = open_engines(common)
            .await
            .context("loading the translation engines")?;
        let espeak = tolk_voice::tts::Espeak::new(&common.espeak);
        let recognizer =
            tolk_voice::asr::Recognizer::new(&common.pocketsphinx, &common.pocketsphinx_model);
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

impl Services {
    /// Warns when speech recognition cannot run (voice jobs would fail); only
    /// the roles that serve or run voice jobs ask.
    pub fn check_speech(&self) {
        if let Err(e) = self.recognizer.check() {
            tracing::warn!(error = %e, "speech recognition unavailable: voice jobs will fail");
        }
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

/// The PostgreSQL pool of the settings, waiting for the server to answer.
pub async fn connect(common: &Common) -> anyhow::Result<PgPool> {
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

/// The workers' heartbeat period from the settings.
pub fn heartbeat(common: &Common) -> Duration {
    Duration::from_secs(common.heartbeat_secs.max(1))
}
