//! Text improvement (`POST /v2/write/correct`, `POST /v2/write/rephrase`) against
//! a real API process, real Hunspell dictionaries and real Apertium.

use anyhow::Result;
use serde_json::{Value, json};

use crate::support::{Api, World};

async fn post(api: &Api, key: &str, path: &str, body: &Value) -> Result<(u16, Value)> {
    let res = api
        .http
        .post(api.url(path))
        .header("Authorization", format!("DeepL-Auth-Key {key}"))
        .json(body)
        .send()
        .await?;
    let code = res.status().as_u16();
    Ok((code, res.json().await.unwrap_or(Value::Null)))
}

#[tokio::test]
async fn write_correct_and_rephrase() -> Result<()> {
    let mut world = World::new("write").await?;
    let key = world.create_key("w", false).await?;
    let api = world.start_api().await?;

    let text = "Teh weather is beautifull today, and the garden looks wonderful.";
    let (code, body) = post(
        &api,
        &key,
        "/v2/write/correct",
        &json!({"text": [text], "target_lang": "en-US"}),
    )
    .await?;
    assert_eq!(code, 200, "{body}");
    let fixed = body["improvements"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(
        fixed,
        "The weather is beautiful today, and the garden looks wonderful."
    );
    assert_eq!(body["improvements"][0]["target_language"], "en-US");
    assert_eq!(body["improvements"][0]["detected_source_language"], "en");
    // Every correctly spelled word is untouched.
    for (a, b) in text.split(' ').zip(fixed.split(' ')) {
        if !["Teh", "beautifull"].contains(&a) {
            assert_eq!(a, b);
        }
    }
    // Form body, language detected, Spanish dictionary.
    let res = api
        .http
        .post(api.url("/v2/write/correct"))
        .header("Authorization", format!("DeepL-Auth-Key {key}"))
        .form(&[("text", "La casa es muy bonitta y tiene un jardín grande.")])
        .send()
        .await?;
    assert_eq!(res.status().as_u16(), 200);
    let b: Value = res.json().await?;
    assert_eq!(
        b["improvements"][0]["text"],
        "La casa es muy bonita y tiene un jardín grande."
    );
    let (code, body) = post(
        &api,
        &key,
        "/v2/write/correct",
        &json!({"text": ["Hallo"], "target_lang": "ja"}),
    )
    .await?;
    assert_eq!(code, 400);
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("target_lang")
    );
    let (code, _) = post(
        &api,
        &key,
        "/v2/write/correct",
        &json!({"target_lang": "en"}),
    )
    .await?;
    assert_eq!(code, 400);

    // Rephrase: a round trip through Spanish with Apertium.
    let (code, body) = post(
        &api,
        &key,
        "/v2/write/rephrase",
        &json!({"text": ["The house has three bedrooms and a large garden."], "target_lang": "en", "writing_style": "prefer_business"}),
    )
    .await?;
    assert_eq!(code, 200, "{body}");
    let out = body["improvements"][0]["text"].as_str().unwrap_or_default();
    assert!(out.to_lowercase().contains("garden"), "{out}");
    for (option, value) in [("writing_style", "business"), ("tone", "friendly")] {
        let (code, body) = post(
            &api,
            &key,
            "/v2/write/rephrase",
            &json!({"text": ["Hello there."], "target_lang": "en", option: value}),
        )
        .await?;
        assert_eq!(code, 400);
        let msg = body["message"].as_str().unwrap_or_default();
        assert!(msg.contains(&format!("'{option}'")), "{msg}");
    }

    // Usage: both calls billed as text improvement.
    let db = world.db().await?;
    let billed: i64 = sqlx::query_scalar(
        "SELECT COALESCE(sum(amount), 0)::bigint FROM usage_events WHERE kind = 'text_improvement_characters'",
    )
    .fetch_one(&db)
    .await?;
    let expected = text.chars().count()
        + "La casa es muy bonitta y tiene un jardín grande."
            .chars()
            .count()
        + "The house has three bedrooms and a large garden."
            .chars()
            .count();
    assert_eq!(billed, expected as i64);
    Ok(())
}
