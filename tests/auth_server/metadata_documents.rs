//! Client ID metadata documents: a client whose `client_id` is an https URL
//! completes the code flow without registering; the document is fetched over
//! https (a real TLS server started by the test, with a test CA the auth
//! service trusts through its test-only setting), and a document that names
//! another client, redirects, is too large, or sits on a private address
//! (when loopback is not allowed) is refused.

use std::process::Stdio;

use anyhow::{Context, Result};
use reqwest::StatusCode;
use reqwest::header::COOKIE;
use serde_json::Value;
use tokio::io::AsyncBufReadExt;

use super::{
    Auth, Client, VERIFIER, challenge, redeem, sign_in, start_auth, trust_metadata_server,
    userinfo, world_with_ann,
};
use crate::support::World;

/// Makes a test CA and a certificate for localhost/127.0.0.1 (writes
/// `ca.pem`), then serves the metadata documents over https and prints its
/// port: `/client.json` (good, `Cache-Control: max-age=600`), `/other.json`
/// (names another client_id), `/redirect.json` (302), `/large.json` (20 KB),
/// `/c/…` (a good document for every path); `/counts` answers how often each
/// path was asked for.
const SERVER: &str = r#"
import datetime, ipaddress, json, ssl, sys
from http.server import HTTPServer, BaseHTTPRequestHandler
from pathlib import Path
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID, ExtendedKeyUsageOID

folder = Path(sys.argv[1])
now = datetime.datetime.now(datetime.timezone.utc)
def name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
ca_key = ec.generate_private_key(ec.SECP256R1())
ca = (x509.CertificateBuilder().subject_name(name("Tolk test CA")).issuer_name(name("Tolk test CA"))
      .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
      .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
      .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
      .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                   data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                   crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
      .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
      .sign(ca_key, hashes.SHA256()))
key = ec.generate_private_key(ec.SECP256R1())
cert = (x509.CertificateBuilder().subject_name(name("localhost")).issuer_name(ca.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                    x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256()))
(folder / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
(folder / "server.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
(folder / "server.key").write_bytes(key.private_bytes(serialization.Encoding.PEM,
    serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))

counts = {}

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass
    def send_json(self, doc, cache=True):
        body = json.dumps(doc).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if cache:
            self.send_header("Cache-Control", "max-age=600")
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        base = f"https://localhost:{port}"
        doc = {"client_name": "Metadata <client>", "redirect_uris": ["http://127.0.0.1:53682/callback"]}
        counts[self.path] = counts.get(self.path, 0) + 1
        if self.path == "/counts":
            self.send_json(counts, cache=False)
        elif self.path.startswith("/c/"):
            self.send_json({"client_id": base + self.path, **doc})
        elif self.path == "/client.json":
            self.send_json({"client_id": base + "/client.json", **doc})
        elif self.path == "/other.json":
            self.send_json({"client_id": base + "/client.json", **doc})
        elif self.path == "/redirect.json":
            self.send_response(302)
            self.send_header("Location", "/client.json")
            self.end_headers()
        elif self.path == "/large.json":
            self.send_json({"client_id": base + "/large.json", "padding": "x" * 20000, **doc})
        else:
            self.send_response(404)
            self.end_headers()

server = HTTPServer(("127.0.0.1", 0), Handler)
port = server.server_address[1]
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(folder / "server.pem", folder / "server.key")
server.socket = context.wrap_socket(server.socket, server_side=True)
print(port, flush=True)
server.serve_forever()
"#;

/// Starts the metadata server; its port and the process (killed on drop).
pub(super) async fn metadata_server(world: &World) -> Result<(u16, tokio::process::Child)> {
    let folder = world.path("metadata");
    std::fs::create_dir_all(&folder)?;
    let python = std::env::var("TOLK_TEST_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let mut child = tokio::process::Command::new(python)
        .arg("-c")
        .arg(SERVER)
        .arg(&folder)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .context("python3 with cryptography (scripts/setup.sh installs both)")?;
    let stdout = child.stdout.take().context("stdout")?;
    let mut line = String::new();
    tokio::io::BufReader::new(stdout)
        .read_line(&mut line)
        .await?;
    Ok((line.trim().parse().context("the server's port")?, child))
}

/// The authorize URL for `client_id` (PKCE S256, the test callback).
fn authorize(auth: &Auth, client_id: &str) -> String {
    let mut url = reqwest::Url::parse(&auth.url("/auth/authorize")).expect("url");
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", "http://127.0.0.1:53682/callback")
        .append_pair("scope", "openid public")
        .append_pair("state", "st")
        .append_pair("code_challenge", &challenge(VERIFIER))
        .append_pair("code_challenge_method", "S256");
    url.to_string()
}

#[tokio::test]
async fn a_client_serving_its_metadata_document_signs_in_without_registering() -> Result<()> {
    let mut world = world_with_ann("auth_cimd").await?;
    let (port, _server) = metadata_server(&world).await?;
    trust_metadata_server(&mut world);
    let auth = start_auth(&mut world).await?;
    let discovery: Value = auth
        .http
        .get(auth.url("/.well-known/oauth-authorization-server"))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(discovery["client_id_metadata_document_supported"], true);

    let cookie = sign_in(&auth, "ann@example.com", "correct horse").await?;
    let base = format!("https://localhost:{port}");
    let client_id = format!("{base}/client.json");
    let res = auth
        .http
        .get(authorize(&auth, &client_id))
        .header(COOKIE, &cookie)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::OK, "the consent page");
    let page = res.text().await?;
    assert!(page.contains("Metadata &lt;client&gt;"), "{page}");
    // Where the client describes itself, and that it can only come back to
    // this computer.
    assert!(
        page.contains("describes itself at <strong>localhost</strong>"),
        "{page}"
    );
    assert!(page.contains("id=\"local-only\""), "{page}");
    let client = Client {
        uid: client_id.clone(),
        secret: None,
    };
    let code = super::get_code_for(&auth, &client, &cookie, "openid public").await?;
    let (status, tokens) = redeem(&auth, &client, &code, VERIFIER).await?;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let access = tokens["access_token"].as_str().context("access_token")?;
    assert_eq!(userinfo(&auth, access).await?, StatusCode::OK);

    // Refused documents: the authorization stops on an error page naming why.
    for (path, why) in [
        ("/other.json", "client_id is not the URL"),
        ("/redirect.json", "redirects"),
        ("/large.json", "larger than 10 KB"),
        ("/missing.json", "404"),
    ] {
        let res = auth
            .http
            .get(authorize(&auth, &format!("{base}{path}")))
            .header(COOKIE, &cookie)
            .send()
            .await?;
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{path}");
        let page = res.text().await?;
        assert!(page.contains(why), "{path}: {page}");
    }
    let res = auth
        .http
        .get(authorize(
            &auth,
            &format!("http://localhost:{port}/client.json"),
        ))
        .header(COOKIE, &cookie)
        .send()
        .await?;
    assert_eq!(
        res.status(),
        StatusCode::BAD_REQUEST,
        "http client IDs are not fetched"
    );
    Ok(())
}

/// Without the test setting, a document on a loopback (or any private)
/// address is never fetched, and an allow-list keeps other hosts out.
#[tokio::test]
async fn metadata_documents_on_private_addresses_or_other_hosts_are_refused() -> Result<()> {
    let mut world = world_with_ann("auth_cimd_ssrf").await?;
    let (port, _server) = metadata_server(&world).await?;
    let auth = start_auth(&mut world).await?;
    let cookie = sign_in(&auth, "ann@example.com", "correct horse").await?;
    for client_id in [
        format!("https://localhost:{port}/client.json"),
        format!("https://127.0.0.1:{port}/client.json"),
        "https://169.254.169.254/latest/meta-data.json".to_owned(),
        "https://10.0.0.1/client.json".to_owned(),
    ] {
        let res = auth
            .http
            .get(authorize(&auth, &client_id))
            .header(COOKIE, &cookie)
            .send()
            .await?;
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{client_id}");
        assert!(res.text().await?.contains("not public"), "{client_id}");
    }
    // The token endpoint refuses such a client too.
    let (status, body) = super::token(
        &auth,
        &Client {
            uid: format!("https://localhost:{port}/client.json"),
            secret: None,
        },
        &[("grant_type", "authorization_code"), ("code", "x")],
    )
    .await?;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"], "invalid_client");

    // An allow-list: other hosts are refused before anything is resolved.
    world
        .extra_env
        .push(("MCP_CLIENT_ID_HOSTS".into(), "clients.example".into()));
    let listed = start_auth(&mut world).await?;
    let cookie = sign_in(&listed, "ann@example.com", "correct horse").await?;
    let res = listed
        .http
        .get(authorize(&listed, "https://app.example/client.json"))
        .header(COOKIE, &cookie)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    assert!(res.text().await?.contains("not among the allowed"));
    Ok(())
}

/// How often the test server was asked for each path.
async fn counts(world: &World, port: u16) -> Result<Value> {
    let ca = std::fs::read(world.path("metadata").join("ca.pem"))?;
    let http = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&ca)?)
        .build()?;
    Ok(http
        .get(format!("https://localhost:{port}/counts"))
        .send()
        .await?
        .json()
        .await?)
}

/// Client metadata documents are no free lunch: a refused document is not
/// fetched again at once, an address may have ten documents fetched at once
/// (then one a minute), and the clients of documents nobody consented to are
/// deleted by the scheduler once their cache time ends, while a client with a
/// live token stays.
#[tokio::test]
async fn metadata_fetches_are_limited_and_unused_clients_pruned() -> Result<()> {
    let mut world = world_with_ann("auth_cimd_limits").await?;
    let (port, _server) = metadata_server(&world).await?;
    trust_metadata_server(&mut world);
    let auth = start_auth(&mut world).await?;
    let base = format!("https://localhost:{port}");
    // Without signing in, as anyone on the internet could.
    let ask = |path: String| {
        let (auth, base) = (&auth, &base);
        async move {
            let res = auth
                .http
                .get(authorize(auth, &format!("{base}{path}")))
                .send()
                .await?;
            let status = res.status();
            anyhow::Ok((status, res.text().await?))
        }
    };
    for _ in 0..2 {
        let (status, page) = ask("/missing.json".into()).await?;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(page.contains("404"), "{page}");
    }
    assert_eq!(
        counts(&world, port).await?["/missing.json"],
        1,
        "fetched once"
    );
    for n in 0..9 {
        let (status, page) = ask(format!("/c/{n}.json")).await?;
        assert!(status.is_redirection(), "/c/{n}.json: {status} {page}");
    }
    let (status, page) = ask("/c/9.json".into()).await?;
    assert_eq!(status, StatusCode::BAD_REQUEST, "the eleventh fetch");
    assert!(
        page.contains("too many client metadata documents"),
        "{page}"
    );
    assert!(counts(&world, port).await?.get("/c/9.json").is_none());

    // Ann signs in to one of them and gets a token.
    let cookie = sign_in(&auth, "ann@example.com", "correct horse").await?;
    let kept = Client {
        uid: format!("{base}/c/0.json"),
        secret: None,
    };
    let code = super::get_code_for(&auth, &kept, &cookie, "openid public").await?;
    let (status, tokens) = redeem(&auth, &kept, &code, VERIFIER).await?;
    assert_eq!(status, StatusCode::OK, "{tokens}");

    let db = world.db().await?;
    let metadata_clients = || {
        let db = db.clone();
        async move {
            let uids: Vec<String> = sqlx::query_scalar(
                "SELECT uid FROM oauth_applications WHERE metadata_expires_at IS NOT NULL ORDER BY uid",
            )
            .fetch_all(&db)
            .await?;
            anyhow::Ok(uids)
        }
    };
    assert_eq!(metadata_clients().await?.len(), 9);
    sqlx::query("UPDATE oauth_applications SET metadata_expires_at = now() - interval '1 second'")
        .execute(&db)
        .await?;
    world.spawn(&["scheduler", "--tick-secs", "1"], "scheduler")?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let left = metadata_clients().await?;
        if left == [kept.uid.clone()] {
            break;
        }
        anyhow::ensure!(
            std::time::Instant::now() < deadline,
            "unused metadata clients not pruned: {left:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    Ok(())
}
