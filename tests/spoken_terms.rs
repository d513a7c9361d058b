//! Spoken terms (`/v3/spoken-terms`): the eight operations of the interface
//! description over HTTP, with their errors.

use anyhow::Result;
use reqwest::Method;
use serde_json::json;

use crate::support::{World, call, message};

#[tokio::test]
async fn spoken_terms_are_created_listed_read_edited_and_deleted() -> Result<()> {
    let mut world = World::new("spoken_terms").await?;
    let key = world.create_key("st", false).await?;
    let api = world.start_api().await?;

    let (code, created) = call(
        &api,
        &key,
        Method::POST,
        "/v3/spoken-terms",
        Some(&json!({"name": "Technical terms",
                     "term_lists": [{"lang": "en", "entries": "DeepL\nAPI\nwebhook\nAPI"}]})),
    )
    .await?;
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["name"], "Technical terms");
    assert_eq!(
        created["term_lists"],
        json!([{"lang": "en", "entry_count": 3}])
    );
    assert!(
        created["creation_time"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    let id = created["spoken_terms_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let path = format!("/v3/spoken-terms/{id}");

    let (code, all) = call(&api, &key, Method::GET, "/v3/spoken-terms", None).await?;
    assert_eq!(code, 200);
    assert_eq!(all["spoken_terms"][0]["spoken_terms_id"], id.as_str());
    let (code, one) = call(&api, &key, Method::GET, &path, None).await?;
    assert_eq!((code, &one["name"]), (200, &json!("Technical terms")));
    let (code, entries) = call(
        &api,
        &key,
        Method::GET,
        &format!("{path}/entries?lang=en"),
        None,
    )
    .await?;
    assert_eq!(code, 200);
    assert_eq!(
        entries,
        json!({"lang": "en", "entries": "DeepL\nAPI\nwebhook"})
    );

    // A list for another language, then a rename merging a third one.
    let (code, list) = call(
        &api,
        &key,
        Method::PUT,
        &format!("{path}/term-lists"),
        Some(&json!({"lang": "de", "entries": "Schnittstelle\nWebhook"})),
    )
    .await?;
    assert_eq!((code, list), (200, json!({"lang": "de", "entry_count": 2})));
    let (code, patched) = call(
        &api,
        &key,
        Method::PATCH,
        &path,
        Some(&json!({"name": "Terms", "term_lists": [{"lang": "fr", "entries": "interface"}]})),
    )
    .await?;
    assert_eq!(code, 200, "{patched}");
    assert_eq!(patched["name"], "Terms");
    assert_eq!(
        patched["term_lists"],
        json!([{"lang": "en", "entry_count": 3}, {"lang": "de", "entry_count": 2},
               {"lang": "fr", "entry_count": 1}])
    );

    // Deleting a list, then the collection.
    let (code, _) = call(
        &api,
        &key,
        Method::DELETE,
        &format!("{path}/term-lists?lang=de"),
        None,
    )
    .await?;
    assert_eq!(code, 204);
    let (code, body) = call(
        &api,
        &key,
        Method::GET,
        &format!("{path}/entries?lang=de"),
        None,
    )
    .await?;
    assert_eq!(code, 404, "{body}");
    let (code, _) = call(&api, &key, Method::DELETE, &path, None).await?;
    assert_eq!(code, 204);
    let (code, _) = call(&api, &key, Method::GET, &path, None).await?;
    assert_eq!(code, 404);
    Ok(())
}

#[tokio::test]
async fn spoken_terms_refuse_bad_input_and_other_organizations() -> Result<()> {
    let mut world = World::new("spoken_terms_errors").await?;
    let key = world.create_key("st", false).await?;
    let api = world.start_api().await?;
    for (body, needle) in [
        (
            json!({"term_lists": [{"lang": "en", "entries": "a"}]}),
            "'name'",
        ),
        (json!({"name": "x"}), "'term_lists'"),
        (
            json!({"name": "x", "term_lists": [{"lang": "english", "entries": "a"}]}),
            "'lang'",
        ),
        (
            json!({"name": "x", "term_lists": [{"lang": "en", "entries": "a".repeat(301)}]}),
            "'entries'",
        ),
        (
            json!({"name": "x", "term_lists": [{"lang": "en", "entries": "a"}, {"lang": "en", "entries": "b"}]}),
            "more than one",
        ),
        (
            json!({"name": "x", "keyword_threshold": 0, "term_lists": [{"lang": "en", "entries": "a"}]}),
            "'keyword_threshold'",
        ),
        (
            json!({"name": "x", "keyword_threshold": "high", "term_lists": [{"lang": "en", "entries": "a"}]}),
            "'keyword_threshold'",
        ),
    ] {
        let (code, answer) =
            call(&api, &key, Method::POST, "/v3/spoken-terms", Some(&body)).await?;
        assert_eq!(code, 400, "{body}: {answer}");
        assert!(message(&answer).contains(needle), "{body}: {answer}");
    }
    // A form with the lists as a JSON text field.
    let res = api
        .keyed(Method::POST, "/v3/spoken-terms", &key)
        .form(&[
            ("name", "form"),
            ("term_lists", r#"[{"lang": "en", "entries": "Tolk"}]"#),
        ])
        .send()
        .await?;
    assert_eq!(res.status().as_u16(), 201);
    let id = res.json::<serde_json::Value>().await?["spoken_terms_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    // Another organization's key sees nothing.
    let other = world.create_key_in("other").await?;
    let (code, _) = call(
        &api,
        &other,
        Method::GET,
        &format!("/v3/spoken-terms/{id}"),
        None,
    )
    .await?;
    assert_eq!(code, 404);
    let (code, _) = call(&api, &key, Method::GET, "/v3/spoken-terms/not-a-uuid", None).await?;
    assert_eq!(code, 404);
    let (code, body) = call(
        &api,
        &key,
        Method::GET,
        &format!("/v3/spoken-terms/{id}/entries"),
        None,
    )
    .await?;
    assert_eq!(code, 400, "{body}");
    Ok(())
}

/// A collection may set its own keyword-spotting threshold (shown only when
/// set); PATCH changes it, and null goes back to the recogniser's default.
#[tokio::test]
async fn a_collection_sets_its_own_keyword_threshold() -> Result<()> {
    let mut world = World::new("spoken_terms_threshold").await?;
    let key = world.create_key("st", false).await?;
    let api = world.start_api().await?;
    let body = json!({"name": "Plant", "keyword_threshold": 1e-30,
                      "term_lists": [{"lang": "en", "entries": "turbine"}]});
    let (code, created) = call(&api, &key, Method::POST, "/v3/spoken-terms", Some(&body)).await?;
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["keyword_threshold"], 1e-30);
    let path = format!(
        "/v3/spoken-terms/{}",
        created["spoken_terms_id"].as_str().unwrap_or_default()
    );
    let (_, read) = call(&api, &key, Method::GET, &path, None).await?;
    assert_eq!(read["keyword_threshold"], 1e-30, "{read}");
    let (code, patched) = call(
        &api,
        &key,
        Method::PATCH,
        &path,
        Some(&json!({"keyword_threshold": null})),
    )
    .await?;
    assert_eq!(code, 200, "{patched}");
    assert!(patched.get("keyword_threshold").is_none(), "{patched}");
    assert_eq!(patched["name"], "Plant");
    Ok(())
}
