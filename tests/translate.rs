//! Text translation (`POST /v2/translate`), languages (`GET /v2/languages`) and
//! usage (`GET /v2/usage`) against a real API process and real Apertium.

use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::support::{Api, World};

/// POSTs a JSON body to /v2/translate; returns (status, body).
async fn post_json(api: &Api, key: &str, body: &Value, tag: Option<&str>) -> Result<(u16, Value)> {
    let mut req = api
        .http
        .post(api.url("/v2/translate"))
        .header("Authorization", format!("DeepL-Auth-Key {key}"))
        .json(body);
    if let Some(tag) = tag {
        req = req.header("X-DeepL-Reporting-Tag", tag);
    }
    let res = req.send().await?;
    let code = res.status().as_u16();
    Ok((code, res.json().await.unwrap_or(Value::Null)))
}

/// POSTs a form body to /v2/translate; returns (status, body).
async fn post_form(api: &Api, key: &str, fields: &[(&str, &str)]) -> Result<(u16, Value)> {
    let res = api
        .http
        .post(api.url("/v2/translate"))
        .header("Authorization", format!("DeepL-Auth-Key {key}"))
        .form(fields)
        .send()
        .await?;
    let code = res.status().as_u16();
    Ok((code, res.json().await.unwrap_or(Value::Null)))
}

/// GETs a path with the key; returns (status, body).
async fn get(api: &Api, key: &str, path: &str) -> Result<(u16, Value)> {
    let res = api
        .http
        .get(api.url(path))
        .header("Authorization", format!("DeepL-Auth-Key {key}"))
        .send()
        .await?;
    let code = res.status().as_u16();
    Ok((code, res.json().await.unwrap_or(Value::Null)))
}

/// A well-formed glossary id that names no glossary.
const GLOSSARY: &str = "def3a26b-3e84-45b3-84ae-0c0aaf3525f7";
/// A well-formed translation memory id that names none.
const TM: &str = "a74d88fb-ed2a-4943-a664-a4512398b994";

fn message(body: &Value) -> &str {
    body["message"].as_str().unwrap_or_default()
}

/// The texts of a successful answer, in order.
fn texts(body: &Value) -> Vec<String> {
    body["translations"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| t["text"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn translate_json_and_form_bodies_usage_and_reporting_tags() -> Result<()> {
    let mut world = World::new("translate").await?;
    let key = world.create_key("client", false).await?;
    let key_id = key.split_once('.').context("key format")?.0.to_owned();
    let api = world.start_api().await?; // no worker needed: translation is synchronous

    // JSON, explicit source: order kept, source echoed in upper case; no optional fields.
    let texts_in = ["The house is big.", "I have a dog.", "Good morning"];
    let (code, body) = post_json(
        &api,
        &key,
        &json!({"text": texts_in, "source_lang": "en", "target_lang": "es"}),
        Some("team-billing"),
    )
    .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        texts(&body),
        ["La casa es grande.", "Tengo un perro.", "Buenos días"]
    );
    for t in body["translations"].as_array().context("translations")? {
        assert_eq!(t["detected_source_language"], "EN", "{t}");
        for absent in [
            "billed_characters",
            "model_type_used",
            "tag_handling_version",
        ] {
            assert!(t.get(absent).is_none(), "{absent} present: {t}");
        }
    }
    let mut billed: i64 = texts_in.iter().map(|t| t.chars().count() as i64).sum();

    // Form body, `text` repeated, no source_lang: detected; billed_characters and
    // model_type_used only because they were asked for.
    let (code, body) = post_form(
        &api,
        &key,
        &[
            ("text", "La casa es grande y el perro es pequeño."),
            ("target_lang", "EN-US"),
            ("text", "Buenos días"),
            ("show_billed_characters", "1"),
            ("model_type", "latency_optimized"),
            ("split_sentences", "nonewlines"),
            ("preserve_formatting", "1"),
            ("formality", "prefer_more"),
            ("context", "Este contexto no se factura."),
        ],
    )
    .await?;
    assert_eq!(code, 200, "{body}");
    let out = texts(&body);
    assert_eq!(out.len(), 2, "{body}");
    assert!(out[0].contains("house") && out[0].contains("dog"), "{body}");
    assert!(out[1].contains("Good morning"), "{body}");
    let items = body["translations"].as_array().context("translations")?;
    assert_eq!(items[0]["detected_source_language"], "ES", "{body}");
    assert_eq!(items[0]["billed_characters"], 40, "{body}");
    assert_eq!(items[1]["billed_characters"], 11, "{body}");
    assert_eq!(items[0]["model_type_used"], "latency_optimized", "{body}");
    billed += 40 + 11; // the context is not billed

    // Tag handling: the translated words stay inside well-formed <b> tags.
    let (code, body) = post_json(
        &api,
        &key,
        &json!({"text": ["The <b>red</b> car is big."], "source_lang": "EN",
                "target_lang": "ES", "tag_handling": "xml", "model_type": "prefer_quality_optimized"}),
        None,
    )
    .await?;
    assert_eq!(code, 200, "{body}");
    let t = &body["translations"][0];
    assert_eq!(t["text"], "El coche <b>rojo</b> es grande.", "{body}");
    assert_eq!(t["tag_handling_version"], "v2", "{body}");
    assert_eq!(t["model_type_used"], "quality_optimized", "{body}");
    billed += "The <b>red</b> car is big.".chars().count() as i64;

    // html and an explicit tag_handling_version (JSON only), echoed back.
    let (code, body) = post_json(
        &api,
        &key,
        &json!({"text": ["<p>I have a <i>dog</i>.</p>"], "source_lang": "EN",
                "target_lang": "ES", "tag_handling": "html", "tag_handling_version": "v1"}),
        None,
    )
    .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        body["translations"][0]["text"], "<p>Tengo un <i>perro</i>.</p>",
        "{body}"
    );
    assert_eq!(body["translations"][0]["tag_handling_version"], "v1");
    billed += "<p>I have a <i>dog</i>.</p>".chars().count() as i64;

    // Pivot route (EN → ES → PT-BR) through the same endpoint.
    let (code, body) = post_json(
        &api,
        &key,
        &json!({"text": ["The house is big."], "target_lang": "PT-BR"}),
        None,
    )
    .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(texts(&body), ["A casa é grande."]);
    assert_eq!(body["translations"][0]["detected_source_language"], "EN");
    billed += 17;

    // split_sentences: "1" (the default) ends a sentence at each line break, so
    // the lines are translated on their own; "0" lets Apertium read the break as
    // a blank (here it joins "morning I" into one clause). Line breaks are kept.
    let multiline = "Good morning\nI have a dog.";
    let (code, body) = post_json(
        &api,
        &key,
        &json!({"text": [multiline], "source_lang": "EN", "target_lang": "ES"}),
        None,
    )
    .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(texts(&body), ["Buenos días\nTengo un perro."]);
    let (code, body) = post_json(
        &api,
        &key,
        &json!({"text": [multiline], "source_lang": "EN", "target_lang": "ES",
                "split_sentences": "0"}),
        None,
    )
    .await?;
    assert_eq!(code, 200, "{body}");
    let joined = texts(&body).concat();
    assert!(
        joined.starts_with("Buenos días\n") && joined.ends_with("perro."),
        "{body}"
    );
    billed += 2 * multiline.chars().count() as i64;

    // The ledger: one text_translation_characters entry per request, the tag kept.
    let db = world.db().await?;
    let rows: Vec<(i64, Option<String>)> = crate::support::settled(
        || async {
            Ok(sqlx::query_as(
                "SELECT amount, custom_tag FROM usage_events
                 WHERE api_key_id = $1 AND kind = 'text_translation_characters' ORDER BY id",
            )
            .bind(&key_id)
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

    // /v2/usage reports the same figure; no limit → DeepL's "unlimited" value.
    let (code, body) = get(&api, &key, "/v2/usage").await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["character_count"], billed, "{body}");
    assert_eq!(body["character_limit"], 1_000_000_000_000_i64, "{body}");

    // A key limit: the request that would exceed it is refused (456), unbilled.
    sqlx::query("UPDATE api_keys SET character_limit = $2 WHERE key_id = $1")
        .bind(&key_id)
        .bind(billed + 5)
        .execute(&db)
        .await?;
    let (code, body) = post_json(
        &api,
        &key,
        &json!({"text": ["Ten chars!"], "target_lang": "ES"}),
        None,
    )
    .await?;
    assert_eq!(code, 456, "{body}");
    assert!(message(&body).contains("Quota"), "{body}");
    let (_, body) = get(&api, &key, "/v2/usage").await?;
    assert_eq!(body["character_count"], billed, "{body}");
    assert_eq!(body["character_limit"], billed + 5, "{body}");
    Ok(())
}

#[tokio::test]
async fn translate_refuses_bad_requests_and_lists_languages() -> Result<()> {
    let mut world = World::new("translate_errors").await?;
    let key = world.create_key("client", false).await?;
    let api = world.start_api().await?;

    // No key → 403.
    let res = api
        .http
        .post(api.url("/v2/translate"))
        .json(&json!({"text": ["a"], "target_lang": "ES"}))
        .send()
        .await?;
    assert_eq!(res.status(), 403);

    // Each violation: 400 naming the field.
    let cases: Vec<(Value, &str)> = vec![
        (json!({"target_lang": "ES"}), "'text'"),
        (json!({"text": [], "target_lang": "ES"}), "'text'"),
        (
            json!({"text": "not an array", "target_lang": "ES"}),
            "'text'",
        ),
        (json!({"text": ["a"]}), "'target_lang'"),
        (json!({"text": ["a"], "target_lang": "XX"}), "target_lang"),
        (
            json!({"text": ["a"], "source_lang": "QQ", "target_lang": "ES"}),
            "source_lang",
        ),
        (
            json!({"text": ["The house"], "target_lang": "ES", "formality": "more"}),
            "formality",
        ),
        (
            json!({"text": ["The house"], "target_lang": "ES", "formality": "less"}),
            "formality",
        ),
        (
            json!({"text": ["a"], "target_lang": "ES", "formality": "polite"}),
            "formality",
        ),
        (
            json!({"text": ["a"], "source_lang": "EN", "target_lang": "ES", "glossary_id": "def3a26b"}),
            "'glossary_id'",
        ),
        (
            json!({"text": ["a"], "target_lang": "ES", "style_id": "s"}),
            "'style_id'",
        ),
        (
            json!({"text": ["a"], "target_lang": "ES", "translation_memory_id": "t"}),
            "'translation_memory_id'",
        ),
        (
            json!({"text": ["a"], "target_lang": "ES", "ignore_tags": ["x"]}),
            "'ignore_tags'",
        ),
        (
            json!({"text": ["a"], "target_lang": "ES", "split_sentences": "always"}),
            "'split_sentences'",
        ),
        (
            json!({"text": ["a"], "target_lang": "ES", "model_type": "fastest"}),
            "'model_type'",
        ),
        (
            json!({"text": ["a"], "target_lang": "ES", "tag_handling": "markdown"}),
            "'tag_handling'",
        ),
        (
            json!({"text": ["a"], "target_lang": "ES", "show_billed_characters": "yes"}),
            "'show_billed_characters'",
        ),
        (
            json!({"text": ["a"], "source_lang": "EN", "target_lang": "ES",
                   "glossary_id": GLOSSARY, "glossary_ids": [GLOSSARY]}),
            "'glossary_id' and 'glossary_ids' cannot be combined",
        ),
        (
            json!({"text": ["a"], "source_lang": "EN", "target_lang": "ES",
                   "glossary_ids": vec![GLOSSARY; 6]}),
            "'glossary_ids' accepts at most 5",
        ),
        (
            json!({"text": ["a"], "target_lang": "ES", "glossary_ids": [GLOSSARY]}),
            "'source_lang' is required when 'glossary_ids' is given",
        ),
        (
            json!({"text": ["a"], "target_lang": "ES", "glossary_id": GLOSSARY}),
            "'source_lang' is required when 'glossary_id' is given",
        ),
        (
            json!({"text": ["a"], "target_lang": "DE", "custom_instructions": vec!["Be brief."; 11]}),
            "'custom_instructions' accepts at most 10",
        ),
        (
            json!({"text": ["a"], "target_lang": "DE", "custom_instructions": ["x".repeat(301)]}),
            "'custom_instructions' is longer than 300",
        ),
        (
            json!({"text": ["a"], "target_lang": "PT-BR", "custom_instructions": ["Be brief."]}),
            "'custom_instructions' is not supported for target_lang PT-BR",
        ),
        // ES accepts instructions in DeepL, but Apertium cannot follow them.
        (
            json!({"text": ["The house"], "source_lang": "EN", "target_lang": "ES",
                   "custom_instructions": ["Be brief."]}),
            "'custom_instructions' is not supported for target_lang ES by the configured engines",
        ),
        (
            json!({"text": ["a"], "target_lang": "ES", "translation_memory_id": TM,
                   "translation_memory_threshold": 101}),
            "'translation_memory_threshold' must be an integer from 0 to 100",
        ),
        (
            json!({"text": ["a"], "target_lang": "ES", "translation_memory_threshold": 80}),
            "'translation_memory_threshold' needs 'translation_memory_id'",
        ),
        (
            json!({"text": ["a"], "target_lang": "ES", "tag_handling_version": "v3"}),
            "'tag_handling_version'",
        ),
        (
            json!({"text": ["a"], "target_lang": "ES", "enable_beta_languages": "maybe"}),
            "'enable_beta_languages'",
        ),
        (
            json!({"text": ["a"], "target_lang": "ES", "context": ["not", "a", "string"]}),
            "'context'",
        ),
    ];
    for (body, field) in &cases {
        let (code, answer) = post_json(&api, &key, body, None).await?;
        assert_eq!(code, 400, "{body} → {answer}");
        assert!(message(&answer).contains(field), "{body} → {answer}");
    }
    let (code, body) = post_form(&api, &key, &[("text", "a"), ("glossary_id", "g1")]).await?;
    assert_eq!(code, 400);
    assert!(message(&body).contains("'target_lang'"), "{body}");
    let (code, body) = post_form(
        &api,
        &key,
        &[("text", "a"), ("target_lang", "ES"), ("glossary_id", "g1")],
    )
    .await?;
    assert_eq!(code, 400);
    assert!(message(&body).contains("'glossary_id'"), "{body}");
    // JSON-only fields in a form body.
    for field in ["custom_instructions", "style_id", "tag_handling_version"] {
        let (code, body) = post_form(
            &api,
            &key,
            &[("text", "a"), ("target_lang", "DE"), (field, "v1")],
        )
        .await?;
        assert_eq!(code, 400, "{field}: {body}");
        assert_eq!(
            message(&body),
            format!("Parameter '{field}' is only accepted in JSON bodies."),
            "{body}"
        );
    }
    // Form glossary_ids: comma-separated and repeated count together.
    let (code, body) = post_form(
        &api,
        &key,
        &[
            ("text", "a"),
            ("target_lang", "ES"),
            ("source_lang", "EN"),
            ("glossary_ids", &format!("{GLOSSARY},{GLOSSARY},{GLOSSARY}")),
            ("glossary_ids", &format!("{GLOSSARY},{GLOSSARY},{GLOSSARY}")),
        ],
    )
    .await?;
    assert_eq!(code, 400, "{body}");
    assert!(message(&body).contains("at most 5"), "{body}");

    // Well-formed references to resources that do not exist: 404.
    for (extra, what) in [
        (
            json!({"source_lang": "EN", "glossary_id": GLOSSARY}),
            "Glossary",
        ),
        (
            json!({"source_lang": "EN", "glossary_ids": [GLOSSARY]}),
            "Glossary",
        ),
        (json!({"style_id": GLOSSARY}), "Style rule list"),
        (
            json!({"translation_memory_id": TM, "translation_memory_threshold": 75}),
            "Translation memory",
        ),
    ] {
        let mut body = json!({"text": ["a"], "target_lang": "ES"});
        for (k, v) in extra.as_object().context("object")? {
            body[k] = v.clone();
        }
        let (code, answer) = post_json(&api, &key, &body, None).await?;
        assert_eq!(code, 404, "{body} → {answer}");
        assert!(message(&answer).starts_with(what), "{answer}");
    }

    // Accepted and without effect: enable_beta_languages; prefer_less falls back.
    let (code, body) = post_form(
        &api,
        &key,
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
    assert_eq!(texts(&body), ["La casa es grande."]);
    let accepted_chars = "The house is big.".chars().count();

    // A too-long request URI → 414 with a JSON message.
    let res = api
        .http
        .post(api.url(&format!("/v2/translate?x={}", "a".repeat(9000))))
        .header("Authorization", format!("DeepL-Auth-Key {key}"))
        .json(&json!({"text": ["a"], "target_lang": "ES"}))
        .send()
        .await?;
    assert_eq!(res.status(), 414);
    let body: Value = res.json().await?;
    assert!(message(&body).contains("URI too long"), "{body}");

    // Reporting tag longer than 100 characters.
    let (code, body) = post_json(
        &api,
        &key,
        &json!({"text": ["a"], "target_lang": "ES"}),
        Some(&"t".repeat(101)),
    )
    .await?;
    assert_eq!(code, 400);
    assert!(message(&body).contains("X-DeepL-Reporting-Tag"), "{body}");

    // 128 KiB + 1 byte → 413.
    let skeleton = json!({"target_lang": "ES", "text": [""]}).to_string();
    let pad = 128 * 1024 + 1 - skeleton.len();
    let big = json!({"target_lang": "ES", "text": ["a".repeat(pad)]}).to_string();
    assert_eq!(big.len(), 128 * 1024 + 1);
    let res = api
        .http
        .post(api.url("/v2/translate"))
        .header("Authorization", format!("DeepL-Auth-Key {key}"))
        .header("Content-Type", "application/json")
        .body(big)
        .send()
        .await?;
    assert_eq!(res.status(), 413);
    let body: Value = res.json().await?;
    assert!(message(&body).contains("too large"), "{body}");

    // None of the refused requests was billed.
    let (code, body) = get(&api, &key, "/v2/usage").await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["character_count"], accepted_chars, "{body}");

    // Languages: sources without supports_formality, targets with it.
    let (code, sources) = get(&api, &key, "/v2/languages").await?;
    assert_eq!(code, 200, "{sources}");
    let (_, explicit) = get(&api, &key, "/v2/languages?type=source").await?;
    assert_eq!(sources, explicit);
    let codes = |list: &Value| -> Vec<String> {
        list.as_array()
            .map(|a| {
                a.iter()
                    .map(|l| l["language"].as_str().unwrap_or_default().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let source_codes = codes(&sources);
    for c in ["EN", "ES", "PT"] {
        assert!(
            source_codes.iter().any(|s| s == c),
            "{c} missing: {sources}"
        );
    }
    let sources = sources.as_array().context("array")?;
    let en = sources
        .iter()
        .find(|l| l["language"] == "EN")
        .context("EN")?;
    assert_eq!(en["name"], "English");
    assert!(
        sources
            .iter()
            .all(|l| l.get("supports_formality").is_none())
    );

    let (code, targets) = get(&api, &key, "/v2/languages?type=target").await?;
    assert_eq!(code, 200, "{targets}");
    let target_codes = codes(&targets);
    for c in ["ES", "PT-PT", "PT-BR", "EN-GB", "EN-US"] {
        assert!(
            target_codes.iter().any(|s| s == c),
            "{c} missing: {targets}"
        );
    }
    assert!(
        !target_codes.iter().any(|s| s == "EN" || s == "PT"),
        "{targets}"
    );
    assert!(
        targets
            .as_array()
            .context("array")?
            .iter()
            .all(|l| l["supports_formality"] == false),
        "{targets}"
    );

    let (code, body) = get(&api, &key, "/v2/languages?type=bogus").await?;
    assert_eq!(code, 400);
    assert!(message(&body).contains("'type'"), "{body}");
    let res = api.http.get(api.url("/v2/languages")).send().await?;
    assert_eq!(res.status(), 403);
    Ok(())
}

/// Whether `s` is balanced markup: every end tag closes the last open element.
fn balanced(s: &str) -> bool {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = s;
    while let Some(at) = rest.find('<') {
        let Some(end) = rest[at..].find('>') else {
            return false;
        };
        let tag = &rest[at + 1..at + end];
        rest = &rest[at + end + 1..];
        if tag.ends_with('/') || tag.starts_with('!') || tag.starts_with('?') {
            continue;
        }
        let name = tag
            .trim_start_matches('/')
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_owned();
        if ["br", "img"].contains(&name.as_str()) {
            continue;
        }
        if tag.starts_with('/') {
            if stack.pop() != Some(name) {
                return false;
            }
        } else {
            stack.push(name);
        }
    }
    stack.is_empty()
}

#[tokio::test]
async fn translate_tag_handling_options() -> Result<()> {
    let mut world = World::new("translate_tags").await?;
    let key = world.create_key("client", false).await?;
    let api = world.start_api().await?;
    let one = |body: Value| {
        let api = &api;
        let key = &key;
        async move {
            let (code, answer) = post_json(api, key, &body, None).await?;
            anyhow::ensure!(code == 200, "{body} → {code} {answer}");
            let text = answer["translations"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            anyhow::ensure!(balanced(&text), "not well-formed: {text}");
            Ok::<_, anyhow::Error>(text)
        }
    };

    // ignore_tags: the element and its content come back verbatim.
    let out = one(json!({"text": ["I have a <code>red dog</code> and a cat."],
        "source_lang": "EN", "target_lang": "ES", "tag_handling": "xml",
        "ignore_tags": ["code"]}))
    .await?;
    assert!(out.contains("<code>red dog</code>"), "{out}");
    assert!(out.contains("gato"), "{out}");

    // splitting_tags: each <par> is a sentence of its own; the structure stays.
    let out = one(
        json!({"text": ["<doc><par>The house is big</par><par>I have a dog</par></doc>"],
        "source_lang": "EN", "target_lang": "ES", "tag_handling": "xml",
        "outline_detection": false, "splitting_tags": ["par"]}),
    )
    .await?;
    assert_eq!(
        out,
        "<doc><par>La casa es grande</par><par>Tengo un perro</par></doc>"
    );

    // outline_detection (default on): elements laid out on lines split.
    let outline = "<doc>\n  <p>The house is big</p>\n  <p>I have a dog</p>\n</doc>";
    let out = one(
        json!({"text": [outline], "source_lang": "EN", "target_lang": "ES",
        "tag_handling": "xml"}),
    )
    .await?;
    assert_eq!(
        out,
        "<doc>\n  <p>La casa es grande</p>\n  <p>Tengo un perro</p>\n</doc>"
    );
    // non_splitting_tags overrides the detection: one sentence, still well-formed.
    let out = one(
        json!({"text": [outline], "source_lang": "EN", "target_lang": "ES",
        "tag_handling": "xml", "non_splitting_tags": "p"}),
    )
    .await?;
    assert_eq!(out.matches("<p>").count(), 2, "{out}");
    assert!(out.starts_with("<doc>") && out.ends_with("</doc>"), "{out}");
    assert_ne!(
        out,
        "<doc>\n  <p>La casa es grande</p>\n  <p>Tengo un perro</p>\n</doc>"
    );

    // html: block elements split, <br> and <script> are kept as written.
    let out = one(json!({"text": ["<div><p>The house is big<br>I have a dog</p><script>var t = \"The house\";</script><p>Good morning</p></div>"],
        "source_lang": "EN", "target_lang": "ES", "tag_handling": "html",
        "tag_handling_version": "v2"}))
    .await?;
    assert!(out.starts_with("<div><p>La casa es grande"), "{out}");
    assert!(out.contains("<br>"), "{out}");
    assert!(
        out.contains("<script>var t = \"The house\";</script><p>Buenos días</p></div>"),
        "{out}"
    );

    // v1 with malformed input: a stray end tag is dropped, an open element closed.
    let out = one(
        json!({"text": ["The </i> house is <b>big"], "source_lang": "EN",
        "target_lang": "ES", "tag_handling": "xml", "tag_handling_version": "v1"}),
    )
    .await?;
    assert_eq!(
        out.split_whitespace().collect::<Vec<_>>().join(" "),
        "La casa es <b>grande</b>"
    );

    // preserve_formatting and split_sentences=nonewlines: surrounding
    // whitespace and line breaks are kept.
    let (code, body) = post_form(
        &api,
        &key,
        &[
            ("text", "  The house is big.\n"),
            ("source_lang", "EN"),
            ("target_lang", "ES"),
            ("preserve_formatting", "1"),
            ("split_sentences", "nonewlines"),
        ],
    )
    .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(texts(&body), ["  La casa es grande.\n"]);
    Ok(())
}

#[tokio::test]
async fn languages_read_their_type_from_a_get_body_as_deepl_clients_send_it() -> Result<()> {
    let mut world = World::new("languages_get_body").await?;
    let key = world.create_key("languages", false).await?;
    let api = world.start_api().await?;
    let codes = |body: &Value| -> Vec<String> {
        body.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|l| l["language"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (_, targets) = get(&api, &key, "/v2/languages?type=target").await?;
    let (_, sources) = get(&api, &key, "/v2/languages").await?;
    assert_ne!(
        codes(&targets),
        codes(&sources),
        "the lists differ (EN-US is a target only)"
    );
    // deepl-python: GET with the form body `type=target`.
    let res = api
        .http
        .get(api.url("/v2/languages"))
        .header("Authorization", format!("DeepL-Auth-Key {key}"))
        .form(&[("type", "target")])
        .send()
        .await?;
    assert_eq!(res.status(), 200);
    assert_eq!(codes(&res.json().await?), codes(&targets));
    // A JSON body too; the query wins over the body.
    let res = api
        .http
        .get(api.url("/v2/languages?type=source"))
        .header("Authorization", format!("DeepL-Auth-Key {key}"))
        .json(&json!({"type": "target"}))
        .send()
        .await?;
    assert_eq!(codes(&res.json().await?), codes(&sources));
    Ok(())
}
