//! Text improvement (`POST /v2/write/correct`, `POST /v2/write/rephrase`) against
//! a real API process, real Hunspell dictionaries and real Apertium.

use std::sync::{Arc, Mutex};

use anyhow::Result;
use axum::extract::State;
use axum::routing::post as route_post;
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::support::World;

#[tokio::test]
async fn write_correct_and_rephrase() -> Result<()> {
    let mut world = World::new("write").await?;
    let key = world.create_key("w", false).await?;
    let api = world.start_api().await?;

    let text = "Teh weather is beautifull today, and the garden looks wonderful.";
    let (code, body) = api
        .post(
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
        .keyed(reqwest::Method::POST, "/v2/write/correct", &key)
        .form(&[("text", "La casa es muy bonitta y tiene un jardín grande.")])
        .send()
        .await?;
    assert_eq!(res.status().as_u16(), 200);
    let b: Value = res.json().await?;
    assert_eq!(
        b["improvements"][0]["text"],
        "La casa es muy bonita y tiene un jardín grande."
    );
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
    let (code, _) = api
        .post(&key, "/v2/write/correct", &json!({"target_lang": "en"}))
        .await?;
    assert_eq!(code, 400);

    // Rephrase: a round trip through Spanish with Apertium.
    let (code, body) = api.post(&key,
        "/v2/write/rephrase",
        &json!({"text": ["The house has three bedrooms and a large garden."], "target_lang": "en", "writing_style": "prefer_business"}),
    )
    .await?;
    assert_eq!(code, 200, "{body}");
    let out = body["improvements"][0]["text"].as_str().unwrap_or_default();
    assert!(out.to_lowercase().contains("garden"), "{out}");
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

    // Usage: both calls billed as text improvement.
    let db = world.db().await?;
    let expected = (text.chars().count()
        + "La casa es muy bonitta y tiene un jardín grande."
            .chars()
            .count()
        + "The house has three bedrooms and a large garden."
            .chars()
            .count()) as i64;
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
