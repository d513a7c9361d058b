//! Command line and environment configuration of the `tolk` binary.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::builder::BoolishValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum};

/// Tolk: self-hosted translation and voice job platform.
#[derive(Debug, Parser)]
#[command(name = "tolk", version, about)]
pub struct Cli {
    #[command(flatten)]
    pub common: Common,
    #[command(subcommand)]
    pub command: Command,
}

/// Settings every subcommand shares.
#[derive(Debug, Args, Clone)]
pub struct Common {
    /// PostgreSQL URL (default postgres://postgres@127.0.0.1:5432/tolk).
    #[arg(long, env = "DATABASE_URL", global = true, hide_env_values = true)]
    pub database_url: Option<String>,
    /// Alternative name of DATABASE_URL (as the auth service names it).
    #[arg(long, env = "PG_DATABASE_URL", global = true, hide_env_values = true)]
    pub pg_database_url: Option<String>,
    /// PostgreSQL host, when no URL is given.
    #[arg(long, env = "PG_HOST", global = true)]
    pub pg_host: Option<String>,
    /// PostgreSQL port, when no URL is given.
    #[arg(long, env = "PG_PORT", global = true)]
    pub pg_port: Option<u16>,
    /// PostgreSQL database, when no URL is given.
    #[arg(long, env = "PG_DB", global = true)]
    pub pg_db: Option<String>,
    /// PostgreSQL user, when no URL is given.
    #[arg(long, env = "PG_USER", global = true)]
    pub pg_user: Option<String>,
    /// PostgreSQL password, when no URL is given.
    #[arg(long, env = "PG_PASSWORD", global = true, hide_env_values = true)]
    pub pg_password: Option<String>,
    /// Workers' heartbeat period in seconds; a worker missing 3 is dead and its
    /// jobs run again elsewhere (read by the worker, the scheduler's sweep and
    /// the API's `/metrics`).
    #[arg(
        long,
        env = "TOLK_WORKER_HEARTBEAT_SECS",
        default_value_t = 5,
        global = true
    )]
    pub heartbeat_secs: u64,
    /// Longest wait, in milliseconds, for a database connection: while
    /// PostgreSQL is unreachable, API requests fail with 503 after this long.
    #[arg(
        long,
        env = "TOLK_DB_ACQUIRE_TIMEOUT_MS",
        default_value_t = 1500,
        global = true
    )]
    pub db_acquire_timeout_ms: u64,
    /// Database connections per process.
    #[arg(long, env = "TOLK_DB_CONNECTIONS", default_value_t = 10, global = true)]
    pub db_connections: u32,
    /// Object store: a folder path, file:///path, or s3://bucket (with AWS_* variables).
    #[arg(
        long,
        env = "TOLK_OBJECT_STORE",
        default_value = "./data/objects",
        global = true
    )]
    pub object_store: String,
    /// Redis URL (shared rate limits and login events; optional for the document spine).
    #[arg(long, env = "REDIS_URL", global = true)]
    pub redis_url: Option<String>,
    /// Folder of Apertium mode files.
    #[arg(
        long,
        env = "TOLK_APERTIUM_MODES",
        default_value = "/usr/share/apertium/modes",
        global = true
    )]
    pub apertium_modes: PathBuf,
    /// Apertium pipelines kept per language pair (default: the number of CPUs).
    #[arg(long, env = "TOLK_APERTIUM_PIPELINES", global = true)]
    pub apertium_pipelines: Option<usize>,
    /// The espeak-ng program (text to speech).
    #[arg(long, env = "TOLK_ESPEAK", default_value = "espeak-ng", global = true)]
    pub espeak: PathBuf,
    /// The lame program (MP3 output of TTS streams with format=mp3).
    #[arg(long, env = "TOLK_LAME", default_value = "lame", global = true)]
    pub lame: PathBuf,
    /// The pocketsphinx_continuous program (speech recognition of voice jobs).
    #[arg(
        long,
        env = "TOLK_POCKETSPHINX",
        default_value = "pocketsphinx_continuous",
        global = true
    )]
    pub pocketsphinx: PathBuf,
    /// Folder of pocketsphinx's en-us model.
    #[arg(
        long,
        env = "TOLK_POCKETSPHINX_MODEL",
        default_value = "/usr/share/pocketsphinx/model/en-us",
        global = true
    )]
    pub pocketsphinx_model: PathBuf,
    /// Translation engines in order of preference (comma-separated: apertium,
    /// deepl, openai, apy). A pair offered by several is served by the first;
    /// the next ones are its fallbacks when it times out, is overloaded or down.
    #[arg(
        long,
        env = "TOLK_ENGINES",
        default_value = "apertium",
        value_delimiter = ',',
        global = true
    )]
    pub engines: Vec<String>,
    /// DeepL-compatible upstream: base address (e.g. https://api.deepl.com).
    #[arg(long, env = "TOLK_DEEPL_URL", global = true)]
    pub deepl_url: Option<String>,
    /// DeepL-compatible upstream: auth key.
    #[arg(long, env = "TOLK_DEEPL_KEY", global = true, hide_env_values = true)]
    pub deepl_key: Option<String>,
    /// DeepL-compatible upstream: pairs it serves, `SOURCE:TARGET` DeepL codes
    /// (e.g. `EN:DE,DE:EN-US`).
    #[arg(long, env = "TOLK_DEEPL_PAIRS", value_delimiter = ',', global = true)]
    pub deepl_pairs: Vec<String>,
    /// OpenAI-compatible chat-completions server: base address including
    /// the version prefix (e.g. http://127.0.0.1:8000/v1).
    #[arg(long, env = "TOLK_OPENAI_URL", global = true)]
    pub openai_url: Option<String>,
    /// OpenAI-compatible server: bearer token, if it needs one.
    #[arg(long, env = "TOLK_OPENAI_KEY", global = true, hide_env_values = true)]
    pub openai_key: Option<String>,
    /// OpenAI-compatible server: model name.
    #[arg(long, env = "TOLK_OPENAI_MODEL", global = true)]
    pub openai_model: Option<String>,
    /// OpenAI-compatible server: pairs it serves (`EN:DE,EN:FR`).
    #[arg(long, env = "TOLK_OPENAI_PAIRS", value_delimiter = ',', global = true)]
    pub openai_pairs: Vec<String>,
    /// Apertium-APY: base address (e.g. http://127.0.0.1:2737).
    #[arg(long, env = "TOLK_APY_URL", global = true)]
    pub apy_url: Option<String>,
    /// Apertium-APY: pairs to use (`EN:ES`); default all it lists.
    #[arg(long, env = "TOLK_APY_PAIRS", value_delimiter = ',', global = true)]
    pub apy_pairs: Vec<String>,
    /// Longest time an engine may take for one request (HTTP engines) or one
    /// block (Apertium) before the request fails with 504.
    #[arg(
        long,
        env = "TOLK_ENGINE_TIMEOUT_SECS",
        default_value_t = 30,
        global = true
    )]
    pub engine_timeout_secs: u64,
    /// Requests an HTTP engine runs at once.
    #[arg(
        long,
        env = "TOLK_ENGINE_CONCURRENCY",
        default_value_t = 16,
        global = true
    )]
    pub engine_concurrency: usize,
    /// Requests (HTTP engines) or blocks (Apertium, per pair) that may wait
    /// for an engine; more are refused with 529.
    #[arg(long, env = "TOLK_ENGINE_QUEUE", default_value_t = 1024, global = true)]
    pub engine_queue: usize,
    /// RSA private key PEM, base64 (signs the auth service's tokens; the API
    /// verifies Bearer tokens with its public half). Unset: a public development key.
    #[arg(long, env = "JWT_SECRET", global = true, hide_env_values = true)]
    pub jwt_secret: Option<String>,
    /// `iss` of access tokens (must equal the earlier deployment's).
    #[arg(long, env = "JWT_ISSUER", default_value = tolk_auth::config::DEFAULT_ISSUER, global = true)]
    pub jwt_issuer: String,
    /// Environment: `production` turns on secure cookies and requires JWT_SECRET.
    #[arg(long, env = "SG_ENV", default_value = "development", global = true)]
    pub sg_env: String,
    /// Log format: text or json.
    #[arg(long, env = "TOLK_LOG_FORMAT", default_value = "text", global = true)]
    pub log_format: String,
}

/// API settings.
#[derive(Debug, Args, Clone)]
pub struct ApiArgs {
    /// Address the HTTP API listens on.
    #[arg(long, env = "TOLK_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Connections the kernel queues before the API accepts them (the
    /// listen backlog; the kernel caps it at net.core.somaxconn): enough for
    /// a thousand clients connecting at once.
    #[arg(long, env = "TOLK_LISTEN_BACKLOG", default_value_t = 4096)]
    pub listen_backlog: u32,
    /// Largest document upload, in bytes.
    #[arg(long, env = "TOLK_MAX_UPLOAD_BYTES", default_value_t = tolk_api::state::DEFAULT_MAX_UPLOAD_BYTES)]
    pub max_upload_bytes: usize,
    /// Largest audio upload (voice conversion, voice jobs), in bytes.
    #[arg(long, env = "TOLK_MAX_VOICE_UPLOAD_BYTES", default_value_t = 20 * 1024 * 1024)]
    pub max_voice_upload_bytes: usize,
    /// Longest audio accepted by voice conversion, in seconds.
    #[arg(long, env = "TOLK_MAX_VOICE_SECONDS", default_value_t = 600)]
    pub max_voice_seconds: u32,
    /// Public base URL of the API (e.g. https://tolk.example.com), used in the
    /// upload and download URLs of voice jobs; default: the request's Host.
    #[arg(long, env = "TOLK_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Seconds a duplex text-to-speech stream may sit idle (no client message,
    /// no audio sent) before the server closes it with 4408.
    #[arg(long, env = "TOLK_VOICE_STREAM_IDLE_SECS", default_value_t = 60)]
    pub voice_stream_idle_secs: u64,
    /// Do not run pending migrations at start (the variable takes 1/0,
    /// true/false, yes/no, on/off).
    #[arg(long, env = "TOLK_NO_MIGRATE", value_parser = BoolishValueParser::new())]
    pub no_migrate: bool,
    /// Requests per second a key may send, sustained (0: no rate limit).
    #[arg(long, env = "TOLK_RATE_LIMIT_PER_SECOND", default_value_t = 100.0)]
    pub rate_limit_per_second: f64,
    /// Requests a key may send at once before the sustained rate applies.
    #[arg(long, env = "TOLK_RATE_LIMIT_BURST", default_value_t = 200)]
    pub rate_limit_burst: u32,
    /// Items per page of the custom-tag usage report.
    #[arg(long, env = "TOLK_ANALYTICS_PAGE_SIZE", default_value_t = 100)]
    pub analytics_page_size: u32,
    /// Megabytes of glossary terms each API process caches for
    /// `/v2/translate` (0: no cache; entries are checked against the
    /// glossaries' versions on every request, so never stale).
    #[arg(long, env = "TOLK_GLOSSARY_CACHE_MB", default_value_t = 64)]
    pub glossary_cache_mb: usize,
    /// How request ledger entries of keys without a limit are written:
    /// `batched` (after the answer, many per INSERT; a process killed without a
    /// graceful stop loses its last batch delay of entries), `durable` (each
    /// committed with a WAL flush before the answer) or `async-commit` (each
    /// committed before the answer without waiting for the flush).
    #[arg(long, env = "TOLK_LEDGER_WRITES", value_enum, default_value_t = LedgerWritesArg::Batched)]
    pub ledger_writes: LedgerWritesArg,
    /// Longest time a batched ledger entry waits for others before its batch
    /// is written, milliseconds.
    #[arg(long, env = "TOLK_LEDGER_BATCH_MS", default_value_t = 10)]
    pub ledger_batch_ms: u64,
    /// Folder of Hunspell dictionaries (`en_US.aff`/`.dic`…) for `/v2/write/correct`.
    #[arg(long, env = "TOLK_HUNSPELL_DIR", default_value = tolk_write::DEFAULT_DIR)]
    pub hunspell_dir: std::path::PathBuf,
    /// The `client_id` of the public application registered for signing in
    /// to the dashboard (`/admin/ui`) with an account of the auth service
    /// (its redirect URI: this API's `/admin/ui/callback`); unset: the
    /// dashboard takes admin API keys only.
    #[arg(long, env = "TOLK_DASHBOARD_CLIENT_ID")]
    pub dashboard_client_id: Option<String>,
    /// The auth service's base URL for that sign-in, as browsers and this
    /// API reach it; default: the API's own (`tolk up` serves both).
    #[arg(long, env = "TOLK_DASHBOARD_AUTH_URL")]
    pub dashboard_auth_url: Option<String>,
}

/// The secrets of the auth service's encryption: sessions and provider
/// tokens at rest.
#[derive(Debug, Args, Clone)]
pub struct SealingArgs {
    /// Encrypts and signs the session cookie (at least 32 bytes); unset: an
    /// ephemeral key per boot.
    #[arg(long, env = "COOKIE_SESSION_SECRET", hide_env_values = true)]
    pub cookie_session_secret: Option<String>,
    /// Keys sealing identity providers' tokens at rest, `id:base64 of 32
    /// bytes`, comma-separated: the first seals, every one opens (rotate by
    /// putting a new key first, then `tolk admin reseal-provider-tokens`);
    /// unset: a key derived from COOKIE_SESSION_SECRET.
    #[arg(long, env = "PROVIDER_TOKEN_KEYS", hide_env_values = true)]
    pub provider_token_keys: Option<String>,
}

/// Auth service settings (`auth`, `up`).
#[derive(Debug, Args, Clone)]
pub struct AuthArgs {
    #[command(flatten)]
    pub sealing: SealingArgs,
    /// Session cookie age in minutes (an authority's internals.session_timeout wins).
    #[arg(long, env = "SESSION_TIMEOUT_MINUTES", default_value_t = tolk_auth::config::DEFAULT_SESSION_TIMEOUT_MINUTES)]
    pub session_timeout_minutes: u64,
    /// Redis pub/sub channel of login events.
    #[arg(long, env = "LOGIN_EVENTS_CHANNEL", default_value = tolk_auth::config::DEFAULT_LOGIN_EVENTS_CHANNEL)]
    pub login_events_channel: String,
    /// Base URL of the earlier platform, for the legacy API key validation.
    #[arg(long, env = "PLATFORM_URI")]
    pub platform_uri: Option<String>,
    /// PEM private key that signs the SAML service provider metadata
    /// (`/auth/saml/metadata`); with --saml-sp-cert-file.
    #[arg(long, env = "SAML_SP_KEY_FILE", requires = "saml_sp_cert_file")]
    pub saml_sp_key_file: Option<std::path::PathBuf>,
    /// PEM certificate of that key, named in the metadata.
    #[arg(long, env = "SAML_SP_CERT_FILE", requires = "saml_sp_key_file")]
    pub saml_sp_cert_file: Option<std::path::PathBuf>,
    /// New dynamic client registrations per hour from one address.
    #[arg(long, env = "MCP_REGISTRATION_LIMIT", default_value_t = 10)]
    pub mcp_registration_limit: u32,
    /// New dynamic client registrations per hour from all addresses.
    #[arg(long, env = "MCP_REGISTRATION_CEILING", default_value_t = 100)]
    pub mcp_registration_ceiling: u32,
    /// Allowed client metadata document hosts, comma-separated (unset: any
    /// public https host).
    #[arg(long, env = "MCP_CLIENT_ID_HOSTS", value_delimiter = ',')]
    pub mcp_client_id_hosts: Vec<String>,
    /// Test only: a PEM file of certificate authorities trusted, besides the
    /// system's, when fetching client metadata documents.
    #[arg(long, env = "TOLK_TEST_CLIENT_METADATA_CA", hide = true)]
    pub test_client_metadata_ca: Option<std::path::PathBuf>,
    /// Test only: client metadata documents may be fetched from loopback
    /// addresses (a test's own server).
    #[arg(long, env = "TOLK_TEST_CLIENT_METADATA_LOOPBACK", hide = true, value_parser = BoolishValueParser::new())]
    pub test_client_metadata_loopback: bool,
}

/// Worker settings.
#[derive(Debug, Args, Clone)]
pub struct WorkerArgs {
    /// The kinds of job this process runs, comma-separated: `documents`
    /// (translate-document), `quality` (evaluate-quality), `voice`
    /// (voice-translate), `tmx` (import-tmx, export-tmx), or `all`. A pool of
    /// workers per kind scales that kind on its own.
    #[arg(long, env = "TOLK_WORKER_QUEUES", default_value = "all")]
    pub queues: String,
    /// Jobs of each kind run at once by each lane: a number for every kind,
    /// `kind=number` for one (`2,voice=1`, `documents=4`).
    #[arg(long, env = "TOLK_WORKER_CONCURRENCY", default_value = "2")]
    pub concurrency: String,
    /// Jobs fetched per round trip (default: the concurrency). Fetched jobs are
    /// locked to this worker until they run: keep it at the concurrency for
    /// documents; raise both for many short jobs.
    #[arg(long = "batch-size", env = "TOLK_WORKER_BATCH")]
    pub batch_size: Option<usize>,
    /// Workers per queue in this process ("lanes", each with the concurrency
    /// above), sharing its connections: for many short jobs, 2–4 lanes in one
    /// process beat more processes.
    #[arg(long, env = "TOLK_WORKER_LANES", default_value_t = 1)]
    pub lanes: usize,
    /// The LibreOffice program that converts translated documents delivered
    /// in another format (`output_format=pdf`, or `docx` from odt, rtf, html,
    /// txt).
    #[arg(long, env = "TOLK_SOFFICE", default_value = "soffice")]
    pub soffice: PathBuf,
    /// Longest one such conversion may take, in seconds (then it is killed
    /// and the document ends in error).
    #[arg(long, env = "TOLK_CONVERT_TIMEOUT_SECS", default_value_t = tolk_worker::office::DEFAULT_TIMEOUT_SECS)]
    pub convert_timeout_secs: u64,
    /// Folders (`:`-separated, searched recursively) of the TrueType and
    /// OpenType fonts translated PDFs are set in; each paragraph gets the
    /// installed face closest to its original font that covers its
    /// translation.
    #[arg(long = "fonts-dirs", env = "TOLK_FONTS_DIRS", default_value = tolk_worker::fonts::DEFAULT_DIRS)]
    pub fonts_dirs: String,
    /// The tesseract program that reads the text of images (`.png`,
    /// `.jpg`), with its language data (Debian's tesseract-ocr-*).
    #[arg(long, env = "TOLK_TESSERACT", default_value = "tesseract")]
    pub tesseract: PathBuf,
    /// Longest the recognition of one image may take, in seconds (then it
    /// is killed and the document ends in error).
    #[arg(long, env = "TOLK_OCR_TIMEOUT_SECS", default_value_t = tolk_worker::ocr::DEFAULT_TIMEOUT_SECS)]
    pub ocr_timeout_secs: u64,
}

/// Scheduler settings.
#[derive(Debug, Args, Clone)]
pub struct SchedulerArgs {
    /// Seconds between maintenance rounds.
    #[arg(long, env = "TOLK_SCHEDULER_TICK_SECS", default_value_t = 5)]
    pub tick_secs: u64,
    /// Days a document and its files are kept after upload (a downloaded one: a
    /// minute), and a voice or translation-memory job after it ended.
    #[arg(long, env = "TOLK_DOCUMENT_RETENTION_DAYS", default_value_t = 7)]
    pub retention_days: u64,
    /// Seconds a succeeded job's queue row is kept (the document row stays).
    #[arg(long, env = "TOLK_KEEP_DONE_JOBS_SECS", default_value_t = 10)]
    pub keep_done_jobs_secs: u64,
    /// Hours a failed or killed job's queue row is kept.
    #[arg(long, env = "TOLK_KEEP_FAILED_JOBS_HOURS", default_value_t = 168)]
    pub keep_failed_jobs_hours: u64,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once at start; `Up` holds every role's settings
pub enum Command {
    /// Serve the HTTP API.
    Api(ApiArgs),
    /// Run job workers.
    Worker(WorkerArgs),
    /// Run periodic maintenance (leader-elected; run any number).
    Scheduler(SchedulerArgs),
    /// The auth service alone (`/auth/*`, `/.well-known/*`).
    Auth {
        /// Address the auth service listens on.
        #[arg(long, env = "TOLK_AUTH_LISTEN", default_value = "127.0.0.1:8081")]
        listen: SocketAddr,
        /// Do not run pending migrations at start.
        #[arg(long, env = "TOLK_NO_MIGRATE", value_parser = BoolishValueParser::new())]
        no_migrate: bool,
        #[command(flatten)]
        auth: AuthArgs,
    },
    /// API (with the auth service), worker and scheduler in one process (the
    /// single-machine default).
    Up {
        #[command(flatten)]
        api: ApiArgs,
        #[command(flatten)]
        auth: AuthArgs,
        #[command(flatten)]
        worker: WorkerArgs,
        #[command(flatten)]
        scheduler: SchedulerArgs,
    },
    /// Run pending database migrations and exit.
    Migrate,
    /// Administration.
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
}

/// Administration subcommands.
#[derive(Debug, Subcommand)]
#[allow(clippy::enum_variant_names)] // the commands are create-key, create-user, create-app
pub enum AdminCommand {
    /// Create an API key and print it (only the key) on stdout, once.
    CreateKey {
        /// Label of the key.
        #[arg(long)]
        label: String,
        /// The key may use the admin API.
        #[arg(long)]
        admin: bool,
        /// Organization name (created when missing).
        #[arg(long, default_value = "default")]
        organization: String,
    },
    /// Create a user of the auth service; prints {"id": …} on stdout.
    CreateUser {
        /// Email (the sign-in name).
        #[arg(long)]
        email: String,
        /// Password (stored as a bcrypt digest).
        #[arg(long)]
        password: String,
        /// Display name.
        #[arg(long, default_value = "")]
        name: String,
        /// System administrator (permission bit 2).
        #[arg(long)]
        admin: bool,
        /// Authority (tenant) domain, created when missing.
        #[arg(long, default_value = "localhost")]
        domain: String,
    },
    /// Register an OAuth application; prints {"uid": …, "secret": …} on stdout
    /// (no secret for a public client).
    CreateApp {
        /// Display name (shown on the consent page).
        #[arg(long)]
        name: String,
        /// Redirect URIs (repeat the flag or separate with commas).
        #[arg(long = "redirect-uri", required = true, value_delimiter = ',')]
        redirect_uris: Vec<String>,
        /// Scopes it may request, space- or comma-separated.
        #[arg(long, default_value = "public openid profile email offline_access")]
        scopes: String,
        /// First-party application: no consent screen.
        #[arg(long)]
        skip_authorization: bool,
        /// Public client (no secret; PKCE required).
        #[arg(long)]
        public: bool,
        /// Authority (tenant) domain, created when missing.
        #[arg(long, default_value = "localhost")]
        domain: String,
    },
    /// Add an OAuth 2.0 / OpenID Connect identity provider users of a tenant
    /// sign in through (`/auth/oauth2?id=…`); prints {"id": …} on stdout.
    CreateOauthStrategy(Box<OauthStrategyArgs>),
    /// Add a SAML 2.0 identity provider users of a tenant sign in through
    /// (`/auth/saml?id=…`); prints {"id": …, "acs_path": …} on stdout.
    CreateSamlStrategy(Box<SamlStrategyArgs>),
    /// Seal again with the first key of PROVIDER_TOKEN_KEYS every identity
    /// provider token kept for users (after a key rotation, or stored before
    /// tokens were sealed); prints {"resealed": …, "unreadable": …}.
    ResealProviderTokens(SealingArgs),
}

/// The columns of an `adfs_strat` row.
#[derive(Debug, Args)]
pub struct SamlStrategyArgs {
    /// Display name.
    #[arg(long)]
    pub name: String,
    /// Our entity id (the audience assertions must name).
    #[arg(long)]
    pub issuer: String,
    /// The identity provider's single sign-on URL (redirect binding).
    #[arg(long)]
    pub idp_sso_target_url: String,
    /// File holding the identity provider's signing certificate (PEM).
    #[arg(long)]
    pub idp_cert_file: Option<std::path::PathBuf>,
    /// Or the SHA-1 / SHA-256 fingerprint of that certificate (hex).
    #[arg(long, default_value = "")]
    pub idp_cert_fingerprint: String,
    /// Attribute holding the user's stable id (default: the NameID).
    #[arg(long, default_value = "")]
    pub uid_attribute: String,
    /// NameID format to ask for.
    #[arg(long, default_value = "")]
    pub name_identifier_format: String,
    /// Our assertion consumer service URL (default: /auth/saml/callback/{id}
    /// on the request's host).
    #[arg(long, default_value = "")]
    pub assertion_consumer_service_url: String,
    /// JSON object: our field (email, name, first_name, last_name) -> [attribute names].
    #[arg(long, default_value = "{}")]
    pub attribute_statements: String,
    /// JSON object: extra query parameters of the sign-on URL.
    #[arg(long, default_value = "{}")]
    pub idp_sso_target_url_runtime_params: String,
    /// Authority (tenant) domain, created when missing.
    #[arg(long, default_value = "localhost")]
    pub domain: String,
}

/// The columns of an `oauth_strat` row.
#[derive(Debug, Args)]
pub struct OauthStrategyArgs {
    /// Display name.
    #[arg(long)]
    pub name: String,
    /// Our client id at the provider.
    #[arg(long)]
    pub client_id: String,
    /// Our client secret at the provider (omit for a public client).
    #[arg(
        long,
        default_value = "",
        env = "TOLK_OAUTH_CLIENT_SECRET",
        hide_env_values = true
    )]
    pub client_secret: String,
    /// Base URL the other URLs are relative to.
    #[arg(long, default_value = "")]
    pub site: String,
    /// Authorization endpoint.
    #[arg(long, default_value = "/oauth/authorize")]
    pub authorize_url: String,
    /// Token endpoint.
    #[arg(long, default_value = "/oauth/token")]
    pub token_url: String,
    /// `post` or `get`.
    #[arg(long, default_value = "post")]
    pub token_method: String,
    /// `request_body` or `basic_auth`.
    #[arg(long, default_value = "request_body")]
    pub auth_scheme: String,
    /// Scopes requested (space-separated).
    #[arg(long, default_value = "")]
    pub scope: String,
    /// The profile endpoint (empty: the ID token's claims).
    #[arg(long, default_value = "")]
    pub raw_info_url: String,
    /// JSON object: our field -> comma-separated provider fields.
    #[arg(long, default_value = "{}")]
    pub info_mappings: String,
    /// JSON object: extra authorization request parameters.
    #[arg(long, default_value = "{}")]
    pub authorize_params: String,
    /// JSON object: field -> [regex, …] the profile must match.
    #[arg(long, default_value = "{}")]
    pub ensure_matching: String,
    /// Authority (tenant) domain, created when missing.
    #[arg(long, default_value = "localhost")]
    pub domain: String,
}

/// `--ledger-writes` values (see `tolk_api::LedgerWrites`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LedgerWritesArg {
    /// After the answer, through the batching appender.
    Batched,
    /// Before the answer, committed with a WAL flush.
    Durable,
    /// Before the answer, committed without waiting for the flush.
    AsyncCommit,
}

impl From<LedgerWritesArg> for tolk_api::LedgerWrites {
    fn from(a: LedgerWritesArg) -> Self {
        match a {
            LedgerWritesArg::Batched => Self::Batched,
            LedgerWritesArg::Durable => Self::Durable,
            LedgerWritesArg::AsyncCommit => Self::AsyncCommit,
        }
    }
}
