//! Glossaries, v2 and v3 (`/v2/glossaries`, `/v3/glossaries`), against a real
//! API process and PostgreSQL.

use anyhow::Result;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{Answer, Api, World, call, exchange};

#[tokio::test]
async fn v2_glossaries_crud_and_errors() -> Result<()> {
    let mut world = World::new("gloss_v2").await?;
    let key = world.create_key("g", false).await?;
    let api = world.start_api().await?;

    // Form body, TSV entries.
    let res = api
        .keyed(reqwest::Method::POST, "/v2/glossaries", &key)
        .form(&[
            ("name", "My Glossary"),
            ("source_lang", "en"),
            ("target_lang", "EN-GB"),
            ("entries", "Hello\tHiya"),
        ])
        .send()
        .await?;
    assert_eq!(res.status().as_u16(), 400, "same language pair refused");

    let (code, g) = call(
        &api,
        &key,
        Method::POST,
        "/v2/glossaries",
        Some(
            &json!({"name": "My Glossary", "source_lang": "EN", "target_lang": "de",
                     "entries": "Hello\tGuten Tag\ncat\tKatze\n", "entries_format": "tsv"}),
        ),
    )
    .await?;
    assert_eq!(code, 201, "{g}");
    assert_eq!(g["ready"], true);
    assert_eq!(g["source_lang"], "en");
    assert_eq!(g["target_lang"], "de");
    assert_eq!(g["entry_count"], 2);
    let id = g["glossary_id"].as_str().unwrap_or_default().to_owned();

    // CSV with quoting.
    let (code, g2) = call(
        &api,
        &key,
        Method::POST,
        "/v2/glossaries",
        Some(&json!({"name": "csv", "source_lang": "en", "target_lang": "fr",
                     "entries": "\"dog, big\",\"gros chien\"\nhouse,maison,en,fr", "entries_format": "csv"})),
    )
    .await?;
    assert_eq!(code, 201, "{g2}");
    assert_eq!(g2["entry_count"], 2);

    let (code, list) = call(&api, &key, Method::GET, "/v2/glossaries", None).await?;
    assert_eq!(code, 200);
    assert_eq!(list["glossaries"].as_array().map(Vec::len), Some(2));

    let (code, one) = call(
        &api,
        &key,
        Method::GET,
        &format!("/v2/glossaries/{id}"),
        None,
    )
    .await?;
    assert_eq!(code, 200);
    assert_eq!(one["name"], "My Glossary");

    let Answer {
        code, text: tsv, ..
    } = exchange(
        &api,
        &key,
        Method::GET,
        &format!(
            "/v2/glossaries/{}/entries",
            g2["glossary_id"].as_str().unwrap_or_default()
        ),
        None,
    )
    .await?;
    assert_eq!(code, 200);
    assert_eq!(tsv, "dog, big\tgros chien\nhouse\tmaison");

    // Faults name their line.
    for (entries, fmt, want) in [
        ("a\tb\nc\td\na\te", "tsv", "line 3"),
        ("a\tb\n\tx", "tsv", "line 2"),
        ("a,b\nc", "csv", "line 2"),
    ] {
        let (code, e) = call(
            &api,
            &key,
            Method::POST,
            "/v2/glossaries",
            Some(
                &json!({"name": "bad", "source_lang": "en", "target_lang": "de",
                         "entries": entries, "entries_format": fmt}),
            ),
        )
        .await?;
        assert_eq!(code, 400, "{e}");
        let msg = e["message"].as_str().unwrap_or_default();
        assert!(msg.contains(want), "{msg}");
    }
    let (code, e) = call(
        &api,
        &key,
        Method::POST,
        "/v2/glossaries",
        Some(&json!({"name": "thai", "source_lang": "en", "target_lang": "th", "entries": "a\tb"})),
    )
    .await?;
    assert_eq!(code, 400, "{e}");
    let long = "x".repeat(1025);
    let (code, _) = call(
        &api,
        &key,
        Method::POST,
        "/v2/glossaries",
        Some(&json!({"name": long, "source_lang": "en", "target_lang": "de", "entries": "a\tb"})),
    )
    .await?;
    assert_eq!(code, 400);

    let (code, _) = call(
        &api,
        &key,
        Method::DELETE,
        &format!("/v2/glossaries/{id}"),
        None,
    )
    .await?;
    assert_eq!(code, 204);
    let (code, e) = call(
        &api,
        &key,
        Method::GET,
        &format!("/v2/glossaries/{id}"),
        None,
    )
    .await?;
    assert_eq!(code, 404, "{e}");
    assert!(e["message"].is_string());
    let (code, _) = call(
        &api,
        &key,
        Method::DELETE,
        &format!("/v2/glossaries/{id}"),
        None,
    )
    .await?;
    assert_eq!(code, 404);
    Ok(())
}

#[tokio::test]
async fn v3_glossaries_dictionaries_edit() -> Result<()> {
    let mut world = World::new("gloss_v3").await?;
    let key = world.create_key("g", false).await?;
    let api = world.start_api().await?;

    let (code, g) = call(
        &api,
        &key,
        Method::POST,
        "/v3/glossaries",
        Some(&json!({"name": "Multi", "dictionaries": [
            {"source_lang": "en", "target_lang": "de", "entries": "Hello\tGuten Tag", "entries_format": "tsv"},
            {"source_lang": "de", "target_lang": "EN-US", "entries": "Guten Tag,Hello\nKatze,cat", "entries_format": "csv"}
        ]})),
    )
    .await?;
    assert_eq!(code, 201, "{g}");
    let id = g["glossary_id"].as_str().unwrap_or_default().to_owned();
    let dicts = g["dictionaries"].as_array().cloned().unwrap_or_default();
    assert_eq!(dicts.len(), 2);
    assert!(
        dicts
            .iter()
            .any(|d| d["source_lang"] == "de" && d["target_lang"] == "en" && d["entry_count"] == 2)
    );

    // A bad line in the second dictionary names both.
    let (code, e) = call(
        &api,
        &key,
        Method::POST,
        "/v3/glossaries",
        Some(&json!({"name": "Bad", "dictionaries": [
            {"source_lang": "en", "target_lang": "de", "entries": "a\tb"},
            {"source_lang": "en", "target_lang": "fr", "entries": "a\tb\na\tc"}
        ]})),
    )
    .await?;
    assert_eq!(code, 400);
    let msg = e["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("dictionaries[1]") && msg.contains("line 2"),
        "{msg}"
    );

    // PATCH: rename and merge entries into en→de, add en→fr.
    let (code, p) = call(
        &api,
        &key,
        Method::PATCH,
        &format!("/v3/glossaries/{id}"),
        Some(&json!({"name": "Renamed", "dictionaries": [
            {"source_lang": "en", "target_lang": "de", "entries": "Hello\tHallo\ndog\tHund"},
            {"source_lang": "en", "target_lang": "fr", "entries": "dog\tchien"}
        ]})),
    )
    .await?;
    assert_eq!(code, 200, "{p}");
    assert_eq!(p["name"], "Renamed");
    assert_eq!(p["dictionaries"].as_array().map(Vec::len), Some(3));
    let (code, en) = call(
        &api,
        &key,
        Method::GET,
        &format!("/v3/glossaries/{id}/entries?source_lang=en&target_lang=de"),
        None,
    )
    .await?;
    assert_eq!(code, 200, "{en}");
    assert_eq!(en["dictionaries"][0]["entries"], "Hello\tHallo\ndog\tHund");
    assert_eq!(en["dictionaries"][0]["entries_format"], "tsv");

    // PUT replaces a dictionary.
    let (code, r) = call(
        &api,
        &key,
        Method::PUT,
        &format!("/v3/glossaries/{id}/dictionaries"),
        Some(&json!({"source_lang": "en", "target_lang": "de", "entries": "tree\tBaum", "entries_format": "tsv"})),
    )
    .await?;
    assert_eq!(code, 200, "{r}");
    assert_eq!(r["entry_count"], 1);
    let (_, en) = call(
        &api,
        &key,
        Method::GET,
        &format!("/v3/glossaries/{id}/entries?source_lang=en&target_lang=de"),
        None,
    )
    .await?;
    assert_eq!(en["dictionaries"][0]["entries"], "tree\tBaum");

    // Delete one dictionary, then the glossary.
    let (code, _) = call(
        &api,
        &key,
        Method::DELETE,
        &format!("/v3/glossaries/{id}/dictionaries?source_lang=en&target_lang=fr"),
        None,
    )
    .await?;
    assert_eq!(code, 204);
    let (code, _) = call(
        &api,
        &key,
        Method::GET,
        &format!("/v3/glossaries/{id}/entries?source_lang=en&target_lang=fr"),
        None,
    )
    .await?;
    assert_eq!(code, 404);
    let (code, one) = call(
        &api,
        &key,
        Method::GET,
        &format!("/v3/glossaries/{id}"),
        None,
    )
    .await?;
    assert_eq!(code, 200);
    assert_eq!(one["dictionaries"].as_array().map(Vec::len), Some(2));
    let (code, list) = call(&api, &key, Method::GET, "/v3/glossaries", None).await?;
    assert_eq!(code, 200);
    assert_eq!(list["glossaries"].as_array().map(Vec::len), Some(1));
    let (code, _) = call(
        &api,
        &key,
        Method::DELETE,
        &format!("/v3/glossaries/{id}"),
        None,
    )
    .await?;
    assert_eq!(code, 204);
    let (code, _) = call(
        &api,
        &key,
        Method::PATCH,
        &format!("/v3/glossaries/{id}"),
        Some(&json!({"name": "x"})),
    )
    .await?;
    assert_eq!(code, 404);
    Ok(())
}

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
            .contains("no dictionary"),
        "{e}"
    );
    Ok(())
}

/// The spec's limits: 10 MiB of terms per glossary (413) and 1000 glossaries
/// per account (456).
#[tokio::test]
async fn glossary_limits() -> Result<()> {
    let mut world = World::new("gloss_lim").await?;
    let key = world.create_key("g", false).await?;
    let api = world.start_api().await?;

    // 5,500 entries of 2,000 bytes: 11 MB of terms.
    let entries: String = (0..5500)
        .map(|i| format!("{i:06}{}\t{}\n", "s".repeat(994), "t".repeat(1000)))
        .collect();
    let (code, e) = call(
        &api,
        &key,
        Method::POST,
        "/v2/glossaries",
        Some(&json!({"name": "big", "source_lang": "en", "target_lang": "de", "entries": entries})),
    )
    .await?;
    assert_eq!(code, 413, "{e}");
    assert!(e["message"].is_string());

    let (code, g) = call(
        &api,
        &key,
        Method::POST,
        "/v2/glossaries",
        Some(
            &json!({"name": "first", "source_lang": "en", "target_lang": "de", "entries": "a\tb"}),
        ),
    )
    .await?;
    assert_eq!(code, 201, "{g}");
    let db = world.db().await?;
    sqlx::query(
        "INSERT INTO glossaries (id, organization_id, name)
         SELECT gen_random_uuid(), organization_id, 'filler ' || i
         FROM glossaries, generate_series(1, 999) AS i",
    )
    .execute(&db)
    .await?;
    let (code, e) = call(
        &api,
        &key,
        Method::POST,
        "/v3/glossaries",
        Some(&json!({"name": "one too many", "dictionaries": [
            {"source_lang": "en", "target_lang": "de", "entries": "a\tb"}]})),
    )
    .await?;
    assert_eq!(code, 456, "{e}");
    let (code, list) = call(&api, &key, Method::GET, "/v2/glossaries", None).await?;
    assert_eq!(code, 200);
    assert_eq!(list["glossaries"].as_array().map(Vec::len), Some(1000));
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

/// v3 create and patch accept form bodies (the interface description lists
/// `application/x-www-form-urlencoded` for both): dictionaries as indexed
/// fields, as a JSON text field, or as one flat dictionary.
#[tokio::test]
async fn v3_glossaries_accept_form_bodies() -> Result<()> {
    let mut world = World::new("gloss_v3_form").await?;
    let key = world.create_key("g", false).await?;
    let api = world.start_api().await?;
    let form = |path: String, method: Method, fields: Vec<(&'static str, String)>| {
        api.keyed(method, &path, &key).form(&fields).send()
    };

    let res = form(
        "/v3/glossaries".into(),
        Method::POST,
        vec![
            ("name", "form glossary".into()),
            ("dictionaries[0][source_lang]", "en".into()),
            ("dictionaries[0][target_lang]", "de".into()),
            ("dictionaries[0][entries]", "cat\tKatze\ndog\tHund".into()),
            ("dictionaries[0][entries_format]", "tsv".into()),
            ("dictionaries[1][source_lang]", "de".into()),
            ("dictionaries[1][target_lang]", "en".into()),
            ("dictionaries[1][entries]", "Katze,cat".into()),
            ("dictionaries[1][entries_format]", "csv".into()),
        ],
    )
    .await?;
    assert_eq!(res.status().as_u16(), 201);
    let g: Value = res.json().await?;
    assert_eq!(g["name"], "form glossary");
    assert_eq!(
        g["dictionaries"],
        json!([{"source_lang": "de", "target_lang": "en", "entry_count": 1},
               {"source_lang": "en", "target_lang": "de", "entry_count": 2}])
    );
    let id = g["glossary_id"].as_str().unwrap_or_default().to_owned();

    // Patch with a flat single dictionary and a new name (merged into en→de).
    let res = form(
        format!("/v3/glossaries/{id}"),
        Method::PATCH,
        vec![
            ("name", "renamed".into()),
            ("source_lang", "en".into()),
            ("target_lang", "de".into()),
            ("entries", "bird\tVogel".into()),
        ],
    )
    .await?;
    assert_eq!(res.status().as_u16(), 200);
    let g: Value = res.json().await?;
    assert_eq!(g["name"], "renamed");
    assert_eq!(g["dictionaries"][1]["entry_count"], 3, "{g}");

    // Patch with `dictionaries` as JSON text: a new pair.
    let res = form(
        format!("/v3/glossaries/{id}"),
        Method::PATCH,
        vec![(
            "dictionaries",
            json!([{"source_lang": "en", "target_lang": "fr", "entries": "cat\tchat"}]).to_string(),
        )],
    )
    .await?;
    assert_eq!(res.status().as_u16(), 200);
    let g: Value = res.json().await?;
    assert_eq!(g["dictionaries"].as_array().map(Vec::len), Some(3), "{g}");
    let (code, e) = call(
        &api,
        &key,
        Method::GET,
        &format!("/v3/glossaries/{id}/entries?source_lang=en&target_lang=de"),
        None,
    )
    .await?;
    assert_eq!(code, 200, "{e}");
    assert_eq!(
        e["dictionaries"][0]["entries"],
        "cat\tKatze\ndog\tHund\nbird\tVogel"
    );

    // Bad form shapes: 400 with a message.
    for fields in [
        vec![
            ("name", "x".to_owned()),
            ("dictionaries[zero][entries]", "a\tb".into()),
        ],
        vec![
            ("name", "x".to_owned()),
            ("dictionaries[1][source_lang]", "en".into()),
        ],
        vec![
            ("name", "x".to_owned()),
            ("dictionaries", "not json".into()),
        ],
        vec![("name", "x".to_owned())],
        vec![
            ("name", "x".to_owned()),
            ("dictionaries[0][source_lang]", "en".into()),
            ("dictionaries[0][target_lang]", "de".into()),
            ("dictionaries[0][entries]", "cat".into()),
        ],
    ] {
        let res = form("/v3/glossaries".into(), Method::POST, fields.clone()).await?;
        let code = res.status().as_u16();
        let e: Value = res.json().await?;
        assert_eq!(code, 400, "{fields:?}: {e}");
        assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{e}");
    }
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
