//! What `/v2/translate` bills: the ledger entry of each request, the usage it
//! reports, and requests refused before anything is billed.

use super::*;

/// billed_characters, when asked for, counts the texts but not the context.
#[tokio::test]
async fn billed_characters_asked_for_count_the_texts_but_not_the_context() -> Result<()> {
    let c = client("translate_billed_chars").await?;
    let (code, body) = form_body(&c.api, &c.key).await?;
    assert_eq!(code, 200, "{body}");
    let items = body["translations"].as_array().context("translations")?;
    assert_eq!(items[0]["billed_characters"], 40, "{body}");
    assert_eq!(items[1]["billed_characters"], 11, "{body}");
    Ok(())
}

/// The ledger: one text_translation_characters entry per request, the tag kept.
#[tokio::test]
async fn the_ledger_has_one_entry_per_request_with_its_reporting_tag() -> Result<()> {
    let c = client("translate_ledger").await?;
    let billed = seven_requests(&c.api, &c.key).await?;
    let db = c.world.db().await?;
    let rows: Vec<(i64, Option<String>)> = crate::support::settled(
        || async {
            Ok(sqlx::query_as(
                "SELECT amount, custom_tag FROM usage_events
                 WHERE api_key_id = $1 AND kind = 'text_translation_characters' ORDER BY id",
            )
            .bind(&c.key_id)
            .fetch_all(&db)
            .await?)
        },
        |rows: &Vec<_>| rows.len() >= 7,
    )
    .await?;
    assert_eq!(rows.len(), 7, "{rows:?}");
    assert_eq!(rows[0], (42, Some("team-billing".to_owned()))); // 17 + 13 + 12
    assert!(rows[1..].iter().all(|(_, tag)| tag.is_none()), "{rows:?}");
    assert_eq!(rows.iter().map(|r| r.0).sum::<i64>(), billed);
    Ok(())
}

/// /v2/usage reports the billed figure; no limit → DeepL's "unlimited" value.
#[tokio::test]
async fn usage_reports_the_billed_characters_and_no_limit_as_unlimited() -> Result<()> {
    let c = client("translate_usage").await?;
    let billed = seven_requests(&c.api, &c.key).await?;
    let db = c.world.db().await?;
    crate::support::billed_settled(&db, "text_translation_characters", |b| *b >= billed).await?;
    let (code, body) = c.api.get(&c.key, "/v2/usage").await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["character_count"], billed, "{body}");
    assert_eq!(body["character_limit"], 1_000_000_000_000_i64, "{body}");
    Ok(())
}

/// A key limit: the request that would exceed it is refused (456), unbilled.
#[tokio::test]
async fn a_request_over_the_key_limit_is_refused_and_not_billed() -> Result<()> {
    let c = client("translate_limit").await?;
    let billed = seven_requests(&c.api, &c.key).await?;
    let db = c.world.db().await?;
    crate::support::billed_settled(&db, "text_translation_characters", |b| *b >= billed).await?;
    sqlx::query("UPDATE api_keys SET character_limit = $2 WHERE key_id = $1")
        .bind(&c.key_id)
        .bind(billed + 5)
        .execute(&db)
        .await?;
    let (code, body) = c
        .api
        .translate(
            &c.key,
            &json!({"text": ["Ten chars!"], "target_lang": "ES"}),
            None,
        )
        .await?;
    assert_eq!(code, 456, "{body}");
    assert!(message(&body).contains("Quota"), "{body}");
    let (_, body) = c.api.get(&c.key, "/v2/usage").await?;
    assert_eq!(body["character_count"], billed, "{body}");
    assert_eq!(body["character_limit"], billed + 5, "{body}");
    Ok(())
}

/// Refused requests cost nothing: only the accepted one is billed.
#[tokio::test]
async fn refused_requests_are_not_billed() -> Result<()> {
    let mut world = World::new("translate_refused_unbilled").await?;
    let key = world.create_key("client", false).await?;
    let api = world.start_api().await?;
    for body in [
        json!({"text": ["a"], "target_lang": "XX"}),
        json!({"text": ["a"], "target_lang": "ES", "split_sentences": "always"}),
        json!({"text": ["a"], "source_lang": "EN", "target_lang": "ES", "glossary_id": GLOSSARY}),
        json!({"text": ["a"], "target_lang": "ES", "translation_memory_id": TM}),
    ] {
        let (code, answer) = api.translate(&key, &body, None).await?;
        assert!(code == 400 || code == 404, "{body} → {answer}");
    }
    // Accepted and without effect: enable_beta_languages; prefer_less falls back.
    let (code, body) = api
        .post_form(
            &key,
            "/v2/translate",
            &[
                ("text", "The house is big."),
                ("target_lang", "ES"),
                ("source_lang", "EN"),
                ("enable_beta_languages", "1"),
                ("formality", "prefer_less"),
            ],
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(translated_texts(&body), ["La casa es grande."]);
    let (code, body) = api.get(&key, "/v2/usage").await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        body["character_count"],
        "The house is big.".chars().count(),
        "{body}"
    );
    Ok(())
}
