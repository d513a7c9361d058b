//! Text improvement (`POST /v2/write/correct`, `POST /v2/write/rephrase`) against
//! a real API process, real Hunspell dictionaries and real Apertium.

use std::sync::{Arc, Mutex};

use anyhow::Result;
use axum::extract::State;
use axum::routing::post as route_post;
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::support::{Api, World, message};

/// A world with a key and an API process.
async fn client(tag: &str) -> Result<(World, Api, String)> {
    let mut world = World::new(tag).await?;
    let key = world.create_key("w", false).await?;
    let api = world.start_api().await?;
    Ok((world, api, key))
}

/// The English text with two misspellings ([`correct_english`]).
const MISSPELLED: &str = "Teh weather is beautifull today, and the garden looks wonderful.";
/// The Spanish text with a misspelling ([`correct_spanish_form`]).
const MISSPELLED_ES: &str = "La casa es muy bonitta y tiene un jardín grande.";
/// The text rephrased ([`rephrase_business`]).
const TO_REPHRASE: &str = "The house has three bedrooms and a large garden.";

/// `POST /v2/write/correct` of [`MISSPELLED`] for en-US.
async fn correct_english(api: &Api, key: &str) -> Result<(u16, Value)> {
    api.post(
        key,
        "/v2/write/correct",
        &json!({"text": [MISSPELLED], "target_lang": "en-US"}),
    )
    .await
}

/// `POST /v2/write/correct` of [`MISSPELLED_ES`], form body, no language.
async fn correct_spanish_form(api: &Api, key: &str) -> Result<(u16, Value)> {
    let res = api
        .keyed(reqwest::Method::POST, "/v2/write/correct", key)
        .form(&[("text", MISSPELLED_ES)])
        .send()
        .await?;
    let code = res.status().as_u16();
    Ok((code, res.json().await?))
}

/// `POST /v2/write/rephrase` of [`TO_REPHRASE`], `prefer_business`.
async fn rephrase_business(api: &Api, key: &str) -> Result<(u16, Value)> {
    api.post(
        key,
        "/v2/write/rephrase",
        &json!({"text": [TO_REPHRASE], "target_lang": "en", "writing_style": "prefer_business"}),
    )
    .await
}

#[tokio::test]
async fn correct_fixes_misspelled_english_words() -> Result<()> {
    let (_world, api, key) = client("write_correct").await?;
    let (code, body) = correct_english(&api, &key).await?;
    assert_eq!(code, 200, "{body}");
    let fixed = body["improvements"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(
        fixed,
        "The weather is beautiful today, and the garden looks wonderful."
    );
    Ok(())
}

#[tokio::test]
async fn correct_reports_the_target_and_the_detected_language() -> Result<()> {
    let (_world, api, key) = client("write_correct_langs").await?;
    let (code, body) = correct_english(&api, &key).await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["improvements"][0]["target_language"], "en-US");
    assert_eq!(body["improvements"][0]["detected_source_language"], "en");
    Ok(())
}

/// Every correctly spelled word is untouched.
#[tokio::test]
async fn correct_leaves_correctly_spelled_words_untouched() -> Result<()> {
    let (_world, api, key) = client("write_correct_untouched").await?;
    let (code, body) = correct_english(&api, &key).await?;
    assert_eq!(code, 200, "{body}");
    let fixed = body["improvements"][0]["text"].as_str().unwrap_or_default();
    for (a, b) in MISSPELLED.split(' ').zip(fixed.split(' ')) {
        if !["Teh", "beautifull"].contains(&a) {
            assert_eq!(a, b);
        }
    }
    Ok(())
}

/// Form body, language detected, Spanish dictionary.
#[tokio::test]
async fn correct_detects_spanish_and_uses_its_dictionary() -> Result<()> {
    let (_world, api, key) = client("write_correct_es").await?;
    let (code, b) = correct_spanish_form(&api, &key).await?;
    assert_eq!(code, 200);
    assert_eq!(
        b["improvements"][0]["text"],
        "La casa es muy bonita y tiene un jardín grande."
    );
    Ok(())
}

#[tokio::test]
async fn correct_refuses_a_target_lang_without_a_dictionary() -> Result<()> {
    let (_world, api, key) = client("write_correct_ja").await?;
    let (code, body) = api
        .post(
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
    Ok(())
}

#[tokio::test]
async fn correct_refuses_a_request_without_text() -> Result<()> {
    let (_world, api, key) = client("write_correct_no_text").await?;
    let (code, _) = api
        .post(&key, "/v2/write/correct", &json!({"target_lang": "en"}))
        .await?;
    assert_eq!(code, 400);
    Ok(())
}

/// Rephrase without a language model: the text is only corrected (never a
/// round-trip paraphrase that changes its meaning), and the answer says so;
/// a detected language is reported in lower case.
#[tokio::test]
async fn rephrase_without_a_language_model_only_corrects() -> Result<()> {
    let (_world, api, key) = client("write_rephrase").await?;
    let res = api
        .keyed(reqwest::Method::POST, "/v2/write/rephrase", &key)
        .json(&json!({"text": ["Teh weather is nice today.", "El haz de protones es estable."]}))
        .send()
        .await?;
    assert_eq!(res.status().as_u16(), 200);
    assert_eq!(
        res.headers()
            .get("x-tolk-rephrase")
            .and_then(|v| v.to_str().ok()),
        Some("corrected")
    );
    let body: Value = res.json().await?;
    let out = &body["improvements"];
    assert_eq!(out[0]["text"], "The weather is nice today.", "{body}");
    assert_eq!(out[0]["target_language"], "en-US", "{body}");
    assert_eq!(out[1]["text"], "El haz de protones es estable.", "{body}");
    assert_eq!(out[1]["target_language"], "es", "{body}");
    assert_eq!(out[1]["detected_source_language"], "es", "{body}");

    // With a style it may fall back from, the same correction.
    let (code, body) = rephrase_business(&api, &key).await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["improvements"][0]["text"], TO_REPHRASE, "{body}");
    Ok(())
}

/// Without a language model a writing style or tone cannot be honoured: 400.
#[tokio::test]
async fn rephrase_without_a_language_model_refuses_a_style_or_tone() -> Result<()> {
    let (_world, api, key) = client("write_rephrase_options").await?;
    for (option, value) in [("writing_style", "business"), ("tone", "friendly")] {
        let (code, body) = api
            .post(
                &key,
                "/v2/write/rephrase",
                &json!({"text": ["Hello there."], "target_lang": "en", option: value}),
            )
            .await?;
        assert_eq!(code, 400);
        let msg = body["message"].as_str().unwrap_or_default();
        assert!(msg.contains(&format!("'{option}'")), "{msg}");
    }
    Ok(())
}

/// Usage: the accepted correct and rephrase calls are billed as text
/// improvement, the refused ones not at all.
#[tokio::test]
async fn accepted_text_improvements_are_billed_by_characters() -> Result<()> {
    let (world, api, key) = client("write_billed").await?;
    for (code, body) in [
        correct_english(&api, &key).await?,
        correct_spanish_form(&api, &key).await?,
        rephrase_business(&api, &key).await?,
    ] {
        anyhow::ensure!(code == 200, "{code}: {body}");
    }
    for (path, body) in [
        (
            "/v2/write/correct",
            json!({"text": ["Hallo"], "target_lang": "ja"}),
        ),
        ("/v2/write/correct", json!({"target_lang": "en"})),
        (
            "/v2/write/rephrase",
            json!({"text": ["Hello there."], "target_lang": "en", "writing_style": "business"}),
        ),
        (
            "/v2/write/rephrase",
            json!({"text": ["Hello there."], "target_lang": "en", "tone": "friendly"}),
        ),
    ] {
        let (code, answer) = api.post(&key, path, &body).await?;
        anyhow::ensure!(code == 400, "{path} {body}: {code} {answer}");
    }
    let db = world.db().await?;
    let expected = (MISSPELLED.chars().count()
        + MISSPELLED_ES.chars().count()
        + TO_REPHRASE.chars().count()) as i64;
    let billed =
        crate::support::billed_settled(&db, "text_improvement_characters", |b| *b >= expected)
            .await?;
    assert_eq!(billed, expected);
    Ok(())
}

/// An OpenAI-compatible stand-in (a paid upstream): answers `[rewritten] {user}`
/// and records the system prompts it got.
async fn llm_stand_in(prompts: Arc<Mutex<Vec<String>>>) -> Result<String> {
    async fn chat(
        State(prompts): State<Arc<Mutex<Vec<String>>>>,
        Json(body): Json<Value>,
    ) -> Json<Value> {
        let system = body["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if let Ok(mut p) = prompts.lock() {
            p.push(system);
        }
        let user = body["messages"][1]["content"].as_str().unwrap_or_default();
        Json(json!({
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": format!("[rewritten] {user}")}}],
        }))
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let router = Router::new()
        .route("/v1/chat/completions", route_post(chat))
        .with_state(prompts);
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Ok(format!("http://{addr}/v1"))
}

#[tokio::test]
async fn rephrase_with_a_language_model_honours_style_and_tone() -> Result<()> {
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let url = llm_stand_in(prompts.clone()).await?;
    let mut world = World::new("write_llm").await?;
    for (k, v) in [
        ("TOLK_ENGINES", "openai,apertium".to_owned()),
        ("TOLK_OPENAI_URL", url),
        ("TOLK_OPENAI_MODEL", "test-model".to_owned()),
        ("TOLK_OPENAI_PAIRS", "EN:IT".to_owned()),
    ] {
        world.extra_env.push((k.to_owned(), v));
    }
    let key = world.create_key("w", false).await?;
    let api = world.start_api().await?;
    let (code, body) = api.post(&key,
        "/v2/write/rephrase",
        &json!({"text": ["The house is big."], "target_lang": "en-US", "writing_style": "business"}),
    )
    .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        body["improvements"][0]["text"],
        "[rewritten] The house is big."
    );
    let (code, _) = api
        .post(
            &key,
            "/v2/write/rephrase",
            &json!({"text": ["The house is big."], "target_lang": "en", "tone": "friendly"}),
        )
        .await?;
    assert_eq!(code, 200);
    let got = prompts.lock().map(|p| p.clone()).unwrap_or_default();
    assert_eq!(got.len(), 2);
    assert!(
        got[0].contains("Use a business writing style."),
        "{}",
        got[0]
    );
    assert!(got[1].contains("Use a friendly tone."), "{}", got[1]);
    // Spanish has no language model here: round trip, and a style is refused.
    let (code, body) = api.post(&key,
        "/v2/write/rephrase",
        &json!({"text": ["La casa es grande."], "target_lang": "es", "writing_style": "casual"}),
    )
    .await?;
    assert_eq!(code, 400);
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("'writing_style'")
    );
    Ok(())
}

/// Rephrase reports a language with variants as DeepL does, by its default
/// variant.
#[tokio::test]
async fn rephrase_reports_the_default_variant_of_the_target() -> Result<()> {
    let (_world, api, key) = client("write_rephrase_variant").await?;
    let (code, body) = api
        .post(
            &key,
            "/v2/write/rephrase",
            &json!({"text": ["The house is big."], "target_lang": "en"}),
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["improvements"][0]["target_language"], "en-US");
    Ok(())
}

/// A style and a tone together are refused in DeepL's words.
#[tokio::test]
async fn rephrase_refuses_a_style_and_a_tone_together() -> Result<()> {
    let (_world, api, key) = client("write_style_and_tone").await?;
    let (code, body) = api
        .post(
            &key,
            "/v2/write/rephrase",
            &json!({"text": ["The house is big."], "target_lang": "en",
                    "writing_style": "business", "tone": "friendly"}),
        )
        .await?;
    assert_eq!(code, 400, "{body}");
    assert!(
        message(&body).starts_with("Both writing_style and tone defined"),
        "{body}"
    );
    Ok(())
}

/// A key whose character limit is reached is refused with 456 before any
/// work, on both operations, and nothing is billed past the limit.
#[tokio::test]
async fn text_improvement_over_the_key_limit_is_refused_and_not_billed() -> Result<()> {
    let (world, api, key) = client("write_limit").await?;
    let key_id = key.split('.').next().unwrap_or_default().to_owned();
    let db = world.db().await?;
    sqlx::query("UPDATE api_keys SET character_limit = 5 WHERE key_id = $1")
        .bind(&key_id)
        .execute(&db)
        .await?;
    let (code, body) = correct_english(&api, &key).await?;
    assert_eq!(code, 456, "{body}");
    assert!(body["message"].is_string(), "{body}");
    let (code, body) = rephrase_business(&api, &key).await?;
    assert_eq!(code, 456, "{body}");
    // Within the limit: accepted and billed.
    let (code, body) = api
        .post(
            &key,
            "/v2/write/correct",
            &json!({"text": ["Teh"], "target_lang": "en-US"}),
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    let billed =
        crate::support::billed_settled(&db, "text_improvement_characters", |b| *b >= 3).await?;
    assert_eq!(billed, 3);
    Ok(())
}
