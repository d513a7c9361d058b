//! Hostile input: requests built to exhaust the process get a clear 4xx and
//! the process goes on serving.

use anyhow::Result;
use reqwest::Method;
use serde_json::json;

use crate::support::{World, call, error};

#[tokio::test]
async fn deeply_nested_tags_are_refused_without_harming_the_process() -> Result<()> {
    let mut world = World::new("hostile_nesting").await?;
    let key = world.create_key("hostile", false).await?;
    let api = world.start_api().await?;
    let deep = "<b>".repeat(7_000) + "The dog runs." + &"</b>".repeat(7_000);
    for tag_handling in ["xml", "html"] {
        let body = json!({
            "text": [deep.clone()],
            "source_lang": "EN",
            "target_lang": "ES",
            "tag_handling": tag_handling,
        });
        let (code, answer) = call(&api, &key, Method::POST, "/v2/translate", Some(&body)).await?;
        error(code, &answer, 400, "nested more than 512 levels");
    }
    // The same process still translates.
    let body = json!({
        "text": ["<p>The dog runs.</p>"],
        "source_lang": "EN",
        "target_lang": "ES",
        "tag_handling": "html",
    });
    let (code, answer) = call(&api, &key, Method::POST, "/v2/translate", Some(&body)).await?;
    assert_eq!(code, 200, "{answer}");
    let text = answer["translations"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.starts_with("<p>") && text.contains("perro"), "{text}");
    Ok(())
}
