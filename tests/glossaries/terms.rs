//! Glossary terms applied to translations: forced through Apertium, sent to a
//! DeepL upstream, and a cache that follows changes across replicas.

use super::*;

/// A glossary's target terms appear wherever its source terms appear (EN→ES,
/// real Apertium), with plain text, split lines and XML markup.
#[tokio::test]
async fn glossary_terms_forced_through_apertium() -> Result<()> {
    let mut world = World::new("gloss_tr").await?;
    let key = world.create_key("g", false).await?;
    let api = world.start_api().await?;

    let (code, g) = call(
        &api,
        &key,
        Method::POST,
        "/v2/glossaries",
        Some(
            &json!({"name": "pets", "source_lang": "en", "target_lang": "es",
                     "entries": "cat\tmichi\nNew York\tNueva Amsterdam"}),
        ),
    )
    .await?;
    assert_eq!(code, 201, "{g}");
    let id = g["glossary_id"].as_str().unwrap_or_default().to_owned();

    // Without the glossary Apertium says "gato".
    let texts = [
        "The cat sleeps in New York.",
        "Cat food & my cat.\nA black cat.",
        "A catalog of dogs.",
    ];
    let (code, plain) = call(
        &api,
        &key,
        Method::POST,
        "/v2/translate",
        Some(&json!({"text": texts, "source_lang": "EN", "target_lang": "ES"})),
    )
    .await?;
    assert_eq!(code, 200, "{plain}");
    assert!(
        plain["translations"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("gato"),
        "{plain}"
    );

    let (code, res) = call(
        &api,
        &key,
        Method::POST,
        "/v2/translate",
        Some(
            &json!({"text": texts, "source_lang": "EN", "target_lang": "ES", "glossary_id": id,
                     "split_sentences": "1"}),
        ),
    )
    .await?;
    assert_eq!(code, 200, "{res}");
    let out: Vec<String> = res["translations"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| t["text"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(out.len(), 3, "{res}");
    assert!(
        out[0].contains("michi") && out[0].contains("Nueva Amsterdam"),
        "{out:?}"
    );
    assert!(!out[0].contains("gato"), "{out:?}");
    assert_eq!(out[1].matches("ichi").count(), 3, "{out:?}");
    assert!(
        out[1].starts_with("Michi ") && out[1].contains('&') && out[1].contains('\n'),
        "{out:?}"
    );
    assert!(
        !out[2].contains("ichi"),
        "a word containing the term is not a match: {out:?}"
    );
    assert!(!out.iter().any(|t| t.contains("tolk")), "{out:?}");

    // With XML markup: attributes untouched, terms in text replaced.
    let (code, res) = call(
        &api,
        &key,
        Method::POST,
        "/v2/translate",
        Some(
            &json!({"text": ["<p title=\"cat\">The <b>cat</b> sleeps.</p>"], "source_lang": "EN",
                     "target_lang": "ES", "glossary_ids": [id], "tag_handling": "xml"}),
        ),
    )
    .await?;
    assert_eq!(code, 200, "{res}");
    let t = res["translations"][0]["text"].as_str().unwrap_or_default();
    assert!(
        t.contains("title=\"cat\"") && t.contains("<b>michi</b>"),
        "{t}"
    );

    // HTML, and a form body with glossary_ids.
    let res = api
        .keyed(reqwest::Method::POST, "/v2/translate", &key)
        .form(&[
            ("text", "<p>My cat<br>sleeps.</p>"),
            ("source_lang", "EN"),
            ("target_lang", "ES"),
            ("glossary_ids", id.as_str()),
            ("tag_handling", "html"),
        ])
        .send()
        .await?;
    assert_eq!(res.status().as_u16(), 200);
    let body: Value = res.json().await?;
    let t = body["translations"][0]["text"].as_str().unwrap_or_default();
    assert!(t.contains("michi<br>") && t.starts_with("<p>"), "{t}");

    // Unknown glossary → 404; wrong pair → 400.
    let (code, e) = call(
        &api,
        &key,
        Method::POST,
        "/v2/translate",
        Some(
            &json!({"text": ["cat"], "source_lang": "EN", "target_lang": "ES",
                     "glossary_id": "6f1c0f59-2a55-4b43-9e55-9b4f4c1b3f00"}),
        ),
    )
    .await?;
    assert_eq!(code, 404, "{e}");
    let (code, e) = call(
        &api,
        &key,
        Method::POST,
        "/v2/translate",
        Some(
            &json!({"text": ["cat"], "source_lang": "EN", "target_lang": "CA", "glossary_id": id}),
        ),
    )
    .await?;
    assert_eq!(code, 400, "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("No dictionary found for language pair"),
        "{e}"
    );
    Ok(())
}

/// Glossary terms through a DeepL-wire upstream (a stand-in HTTP server: a
/// paid third-party service): the upstream sees a kept tag where the term
/// was, never the source term, and the target term is in the answer.
#[tokio::test]
async fn glossary_terms_through_deepl_upstream() -> Result<()> {
    use axum::routing::post;
    use std::sync::{Arc, Mutex};

    type Seen = Arc<Mutex<Vec<Value>>>;
    async fn translate(
        axum::extract::State(seen): axum::extract::State<Seen>,
        axum::Json(body): axum::Json<Value>,
    ) -> axum::Json<Value> {
        if let Ok(mut s) = seen.lock() {
            s.push(body.clone());
        }
        let texts: Vec<Value> = body["text"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .map(|t| {
                json!({"detected_source_language": "EN",
                            "text": format!("[DE] {}", t.as_str().unwrap_or_default())})
            })
            .collect();
        axum::Json(json!({ "translations": texts }))
    }
    let seen: Seen = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let router = axum::Router::new()
        .route("/v2/translate", post(translate))
        .with_state(seen.clone());
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });

    let mut world = World::new("gloss_deepl").await?;
    let key = world.create_key("g", false).await?;
    for (k, v) in [
        ("TOLK_ENGINES", "deepl,apertium".to_owned()),
        ("TOLK_DEEPL_URL", format!("http://{addr}")),
        ("TOLK_DEEPL_KEY", "upstream-secret".to_owned()),
        ("TOLK_DEEPL_PAIRS", "EN:DE".to_owned()),
    ] {
        world.extra_env.push((k.to_owned(), v));
    }
    let api = world.start_api().await?;
    let (code, g) = call(
        &api,
        &key,
        Method::POST,
        "/v3/glossaries",
        Some(&json!({"name": "de", "dictionaries": [
            {"source_lang": "en", "target_lang": "de", "entries": "cat\tKatze"}]})),
    )
    .await?;
    assert_eq!(code, 201, "{g}");
    let (code, res) = call(
        &api,
        &key,
        Method::POST,
        "/v2/translate",
        Some(
            &json!({"text": ["The cat & the dog."], "source_lang": "EN", "target_lang": "DE",
                     "glossary_id": g["glossary_id"]}),
        ),
    )
    .await?;
    assert_eq!(code, 200, "{res}");
    assert_eq!(
        res["translations"][0]["text"], "[DE] The Katze & the dog.",
        "{res}"
    );
    let sent = seen.lock().map_err(|_| anyhow::anyhow!("lock"))?.clone();
    let sent_text = sent
        .iter()
        .map(|b| b["text"].to_string())
        .collect::<String>();
    assert!(
        !sent_text.contains("cat") && sent_text.contains("tolk-keep"),
        "{sent:?}"
    );
    Ok(())
}

/// Glossary terms are cached per API process, keyed by the glossaries'
/// versions: a change made through another replica is seen at once.
#[tokio::test]
async fn glossary_cache_follows_changes_across_replicas() -> Result<()> {
    let mut world = World::new("gloss_cache").await?;
    let key = world.create_key("g", false).await?;
    let a = world.start_api().await?;
    let b = world.start_api().await?;
    let (code, g) = call(
        &b,
        &key,
        Method::POST,
        "/v3/glossaries",
        Some(&json!({"name": "c", "dictionaries": [
            {"source_lang": "en", "target_lang": "es", "entries": "cat\tmichi"}]})),
    )
    .await?;
    assert_eq!(code, 201, "{g}");
    let id = g["glossary_id"].as_str().unwrap_or_default().to_owned();
    let translate = |api: &Api| {
        let body = json!({"text": ["The cat."], "source_lang": "EN", "target_lang": "ES", "glossary_id": id});
        let req = api
            .keyed(reqwest::Method::POST, "/v2/translate", &key)
            .json(&body);
        async move {
            let res = req.send().await?;
            let code = res.status().as_u16();
            let v: Value = res.json().await?;
            anyhow::Ok((code, v))
        }
    };
    for _ in 0..2 {
        let (code, v) = translate(&a).await?;
        assert_eq!(code, 200, "{v}");
        assert!(v.to_string().contains("michi"), "{v}");
    }
    // Patch through B: A serves the new term at once.
    let (code, _) = call(
        &b,
        &key,
        Method::PATCH,
        &format!("/v3/glossaries/{id}"),
        Some(&json!({"dictionaries": [{"source_lang": "en", "target_lang": "es", "entries": "cat\tgatito"}]})),
    )
    .await?;
    assert_eq!(code, 200);
    let (code, v) = translate(&a).await?;
    assert_eq!(code, 200, "{v}");
    assert!(
        v.to_string().contains("gatito") && !v.to_string().contains("michi"),
        "{v}"
    );
    // Replaced dictionary, then deleted dictionary, then deleted glossary.
    let (code, _) = call(
        &b,
        &key,
        Method::PUT,
        &format!("/v3/glossaries/{id}/dictionaries"),
        Some(&json!({"source_lang": "en", "target_lang": "es", "entries": "cat\tminino"})),
    )
    .await?;
    assert_eq!(code, 200);
    let (_, v) = translate(&a).await?;
    assert!(v.to_string().contains("minino"), "{v}");
    let (code, _) = call(
        &b,
        &key,
        Method::DELETE,
        &format!("/v3/glossaries/{id}/dictionaries?source_lang=en&target_lang=es"),
        None,
    )
    .await?;
    assert_eq!(code, 204);
    let (code, v) = translate(&a).await?;
    assert_eq!(code, 400, "{v}");
    let (code, _) = call(
        &b,
        &key,
        Method::DELETE,
        &format!("/v3/glossaries/{id}"),
        None,
    )
    .await?;
    assert_eq!(code, 204);
    let (code, v) = translate(&a).await?;
    assert_eq!(code, 404, "{v}");
    Ok(())
}
