//! `/v3/glossaries`: multilingual dictionaries edited in place, and form bodies.

use super::*;

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
    // In request order, as DeepL answers them.
    assert_eq!(
        g["dictionaries"],
        json!([{"source_lang": "en", "target_lang": "de", "entry_count": 2},
               {"source_lang": "de", "target_lang": "en", "entry_count": 1}])
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
    assert_eq!(g["dictionaries"][0]["entry_count"], 3, "{g}");

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
    assert_eq!(
        g["dictionaries"][2]["target_lang"], "fr",
        "a new pair comes last: {g}"
    );
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
