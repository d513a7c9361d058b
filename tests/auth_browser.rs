//! The auth pages in a real browser: Debian's headless Chromium driven through
//! chromedriver (WebDriver, the `fantoccini` client). The browser opens an
//! authorization URL, is sent to the sign-in page, fails once, signs in, approves
//! the consent page and lands on the client's redirect URI (a small HTTP server of
//! the test) with a code the test redeems. A legacy `_coauth_session` cookie at
//! Path=/ sits beside the new one at /auth all along: the user can sign in and
//! stays signed in. Screenshots of every page are saved (paths printed).
//!
//! A missing `chromium` or `chromedriver` fails the test (scripts/setup.sh
//! installs Debian's chromium and chromium-driver).

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use fantoccini::cookies::Cookie;
use fantoccini::{Client as Browser, ClientBuilder, Locator};
use futures::FutureExt;
use reqwest::StatusCode;
use serde_json::json;
use tokio::process::{Child, Command};

use crate::auth_server::{self, Auth, Client, VERIFIER, challenge, jwt_payload, token, userinfo};
use crate::support::{World, free_port};

/// The flags every browser of these tests runs with (no network of its own).
const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1000,800",
];

/// The value of the earlier deployment's cookie: not ours to read.
const LEGACY_VALUE: &str = "legacy-deployment-session-value%3D%3D--0123abcd";

/// An executable on PATH (or in /usr/bin), else an error naming the package.
fn executable(name: &str, env: &str, package: &str) -> Result<PathBuf> {
    if let Ok(p) = std::env::var(env) {
        let p = PathBuf::from(p);
        if !p.is_file() {
            bail!("{env}={} is not a file", p.display());
        }
        return Ok(p);
    }
    let path = std::env::var("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .with_context(|| {
            format!(
                "`{name}` is not installed: the browser tests need Debian's {package} \
                 (scripts/setup.sh installs chromium and chromium-driver; or set {env})"
            )
        })
}

/// chromedriver and the WebDriver session on a fresh Chromium profile.
/// chromedriver leads its own process group, so dropping the driver also ends the
/// browser it started (a failing test leaves no Chromium behind).
pub struct Driver {
    browser: Option<Browser>,
    chromedriver: Child,
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(pid) = self.chromedriver.id() {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .status();
        }
    }
}

impl Driver {
    pub async fn start(world: &World) -> Result<Self> {
        let chromium = executable("chromium", "TOLK_TEST_CHROMIUM", "chromium")?;
        let chromedriver = executable("chromedriver", "TOLK_TEST_CHROMEDRIVER", "chromium-driver")?;
        let port = free_port();
        let log = std::fs::File::create(world.path("chromedriver.log"))?;
        let child = Command::new(&chromedriver)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::from(log.try_clone()?))
            .stderr(Stdio::from(log))
            .kill_on_drop(true)
            .process_group(0)
            .spawn()
            .with_context(|| format!("starting {}", chromedriver.display()))?;
        let webdriver = format!("http://127.0.0.1:{port}");
        let probe = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(r) = probe.get(format!("{webdriver}/status")).send().await
                && r.status().is_success()
            {
                break;
            }
            if Instant::now() > deadline {
                bail!(
                    "chromedriver did not come up: {}",
                    std::fs::read_to_string(world.path("chromedriver.log")).unwrap_or_default()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let profile = world.path("chromium-profile");
        std::fs::create_dir_all(&profile)?;
        let mut args: Vec<String> = CHROMIUM_FLAGS.iter().map(|s| (*s).to_owned()).collect();
        args.push(format!("--user-data-dir={}", profile.display()));
        let mut caps = serde_json::Map::new();
        caps.insert("browserName".into(), json!("chrome"));
        caps.insert(
            "goog:chromeOptions".into(),
            json!({ "binary": chromium.display().to_string(), "args": args }),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let browser = ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&webdriver)
            .await
            .context("opening a WebDriver session on headless Chromium")?;
        Ok(Self {
            browser: Some(browser),
            chromedriver: child,
        })
    }

    pub fn b(&self) -> &Browser {
        self.browser.as_ref().expect("open session")
    }

    pub async fn close(mut self) -> Result<()> {
        if let Some(b) = self.browser.take() {
            b.close().await?;
        }
        Ok(())
    }
}

/// Where screenshots are kept: the world's folder (removed when the test passes)
/// and a copy under the target folder's tmp dir that stays.
pub(crate) fn save_screenshot(world: &World, name: &str, png: &[u8]) -> Result<PathBuf> {
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 2000,
        "{name}: not a real PNG screenshot ({} bytes)",
        png.len()
    );
    let in_world = world.path(name);
    std::fs::write(&in_world, png)?;
    let kept_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("auth-browser");
    std::fs::create_dir_all(&kept_dir)?;
    let kept = kept_dir.join(name);
    std::fs::write(&kept, png)?;
    println!(
        "screenshot {name}: {} (kept at {})",
        in_world.display(),
        kept.display()
    );
    Ok(kept)
}

/// The client's redirect URI: records every query and answers a small page.
async fn callback_server() -> Result<(String, Arc<Mutex<Vec<HashMap<String, String>>>>)> {
    let seen: Arc<Mutex<Vec<HashMap<String, String>>>> = Arc::default();
    let record = seen.clone();
    let app = axum::Router::new().route(
        "/callback",
        axum::routing::get(
            move |axum::extract::Query(q): axum::extract::Query<HashMap<String, String>>| {
                let record = record.clone();
                async move {
                    record.lock().expect("lock").push(q);
                    axum::response::Html(
                        "<!DOCTYPE html><html lang=\"en\"><head><title>Callback</title></head>\
                         <body><h1 id=\"done\">The application received the code.</h1></body></html>",
                    )
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok((format!("http://127.0.0.1:{port}/callback"), seen))
}

fn authorize_url(auth: &Auth, client: &Client, redirect_uri: &str, state: &str) -> String {
    let mut url = reqwest::Url::parse(&auth.url("/auth/authorize")).expect("url");
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &client.uid)
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("scope", "openid public translate")
        .append_pair("state", state)
        .append_pair("code_challenge", &challenge(VERIFIER))
        .append_pair("code_challenge_method", "S256");
    url.to_string()
}

/// The legacy cookie as the earlier deployment set it: Path=/.
fn legacy_cookie() -> Cookie<'static> {
    Cookie::parse(format!(
        "_coauth_session={LEGACY_VALUE}; Path=/; Domain=localhost; HttpOnly; SameSite=Lax"
    ))
    .expect("a cookie")
}

/// The paths of the browser's `_coauth_session` cookies visible on the current page.
async fn session_cookie_paths(b: &Browser) -> Result<Vec<String>> {
    let mut paths: Vec<String> = b
        .get_all_cookies()
        .await?
        .into_iter()
        .filter(|c| c.name() == "_coauth_session")
        .map(|c| c.path().unwrap_or("").to_owned())
        .collect();
    paths.sort();
    Ok(paths)
}

async fn wait_for_path(b: &Browser, path: &str) -> Result<reqwest::Url> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let url = b.current_url().await?;
        if url.path() == path {
            return Ok(url);
        }
        if Instant::now() > deadline {
            bail!("the browser did not reach {path}; it is at {url}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn chromium_signs_in_and_approves_consent_with_a_legacy_cookie() -> Result<()> {
    let (world, auth, public, _) = auth_server::setup().await?;
    let driver = Driver::start(&world).await?;
    // A failed assertion still closes the browser first.
    let result = AssertUnwindSafe(browse(&world, &auth, &public, driver.b()))
        .catch_unwind()
        .await;
    let closed = driver.close().await;
    match result {
        Ok(r) => r.and(closed),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

async fn browse(world: &World, auth: &Auth, public: &Client, b: &Browser) -> Result<()> {
    let (redirect_uri, seen) = callback_server().await?;

    // The earlier deployment left its cookie at Path=/ in this browser.
    b.goto(&auth.url("/auth/healthz")).await?;
    b.add_cookie(legacy_cookie()).await?;
    assert_eq!(session_cookie_paths(b).await?, ["/"]);

    // An application sends the browser to /auth/authorize: no session yet, so
    // the sign-in page, which comes back afterwards.
    b.goto(&authorize_url(auth, public, &redirect_uri, "browser-1"))
        .await?;
    let url = wait_for_path(b, "/auth/login").await?;
    assert!(
        url.query_pairs()
            .any(|(k, v)| k == "continue" && v.starts_with("/auth/authorize?")),
        "{url}"
    );
    assert_eq!(b.title().await?, "Sign in");
    let email = b.find(Locator::Css("label[for=email]")).await?;
    assert_eq!(email.text().await?, "Email");
    assert_eq!(
        b.active_element().await?.attr("id").await?.as_deref(),
        Some("email"),
        "the email field has the focus"
    );
    save_screenshot(world, "auth-login.png", &b.screenshot().await?)?;

    // A wrong password: the page again, with an alert tied to the fields.
    b.find(Locator::Id("email"))
        .await?
        .send_keys("ann@example.com")
        .await?;
    b.find(Locator::Id("password"))
        .await?
        .send_keys("wrong horse")
        .await?;
    b.find(Locator::Id("submit")).await?.click().await?;
    let alert = b.wait().for_element(Locator::Id("login-error")).await?;
    assert_eq!(alert.attr("role").await?.as_deref(), Some("alert"));
    assert!(alert.text().await?.contains("not correct"));
    save_screenshot(world, "auth-login-failed.png", &b.screenshot().await?)?;

    // The right one: on to the consent page.
    b.find(Locator::Id("email")).await?.clear().await?;
    b.find(Locator::Id("email"))
        .await?
        .send_keys("Ann@Example.com")
        .await?;
    b.find(Locator::Id("password"))
        .await?
        .send_keys("correct horse")
        .await?;
    b.find(Locator::Id("submit")).await?.click().await?;
    b.wait().for_element(Locator::Id("allow")).await?;
    wait_for_path(b, "/auth/authorize").await?;
    assert_eq!(b.title().await?, "Authorize application");
    let page = b.find(Locator::Css("main")).await?.text().await?;
    assert!(page.contains("Allow CLI <tool>?"), "{page}");
    assert!(page.to_lowercase().contains("ann@example.com"), "{page}");
    assert!(page.contains("Translate text and documents"), "{page}");
    // Signing in expired the legacy cookie and set ours at /auth.
    assert_eq!(session_cookie_paths(b).await?, ["/auth"]);
    save_screenshot(world, "auth-consent.png", &b.screenshot().await?)?;

    // The browser still holds an old Path=/ cookie beside the new one (say, one
    // set again by the earlier deployment still running on another host name
    // of the same site): Chromium sends both, and the user stays signed in.
    b.add_cookie(legacy_cookie()).await?;
    assert_eq!(session_cookie_paths(b).await?, ["/", "/auth"]);
    b.refresh().await?;
    b.wait().for_element(Locator::Id("allow")).await?;
    assert_eq!(b.title().await?, "Authorize application");

    // Allow: to the client's redirect URI with the code, the state and iss.
    b.find(Locator::Id("allow")).await?.click().await?;
    b.wait().for_element(Locator::Id("done")).await?;
    save_screenshot(world, "auth-callback.png", &b.screenshot().await?)?;
    let q = seen
        .lock()
        .expect("lock")
        .last()
        .cloned()
        .context("the callback was not called")?;
    assert_eq!(q["state"], "browser-1");
    assert_eq!(q["iss"], auth.base);
    let (status, body) = token(
        auth,
        public,
        &[
            ("grant_type", "authorization_code"),
            ("code", &q["code"]),
            ("redirect_uri", &redirect_uri),
            ("code_verifier", VERIFIER),
        ],
    )
    .await?;
    assert_eq!(status, StatusCode::OK, "{body}");
    let access = body["access_token"].as_str().context("access_token")?;
    assert_eq!(jwt_payload(access)["u"]["e"], "ann@example.com");
    assert!(body["id_token"].is_string(), "{body}");
    assert_eq!(userinfo(auth, access).await?, StatusCode::OK);

    // Still signed in, both cookies still there: a second authorization goes
    // straight to the consent page, and the sign-in page straight back.
    b.goto(&authorize_url(auth, public, &redirect_uri, "browser-2"))
        .await?;
    b.wait().for_element(Locator::Id("allow")).await?;
    assert_eq!(session_cookie_paths(b).await?, ["/", "/auth"]);
    let third = reqwest::Url::parse(&authorize_url(auth, public, &redirect_uri, "browser-3"))?;
    let continue_to = format!("{}?{}", third.path(), third.query().unwrap_or(""));
    let consent_again = format!("/auth/login?continue={}", url_encode(&continue_to));
    b.goto(&auth.url(&consent_again)).await?;
    b.wait().for_element(Locator::Id("allow")).await?;
    wait_for_path(b, "/auth/authorize").await?;

    // Deny: the client hears access_denied.
    b.find(Locator::Id("deny")).await?.click().await?;
    b.wait().for_element(Locator::Id("done")).await?;
    let q = seen
        .lock()
        .expect("lock")
        .last()
        .cloned()
        .context("no callback")?;
    assert_eq!(q.get("error").map(String::as_str), Some("access_denied"));
    assert_eq!(q["state"], "browser-3");
    Ok(())
}

fn url_encode(s: &str) -> String {
    let mut u = reqwest::Url::parse("http://x/").expect("url");
    u.query_pairs_mut().append_pair("v", s);
    u.query().unwrap_or("").trim_start_matches("v=").to_owned()
}
