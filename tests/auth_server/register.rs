//! Dynamic client registration (RFC 7591) as MCP clients use it: a public
//! client registers, completes the code flow with PKCE and consent, and
//! re-registering is free while new clients are limited per hour.

use anyhow::{Context, Result};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{
    Auth, Client, VERIFIER, admin_json, get_code_for, query_of, redeem, setup, sign_in, start_auth,
    userinfo,
};
use crate::support::World;

const CALLBACK: &str = "http://127.0.0.1:53682/callback";

async fn register(auth: &Auth, body: &Value) -> Result<(StatusCode, Value, Option<String>)> {
    register_with(auth, &auth.http, body).await
}

/// [`register`] through `http` (a client bound to another loopback address).
async fn register_with(
    auth: &Auth,
    http: &reqwest::Client,
    body: &Value,
) -> Result<(StatusCode, Value, Option<String>)> {
    let res = http
        .post(auth.url("/auth/register"))
        .json(body)
        .send()
        .await?;
    let status = res.status();
    let retry = res
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    Ok((status, res.json().await.unwrap_or(Value::Null), retry))
}

#[tokio::test]
async fn a_registered_public_client_completes_the_code_flow_with_pkce_and_consent() -> Result<()> {
    let (_world, auth, _, _) = setup().await?;
    let discovery: Value = auth
        .http
        .get(auth.url("/.well-known/oauth-authorization-server"))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(
        discovery["registration_endpoint"],
        auth.url("/auth/register")
    );

    let request = json!({
        "client_name": "My MCP client",
        "redirect_uris": [CALLBACK],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "none",
    });
    let (status, client, _) = register(&auth, &request).await?;
    assert_eq!(status, StatusCode::CREATED, "{client}");
    let uid = client["client_id"]
        .as_str()
        .context("client_id")?
        .to_owned();
    assert!(uid.starts_with("dcr-"), "{client}");
    assert!(client.get("client_secret").is_none(), "{client}");
    assert_eq!(client["token_endpoint_auth_method"], "none");
    // The same name and redirect URIs: the same client.
    let (status, again, _) = register(&auth, &request).await?;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(again["client_id"], uid.as_str());

    let client = Client { uid, secret: None };
    let cookie = sign_in(&auth, "ann@example.com", "correct horse").await?;
    // A scope beyond what registered clients get is refused.
    let res = auth
        .http
        .get(super::authorize_url_for(
            &auth,
            &client,
            "openid translate",
            &[],
        ))
        .header(reqwest::header::COOKIE, &cookie)
        .send()
        .await?;
    let refused = res
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|l| l.to_str().ok())
        .map(query_of)
        .and_then(|q| q.get("error").cloned());
    assert_eq!(
        refused.as_deref(),
        Some("invalid_scope"),
        "{}",
        res.status()
    );
    // Without PKCE: refused.
    let res = auth
        .http
        .get(
            super::authorize_url_for(&auth, &client, "openid public", &[])
                .replace("code_challenge_method=S256", "code_challenge_method=plain"),
        )
        .header(reqwest::header::COOKIE, &cookie)
        .send()
        .await?;
    assert_ne!(res.status(), StatusCode::OK);

    // Consent, code, tokens, userinfo.
    let code = get_code_for(&auth, &client, &cookie, "openid public offline_access").await?;
    let (status, tokens) = redeem(&auth, &client, &code, VERIFIER).await?;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let access = tokens["access_token"].as_str().context("access_token")?;
    assert!(tokens["refresh_token"].is_string(), "{tokens}");
    assert_eq!(userinfo(&auth, access).await?, StatusCode::OK);
    // Consent is asked again on the next authorization.
    let res = auth
        .http
        .get(super::authorize_url_for(
            &auth,
            &client,
            "openid public",
            &[],
        ))
        .header(reqwest::header::COOKIE, &cookie)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.text().await?.contains("consent_token"));
    Ok(())
}

#[tokio::test]
async fn registrations_are_limited_per_hour_and_bad_metadata_refused() -> Result<()> {
    let mut world = World::new("auth_dcr_limit").await?;
    admin_json(
        &world,
        &[
            "admin",
            "create-user",
            "--email",
            "a@example.com",
            "--password",
            "pw",
        ],
    )
    .await?;
    world
        .extra_env
        .push(("MCP_REGISTRATION_LIMIT".into(), "2".into()));
    world
        .extra_env
        .push(("MCP_REGISTRATION_CEILING".into(), "3".into()));
    let auth = start_auth(&mut world).await?;
    let named = |name: &str| json!({"client_name": name, "redirect_uris": [CALLBACK]});
    // Clients on other loopback addresses (Linux answers all of 127/8).
    let port: u16 = auth.base.rsplit(':').next().context("port")?.parse()?;
    let from = |last: u8| {
        reqwest::Client::builder()
            .local_address(std::net::IpAddr::from([127, 0, 0, last]))
            .resolve(
                "localhost",
                std::net::SocketAddr::from(([127, 0, 0, 1], port)),
            )
            .build()
    };
    // The wait is until the oldest registration that counts is an hour old.
    let waits_about_an_hour = |retry: Option<String>| {
        retry
            .and_then(|r| r.parse::<u64>().ok())
            .is_some_and(|s| (3500..=3600).contains(&s))
    };

    let (status, first, _) = register(&auth, &named("one")).await?;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    let (status, _, _) = register(&auth, &named("two")).await?;
    assert_eq!(status, StatusCode::CREATED);
    let (status, body, retry) = register(&auth, &named("three")).await?;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"], "too_many_requests");
    assert!(waits_about_an_hour(retry.clone()), "{retry:?}");
    // Re-registering an existing client is free, even past the limit.
    let (status, again, _) = register(&auth, &named("one")).await?;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(again["client_id"], first["client_id"]);
    // Another address has its own two, under the ceiling of three for all.
    let (status, body, _) = register_with(&auth, &from(2)?, &named("four")).await?;
    assert_eq!(status, StatusCode::CREATED, "another address: {body}");
    let (status, body, retry) = register_with(&auth, &from(3)?, &named("five")).await?;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "the ceiling: {body}");
    assert!(waits_about_an_hour(retry.clone()), "{retry:?}");

    for (body, error) in [
        (
            json!({"client_name": "x", "redirect_uris": ["http://evil.example/cb"]}),
            "invalid_redirect_uri",
        ),
        (
            json!({"client_name": "x", "redirect_uris": ["javascript:alert(1)"]}),
            "invalid_redirect_uri",
        ),
        (json!({"client_name": "x"}), "invalid_redirect_uri"),
        (
            json!({"client_name": "x", "redirect_uris": [CALLBACK], "grant_types": ["client_credentials"]}),
            "invalid_client_metadata",
        ),
        (json!("not an object"), "invalid_client_metadata"),
    ] {
        let (status, answer, _) = register(&auth, &body).await?;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        assert_eq!(answer["error"], error, "{body}: {answer}");
    }
    Ok(())
}

/// Browser clients on other origins may call discovery, the keys, the token,
/// registration and userinfo endpoints (CORS, no credentials); sign-in stays
/// closed.
#[tokio::test]
async fn browser_clients_reach_discovery_keys_token_and_registration_cross_origin() -> Result<()> {
    let (_world, auth, _, _) = setup().await?;
    let origin = "https://app.example";
    for path in ["/auth/token", "/auth/register", "/auth/revoke"] {
        let res = auth
            .http
            .request(reqwest::Method::OPTIONS, auth.url(path))
            .header("Origin", origin)
            .header("Access-Control-Request-Method", "POST")
            .header("Access-Control-Request-Headers", "content-type")
            .send()
            .await?;
        assert!(res.status().is_success(), "{path}: {}", res.status());
        assert_eq!(res.headers()["access-control-allow-origin"], "*", "{path}");
        let methods = res.headers()["access-control-allow-methods"].to_str()?;
        assert!(methods.contains("POST"), "{path}: {methods}");
    }
    for path in ["/.well-known/oauth-authorization-server", "/auth/jwks"] {
        let res = auth
            .http
            .get(auth.url(path))
            .header("Origin", origin)
            .send()
            .await?;
        assert_eq!(res.status(), StatusCode::OK, "{path}");
        assert_eq!(res.headers()["access-control-allow-origin"], "*", "{path}");
        assert!(
            res.headers()
                .get("access-control-allow-credentials")
                .is_none()
        );
    }
    let res = auth
        .http
        .request(reqwest::Method::OPTIONS, auth.url("/auth/signin"))
        .header("Origin", origin)
        .header("Access-Control-Request-Method", "POST")
        .send()
        .await?;
    assert!(res.headers().get("access-control-allow-origin").is_none());
    Ok(())
}

/// A browser client on another origin reads userinfo with its access token
/// (OpenID Connect Core §5.3): the preflight allows GET and POST with an
/// Authorization header, and the answer, a refusal too, carries the CORS
/// header so the client can read it.
#[tokio::test]
async fn userinfo_answers_browser_clients_cross_origin() -> Result<()> {
    let (_world, auth, _, _) = setup().await?;
    let origin = "https://app.example";
    for (path, method) in [
        ("/auth/userinfo", "GET"),
        ("/auth/userinfo", "POST"),
        ("/auth/oauth/userinfo", "GET"),
    ] {
        let res = auth
            .http
            .request(reqwest::Method::OPTIONS, auth.url(path))
            .header("Origin", origin)
            .header("Access-Control-Request-Method", method)
            .header("Access-Control-Request-Headers", "authorization")
            .send()
            .await?;
        assert!(res.status().is_success(), "{path}: {}", res.status());
        assert_eq!(res.headers()["access-control-allow-origin"], "*", "{path}");
        let methods = res.headers()["access-control-allow-methods"].to_str()?;
        assert!(methods.contains(method), "{path}: {methods}");
        let headers = res.headers()["access-control-allow-headers"]
            .to_str()?
            .to_ascii_lowercase();
        assert!(headers.contains("authorization"), "{path}: {headers}");
    }
    let res = auth
        .http
        .get(auth.url("/auth/userinfo"))
        .header("Origin", origin)
        .bearer_auth("not-a-token")
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(res.headers()["access-control-allow-origin"], "*");
    assert!(
        res.headers()
            .get("access-control-allow-credentials")
            .is_none()
    );
    Ok(())
}
