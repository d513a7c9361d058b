//! Text translation (`POST /v2/translate`), languages (`GET /v2/languages`) and
//! usage (`GET /v2/usage`) against a real API process and real Apertium.

use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::support::{Api, World, message, translated_texts};

/// A well-formed glossary id that names no glossary.
const GLOSSARY: &str = "def3a26b-3e84-45b3-84ae-0c0aaf3525f7";
/// A well-formed translation memory id that names none.
const TM: &str = "a74d88fb-ed2a-4943-a664-a4512398b994";

/// A world with a client key and an API process (no worker needed: translation
/// is synchronous).
struct Client {
    world: World,
    api: Api,
    key: String,
    key_id: String,
}

async fn client(tag: &str) -> Result<Client> {
    let mut world = World::new(tag).await?;
    let key = world.create_key("client", false).await?;
    let key_id = key.split_once('.').context("key format")?.0.to_owned();
    let api = world.start_api().await?;
    Ok(Client {
        world,
        api,
        key,
        key_id,
    })
}

/// The texts of the plain JSON request ([`plain_json`]).
const PLAIN_TEXTS: [&str; 3] = ["The house is big.", "I have a dog.", "Good morning"];
/// The text of the XML request ([`xml_tags`]).
const XML_TEXT: &str = "The <b>red</b> car is big.";
/// The text of the HTML request ([`html_v1`]).
const HTML_TEXT: &str = "<p>I have a <i>dog</i>.</p>";
/// The text of the `split_sentences` requests ([`multiline`]).
const MULTILINE: &str = "Good morning\nI have a dog.";

/// JSON, explicit source in lower case, no optional fields, the reporting tag
/// `team-billing`.
async fn plain_json(api: &Api, key: &str) -> Result<(u16, Value)> {
    api.translate(
        key,
        &json!({"text": PLAIN_TEXTS, "source_lang": "en", "target_lang": "es"}),
        Some("team-billing"),
    )
    .await
}

/// Form body, `text` repeated, no source_lang, billed_characters and a model
/// type asked for, and a context (not billed): 40 + 11 billed characters.
async fn form_body(api: &Api, key: &str) -> Result<(u16, Value)> {
    api.post_form(
        key,
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
    .await
}

/// XML tag handling with `prefer_quality_optimized`.
async fn xml_tags(api: &Api, key: &str) -> Result<(u16, Value)> {
    api.translate(
        key,
        &json!({"text": [XML_TEXT], "source_lang": "EN", "target_lang": "ES",
                "tag_handling": "xml", "model_type": "prefer_quality_optimized"}),
        None,
    )
    .await
}

/// HTML with an explicit tag_handling_version (JSON only).
async fn html_v1(api: &Api, key: &str) -> Result<(u16, Value)> {
    api.translate(
        key,
        &json!({"text": [HTML_TEXT], "source_lang": "EN",
            "target_lang": "ES", "tag_handling": "html", "tag_handling_version": "v1"}),
        None,
    )
    .await
}

/// EN → PT-BR, which goes EN → ES → PT-BR: 17 billed characters.
async fn pivot(api: &Api, key: &str) -> Result<(u16, Value)> {
    api.translate(
        key,
        &json!({"text": ["The house is big."], "target_lang": "PT-BR"}),
        None,
    )
    .await
}

/// [`MULTILINE`] from English to Spanish, with `split_sentences` if given.
async fn multiline(api: &Api, key: &str, split_sentences: Option<&str>) -> Result<(u16, Value)> {
    let mut body = json!({"text": [MULTILINE], "source_lang": "EN", "target_lang": "ES"});
    if let Some(split) = split_sentences {
        body["split_sentences"] = json!(split);
    }
    api.translate(key, &body, None).await
}

/// Sends the seven requests above (each must answer 200) and returns the
/// characters they bill.
async fn seven_requests(api: &Api, key: &str) -> Result<i64> {
    for (code, body) in [
        plain_json(api, key).await?,
        form_body(api, key).await?,
        xml_tags(api, key).await?,
        html_v1(api, key).await?,
        pivot(api, key).await?,
        multiline(api, key, None).await?,
        multiline(api, key, Some("0")).await?,
    ] {
        anyhow::ensure!(code == 200, "{code}: {body}");
    }
    let mut billed: i64 = PLAIN_TEXTS.iter().map(|t| t.chars().count() as i64).sum();
    billed += 40 + 11; // the context is not billed
    billed += XML_TEXT.chars().count() as i64;
    billed += HTML_TEXT.chars().count() as i64;
    billed += 17;
    billed += 2 * MULTILINE.chars().count() as i64;
    Ok(billed)
}

/// JSON, explicit source: order kept, source echoed in upper case; no optional fields.
#[tokio::test]
async fn a_json_request_is_translated_in_order_without_optional_fields() -> Result<()> {
    let c = client("translate_json").await?;
    let (code, body) = plain_json(&c.api, &c.key).await?;
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
    Ok(())
}

/// Form body, `text` repeated, no source_lang: the source is detected.
#[tokio::test]
async fn a_form_body_with_repeated_text_is_translated_from_the_detected_source() -> Result<()> {
    let c = client("translate_form").await?;
    let (code, body) = form_body(&c.api, &c.key).await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body);
    assert_eq!(out.len(), 2, "{body}");
    assert!(out[0].contains("house") && out[0].contains("dog"), "{body}");
    assert!(out[1].contains("Good morning"), "{body}");
    let items = body["translations"].as_array().context("translations")?;
    assert_eq!(items[0]["detected_source_language"], "ES", "{body}");
    Ok(())
}

/// Without source_lang, an Italian, a Basque and a Croatian text are
/// recognised (languages only reachable through the added Apertium pairs)
/// and translated.
#[tokio::test]
async fn texts_in_the_added_languages_are_detected_and_translated() -> Result<()> {
    let c = client("translate_detect_more").await?;
    for (text, target, detected) in [
        (
            "I bambini giocano nel giardino dietro la vecchia casa.",
            "ES",
            "IT",
        ),
        (
            "Haurrak etxe zaharraren atzeko lorategian jolasten ari dira.",
            "EN-GB",
            "EU",
        ),
        ("Djeca se igraju u vrtu iza stare kuće.", "EN-GB", "SH"),
    ] {
        let (code, body) = c
            .api
            .translate(
                &c.key,
                &serde_json::json!({"text": [text], "target_lang": target}),
                None,
            )
            .await?;
        assert_eq!(code, 200, "{text}: {body}");
        assert_eq!(
            body["translations"][0]["detected_source_language"], detected,
            "{body}"
        );
        assert_ne!(translated_texts(&body)[0], text, "translated: {body}");
    }
    Ok(())
}

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

/// model_type_used, when a model type is asked for, names the model used.
#[tokio::test]
async fn model_type_used_names_the_model_asked_for() -> Result<()> {
    let c = client("translate_model_type").await?;
    let (code, body) = form_body(&c.api, &c.key).await?;
    assert_eq!(code, 200, "{body}");
    let items = body["translations"].as_array().context("translations")?;
    assert_eq!(items[0]["model_type_used"], "latency_optimized", "{body}");
    let (code, body) = xml_tags(&c.api, &c.key).await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        body["translations"][0]["model_type_used"], "quality_optimized",
        "{body}"
    );
    Ok(())
}

/// Tag handling: the translated words stay inside well-formed <b> tags (v2).
#[tokio::test]
async fn xml_tag_handling_keeps_the_translated_words_inside_their_tags() -> Result<()> {
    let c = client("translate_xml").await?;
    let (code, body) = xml_tags(&c.api, &c.key).await?;
    assert_eq!(code, 200, "{body}");
    let t = &body["translations"][0];
    assert_eq!(t["text"], "El coche <b>rojo</b> es grande.", "{body}");
    assert_eq!(t["tag_handling_version"], "v2", "{body}");
    Ok(())
}

/// html and an explicit tag_handling_version (JSON only), echoed back.
#[tokio::test]
async fn an_explicit_tag_handling_version_is_echoed_back() -> Result<()> {
    let c = client("translate_html_v1").await?;
    let (code, body) = html_v1(&c.api, &c.key).await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        body["translations"][0]["text"], "<p>Tengo un <i>perro</i>.</p>",
        "{body}"
    );
    assert_eq!(body["translations"][0]["tag_handling_version"], "v1");
    Ok(())
}

/// Pivot route (EN → ES → PT-BR) through the same endpoint.
#[tokio::test]
async fn a_pair_without_a_direct_route_is_translated_through_a_pivot() -> Result<()> {
    let c = client("translate_pivot").await?;
    let (code, body) = pivot(&c.api, &c.key).await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(translated_texts(&body), ["A casa é grande."]);
    assert_eq!(body["translations"][0]["detected_source_language"], "EN");
    Ok(())
}

/// split_sentences: "1" (the default) ends a sentence at each line break, so
/// the lines are translated on their own; "0" lets Apertium read the break as
/// a blank (here it joins "morning I" into one clause). Line breaks are kept.
#[tokio::test]
async fn split_sentences_decides_whether_a_line_break_ends_a_sentence() -> Result<()> {
    let c = client("translate_split").await?;
    let (code, body) = multiline(&c.api, &c.key, None).await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(translated_texts(&body), ["Buenos días\nTengo un perro."]);
    let (code, body) = multiline(&c.api, &c.key, Some("0")).await?;
    assert_eq!(code, 200, "{body}");
    let joined = translated_texts(&body).concat();
    assert!(
        joined.starts_with("Buenos días\n") && joined.ends_with("perro."),
        "{body}"
    );
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

/// URLs, e-mail addresses, file paths and placeholders come back verbatim
/// from the engine, in plain text and in XML, while the words around them
/// are translated.
#[tokio::test]
async fn urls_addresses_paths_and_placeholders_pass_through_unchanged() -> Result<()> {
    let mut world = World::new("translate_protected").await?;
    let key = world.create_key("client", false).await?;
    let api = world.start_api().await?;
    let kept = [
        "public-webapps-request@w3.org",
        "https://Example.com/Path?a=1&b=2",
        "/usr/local/etc/tolk.conf",
        "{0}",
        "%s",
    ];
    let text = "Write to public-webapps-request@w3.org or visit https://Example.com/Path?a=1&b=2 and open /usr/local/etc/tolk.conf with {0} and %s.";
    let (code, body) = api
        .translate(
            &key,
            &json!({"text": [text], "source_lang": "EN", "target_lang": "ES"}),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body).concat();
    for k in kept {
        assert!(out.contains(k), "{k} changed: {out}");
    }
    assert!(
        !out.contains("Write to") && !out.contains(" and open"),
        "{out}"
    );

    let xml = "<p>Visit https://Example.com/Path?a=1&amp;b=2 for {name} and <b>the house</b>.</p>";
    let (code, body) = api
        .translate(
            &key,
            &json!({"text": [xml], "source_lang": "EN", "target_lang": "ES", "tag_handling": "xml"}),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body).concat();
    assert!(
        out.contains("https://Example.com/Path?a=1&amp;b=2"),
        "{out}"
    );
    assert!(
        out.contains("{name}") && out.contains("<b>la casa</b>"),
        "{out}"
    );
    Ok(())
}

#[tokio::test]
async fn engine_artefacts_are_repaired_and_marked_or_protected_text_kept() -> Result<()> {
    let c = client("hygiene").await?;
    // Apertium capitalises "sit" and "at" here ("Sienta", "En"); the source
    // has no capital mid-sentence, so those are artefacts.
    let (code, body) = c
        .api
        .en_es(
            &c.key,
            &["Lorem ipsum dolor sit amet, consectetur adipiscing elit at odio."],
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    let text = translated_texts(&body).concat();
    assert!(
        text.contains("elit en odio") && text.contains("sienta"),
        "{text}"
    );
    // Code spans and numbers with units pass through the engine unchanged.
    let src = "Run `Cargo Build` on a 2.4 GHz machine with 16 GB.";
    let (code, body) = c.api.en_es(&c.key, &[src], None).await?;
    assert_eq!(code, 200, "{body}");
    let text = translated_texts(&body).concat();
    for kept in ["`Cargo Build`", "2.4 GHz", "16 GB"] {
        assert!(text.contains(kept), "{kept} in {text}");
    }
    // Text marked with another language than the source stays as it is;
    // text marked with the source language is translated.
    let (code, body) = c
        .api
        .translate(
            &c.key,
            &json!({
                "text": ["<p>The <q lang=\"fr\">maison</q> and <i xml:lang=\"en-GB\">the house</i> are big.</p>"],
                "source_lang": "EN", "target_lang": "ES", "tag_handling": "xml",
            }),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    let text = translated_texts(&body).concat();
    assert!(text.contains("<q lang=\"fr\">maison</q>"), "{text}");
    assert!(text.contains("la casa"), "{text}");
    Ok(())
}

/// Adjacent inline elements keep their own words and order; text between
/// elements stays outside them (HTML and XML, through real Apertium).
#[tokio::test]
async fn adjacent_inline_elements_keep_their_own_words() -> Result<()> {
    let c = client("translate_adjacent_tags").await?;
    for tag_handling in ["html", "xml"] {
        let (code, body) = c
            .api
            .translate(
                &c.key,
                &json!({
                    "text": [
                        "<p>This is <b>bold</b><i>italic</i> text.</p>",
                        "<p><span>This is a sentence split</span><span>across two spans</span></p>",
                        "<p>This is <b>bold</b> and <i>italic</i> text.</p>",
                    ],
                    "source_lang": "EN", "target_lang": "ES", "tag_handling": tag_handling,
                }),
                None,
            )
            .await?;
        assert_eq!(code, 200, "{body}");
        let out = translated_texts(&body);
        // Two elements, each with its own word, one after the other.
        assert!(
            out[0].contains("</b><i>") && !out[0].contains("<b><i>"),
            "{}",
            out[0]
        );
        assert!(!out[0].contains("bolditalic"), "{}", out[0]);
        assert!(
            out[1].contains("</span><span>") && !out[1].contains("<span><span>"),
            "{}",
            out[1]
        );
        assert!(!out[1].contains("splitacross"), "{}", out[1]);
        // "and" (its translation, "e" before "i") between the elements, not inside <i>.
        assert!(out[2].contains("</b> e <i>"), "{}", out[2]);
    }
    Ok(())
}

/// Each text of a request is detected on its own: a mixed-language array is
/// translated text by text and each reports its own language.
#[tokio::test]
async fn each_text_of_a_request_is_detected_on_its_own() -> Result<()> {
    let c = client("translate_detect_each").await?;
    let (code, body) = c
        .api
        .translate(
            &c.key,
            &json!({
                "text": ["Where is the train station, please?", "Bonjour tout le monde, comment allez-vous?"],
                "target_lang": "ES",
            }),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["translations"][0]["detected_source_language"], "EN");
    assert_eq!(body["translations"][1]["detected_source_language"], "FR");
    let out = translated_texts(&body);
    assert!(
        out[0].contains("tren") && out[0].contains("Dónde"),
        "{}",
        out[0]
    );
    assert!(!out[0].contains("Where"), "{}", out[0]);
    assert!(out[1].to_lowercase().contains("mundo"), "{}", out[1]);
    Ok(())
}

/// Short texts are not guessed into a language they are not in, and are never
/// returned untranslated because of a guess.
#[tokio::test]
async fn short_texts_are_detected_and_translated() -> Result<()> {
    let c = client("translate_detect_short").await?;
    for (text, target, detected, expect) in [
        ("Hello", "ES", "EN", "Hola"),
        ("proton beam", "ES", "EN", "protón"),
        ("Hello.\nBye.", "ES", "EN", "Hola"),
        ("Good morning", "CA", "EN", "Bon dia"),
    ] {
        let (code, body) = c
            .api
            .translate(
                &c.key,
                &json!({"text": [text], "target_lang": target}),
                None,
            )
            .await?;
        assert_eq!(code, 200, "{text}: {body}");
        assert_eq!(
            body["translations"][0]["detected_source_language"], detected,
            "{text}: {body}"
        );
        let out = &translated_texts(&body)[0];
        assert!(out.contains(expect), "{text} → {out}");
    }
    // A short text that is in the target language is still returned as it is.
    let (code, body) = c
        .api
        .translate(
            &c.key,
            &json!({"text": ["La casa es muy grande y bonita."], "target_lang": "ES"}),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["translations"][0]["detected_source_language"], "ES");
    assert_eq!(
        translated_texts(&body)[0],
        "La casa es muy grande y bonita."
    );
    Ok(())
}

/// A protected span keeps the whitespace the source had around it, wherever it
/// sits in the segment (plain text and markup).
#[tokio::test]
async fn protected_spans_keep_their_spaces() -> Result<()> {
    let c = client("translate_span_spaces").await?;
    let (code, body) = c
        .api
        .translate(
            &c.key,
            &json!({
                "text": ["Item `1`", "%{count} messages", "Source: https://example.com/docs", "Send it to info@example.com today."],
                "source_lang": "EN", "target_lang": "ES",
            }),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body);
    assert!(out[0].ends_with(" `1`"), "{}", out[0]);
    assert!(out[1].starts_with("%{count} "), "{}", out[1]);
    assert!(out[2].ends_with(": https://example.com/docs"), "{}", out[2]);
    assert!(out[3].contains(" info@example.com "), "{}", out[3]);
    let (code, body) = c
        .api
        .translate(
            &c.key,
            &json!({
                "text": ["<p>Please go to <a href=\"/x\">http://localhost:5000</a> and sign in.</p>"],
                "source_lang": "EN", "target_lang": "ES", "tag_handling": "html",
            }),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    let out = &translated_texts(&body)[0];
    assert!(
        out.contains(" <a href=\"/x\">http://localhost:5000</a> "),
        "{out}"
    );
    Ok(())
}

/// Engine analysis tags never reach the output: French "y" is a pronoun
/// fr-es cannot generate (`<prn>` leaked); strftime codes are placeholders;
/// `mark_unknown` (an extension) marks the words the source dictionary does
/// not know, and without it they are written as in the source.
#[tokio::test]
async fn unknown_words_are_marked_on_request_and_tags_never_leak() -> Result<()> {
    let c = client("translate_unknown").await?;
    let ask = |text: &str, source: &str, extra: Value| {
        let mut body = json!({"text": [text], "source_lang": source, "target_lang": "ES"});
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        body
    };
    // "Y" alone is the pronoun y: the generator has no lemma for it.
    let (code, body) = c
        .api
        .translate(&c.key, &ask("Le chat y dort. Y", "FR", json!({})), None)
        .await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body).concat();
    assert!(!out.contains('<') && !out.contains('>'), "{out}");
    // Date formats pass through as written.
    let (code, body) = c
        .api
        .translate(&c.key, &ask("Le %e %B %Y à %H:%M", "FR", json!({})), None)
        .await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body).concat();
    assert!(out.contains("%e %B %Y") && out.contains("%H:%M"), "{out}");
    // Unknown words: plain without the option, marked with it, in plain
    // text and in markup (never inside a tag or a protected span).
    let src = "The zorblat sings at https://zorblat.example.com today.";
    let (code, body) = c
        .api
        .translate(&c.key, &ask(src, "EN", json!({})), None)
        .await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body).concat();
    assert!(out.contains(" zorblat ") && !out.contains('*'), "{out}");
    let (code, body) = c
        .api
        .translate(&c.key, &ask(src, "EN", json!({"mark_unknown": true})), None)
        .await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body).concat();
    assert!(out.contains("*zorblat "), "{out}");
    assert!(out.contains("https://zorblat.example.com"), "{out}");
    assert_eq!(out.matches('*').count(), 1, "{out}");
    let (code, body) = c
        .api
        .translate(
            &c.key,
            &ask(
                "<p>The <b class=\"zorblat\">zorblat</b> sings.</p>",
                "EN",
                json!({"mark_unknown": "1", "tag_handling": "html"}),
            ),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    let out = translated_texts(&body).concat();
    assert!(out.contains("<b class=\"zorblat\">*zorblat</b>"), "{out}");
    Ok(())
}

/// Reachable languages, honestly: `source_lang` (an extension) narrows the
/// target list to what that source reaches, an unreachable pair's 400 names
/// the sources that reach the target, and docs/language-matrix.md is the
/// matrix these answers make (`TOLK_WRITE_MATRIX=1` writes it anew).
#[tokio::test]
async fn reachable_targets_are_listed_per_source() -> Result<()> {
    let c = client("translate_reachable").await?;
    let codes = |body: &Value| -> Vec<String> {
        body.as_array()
            .map(|a| {
                a.iter()
                    .map(|l| l["language"].as_str().unwrap_or_default().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let (code, body) = c
        .api
        .get(&c.key, "/v2/languages?type=target&source_lang=EN")
        .await?;
    assert_eq!(code, 200, "{body}");
    let from_en = codes(&body);
    assert!(from_en.contains(&"ES".to_owned()) && from_en.contains(&"PT-BR".to_owned()));
    assert!(!from_en.contains(&"NL".to_owned()) && !from_en.contains(&"EN-GB".to_owned()));
    let (code, body) = c
        .api
        .get(&c.key, "/v2/languages?type=target&source_lang=AF")
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(codes(&body), ["NL"]);
    let (code, body) = c
        .api
        .get(&c.key, "/v2/languages?type=target&source_lang=QQ")
        .await?;
    crate::support::error(code, &body, 400, "source_lang");

    let (code, body) = c
        .api
        .translate(
            &c.key,
            &json!({"text": ["The house."], "source_lang": "EN", "target_lang": "NL"}),
            None,
        )
        .await?;
    crate::support::error(code, &body, 400, "NL can be translated from AF");

    // The matrix in the docs is the one the API answers.
    let (_, sources) = c.api.get(&c.key, "/v2/languages?type=source").await?;
    let (_, targets) = c.api.get(&c.key, "/v2/languages?type=target").await?;
    let (sources, targets) = (codes(&sources), codes(&targets));
    let mut matrix = String::from(
        "# Reachable language pairs\n\n\
         Generated by the test `translate::reachable_targets_are_listed_per_source`\n\
         (`TOLK_WRITE_MATRIX=1 cargo test --test e2e reachable_targets`) from\n\
         `GET /v2/languages?type=target&source_lang=XX` with the Apertium pairs\n\
         `scripts/setup.sh` installs: ✓ a route exists (directly or through pivot\n\
         languages, shortest first), · none. Rows are sources, columns targets.\n\n",
    );
    matrix.push_str(&format!("| from \\ to | {} |\n", targets.join(" | ")));
    matrix.push_str(&format!("|---|{}\n", "---|".repeat(targets.len())));
    for s in &sources {
        let (code, body) = c
            .api
            .get(
                &c.key,
                &format!("/v2/languages?type=target&source_lang={s}"),
            )
            .await?;
        assert_eq!(code, 200, "{body}");
        let reach = codes(&body);
        let cells: Vec<&str> = targets
            .iter()
            .map(|t| if reach.contains(t) { "✓" } else { "·" })
            .collect();
        matrix.push_str(&format!("| {s} | {} |\n", cells.join(" | ")));
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/language-matrix.md");
    if std::env::var_os("TOLK_WRITE_MATRIX").is_some() {
        std::fs::write(&path, &matrix)?;
    }
    let written = std::fs::read_to_string(&path).context("docs/language-matrix.md")?;
    assert_eq!(
        written, matrix,
        "docs/language-matrix.md is stale: run TOLK_WRITE_MATRIX=1 cargo test --test e2e reachable_targets"
    );
    Ok(())
}
