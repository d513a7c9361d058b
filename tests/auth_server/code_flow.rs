//! The authorization code flow with PKCE and consent: refresh rotation and
//! replay, revocation, userinfo, discovery and JWKS.

use super::*;

/// A world with Ann signed in: the auth service, the public client and her
/// session cookie.
async fn signed_in() -> Result<(World, Auth, Client, String)> {
    let (world, auth, public, _) = setup().await?;
    let cookie = sign_in(&auth, "ann@example.com", "correct horse").await?;
    Ok((world, auth, public, cookie))
}

/// Without a session the client goes to the login page; the consent page
/// cannot be framed and escapes the client's name; a consent form approves
/// only its own request, session and method, once; a code needs its PKCE
/// verifier.
#[tokio::test]
async fn consent_approves_its_own_request_once() -> Result<()> {
    let (_world, auth, public, _) = setup().await?;

    // Without a session: off to the login page, coming back afterwards.
    let res = auth
        .http
        .get(authorize_url(&auth, &public, &[]))
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    let loc = res.headers()[LOCATION].to_str()?.to_owned();
    assert!(
        loc.starts_with("/auth/login?continue=%2Fauth%2Fauthorize"),
        "{loc}"
    );

    let cookie = sign_in(&auth, "ann@example.com", "correct horse").await?;

    // The consent page: no framing, escaped client name.
    let res = auth
        .http
        .get(authorize_url(&auth, &public, &[]))
        .header(COOKIE, &cookie)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["x-frame-options"], "DENY");
    let csp = res.headers()["content-security-policy"]
        .to_str()?
        .to_owned();
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    let html = res.text().await?;
    assert!(html.contains("CLI &lt;tool&gt;") && !html.contains("CLI <tool>"));
    let fields = hidden_fields(&html);
    assert!(fields.contains_key("consent_token"));

    // A consent form replayed for another request re-renders the page.
    let mut tampered: Vec<(String, String)> = fields.clone().into_iter().collect();
    for (k, v) in &mut tampered {
        if k == "state" {
            *v = "another".into();
        }
    }
    tampered.push(("consent".into(), "allow".into()));
    let res = auth
        .http
        .post(auth.url("/auth/authorize"))
        .header(COOKIE, &cookie)
        .form(&tampered)
        .send()
        .await?;
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "a replayed consent form issues no code"
    );
    // ... or for another session (another sign-in of the same user).
    let other_cookie = sign_in(&auth, "ann@example.com", "correct horse").await?;
    let mut form: Vec<(String, String)> = fields.clone().into_iter().collect();
    form.push(("consent".into(), "allow".into()));
    let res = auth
        .http
        .post(auth.url("/auth/authorize"))
        .header(COOKIE, &other_cookie)
        .form(&form)
        .send()
        .await?;
    assert_eq!(
        res.status(),
        StatusCode::OK,
        "a consent token of another session issues no code"
    );
    // A GET with consent=allow does not approve either.
    let res = auth
        .http
        .get(authorize_url(
            &auth,
            &public,
            &[
                ("consent", "allow"),
                ("consent_token", &fields["consent_token"]),
            ],
        ))
        .header(COOKIE, &cookie)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::OK);

    // The real approval: a code, the state and iss (RFC 9207).
    let res = auth
        .http
        .post(auth.url("/auth/authorize"))
        .header(COOKIE, &cookie)
        .form(&form)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::FOUND);
    let loc = res.headers()[LOCATION].to_str()?.to_owned();
    assert!(loc.starts_with("http://127.0.0.1:53682/callback?"), "{loc}");
    let q = query_of(&loc);
    assert_eq!(q["state"], "st-123");
    assert_eq!(q["iss"], auth.base);
    let code = q["code"].clone();
    // The same form answered again (a replay within its ten minutes): no code.
    let res = auth
        .http
        .post(auth.url("/auth/authorize"))
        .header(COOKIE, &cookie)
        .form(&form)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::FOUND);
    let again = query_of(res.headers()[LOCATION].to_str()?);
    assert_eq!(
        again.get("error").map(String::as_str),
        Some("access_denied")
    );
    assert!(!again.contains_key("code"), "{again:?}");

    // PKCE verifier mismatch.
    let (status, body) = redeem(
        &auth,
        &public,
        &code,
        "x-wrong-verifier-0123456789-abcdefghijklmnopqrstuv",
    )
    .await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    Ok(())
}

/// A code redeems into tokens signed with the published keys (discovery,
/// JWKS, id token, access token), userinfo takes them and refuses a forged
/// one; a code used twice is refused and revokes what it issued.
#[tokio::test]
async fn a_code_redeems_once_into_tokens_signed_as_published() -> Result<()> {
    let (_world, auth, public, cookie) = signed_in().await?;
    // A fresh code, redeemed properly.
    let code = get_code(&auth, &public, &cookie).await?;
    let (status, tokens) = redeem(&auth, &public, &code, VERIFIER).await?;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let access = tokens["access_token"]
        .as_str()
        .context("access_token")?
        .to_owned();
    let refresh = tokens["refresh_token"]
        .as_str()
        .context("refresh_token")?
        .to_owned();
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 7200);
    let claims = jwt_payload(&access);
    assert_eq!(claims["iss"], "POS");
    assert_eq!(claims["aud"], "localhost");
    assert_eq!(
        claims["scope"],
        serde_json::json!(["openid", "public", "translate", "offline_access"])
    );
    assert_eq!(
        claims["u"],
        serde_json::json!({ "n": "Ann", "e": "ann@example.com", "p": 0, "r": [] })
    );
    assert_eq!(
        claims["exp"].as_i64().unwrap_or(0) - claims["iat"].as_i64().unwrap_or(0),
        7200
    );
    assert!(claims["sub"].as_str().unwrap_or("").starts_with("user-"));

    // The signatures check out against the published JWKS.
    let disco: Value = auth
        .http
        .get(auth.url("/.well-known/openid-configuration"))
        .send()
        .await?
        .json()
        .await?;
    let disco2: Value = auth
        .http
        .get(auth.url("/.well-known/oauth-authorization-server"))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(disco, disco2);
    assert_eq!(disco["issuer"], auth.base);
    assert_eq!(
        disco["code_challenge_methods_supported"],
        serde_json::json!(["S256"])
    );
    let jwks: jsonwebtoken::jwk::JwkSet = auth
        .http
        .get(disco["jwks_uri"].as_str().context("jwks_uri")?)
        .send()
        .await?
        .json()
        .await?;
    let key = jsonwebtoken::DecodingKey::from_jwk(&jwks.keys[0])?;
    let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    v.set_audience(&[public.uid.as_str()]);
    v.set_issuer(&[auth.base.as_str()]);
    let id =
        jsonwebtoken::decode::<Value>(tokens["id_token"].as_str().context("id_token")?, &key, &v)?;
    assert_eq!(id.claims["email"], "ann@example.com");
    let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    v.set_audience(&["localhost"]);
    v.set_issuer(&["POS"]);
    jsonwebtoken::decode::<Value>(&access, &key, &v)?;

    // userinfo: Bearer required.
    assert_eq!(userinfo(&auth, &access).await?, StatusCode::OK);
    let info: Value = auth
        .http
        .get(auth.url("/auth/oauth/userinfo"))
        .bearer_auth(&access)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(info["email"], "ann@example.com");
    let res = auth.http.get(auth.url("/auth/userinfo")).send().await?;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    assert!(res.headers().contains_key("www-authenticate"));
    // A tampered token fails.
    let mut parts: Vec<&str> = access.split('.').collect();
    let forged = URL_SAFE_NO_PAD.encode(serde_json::to_vec(
        &serde_json::json!({"sub": "user-evil", "iss": "POS", "iat": 1, "exp": 9999999999_i64}),
    )?);
    parts[1] = &forged;
    assert_eq!(
        userinfo(&auth, &parts.join(".")).await?,
        StatusCode::UNAUTHORIZED
    );

    // Code reuse: refused, and the tokens issued from it are revoked.
    let (status, body) = redeem(&auth, &public, &code, VERIFIER).await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    assert_eq!(userinfo(&auth, &access).await?, StatusCode::UNAUTHORIZED);
    let (status, _) = token(
        &auth,
        &public,
        &[("grant_type", "refresh_token"), ("refresh_token", &refresh)],
    )
    .await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    Ok(())
}

/// Refresh tokens rotate (through the legacy alias path too), a wider scope
/// is refused, and replaying a used refresh token revokes its whole family.
#[tokio::test]
async fn refresh_tokens_rotate_and_a_replay_revokes_the_family() -> Result<()> {
    let (_world, auth, public, cookie) = signed_in().await?;
    // Refresh rotation through the legacy alias path, then replay detection.
    let code = get_code(&auth, &public, &cookie).await?;
    let (_, t1) = redeem(&auth, &public, &code, VERIFIER).await?;
    let r1 = t1["refresh_token"].as_str().context("rt1")?.to_owned();
    let res = auth
        .http
        .post(auth.url("/auth/oauth/token"))
        .form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", r1.as_str()),
            ("client_id", public.uid.as_str()),
        ])
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["cache-control"], "no-store");
    let t2: Value = res.json().await?;
    let r2 = t2["refresh_token"].as_str().context("rt2")?.to_owned();
    let a2 = t2["access_token"].as_str().context("at2")?.to_owned();
    assert_ne!(r1, r2);
    assert_eq!(userinfo(&auth, &a2).await?, StatusCode::OK);
    // A narrower scope is fine, a wider one is not.
    let (status, body) = token(
        &auth,
        &public,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &r2),
            ("scope", "public email"),
        ],
    )
    .await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_scope"))
    );
    // Replaying r1 revokes the family: r2 and a2 die too.
    let (status, body) = token(
        &auth,
        &public,
        &[("grant_type", "refresh_token"), ("refresh_token", &r1)],
    )
    .await?;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_grant"))
    );
    assert_eq!(userinfo(&auth, &a2).await?, StatusCode::UNAUTHORIZED);
    let (status, _) = token(
        &auth,
        &public,
        &[("grant_type", "refresh_token"), ("refresh_token", &r2)],
    )
    .await?;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    Ok(())
}

/// Revocation (RFC 7009) ends an access token; logout with a Bearer revokes
/// it and ends the session.
#[tokio::test]
async fn revocation_and_logout_end_tokens_and_the_session() -> Result<()> {
    let (_world, auth, public, cookie) = signed_in().await?;
    // Revocation (RFC 7009): the access token stops working; unknown tokens are 200 too.
    let code = get_code(&auth, &public, &cookie).await?;
    let (_, t3) = redeem(&auth, &public, &code, VERIFIER).await?;
    let a3 = t3["access_token"].as_str().context("at3")?.to_owned();
    let res = auth
        .http
        .post(auth.url("/auth/revoke"))
        .form(&[("token", a3.as_str()), ("client_id", public.uid.as_str())])
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(userinfo(&auth, &a3).await?, StatusCode::UNAUTHORIZED);
    let res = auth
        .http
        .post(auth.url("/auth/oauth/revoke"))
        .form(&[("token", "nonsense"), ("client_id", public.uid.as_str())])
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::OK);

    // Logout with a Bearer: the token is revoked, logged_out_at stamped, the session ends.
    let code = get_code(&auth, &public, &cookie).await?;
    let (_, t4) = redeem(&auth, &public, &code, VERIFIER).await?;
    let a4 = t4["access_token"].as_str().context("at4")?.to_owned();
    let res = auth
        .http
        .get(auth.url("/auth/logout"))
        .header(COOKIE, &cookie)
        .bearer_auth(&a4)
        .send()
        .await?;
    assert_eq!(res.status(), StatusCode::SEE_OTHER);
    assert_eq!(userinfo(&auth, &a4).await?, StatusCode::UNAUTHORIZED);
    let res = auth
        .http
        .get(authorize_url(&auth, &public, &[]))
        .header(COOKIE, &cookie)
        .send()
        .await?;
    assert_eq!(
        res.status(),
        StatusCode::SEE_OTHER,
        "the old session no longer authorizes"
    );
    // ... and /auth/authority no longer reports it, even with the old cookie.
    let body: Value = auth
        .http
        .get(auth.url("/auth/authority"))
        .header(COOKIE, &cookie)
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(body["session"], false, "{body}");
    Ok(())
}

/// RFC 8707: a token asked for resources names exactly them in `aud` (one a
/// string, several an array); a refresh keeps or narrows them, never widens;
/// the API accepts a token for itself or for the whole authority, not one
/// for another resource of the authority (an MCP server); a resource off the
/// authority is `invalid_target`.
#[tokio::test]
async fn tokens_are_bound_to_the_resources_asked_for() -> Result<()> {
    let (mut world, auth, public, cookie) = signed_in().await?;
    let api = world.start_api().await?;
    let port = reqwest::Url::parse(&api.base)?
        .port()
        .context("the API's port")?;
    let mcp = format!("http://localhost:{port}/mcp");
    let own = format!("http://localhost:{port}/");
    // Authorize for both resources, then consent.
    let resources = [("resource", mcp.as_str()), ("resource", own.as_str())];
    let code = get_code_with(&auth, &public, &cookie, SCOPE, &resources).await?;
    let (status, tokens) = redeem(&auth, &public, &code, VERIFIER).await?;
    assert_eq!(status, StatusCode::OK, "{tokens}");
    let both = tokens["access_token"].as_str().context("at")?.to_owned();
    assert_eq!(jwt_payload(&both)["aud"], serde_json::json!([mcp, own]));
    let usage = |token: String| {
        let request = api.http.get(api.url("/v2/usage")).bearer_auth(token);
        async move { anyhow::Ok(request.send().await?.status()) }
    };
    assert_eq!(usage(both).await?, StatusCode::OK, "the API is one of them");

    // A refresh narrows to the MCP server alone: the API refuses that token,
    // userinfo (the authority's) still takes it.
    let refresh = |rt: String, resource: String| {
        let auth = &auth;
        let public = &public;
        async move {
            token(
                auth,
                public,
                &[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", &rt),
                    ("resource", &resource),
                ],
            )
            .await
        }
    };
    let rt = tokens["refresh_token"].as_str().context("rt")?.to_owned();
    let (status, narrowed) = refresh(rt, mcp.clone()).await?;
    assert_eq!(status, StatusCode::OK, "{narrowed}");
    let for_mcp = narrowed["access_token"].as_str().context("at")?.to_owned();
    assert_eq!(jwt_payload(&for_mcp)["aud"], mcp.as_str());
    assert_eq!(usage(for_mcp.clone()).await?, StatusCode::FORBIDDEN);
    assert_eq!(userinfo(&auth, &for_mcp).await?, StatusCode::OK);
    // Widening back is refused, and the refresh token stays usable.
    let rt = narrowed["refresh_token"].as_str().context("rt")?.to_owned();
    let (status, body) = refresh(rt.clone(), format!("http://localhost:{port}/v2")).await?;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"], "invalid_target");
    let (status, kept) = refresh(rt, mcp.clone()).await?;
    assert_eq!(status, StatusCode::OK, "{kept}");

    // A resource off the authority is refused at the token endpoint.
    let rt = kept["refresh_token"].as_str().context("rt")?.to_owned();
    let (status, body) = refresh(rt, "https://evil.example/mcp".to_owned()).await?;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"], "invalid_target");
    Ok(())
}
