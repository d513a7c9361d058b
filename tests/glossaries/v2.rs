//! `/v2/glossaries`: create, read, list, delete, their errors, and the limits.

use super::*;

/// A world with a key and an API process.
async fn client(tag: &str) -> Result<(World, Api, String)> {
    let mut world = World::new(tag).await?;
    let key = world.create_key("g", false).await?;
    let api = world.start_api().await?;
    Ok((world, api, key))
}

/// Creates "My Glossary", EN → DE, from a JSON body with TSV entries.
async fn create_tsv(api: &Api, key: &str) -> Result<(u16, Value)> {
    call(
        api,
        key,
        Method::POST,
        "/v2/glossaries",
        Some(
            &json!({"name": "My Glossary", "source_lang": "EN", "target_lang": "de",
                     "entries": "Hello\tGuten Tag\ncat\tKatze\n", "entries_format": "tsv"}),
        ),
    )
    .await
}

/// Creates "csv", EN → FR, from CSV entries with quoting.
async fn create_csv(api: &Api, key: &str) -> Result<(u16, Value)> {
    call(
        api,
        key,
        Method::POST,
        "/v2/glossaries",
        Some(&json!({"name": "csv", "source_lang": "en", "target_lang": "fr",
                     "entries": "\"dog, big\",\"gros chien\"\nhouse,maison,en,fr", "entries_format": "csv"})),
    )
    .await
}

/// Form body, TSV entries, the same language on both sides: refused.
#[tokio::test]
async fn a_glossary_within_one_language_is_refused() -> Result<()> {
    let (_world, api, key) = client("gloss_v2_same_pair").await?;
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
    Ok(())
}

#[tokio::test]
async fn a_tsv_glossary_is_created_ready_with_its_entries_counted() -> Result<()> {
    let (_world, api, key) = client("gloss_v2_tsv").await?;
    let (code, g) = create_tsv(&api, &key).await?;
    assert_eq!(code, 201, "{g}");
    assert_eq!(g["ready"], true);
    assert_eq!(g["source_lang"], "en");
    assert_eq!(g["target_lang"], "de");
    assert_eq!(g["entry_count"], 2);
    Ok(())
}

/// CSV with quoting: created, and its entries served back as TSV.
#[tokio::test]
async fn a_quoted_csv_glossary_is_created_and_its_entries_served_as_tsv() -> Result<()> {
    let (_world, api, key) = client("gloss_v2_csv").await?;
    let (code, g2) = create_csv(&api, &key).await?;
    assert_eq!(code, 201, "{g2}");
    assert_eq!(g2["entry_count"], 2);
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
    Ok(())
}

#[tokio::test]
async fn glossaries_are_listed_and_read_by_id() -> Result<()> {
    let (_world, api, key) = client("gloss_v2_read").await?;
    let (code, g) = create_tsv(&api, &key).await?;
    assert_eq!(code, 201, "{g}");
    let id = g["glossary_id"].as_str().unwrap_or_default().to_owned();
    let (code, g2) = create_csv(&api, &key).await?;
    assert_eq!(code, 201, "{g2}");

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
    Ok(())
}

/// Faults name their line.
#[tokio::test]
async fn glossary_entry_faults_name_their_line() -> Result<()> {
    let (_world, api, key) = client("gloss_v2_faults").await?;
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
    Ok(())
}

#[tokio::test]
async fn a_glossary_for_an_unsupported_language_is_refused() -> Result<()> {
    let (_world, api, key) = client("gloss_v2_thai").await?;
    let (code, e) = call(
        &api,
        &key,
        Method::POST,
        "/v2/glossaries",
        Some(&json!({"name": "thai", "source_lang": "en", "target_lang": "th", "entries": "a\tb"})),
    )
    .await?;
    assert_eq!(code, 400, "{e}");
    Ok(())
}

#[tokio::test]
async fn a_glossary_name_over_1024_characters_is_refused() -> Result<()> {
    let (_world, api, key) = client("gloss_v2_long_name").await?;
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
    Ok(())
}

/// Deleted: 204, then reading or deleting it again → 404.
#[tokio::test]
async fn a_deleted_glossary_is_gone() -> Result<()> {
    let (_world, api, key) = client("gloss_v2_delete").await?;
    let (code, g) = create_tsv(&api, &key).await?;
    assert_eq!(code, 201, "{g}");
    let id = g["glossary_id"].as_str().unwrap_or_default().to_owned();
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
    let (code, list) = call(&api, &key, Method::GET, "/v3/glossaries", None).await?;
    assert_eq!(code, 200);
    assert_eq!(list["glossaries"].as_array().map(Vec::len), Some(1000));
    // The fillers have no dictionary, so no v2 form: v2 lists the one
    // glossary that has one.
    let (code, list) = call(&api, &key, Method::GET, "/v2/glossaries", None).await?;
    assert_eq!(code, 200);
    assert_eq!(
        list["glossaries"].as_array().map(Vec::len),
        Some(1),
        "{list}"
    );
    Ok(())
}
