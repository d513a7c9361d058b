//! `tolk migrate` and `tolk admin …`: one-off commands on the database. What
//! a command makes is printed on stdout (a key's secret, a user's or an
//! application's JSON).

use anyhow::Context;
use tolk_storage::auth::oauth_strategies::{self, OauthSettings};
use tolk_storage::auth::saml_strategies::{self, SamlSettings};
use tolk_storage::auth::{applications, authorities, users};
use tolk_storage::{PgPool, db, keys};

use crate::cli::{AdminCommand, Common, OauthStrategyArgs, SamlStrategyArgs, SealingArgs};
use crate::services::connect;

/// `tolk migrate`: applies the migrations.
pub async fn migrate(common: &Common) -> anyhow::Result<()> {
    let pool = connect(common).await?;
    db::migrate(&pool).await.context("running migrations")?;
    tracing::info!("migrations applied");
    Ok(())
}

/// `tolk admin …`: migrates the database, then runs the command.
pub async fn run(common: &Common, command: AdminCommand) -> anyhow::Result<()> {
    let pool = connect(common).await?;
    db::migrate(&pool).await.context("running migrations")?;
    match command {
        AdminCommand::CreateKey {
            label,
            admin,
            organization,
        } => {
            let org = keys::ensure_organization(&pool, &organization).await?;
            let key = keys::create(&pool, org, &label, admin).await?;
            println!("{}", key.secret);
        }
        command @ AdminCommand::CreateUser { .. } => create_user(&pool, command).await?,
        command @ AdminCommand::CreateApp { .. } => create_app(&pool, command).await?,
        AdminCommand::CreateOauthStrategy(args) => create_oauth_strategy(&pool, *args).await?,
        AdminCommand::CreateSamlStrategy(args) => create_saml_strategy(&pool, *args).await?,
        AdminCommand::ResealProviderTokens(args) => reseal_provider_tokens(&pool, &args).await?,
    }
    Ok(())
}

/// A user of the auth service, with a bcrypt digest of the password.
async fn create_user(pool: &PgPool, command: AdminCommand) -> anyhow::Result<()> {
    let AdminCommand::CreateUser {
        email,
        password,
        name,
        admin,
        domain,
    } = command
    else {
        anyhow::bail!("not a create-user command");
    };
    let authority = authorities::ensure(pool, &domain).await?;
    let digest = tolk_auth::passwords::hash(password, tolk_auth::passwords::DEFAULT_COST).await?;
    let permissions = if admin { users::SYS_ADMIN } else { 0 };
    let user = users::create(
        pool,
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

/// An OAuth application: a random uid and, unless public, a random secret
/// (shown once; only its digest is stored).
async fn create_app(pool: &PgPool, command: AdminCommand) -> anyhow::Result<()> {
    let AdminCommand::CreateApp {
        name,
        redirect_uris,
        scopes,
        skip_authorization,
        public,
        domain,
    } = command
    else {
        anyhow::bail!("not a create-app command");
    };
    let authority = authorities::ensure(pool, &domain).await?;
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
    applications::create(
        pool,
        applications::NewApplication {
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

/// The JSON object of the flag `--{flag}`.
fn json_object(flag: &str, text: &str) -> anyhow::Result<serde_json::Value> {
    let v: serde_json::Value =
        serde_json::from_str(text).with_context(|| format!("--{flag} is not JSON"))?;
    anyhow::ensure!(v.is_object(), "--{flag} must be a JSON object");
    Ok(v)
}

/// A SAML identity provider of a tenant (an `adfs_strat` row).
async fn create_saml_strategy(pool: &PgPool, a: SamlStrategyArgs) -> anyhow::Result<()> {
    let idp_cert = match &a.idp_cert_file {
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("reading --idp-cert-file {}", path.display()))?,
        None => String::new(),
    };
    anyhow::ensure!(
        !idp_cert.trim().is_empty() || !a.idp_cert_fingerprint.trim().is_empty(),
        "give --idp-cert-file or --idp-cert-fingerprint: responses are only accepted signed"
    );
    let new = SamlSettings {
        attribute_statements: json_object("attribute-statements", &a.attribute_statements)?,
        idp_sso_target_url_runtime_params: json_object(
            "idp-sso-target-url-runtime-params",
            &a.idp_sso_target_url_runtime_params,
        )?,
        name: a.name,
        issuer: a.issuer,
        idp_sso_target_url: a.idp_sso_target_url,
        name_identifier_format: a.name_identifier_format,
        uid_attribute: a.uid_attribute,
        assertion_consumer_service_url: a.assertion_consumer_service_url,
        idp_cert,
        idp_cert_fingerprint: a.idp_cert_fingerprint,
        request_attributes: serde_json::json!([]),
        ..SamlSettings::default()
    };
    let authority = authorities::ensure(pool, &a.domain).await?;
    let strategy = saml_strategies::create(pool, authority.id, &new).await?;
    println!(
        "{}",
        serde_json::json!({
            "id": strategy.id,
            "name": strategy.name,
            "domain": authority.domain,
            "acs_path": format!("/auth/saml/callback/{}", strategy.id),
        })
    );
    Ok(())
}

/// An identity provider of a tenant (an `oauth_strat` row).
async fn create_oauth_strategy(pool: &PgPool, a: OauthStrategyArgs) -> anyhow::Result<()> {
    let object = json_object;
    let new = OauthSettings {
        info_mappings: object("info-mappings", &a.info_mappings)?,
        authorize_params: object("authorize-params", &a.authorize_params)?,
        ensure_matching: object("ensure-matching", &a.ensure_matching)?,
        name: a.name,
        client_id: a.client_id,
        client_secret: a.client_secret,
        site: a.site,
        authorize_url: a.authorize_url,
        token_method: a.token_method,
        auth_scheme: a.auth_scheme,
        token_url: a.token_url,
        scope: a.scope,
        raw_info_url: a.raw_info_url,
    };
    let authority = authorities::ensure(pool, &a.domain).await?;
    let strategy = oauth_strategies::create(pool, authority.id, &new).await?;
    println!(
        "{}",
        serde_json::json!({ "id": strategy.id, "name": strategy.name, "domain": authority.domain })
    );
    Ok(())
}

/// `bytes` random bytes in lower-case hex.
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

/// `tolk admin reseal-provider-tokens`: every provider token sealed with the
/// current key. Refused without a lasting key (neither PROVIDER_TOKEN_KEYS
/// nor COOKIE_SESSION_SECRET), which would seal them with a key of this run.
async fn reseal_provider_tokens(pool: &PgPool, args: &SealingArgs) -> anyhow::Result<()> {
    let given = |s: &Option<String>| s.as_deref().is_some_and(|s| !s.trim().is_empty());
    anyhow::ensure!(
        given(&args.provider_token_keys) || given(&args.cookie_session_secret),
        "set PROVIDER_TOKEN_KEYS (or COOKIE_SESSION_SECRET, which the auth service derives its key from)"
    );
    let session =
        tolk_auth::sessions::SessionKey::from_secret(args.cookie_session_secret.as_deref())?;
    let keys = tolk_auth::sealing::TokenKeys::from_setting(
        args.provider_token_keys.as_deref(),
        session.master(),
    )?;
    let done = tolk_auth::sealing::reseal_all(pool, &keys).await?;
    println!("{}", serde_json::to_string(&done)?);
    Ok(())
}
