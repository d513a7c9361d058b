//! Signing in to the dashboard with an account of the auth service: `tolk up`
//! serves both, the dashboard is a public application registered with `tolk
//! admin create-app` and named by `TOLK_DASHBOARD_CLIENT_ID`. An
//! administrator goes through `/admin/ui/sign-in`, the auth service's
//! sign-in and authorization, and the dashboard's callback; a user without
//! the permission is refused; the session's actions need the page's token.
//! The whole way once more in headless Chromium, each page screenshotted.

use std::panic::AssertUnwindSafe;

use fantoccini::Locator;
use futures::FutureExt as _;
use reqwest::StatusCode;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};

use super::*;
use crate::auth_browser::{Driver, save_screenshot};
use crate::auth_server::{Auth, admin_json, query_of, sign_in, tolk_up};
use crate::support::free_port;

/// `tolk up` on one address with the dashboard's application registered,
/// an administrator (`ops@example.com`) and a user without the permission
/// (`dev@example.com`), both with the password `pw pw pw`.
async fn up_with_dashboard(name: &str) -> Result<(World, Auth)> {
    let mut world = World::new(name).await?;
    let port = free_port();
    let base = format!("http://localhost:{port}");
    let app = admin_json(
        &world,
        &[
            "admin",
            "create-app",
            "--name",
            "Tolk dashboard",
            "--redirect-uri",
            &format!("{base}/admin/ui/callback"),
            "--scopes",
            "openid",
            "--public",
            "--skip-authorization",
        ],
    )
    .await?;
    for (email, admin) in [("ops@example.com", true), ("dev@example.com", false)] {
        let mut args = vec![
            "admin",
            "create-user",
            "--email",
            email,
            "--password",
            "pw pw pw",
        ];
        if admin {
            args.push("--admin");
        }
        admin_json(&world, &args).await?;
    }
    let client_id = app["uid"].as_str().context("uid")?.to_owned();
    world
        .extra_env
        .push(("TOLK_DASHBOARD_CLIENT_ID".to_owned(), client_id));
    let (_, auth) = tolk_up(&mut world, port, "localhost").await?;
    Ok((world, auth))
}

/// The `name=value` of cookie `name` among a response's `Set-Cookie`s.
fn set_cookie(res: &reqwest::Response, name: &str) -> Option<String> {
    res.headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(&format!("{name}=")))
        .map(|v| v.split(';').next().unwrap_or_default().to_owned())
}

/// Goes through the dashboard's sign-in as `email`: the dashboard's
/// callback answer (its status, `Location` and session cookie).
async fn sign_in_to_dashboard(
    auth: &Auth,
    email: &str,
) -> Result<(StatusCode, String, Option<String>)> {
    let res = auth.http.get(auth.url("/admin/ui/sign-in")).send().await?;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let flow = set_cookie(&res, "tolk_dashboard_flow").context("flow cookie")?;
    let authorize = res.headers()[LOCATION].to_str()?.to_owned();
    assert!(
        authorize.starts_with(&auth.url("/auth/authorize?")),
        "{authorize}"
    );
    let q = query_of(&authorize);
    assert_eq!(q["code_challenge_method"], "S256");
    assert_eq!(q["redirect_uri"], auth.url("/admin/ui/callback"));

    let session = sign_in(auth, email, "pw pw pw").await?;
    let res = auth
        .http
        .get(&authorize)
        .header(COOKIE, &session)
        .send()
        .await?;
    assert!(res.status().is_redirection(), "{}", res.status());
    let callback = res.headers()[LOCATION].to_str()?.to_owned();
    assert!(
        callback.starts_with(&auth.url("/admin/ui/callback?")),
        "{callback}"
    );

    let res = auth
        .http
        .get(&callback)
        .header(COOKIE, &flow)
        .send()
        .await?;
    let status = res.status();
    let location = res
        .headers()
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    Ok((status, location, set_cookie(&res, "tolk_dashboard")))
}

/// A dashboard page with `cookie`: status and body.
async fn page_with(auth: &Auth, path: &str, cookie: &str) -> Result<(StatusCode, String)> {
    let res = auth
        .http
        .get(auth.url(path))
        .header(COOKIE, cookie)
        .send()
        .await?;
    Ok((res.status(), res.text().await?))
}

/// An administrator signs in with the account: the session cookie opens
/// every page, with a sign-out button; an action without the page's token
/// is refused; a changed cookie is no session; signing out clears it.
#[tokio::test]
async fn an_administrator_signs_in_to_the_dashboard_with_an_account() -> Result<()> {
    let (_world, auth) = up_with_dashboard("dash_sign_in").await?;
    let (status, to, session) = sign_in_to_dashboard(&auth, "ops@example.com").await?;
    assert_eq!((status, to.as_str()), (StatusCode::SEE_OTHER, "/admin/ui"));
    let session = session.context("session cookie")?;
    for path in [
        "/admin/ui",
        "/admin/ui/workers",
        "/admin/ui/jobs",
        "/admin/ui/usage",
    ] {
        let (status, body) = page_with(&auth, path, &session).await?;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        assert!(body.contains("Sign out"), "{path}");
    }
    let (_, body) = page_with(&auth, "/admin/ui", &session).await?;
    let token = body
        .split("name=\"token\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .context("the page's token")?
        .to_owned();

    // An action (here: signing out) without the page's token: refused.
    let res = auth
        .http
        .post(auth.url("/admin/ui/sign-out"))
        .header(COOKIE, &session)
        .form(&[("token", "forged")])
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::FORBIDDEN);

    // A changed cookie is no session.
    let changed = format!("{session}x");
    let (status, body) = page_with(&auth, "/admin/ui", &changed).await?;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(body.contains("/admin/ui/sign-in"), "{body}");

    // Signing out with the token clears the cookie.
    let res = auth
        .http
        .post(auth.url("/admin/ui/sign-out"))
        .header(COOKIE, &session)
        .form(&[("token", token.as_str())])
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::OK);
    let cleared = res
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.starts_with("tolk_dashboard=;") && v.contains("Max-Age=0"));
    assert!(cleared, "the session cookie is cleared");
    Ok(())
}

/// A user without the system-administrator permission gets 403 at the
/// callback and no session; a callback whose state this browser did not
/// start gets 400.
#[tokio::test]
async fn a_user_without_the_permission_or_a_foreign_state_gets_no_session() -> Result<()> {
    let (_world, auth) = up_with_dashboard("dash_refused").await?;
    let (status, _, session) = sign_in_to_dashboard(&auth, "dev@example.com").await?;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(session, None);

    let res = auth
        .http
        .get(auth.url("/admin/ui/callback?code=abc&state=not-mine"))
        .header(COOKIE, "tolk_dashboard_flow=mine.verifier")
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    assert!(res.text().await?.contains("not started by this browser"));
    Ok(())
}

/// Headless Chromium opens the dashboard, follows the link to sign in with
/// an account, fills the auth service's sign-in page and lands on the
/// queues page, signed in; each page screenshotted.
#[tokio::test]
async fn chromium_signs_in_to_the_dashboard_with_an_account() -> Result<()> {
    let (world, auth) = up_with_dashboard("dash_browser").await?;
    let driver = Driver::start(&world).await?;
    let result = AssertUnwindSafe(browse(&world, &auth, driver.b()))
        .catch_unwind()
        .await;
    driver.close().await?;
    match result {
        Ok(r) => r,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

async fn browse(world: &World, auth: &Auth, b: &fantoccini::Client) -> Result<()> {
    b.goto(&auth.url("/admin/ui/sign-in")).await?;
    b.wait().for_element(Locator::Id("email")).await?;
    save_screenshot(world, "dashboard-sign-in.png", &b.screenshot().await?)?;
    b.find(Locator::Id("email"))
        .await?
        .send_keys("ops@example.com")
        .await?;
    b.find(Locator::Id("password"))
        .await?
        .send_keys("pw pw pw")
        .await?;
    b.find(Locator::Id("submit")).await?.click().await?;
    let out = b
        .wait()
        .for_element(Locator::Css("form.sign-out button"))
        .await?;
    assert_eq!(out.text().await?, "Sign out");
    assert_eq!(b.current_url().await?.path(), "/admin/ui");
    assert_eq!(b.title().await?, "Tolk operations: Queues");
    save_screenshot(world, "dashboard-signed-in.png", &b.screenshot().await?)?;
    Ok(())
}
