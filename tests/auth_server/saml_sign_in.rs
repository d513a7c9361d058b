//! Sign-in through a tenant's SAML 2.0 identity provider (`adfs_strat`): a
//! real one, pysaml2's `Server` (Debian's python3-pysaml2, signing with
//! xmlsec1) started by the test (`saml_idp.py`). The AuthnRequest goes by the
//! redirect binding; the test plays the browser's part of the POST binding
//! (it submits the provider's form). A first sign-in creates the user, a
//! second finds it; a replayed, tampered, wrapped, unsigned or DOCTYPE-carrying
//! response, one answering another request, one for another consumer URL or
//! service provider, one signed with SHA-1 and one signed by another
//! certificate are all refused; a certificate given by fingerprint works.

use std::path::PathBuf;

use base64::engine::general_purpose::STANDARD;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::*;

const SP_ENTITY: &str = "https://tolk.test/saml/sp";

/// pysaml2's identity provider, running until dropped.
struct Idp {
    base: String,
    _child: Child,
}

/// A self-signed certificate made by openssl: (key, certificate) paths.
fn certificate(world: &World, name: &str) -> Result<(PathBuf, PathBuf)> {
    let (key, cert) = (
        world.path(&format!("{name}.key")),
        world.path(&format!("{name}.crt")),
    );
    let status = std::process::Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
        ])
        .arg(format!("/CN={name}"))
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stderr(Stdio::null())
        .status()
        .context("openssl must be installed")?;
    anyhow::ensure!(status.success(), "openssl req failed");
    Ok((key, cert))
}

/// The SHA-256 fingerprint of a certificate, as openssl prints it (AA:BB:…).
fn fingerprint(cert: &std::path::Path) -> Result<String> {
    let out = std::process::Command::new("openssl")
        .args(["x509", "-noout", "-fingerprint", "-sha256", "-in"])
        .arg(cert)
        .output()?;
    let text = String::from_utf8(out.stdout)?;
    Ok(text
        .split_once('=')
        .context("fingerprint")?
        .1
        .trim()
        .to_owned())
}

async fn start_idp(
    world: &World,
    port: u16,
    key: &std::path::Path,
    cert: &std::path::Path,
    acs: &str,
) -> Result<Idp> {
    let python = std::env::var("TOLK_TEST_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/auth_server/saml_idp.py");
    let log = std::fs::File::create(world.path("saml-idp.log"))?;
    let mut child = Command::new(python)
        .arg(&script)
        .arg(port.to_string())
        .arg(key)
        .arg(cert)
        .arg(SP_ENTITY)
        .arg(acs)
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .kill_on_drop(true)
        .spawn()
        .context("the tests' Python must run (scripts/setup.sh test)")?;
    let mut lines = BufReader::new(child.stdout.take().context("stdout")?).lines();
    let ready = tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await;
    if !matches!(ready, Ok(Ok(Some(ref l))) if l.trim() == "ready") {
        bail!(
            "the SAML identity provider did not start: {}",
            std::fs::read_to_string(world.path("saml-idp.log")).unwrap_or_default()
        );
    }
    Ok(Idp {
        base: format!("http://127.0.0.1:{port}"),
        _child: child,
    })
}

/// What the provider's form would post: the flow cookie of the kickoff, the
/// base64 response and the relay state.
struct Answer {
    cookie: String,
    response: String,
    relay: String,
}

impl Answer {
    fn xml(&self) -> Result<String> {
        Ok(String::from_utf8(STANDARD.decode(&self.response)?)?)
    }
    fn with_xml(&self, xml: &str) -> Self {
        Self {
            cookie: self.cookie.clone(),
            response: STANDARD.encode(xml),
            relay: self.relay.clone(),
        }
    }
}

fn form_value(html: &str, name: &str) -> Result<String> {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html
        .find(&marker)
        .with_context(|| format!("{name} in {html}"))?
        + marker.len();
    let end = start + html[start..].find('"').context("end of value")?;
    Ok(html[start..end]
        .replace("&#x2B;", "+")
        .replace("&#43;", "+")
        .replace("&#x3D;", "=")
        .replace("&amp;", "&"))
}

/// Starts a sign-in through `strategy` and lets the provider answer.
async fn answer(auth: &Auth, strategy: &str) -> Result<Answer> {
    let res = auth
        .http
        .get(auth.url(&format!(
            "/auth/saml?id={strategy}&continue=%2Fauth%2Fauthority"
        )))
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let to = res.headers()[LOCATION].to_str()?.to_owned();
    assert!(
        to.contains("SAMLRequest=") && to.contains("RelayState="),
        "{to}"
    );
    let cookie = set_cookie(&res, "_coauth_flow").context("flow cookie")?;
    let page = auth.http.get(&to).send().await?;
    let status = page.status();
    let html = page.text().await?;
    assert_eq!(status, StatusCode::OK, "{html}");
    Ok(Answer {
        cookie,
        response: form_value(&html, "SAMLResponse")?,
        relay: form_value(&html, "RelayState")?,
    })
}

/// Posts an answer to `path`: where the browser is sent, and whether a
/// session cookie came with it.
async fn post(auth: &Auth, path: &str, a: &Answer) -> Result<(String, bool)> {
    let res = auth
        .http
        .post(auth.url(path))
        .header(COOKIE, &a.cookie)
        .form(&[
            ("SAMLResponse", a.response.as_str()),
            ("RelayState", a.relay.as_str()),
        ])
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let session = res
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .any(|v| {
            v.to_str()
                .is_ok_and(|v| v.starts_with("_coauth_session=") && !v.contains("Max-Age=0"))
        });
    Ok((res.headers()[LOCATION].to_str()?.to_owned(), session))
}

fn failed_with(location: &str, auth: &Auth, why: &str) -> bool {
    location.starts_with("/auth/failure?")
        && query_of(&auth.url(location))
            .get("message")
            .is_some_and(|m| m.contains(why))
}

/// The auth service with SAML strategies of one pysaml2 identity provider:
/// `id` trusting its certificate, and strategies trusting another
/// certificate (`wrong`), the right one by its fingerprint (`by_print`), for
/// another consumer URL (`elsewhere`) and another service provider
/// (`other_sp`).
struct Saml {
    /// Kept for the test's length (its database and processes).
    _world: World,
    auth: Auth,
    idp: Idp,
    id: String,
    callback: String,
    wrong: String,
    by_print: String,
    elsewhere: String,
    other_sp: String,
    db: sqlx::PgPool,
}

impl Saml {
    async fn start(name: &str) -> Result<Saml> {
        let mut world = world_with_ann(name).await?;
        let auth = start_auth(&mut world).await?;
        let (key, cert) = certificate(&world, "idp")?;
        let (_, other_cert) = certificate(&world, "someone-else")?;
        let port = free_port();
        let sso = format!("http://127.0.0.1:{port}/sso/redirect");
        let cert_arg = cert.display().to_string();
        let create_as = |issuer: &'static str, extra: Vec<String>| {
            let world = &world;
            let sso = sso.clone();
            async move {
                let mut args: Vec<String> = [
                    "admin",
                    "create-saml-strategy",
                    "--name",
                    "Corporate SSO",
                    "--issuer",
                    issuer,
                    "--idp-sso-target-url",
                ]
                .iter()
                .map(|s| (*s).to_owned())
                .collect();
                args.push(sso);
                args.extend(extra);
                let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                admin_json(world, &refs).await
            }
        };
        let create = |extra: Vec<String>| create_as(SP_ENTITY, extra);
        let main = create(vec!["--idp-cert-file".into(), cert_arg.clone()]).await?;
        let id = main["id"].as_str().context("id")?.to_owned();
        let acs = auth.url(main["acs_path"].as_str().context("acs_path")?);
        // Same entity and ACS, trusting another certificate; and one trusting the
        // right certificate by its fingerprint only.
        let wrong = create(vec![
            "--idp-cert-file".into(),
            other_cert.display().to_string(),
            "--assertion-consumer-service-url".into(),
            acs.clone(),
        ])
        .await?;
        let by_print = create(vec![
            "--idp-cert-fingerprint".into(),
            fingerprint(&cert)?,
            "--assertion-consumer-service-url".into(),
            acs.clone(),
        ])
        .await?;
        // Answers sent to another consumer URL than this strategy's (Destination
        // and Recipient), and assertions for another service provider (Audience).
        let elsewhere = create(vec![
            "--idp-cert-file".into(),
            cert_arg.clone(),
            "--assertion-consumer-service-url".into(),
            auth.url("/auth/saml/callback"),
        ])
        .await?;
        let other_sp = create_as(
            "https://another-sp.example/saml",
            vec![
                "--idp-cert-file".into(),
                cert_arg.clone(),
                "--assertion-consumer-service-url".into(),
                acs.clone(),
            ],
        )
        .await?;
        let idp = start_idp(&world, port, &key, &cert, &acs).await?;
        let callback = format!("/auth/saml/callback/{id}");
        let db = world.db().await?;
        let strategy = |created: &Value| -> Result<String> {
            Ok(created["id"].as_str().context("id")?.to_owned())
        };
        Ok(Saml {
            wrong: strategy(&wrong)?,
            by_print: strategy(&by_print)?,
            elsewhere: strategy(&elsewhere)?,
            other_sp: strategy(&other_sp)?,
            _world: world,
            auth,
            idp,
            id,
            callback,
            db,
        })
    }

    /// How many users have `email`.
    async fn users(&self, email: &str) -> Result<i64> {
        Ok(
            sqlx::query_scalar("SELECT count(*) FROM users WHERE email = $1")
                .bind(email)
                .fetch_one(&self.db)
                .await?,
        )
    }

    /// A fresh answer of the provider for strategy `id`.
    async fn answer(&self, id: &str) -> Result<Answer> {
        answer(&self.auth, id).await
    }
}

/// A signed answer signs in and creates the user from the assertion's
/// attributes; the same answer again is a replay; a second sign-in finds
/// the same user.
#[tokio::test]
async fn a_saml_answer_signs_in_once_and_creates_the_user_once() -> Result<()> {
    let saml = Saml::start("saml_sign_in").await?;
    let (auth, callback, id, db) = (&saml.auth, &saml.callback, &saml.id, &saml.db);
    let first = saml.answer(id).await?;
    let (to, session) = post(auth, callback, &first).await?;
    assert_eq!((to.as_str(), session), ("/auth/authority", true), "{to}");
    let (user_id, name): (String, String) =
        sqlx::query_as("SELECT id, name FROM users WHERE email = 'grace@example.org'")
            .fetch_one(db)
            .await?;
    assert_eq!(name, "Grace Hopper");
    let lookup: (String, String) =
        sqlx::query_as("SELECT provider, uid FROM user_auth_lookups WHERE user_id = $1")
            .bind(&user_id)
            .fetch_one(db)
            .await?;
    assert_eq!(lookup, (id.clone(), "grace-persistent-id".to_owned()));

    let (to, session) = post(auth, callback, &first).await?;
    assert!(failed_with(&to, auth, "already used") && !session, "{to}");

    let (to, session) = post(auth, callback, &saml.answer(id).await?).await?;
    assert_eq!((to.as_str(), session), ("/auth/authority", true));
    assert_eq!(saml.users("grace@example.org").await?, 1);
    Ok(())
}

/// An assertion changed after signing is refused, and one wrapped beside
/// the signed assertion (an unsigned copy for another user before it) is
/// never read.
#[tokio::test]
async fn a_tampered_or_wrapped_assertion_is_never_read() -> Result<()> {
    let saml = Saml::start("saml_tampered").await?;
    let (auth, callback, id) = (&saml.auth, &saml.callback, &saml.id);
    let a = saml.answer(id).await?;
    let tampered = a.with_xml(&a.xml()?.replace("grace@example.org", "mallory@example.org"));
    let (to, session) = post(auth, callback, &tampered).await?;
    assert!(failed_with(&to, auth, "not accepted") && !session, "{to}");

    let a = saml.answer(id).await?;
    let xml = a.xml()?;
    let open = xml.find(":Assertion ").context("assertion")?;
    let open = xml[..open].rfind('<').context("tag start")?;
    let prefix = &xml[open + 1..xml[open..].find(':').map(|i| open + i).context("prefix")?];
    let close_tag = format!("</{prefix}:Assertion>");
    let close = xml.find(&close_tag).context("assertion end")? + close_tag.len();
    let signed = &xml[open..close];
    let mut evil = signed
        .replace("grace@example.org", "mallory@example.org")
        .replace("grace-persistent-id", "mallory-id");
    if let (Some(s), Some(e)) = (evil.find("<ds:Signature"), evil.find("</ds:Signature>")) {
        evil.replace_range(s..e + "</ds:Signature>".len(), "");
    }
    let evil = evil.replacen(" ID=\"", " ID=\"evil", 1);
    let wrapped = format!("{}{evil}{}", &xml[..open], &xml[open..]);
    let (to, _) = post(auth, callback, &a.with_xml(&wrapped)).await?;
    assert_eq!(
        saml.users("mallory@example.org").await?,
        0,
        "the wrapped assertion was never read: {to}"
    );
    Ok(())
}

/// An answer with a DOCTYPE (entities) is refused before it is parsed.
#[tokio::test]
async fn a_doctype_in_a_saml_answer_is_refused() -> Result<()> {
    let saml = Saml::start("saml_doctype").await?;
    let (auth, callback, id) = (&saml.auth, &saml.callback, &saml.id);
    let a = saml.answer(id).await?;
    let xml = a.xml()?;
    let body = xml.find("?>").map_or(0, |i| i + 2);
    let with_doctype = format!(
        "{}<!DOCTYPE r [<!ENTITY e \"grace\">]>{}",
        &xml[..body],
        &xml[body..]
    );
    let (to, _) = post(auth, callback, &a.with_xml(&with_doctype)).await?;
    assert!(failed_with(&to, auth, "DOCTYPE"), "{to}");
    Ok(())
}

/// An answer to another browser's request (its `InResponseTo`) posted with
/// this browser's flow is refused.
#[tokio::test]
async fn an_answer_to_another_browsers_request_is_refused() -> Result<()> {
    let saml = Saml::start("saml_crossed").await?;
    let (auth, callback, id) = (&saml.auth, &saml.callback, &saml.id);
    let mine = saml.answer(id).await?;
    let theirs = saml.answer(id).await?;
    let crossed = Answer {
        response: theirs.response.clone(),
        ..mine
    };
    let (to, session) = post(auth, callback, &crossed).await?;
    assert!(failed_with(&to, auth, "not accepted") && !session, "{to}");
    Ok(())
}

/// A strategy trusts the provider's certificate by file or by fingerprint:
/// one trusting another certificate refuses its answers.
#[tokio::test]
async fn a_saml_strategy_trusts_only_its_certificate() -> Result<()> {
    let saml = Saml::start("saml_certificate").await?;
    let auth = &saml.auth;
    let a = saml.answer(&saml.wrong).await?;
    let (to, session) = post(auth, "/auth/saml/callback", &a).await?;
    assert!(failed_with(&to, auth, "not accepted") && !session, "{to}");
    let a = saml.answer(&saml.by_print).await?;
    let (to, session) = post(auth, "/auth/saml/callback", &a).await?;
    assert_eq!((to.as_str(), session), ("/auth/authority", true));
    Ok(())
}

/// Answers sent to another consumer URL (Destination, Recipient) or made
/// for another service provider (Audience) are refused, naming why.
#[tokio::test]
async fn answers_for_another_consumer_or_audience_are_refused() -> Result<()> {
    let saml = Saml::start("saml_audience").await?;
    let auth = &saml.auth;
    for (strategy, why) in [(&saml.elsewhere, "recipient"), (&saml.other_sp, "audience")] {
        let a = saml.answer(strategy).await?;
        let (to, session) = post(auth, "/auth/saml/callback", &a).await?;
        let message = query_of(&auth.url(&to))
            .get("message")
            .cloned()
            .unwrap_or_default();
        assert!(to.starts_with("/auth/failure?") && !session, "{why}: {to}");
        assert!(message.to_lowercase().contains(why), "{why}: {message}");
    }
    Ok(())
}

/// Answers signed with nothing, or with SHA-1, are refused; no user is made.
#[tokio::test]
async fn unsigned_and_sha1_saml_answers_are_refused() -> Result<()> {
    let saml = Saml::start("saml_unsigned").await?;
    let (auth, callback, id) = (&saml.auth, &saml.callback, &saml.id);
    for mode in ["unsigned", "sha1"] {
        auth.http
            .get(format!("{}/mode?name={mode}", saml.idp.base))
            .send()
            .await?;
        let a = saml.answer(id).await?;
        if mode == "sha1" {
            assert!(
                a.xml()?.contains("xmldsig#rsa-sha1"),
                "the provider signed with SHA-1"
            );
        }
        let (to, session) = post(auth, callback, &a).await?;
        assert!(
            failed_with(&to, auth, "not accepted") && !session,
            "{mode}: {to}"
        );
    }
    assert_eq!(saml.users("grace@example.org").await?, 0);
    Ok(())
}

/// pysaml2 reading a service provider's metadata as an identity provider
/// imports it: the entities, and the consumer URLs, signing wish and NameID
/// formats of the SP descriptor (a document it cannot parse fails it).
const READ_SP_METADATA: &str = r#"
import json, sys
from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
from saml2.config import IdPConfig
c = IdPConfig()
c.load({
    "entityid": "http://idp.example/idp",
    "service": {"idp": {"endpoints": {"single_sign_on_service": [("http://idp.example/sso", BINDING_HTTP_REDIRECT)]}}},
    "metadata": {"local": [sys.argv[1]]},
    "xmlsec_binary": "/usr/bin/xmlsec1",
})
md = c.metadata
sps = sorted(md.with_descriptor("spsso").keys())
out = {"entities": sps}
for e in sps:
    desc = md[e]["spsso_descriptor"][0]
    out["acs"] = [s["location"] for s in md.assertion_consumer_service(e, BINDING_HTTP_POST)]
    out["want_assertions_signed"] = desc.get("want_assertions_signed")
    out["name_id_formats"] = [n["text"] for n in desc.get("name_id_format", [])]
print(json.dumps(out))
"#;

/// Each SAML strategy publishes its service provider metadata
/// (`/auth/saml/metadata?id=…`) for the identity provider to import: pysaml2
/// loads it and finds our entity, the strategy's consumer URL (its own, or
/// the configured one), signed assertions wanted and the NameID format; with
/// a signing key configured, xmlsec1 verifies its signature.
#[tokio::test]
async fn each_saml_strategy_publishes_metadata_identity_providers_import() -> Result<()> {
    let mut world = world_with_ann("saml-metadata").await?;
    let auth = start_auth(&mut world).await?;
    let (_, cert) = certificate(&world, "idp")?;
    let persistent = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent";
    let cert_arg = cert.display().to_string();
    let create = |extra: &[&str]| {
        let args: Vec<String> = [
            "admin",
            "create-saml-strategy",
            "--name",
            "Corporate SSO",
            "--issuer",
            SP_ENTITY,
            "--idp-sso-target-url",
            "https://idp.example/sso",
            "--idp-cert-file",
            cert_arg.as_str(),
        ]
        .iter()
        .chain(extra)
        .map(|s| (*s).to_owned())
        .collect();
        let world = &world;
        async move {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            admin_json(world, &refs).await
        }
    };
    let own = create(&["--name-identifier-format", persistent]).await?;
    let configured = create(&[
        "--assertion-consumer-service-url",
        "https://sso.tolk.test/auth/saml/callback?a=1&b=2",
    ])
    .await?;
    for (strategy, acs, formats) in [
        (
            &own,
            auth.url(own["acs_path"].as_str().context("acs_path")?),
            vec![persistent],
        ),
        (
            &configured,
            "https://sso.tolk.test/auth/saml/callback?a=1&b=2".to_owned(),
            vec![],
        ),
    ] {
        let id = strategy["id"].as_str().context("id")?;
        let res = auth
            .http
            .get(auth.url(&format!("/auth/saml/metadata?id={id}")))
            .send()
            .await?;
        assert_eq!(res.status(), StatusCode::OK, "{id}");
        assert_eq!(
            res.headers()[reqwest::header::CONTENT_TYPE],
            "application/samlmetadata+xml"
        );
        let path = world.path(&format!("{id}.xml"));
        std::fs::write(&path, res.bytes().await?)?;
        let read: Value =
            serde_json::from_str(&crate::support::python(READ_SP_METADATA, &[&path]).await?)?;
        assert_eq!(read["entities"], serde_json::json!([SP_ENTITY]), "{read}");
        assert_eq!(read["acs"], serde_json::json!([acs]), "{read}");
        assert_eq!(read["want_assertions_signed"], "true", "{read}");
        assert_eq!(
            read["name_id_formats"],
            serde_json::json!(formats),
            "{read}"
        );
    }
    // With a signing key configured, the document carries its certificate
    // and an enveloped signature xmlsec1 verifies; a changed copy fails.
    let (sp_key, sp_cert) = certificate(&world, "sp")?;
    world
        .extra_env
        .push(("SAML_SP_KEY_FILE".into(), sp_key.display().to_string()));
    world
        .extra_env
        .push(("SAML_SP_CERT_FILE".into(), sp_cert.display().to_string()));
    let signing = start_auth(&mut world).await?;
    let id = own["id"].as_str().context("id")?;
    let signed = signing
        .http
        .get(signing.url(&format!("/auth/saml/metadata?id={id}")))
        .send()
        .await?
        .text()
        .await?;
    assert!(
        signed.contains("<md:KeyDescriptor use=\"signing\">"),
        "{signed}"
    );
    let path = world.path("signed.xml");
    std::fs::write(&path, &signed)?;
    let verify = |file: &std::path::Path| {
        std::process::Command::new("xmlsec1")
            .args(["--verify", "--pubkey-cert-pem"])
            .arg(&sp_cert)
            .args([
                "--id-attr:ID",
                "urn:oasis:names:tc:SAML:2.0:metadata:EntityDescriptor",
            ])
            .arg(file)
            .output()
    };
    let out = verify(&path)?;
    assert!(
        out.status.success(),
        "xmlsec1: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read: Value =
        serde_json::from_str(&crate::support::python(READ_SP_METADATA, &[&path]).await?)?;
    assert_eq!(read["entities"], serde_json::json!([SP_ENTITY]), "{read}");
    let changed = world.path("changed.xml");
    std::fs::write(
        &changed,
        signed.replace(SP_ENTITY, "https://attacker.example/sp"),
    )?;
    assert!(
        !verify(&changed)?.status.success(),
        "a changed copy verifies"
    );

    for (query, status) in [
        ("?id=adfs_strat-nope", StatusCode::NOT_FOUND),
        ("", StatusCode::BAD_REQUEST),
    ] {
        let res = auth
            .http
            .get(auth.url(&format!("/auth/saml/metadata{query}")))
            .send()
            .await?;
        assert_eq!(res.status(), status, "{query}");
        let body: Value = res.json().await?;
        assert!(body["message"].is_string(), "{body}");
    }
    Ok(())
}
