//! Text translation (`POST /v2/translate`), languages (`GET /v2/languages`) and
//! usage (`GET /v2/usage`) against a real API process and real Apertium.

use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::support::{World, message, translated_texts};

/// A well-formed glossary id that names no glossary.
const GLOSSARY: &str = "def3a26b-3e84-45b3-84ae-0c0aaf3525f7";
/// A well-formed translation memory id that names none.
const TM: &str = "a74d88fb-ed2a-4943-a664-a4512398b994";

#[tokio::test]
async fn translate_json_and_form_bodies_usage_and_reporting_tags() -> Result<()> {
    let mut world = World::new("translate").await?;
    let key = world.create_key("client", false).await?;
    let key_id = key.split_once('.').context("key format")?.0.to_owned();
    let api = world.start_api().await?; // no worker needed: translation is synchronous

    // JSON, explicit source: order kept, source echoed in upper case; no optional fields.
    let texts_in = ["The house is big.", "I have a dog.", "Good morning"];
    let (code, body) = api
        .translate(
            &key,
            &json!({"text": texts_in, "source_lang": "en", "target_lang": "es"}),
            Some("team-billing"),
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        translated_texts(&body),
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
    let (code, body) = api
        .post_form(
            &key,
            "/v2/translate",
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
    let out = translated_texts(&body);
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
    let (code, body) = api.translate(&key,
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
    let (code, body) = api
        .translate(
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
    let (code, body) = api
        .translate(
            &key,
            &json!({"text": ["The house is big."], "target_lang": "PT-BR"}),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(translated_texts(&body), ["A casa é grande."]);
    assert_eq!(body["translations"][0]["detected_source_language"], "EN");
    billed += 17;

    // split_sentences: "1" (the default) ends a sentence at each line break, so
    // the lines are translated on their own; "0" lets Apertium read the break as
    // a blank (here it joins "morning I" into one clause). Line breaks are kept.
    let multiline = "Good morning\nI have a dog.";
    let (code, body) = api
        .translate(
            &key,
            &json!({"text": [multiline], "source_lang": "EN", "target_lang": "ES"}),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(translated_texts(&body), ["Buenos días\nTengo un perro."]);
    let (code, body) = api
        .translate(
            &key,
            &json!({"text": [multiline], "source_lang": "EN", "target_lang": "ES",
                "split_sentences": "0"}),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    let joined = translated_texts(&body).concat();
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
    let (code, body) = api.get(&key, "/v2/usage").await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["character_count"], billed, "{body}");
    assert_eq!(body["character_limit"], 1_000_000_000_000_i64, "{body}");

    // A key limit: the request that would exceed it is refused (456), unbilled.
    sqlx::query("UPDATE api_keys SET character_limit = $2 WHERE key_id = $1")
        .bind(&key_id)
        .bind(billed + 5)
        .execute(&db)
        .await?;
    let (code, body) = api
        .translate(
            &key,
            &json!({"text": ["Ten chars!"], "target_lang": "ES"}),
            None,
        )
        .await?;
    assert_eq!(code, 456, "{body}");
    assert!(message(&body).contains("Quota"), "{body}");
    let (_, body) = api.get(&key, "/v2/usage").await?;
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
            let (code, answer) = api.translate(key, &body, None).await?;
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
    let (code, body) = api
        .post_form(
            &key,
            "/v2/translate",
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
    assert_eq!(translated_texts(&body), ["  La casa es grande.\n"]);
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
    let (_, targets) = api.get(&key, "/v2/languages?type=target").await?;
    let (_, sources) = api.get(&key, "/v2/languages").await?;
    assert_ne!(
        codes(&targets),
        codes(&sources),
        "the lists differ (EN-US is a target only)"
    );
    // deepl-python: GET with the form body `type=target`.
    let res = api
        .keyed(reqwest::Method::GET, "/v2/languages", &key)
        .form(&[("type", "target")])
        .send()
        .await?;
    assert_eq!(res.status(), 200);
    assert_eq!(codes(&res.json().await?), codes(&targets));
    // A JSON body too; the query wins over the body.
    let res = api
        .keyed(reqwest::Method::GET, "/v2/languages?type=source", &key)
        .json(&json!({"type": "target"}))
        .send()
        .await?;
    assert_eq!(codes(&res.json().await?), codes(&sources));
    Ok(())
}
