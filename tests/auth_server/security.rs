//! The security checks: code reuse, PKCE, redirect URIs, consent replay,
//! tampered cookies and tokens, the password grant, unknown resources.

use super::*;

/// The password grant and unknown grants are `unsupported_grant_type`.
#[tokio::test]
async fn the_password_grant_and_unknown_grants_are_unsupported() -> Result<()> {
    let (_world, auth, _public, confidential) = setup().await?;
    for grant in ["password", "urn:example:unknown"] {
        let (status, body) = token(
            &auth,
            &confidential,
            &[
                ("grant_type", grant),
                ("username", "ann@example.com"),
                ("password", "correct horse"),
            ],
        )
        .await?;
        assert_eq!(
            (status, body["error"].as_str()),
            (StatusCode::BAD_REQUEST, Some("unsupported_grant_type")),
            "{grant}"
        );
    }
    Ok(())
}

/// `client_credentials` works for a confidential client (no refresh token); a wrong secret is `invalid_client` with `WWW-Authenticate`, a public client `unauthorized_client`.
#[tokio::test]
async fn client_credentials_need_a_confidential_client_and_its_secret() -> Result<()> {
    let (_world, auth, public, confidential) = setup().await?;
    let (status, body) = token(
        &auth,
        &confidential,
        &[("grant_type", "client_credentials"), ("scope", "translate")],
    )
    .await?;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.get("refresh_token").is_none());
    let res = auth
        .http
        .post(auth.url("/auth/token"))
        .basic_auth(&confidential.uid, Some("wrong"))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert!(res.headers().contains_key("www-authenticate"));
    assert_eq!(res.json::<Value>().await?["error"], "invalid_client");
    let (status, body) = token(&auth, &public, &[("grant_type", "client_credentials")]).await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("unauthorized_client"))
    );
    Ok(())
}

/// An unknown resource is `invalid_target` at the token endpoint and at authorize (with `iss`); a resource on the authority is fine.
#[tokio::test]
async fn an_unknown_resource_is_an_invalid_target() -> Result<()> {
    let (_world, auth, public, confidential) = setup().await?;
    let cookie = sign_in(&auth, "ann@example.com", "correct horse").await?;
    let (status, body) = token(
        &auth,
        &confidential,
        &[
            ("grant_type", "client_credentials"),
            ("resource", "https://evil.example/api"),
        ],
    )
    .await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_target"))
    );
    let res = auth
        .http
        .get(authorize_url(
            &auth,
            &public,
            &[("resource", "https://evil.example/mcp")],
        ))
        .header(COOKIE, &cookie)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::FOUND);
    let q = query_of(res.headers()[LOCATION].to_str()?);
    assert_eq!(q["error"], "invalid_target");
    assert_eq!(q["iss"], auth.base);
    let res = auth
        .http
        .get(authorize_url(
            &auth,
            &public,
            &[("resource", &auth.url("/mcp"))],
        ))
        .header(COOKIE, &cookie)
        .send()
        .await?;
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "a resource on the authority is fine"
    );
    Ok(())
}

/// A code that was never issued is `invalid_grant`, never a 500.
#[tokio::test]
async fn a_garbage_code_is_invalid_grant() -> Result<()> {
    let (_world, auth, public, _confidential) = setup().await?;
    let (status, body) = redeem(&auth, &public, "not-a-code", VERIFIER).await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    Ok(())
}

/// Redirect URIs not registered (open-redirect attempts) and unknown clients get an HTML error page, never a redirect.
#[tokio::test]
async fn unregistered_redirect_uris_get_an_error_page_never_a_redirect() -> Result<()> {
    let (_world, auth, public, _confidential) = setup().await?;
    let cookie = sign_in(&auth, "ann@example.com", "correct horse").await?;
    for bad in [
        "https://evil.example/callback",
        "http://127.0.0.1:53682/callback/../evil",
        "http://127.0.0.1:53682/other",
        "http://localhost:53682/callback",
        "http://127.0.0.1@evil.example/callback",
        "http://127.0.0.1:53682/callback#frag",
        "javascript:alert(1)",
    ] {
        let mut url = reqwest::Url::parse(&auth.url("/auth/authorize"))?;
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &public.uid)
            .append_pair("redirect_uri", bad)
            .append_pair("code_challenge", &challenge(VERIFIER))
            .append_pair("code_challenge_method", "S256");
        let res = auth.http.get(url).header(COOKIE, &cookie).send().await?;
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{bad}");
        assert!(res.headers().get(LOCATION).is_none(), "{bad}");
        assert!(res.text().await?.contains("<h1>"), "an HTML error page");
    }
    // Unknown client: error page.
    let res = auth
        .http
        .get(auth.url("/auth/authorize?response_type=code&client_id=nope"))
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    Ok(())
}

/// PKCE is required of a public client, and `plain` is refused: `invalid_request` back to the client with its state.
#[tokio::test]
async fn pkce_is_required_of_public_clients_and_plain_refused() -> Result<()> {
    let (_world, auth, public, _confidential) = setup().await?;
    let cookie = sign_in(&auth, "ann@example.com", "correct horse").await?;
    for extra in [
        vec![("code_challenge", "")],
        vec![("code_challenge_method", "plain")],
    ] {
        let mut url = reqwest::Url::parse(&auth.url("/auth/authorize"))?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &public.uid)
                .append_pair("redirect_uri", REDIRECT)
                .append_pair("state", "s");
            if extra[0].0 == "code_challenge_method" {
                q.append_pair("code_challenge", &challenge(VERIFIER));
            }
            for (k, v) in &extra {
                q.append_pair(k, v);
            }
        }
        let res = auth.http.get(url).header(COOKIE, &cookie).send().await?;
        assert_eq!(res.status(), StatusCode::FOUND, "{extra:?}");
        let q = query_of(res.headers()[LOCATION].to_str()?);
        assert_eq!(q["error"], "invalid_request", "{extra:?}");
        assert_eq!(q["state"], "s");
    }
    Ok(())
}

/// A tampered session cookie is no session: authorize sends to sign-in.
#[tokio::test]
async fn a_tampered_session_cookie_is_no_session() -> Result<()> {
    let (_world, auth, public, _confidential) = setup().await?;
    let cookie = sign_in(&auth, "ann@example.com", "correct horse").await?;
    let (name, value) = cookie.split_once('=').context("cookie")?;
    let mut bytes = value.as_bytes().to_vec();
    let i = bytes.len() / 2;
    bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
    let tampered = format!("{name}={}", String::from_utf8(bytes)?);
    let res = auth
        .http
        .get(authorize_url(&auth, &public, &[]))
        .header(COOKIE, &tampered)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    Ok(())
}

/// A legacy `_coauth_session` cookie (Path=/, another format) beside ours does not lock anyone out.
#[tokio::test]
async fn a_legacy_session_cookie_beside_ours_still_signs_in() -> Result<()> {
    let (_world, auth, public, _confidential) = setup().await?;
    let cookie = sign_in(&auth, "ann@example.com", "correct horse").await?;
    let both = format!("_coauth_session=BAh7B0kiD3Nlc3Npb25faWQGOgZFVEkiJTk4--0123abcd; {cookie}");
    let res = auth
        .http
        .get(authorize_url(&auth, &public, &[]))
        .header(COOKIE, &both)
        .send()
        .await?;
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "signed in despite the legacy cookie"
    );
    Ok(())
}

/// An expired JWT (signed with the same development key) is refused at userinfo.
#[tokio::test]
async fn an_expired_token_is_refused_at_userinfo() -> Result<()> {
    let (_world, auth, _public, _confidential) = setup().await?;
    let keys = jsonwebtoken::EncodingKey::from_rsa_pem(include_bytes!(
        "../../auth/src/tokens/dev_key.pem"
    ))?;
    let now = chrono::Utc::now().timestamp();
    let expired = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256),
        &serde_json::json!({"iss": "POS", "iat": now - 9000, "exp": now - 1800, "jti": uuid::Uuid::new_v4().to_string(), "aud": "localhost", "scope": ["public"], "sub": "user-x", "u": {"n": "", "e": "", "p": 0, "r": []}}),
        &keys,
    )?;
    assert_eq!(userinfo(&auth, &expired).await?, StatusCode::UNAUTHORIZED);
    Ok(())
}
