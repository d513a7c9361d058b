//! The auth service's settings, named as the specification names its
//! environment variables (the binary reads them).

/// Default `iss` of access tokens: the earlier deployment's value.
pub const DEFAULT_ISSUER: &str = "POS";
/// Default pub/sub channel of login events.
pub const DEFAULT_LOGIN_EVENTS_CHANNEL: &str = "platform/auth/login";
/// Default session cookie age.
pub const DEFAULT_SESSION_TIMEOUT_MINUTES: u64 = 1440;

/// Settings of the auth service.
#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// `JWT_SECRET`: base64 of an RSA private key PEM (PKCS#1 or PKCS#8); a raw
    /// PEM is accepted too. `None`: the development key (refused in production).
    pub jwt_secret: Option<String>,
    /// `JWT_ISSUER`: the `iss` of access tokens.
    pub jwt_issuer: String,
    /// `COOKIE_SESSION_SECRET`: at least 32 bytes; `None`: an ephemeral key per boot.
    pub cookie_session_secret: Option<String>,
    /// `SAML_SP_KEY_FILE` and `SAML_SP_CERT_FILE`: the PEM private key and
    /// certificate that sign the SAML service provider metadata (both or
    /// neither).
    pub saml_sp_signing: Option<(std::path::PathBuf, std::path::PathBuf)>,
    /// `PROVIDER_TOKEN_KEYS`: the keys sealing identity providers' tokens at
    /// rest ([`crate::sealing`]); `None`: one derived from the session secret.
    pub provider_token_keys: Option<String>,
    /// `SG_ENV` is `production`: secure cookies, no development key.
    pub production: bool,
    /// `SESSION_TIMEOUT_MINUTES`.
    pub session_timeout_minutes: u64,
    /// `REDIS_URL`: login events are published there.
    pub redis_url: Option<String>,
    /// `LOGIN_EVENTS_CHANNEL`.
    pub login_events_channel: String,
    /// `PLATFORM_URI`: base URL of the legacy API key validation.
    pub platform_uri: Option<String>,
    /// `MCP_REGISTRATION_LIMIT`: new dynamic registrations per hour from one
    /// address, all replicas together.
    pub mcp_registration_limit: u32,
    /// `MCP_REGISTRATION_CEILING`: new dynamic registrations per hour from
    /// all addresses.
    pub mcp_registration_ceiling: u32,
    /// `MCP_CLIENT_ID_HOSTS`: the hosts client metadata documents may come
    /// from (empty: any public https host).
    pub mcp_client_id_hosts: Vec<String>,
    /// Test only (`TOLK_TEST_CLIENT_METADATA_CA`): more certificate
    /// authorities (a PEM file) trusted for client metadata documents.
    pub test_client_metadata_ca: Option<std::path::PathBuf>,
    /// Test only (`TOLK_TEST_CLIENT_METADATA_LOOPBACK`): metadata documents
    /// may come from loopback addresses.
    pub test_client_metadata_loopback: bool,
    /// bcrypt cost of new password digests.
    pub bcrypt_cost: u32,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            jwt_secret: None,
            jwt_issuer: DEFAULT_ISSUER.to_owned(),
            cookie_session_secret: None,
            provider_token_keys: None,
            saml_sp_signing: None,
            production: false,
            session_timeout_minutes: DEFAULT_SESSION_TIMEOUT_MINUTES,
            redis_url: None,
            login_events_channel: DEFAULT_LOGIN_EVENTS_CHANNEL.to_owned(),
            platform_uri: None,
            mcp_registration_limit: 10,
            mcp_registration_ceiling: 100,
            mcp_client_id_hosts: Vec::new(),
            test_client_metadata_ca: None,
            test_client_metadata_loopback: false,
            bcrypt_cost: crate::passwords::DEFAULT_COST,
        }
    }
}

/// Whether an `SG_ENV` value means production.
pub fn is_production(sg_env: &str) -> bool {
    sg_env.trim().eq_ignore_ascii_case("production")
}
