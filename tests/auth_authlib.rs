//! A real OAuth client library no one here wrote against the running auth
//! service: Python's authlib (`OAuth2Session`, PKCE S256) reads the discovery
//! document, goes through the sign-in and consent pages (their HTML forms,
//! posted with requests), redeems the code, calls userinfo, refreshes, revokes,
//! and verifies the id_token and access token signatures through the JWKS
//! (authlib's `jose`), a tampered signature being refused.

use anyhow::{Context, Result, bail};
use serde_json::Value;
use tokio::process::Command;

use crate::auth_server;

/// The client: argv = base URL, client_id, email, password. Prints one JSON object.
const CLIENT: &str = r#"
import json, sys
from html.parser import HTMLParser
from urllib.parse import urljoin, urlparse, parse_qs

import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session, OAuthError
from authlib.jose import JsonWebKey, jwt
from authlib.jose.errors import BadSignatureError

base, client_id, email, password = sys.argv[1:5]
redirect_uri = "http://127.0.0.1:53682/callback"
out = {}


class Forms(HTMLParser):
    """The page's forms: action and fields (inputs; buttons with a value)."""

    def __init__(self):
        super().__init__()
        self.forms = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.forms.append({"action": a.get("action"), "method": a.get("method"), "fields": {}, "buttons": {}})
        elif tag == "input" and self.forms and a.get("name"):
            self.forms[-1]["fields"][a["name"]] = a.get("value") or ""
        elif tag == "button" and self.forms and a.get("name"):
            self.forms[-1]["buttons"][a.get("value")] = a["name"]


def form_of(res):
    p = Forms()
    p.feed(res.text)
    assert len(p.forms) == 1, (res.status_code, res.url, res.text[:500])
    return p.forms[0]


meta = requests.get(base + "/.well-known/openid-configuration", timeout=30).json()
assert meta == requests.get(base + "/.well-known/oauth-authorization-server", timeout=30).json()
out["issuer"] = meta["issuer"]
out["code_challenge_methods_supported"] = meta["code_challenge_methods_supported"]
jwks = JsonWebKey.import_key_set(requests.get(meta["jwks_uri"], timeout=30).json())

client = OAuth2Session(
    client_id,
    redirect_uri=redirect_uri,
    scope="openid profile email offline_access translate",
    code_challenge_method="S256",
    token_endpoint_auth_method="none",
)
verifier = generate_token(64)
nonce = generate_token(20)
uri, state = client.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
out["authorization_url_has_s256"] = "code_challenge_method=S256" in uri

# The user agent: the sign-in page, then the consent page, following the HTML forms.
browser = requests.Session()
res = browser.get(uri, timeout=30)
out["login_page"] = urlparse(res.url).path
login = form_of(res)
fields = dict(login["fields"])
fields.update(email=email, password=password)
res = browser.post(urljoin(res.url, login["action"]), data=fields, timeout=30)
out["consent_page"] = urlparse(res.url).path
consent = form_of(res)
out["consent_buttons"] = sorted(consent["buttons"])
fields = dict(consent["fields"])
fields[consent["buttons"]["allow"]] = "allow"
res = browser.post(urljoin(res.url, consent["action"]), data=fields, allow_redirects=False, timeout=30)
callback = res.headers["Location"]
q = parse_qs(urlparse(callback).query)
out["callback_iss"] = q.get("iss", [None])[0]
out["callback_state_ok"] = q.get("state", [None])[0] == state

# The code: authlib checks the state and sends the verifier.
token = client.fetch_token(meta["token_endpoint"], authorization_response=callback, code_verifier=verifier)
out["token_type"] = token["token_type"]
out["token_keys"] = sorted(token)

claims = jwt.decode(
    token["id_token"],
    jwks,
    claims_options={
        "iss": {"essential": True, "value": meta["issuer"]},
        "aud": {"essential": True, "value": client_id},
        "nonce": {"essential": True, "value": nonce},
    },
)
claims.validate()
out["id_token"] = {"sub": claims["sub"], "iss": claims["iss"], "aud": claims["aud"]}
access = jwt.decode(token["access_token"], jwks)
access.validate()
out["access_claims"] = {"sub": access["sub"], "scope": access["scope"], "u": access["u"], "iss": access["iss"]}
head, payload, sig = token["id_token"].split(".")
tampered = head + "." + payload + "." + ("A" if sig[0] != "A" else "B") + sig[1:]
try:
    jwt.decode(tampered, jwks)
    out["tampered_refused"] = False
except BadSignatureError:
    out["tampered_refused"] = True

# userinfo with the access token (authlib adds the Bearer header).
info = client.get(meta["userinfo_endpoint"], timeout=30)
out["userinfo_status"] = info.status_code
out["userinfo"] = info.json()

# Refresh: a new pair, the old refresh token no longer usable.
first_refresh = token["refresh_token"]
new = client.refresh_token(meta["token_endpoint"], refresh_token=first_refresh)
out["refreshed"] = new["refresh_token"] != first_refresh and new["access_token"] != token["access_token"]
out["userinfo_after_refresh"] = client.get(meta["userinfo_endpoint"], timeout=30).status_code

# Revoke the refresh token, then the access token (RFC 7009).
res = client.revoke_token(meta["revocation_endpoint"], token=new["refresh_token"], token_type_hint="refresh_token")
out["revoke_refresh_status"] = res.status_code
try:
    client.refresh_token(meta["token_endpoint"], refresh_token=new["refresh_token"])
    out["refresh_after_revoke"] = "accepted"
except OAuthError as e:
    out["refresh_after_revoke"] = e.error
res = client.revoke_token(meta["revocation_endpoint"], token=new["access_token"], token_type_hint="access_token")
out["revoke_access_status"] = res.status_code
out["userinfo_after_revoke"] = client.get(meta["userinfo_endpoint"], timeout=30).status_code
print(json.dumps(out))
"#;

#[tokio::test]
async fn authlib_code_flow_with_pkce_refresh_revoke_and_jwks() -> Result<()> {
    let (world, auth, public, _) = auth_server::setup().await?;
    let script = world.path("authlib_client.py");
    std::fs::write(&script, CLIENT)?;
    let python = std::env::var("TOLK_TEST_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let out = Command::new(&python)
        .arg(&script)
        .args([&auth.base, &public.uid, "ann@example.com", "correct horse"])
        .output()
        .await
        .with_context(|| format!("running {python}"))?;
    if !out.status.success() {
        bail!(
            "the authlib client failed (scripts/setup.sh installs python3-authlib and \
             python3-requests):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let r: Value = serde_json::from_slice(&out.stdout)
        .with_context(|| String::from_utf8_lossy(&out.stdout).into_owned())?;
    println!("authlib: {r:#}");

    assert_eq!(r["issuer"], auth.base);
    assert!(
        r["code_challenge_methods_supported"]
            .as_array()
            .is_some_and(|m| m.iter().any(|x| x == "S256")),
        "{r}"
    );
    assert_eq!(r["authorization_url_has_s256"], true);
    assert_eq!(r["login_page"], "/auth/login");
    assert_eq!(r["consent_page"], "/auth/authorize");
    assert_eq!(r["consent_buttons"], serde_json::json!(["allow", "deny"]));
    assert_eq!(r["callback_iss"], auth.base, "RFC 9207 iss");
    assert_eq!(r["callback_state_ok"], true);
    assert_eq!(
        r["token_type"].as_str().map(str::to_lowercase),
        Some("bearer".into())
    );
    for k in ["access_token", "refresh_token", "id_token", "expires_in"] {
        assert!(
            r["token_keys"]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x == k)),
            "{k}: {r}"
        );
    }
    assert_eq!(r["id_token"]["iss"], auth.base);
    assert_eq!(r["id_token"]["aud"], public.uid.as_str());
    let sub = r["id_token"]["sub"].as_str().context("sub")?;
    assert!(sub.starts_with("user-"), "{sub}");
    assert_eq!(r["access_claims"]["sub"], sub);
    assert_eq!(r["access_claims"]["u"]["e"], "ann@example.com");
    assert!(r["access_claims"]["scope"].is_array(), "{r}");
    assert_eq!(r["tampered_refused"], true);
    assert_eq!(r["userinfo_status"], 200);
    assert_eq!(r["userinfo"]["sub"], sub);
    assert_eq!(r["userinfo"]["email"], "ann@example.com");
    assert_eq!(r["refreshed"], true);
    assert_eq!(r["userinfo_after_refresh"], 200);
    assert_eq!(r["revoke_refresh_status"], 200);
    assert_eq!(r["refresh_after_revoke"], "invalid_grant");
    assert_eq!(r["revoke_access_status"], 200);
    assert_eq!(r["userinfo_after_revoke"], 401);
    Ok(())
}
