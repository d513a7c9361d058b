//! Request validation of the translation operations, in process
//! ([`InProcess`]): each refused request gets the spec's status and a message
//! naming what is wrong; nothing behind the answer runs.

use anyhow::{Context, Result};
use axum::body::Body;
use axum::http::{Method, Request, header};
use serde_json::{Value, json};

use crate::in_process::InProcess;
use crate::support::message;

/// A well-formed glossary id that names no glossary.
const GLOSSARY: &str = "def3a26b-3e84-45b3-84ae-0c0aaf3525f7";
/// A well-formed translation memory id that names none.
const TM: &str = "a74d88fb-ed2a-4943-a664-a4512398b994";

/// `body` sent to `/v2/translate` as JSON must be a 400 whose message holds
/// `says`.
async fn refused(app: &InProcess, body: &Value, says: &str) -> Result<()> {
    let (code, answer) = app.json(Method::POST, "/v2/translate", body).await?;
    assert_eq!(code, 400, "{body} → {answer}");
    assert!(message(&answer).contains(says), "{body} → {answer}");
    Ok(())
}

#[tokio::test]
async fn translate_names_the_field_of_each_invalid_json_option() -> Result<()> {
    let app = InProcess::new("req_translate_json").await?;
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
            // DeepL's wording, which its clients match (`Target language.*formality`).
            "Target language ES does not support formality 'more'",
        ),
        (
            json!({"text": ["The house"], "target_lang": "ES", "formality": "less"}),
            // DeepL's wording, which its clients match (`Target language.*formality`).
            "Target language ES does not support formality 'less'",
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
    for (body, says) in &cases {
        refused(&app, body, says).await?;
    }
    Ok(())
}

#[tokio::test]
async fn translate_names_the_field_of_each_invalid_form_option() -> Result<()> {
    let app = InProcess::new("req_translate_form").await?;
    let (code, body) = app
        .form("/v2/translate", &[("text", "a"), ("glossary_id", "g1")])
        .await?;
    assert_eq!(code, 400);
    assert!(message(&body).contains("'target_lang'"), "{body}");
    let (code, body) = app
        .form(
            "/v2/translate",
            &[("text", "a"), ("target_lang", "ES"), ("glossary_id", "g1")],
        )
        .await?;
    assert_eq!(code, 400);
    assert!(message(&body).contains("'glossary_id'"), "{body}");
    // Form glossary_ids: comma-separated and repeated count together.
    let (code, body) = app
        .form(
            "/v2/translate",
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
    Ok(())
}

/// deepl-node sends `custom_instructions`, `style_id` and
/// `tag_handling_version` in form bodies: they are read as in JSON (an unknown
/// style list is then a 404, not a refusal of the field).
#[tokio::test]
async fn translate_reads_deepl_node_form_fields() -> Result<()> {
    let app = InProcess::new("req_translate_form_fields").await?;
    let (code, body) = app
        .form(
            "/v2/translate",
            &[
                ("text", "The house"),
                ("target_lang", "ES"),
                ("source_lang", "EN"),
                ("tag_handling", "xml"),
                ("tag_handling_version", "v2"),
            ],
        )
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["translations"][0]["tag_handling_version"], "v2");
    let (code, body) = app
        .form(
            "/v2/translate",
            &[("text", "a"), ("target_lang", "ES"), ("style_id", GLOSSARY)],
        )
        .await?;
    assert_eq!(code, 404, "{body}");
    assert!(message(&body).starts_with("Style rule list"), "{body}");
    let (code, body) = app
        .form(
            "/v2/translate",
            &[
                ("text", "a"),
                ("target_lang", "PT-BR"),
                ("custom_instructions", "Be brief."),
            ],
        )
        .await?;
    assert_eq!(code, 400, "{body}");
    assert!(message(&body).contains("PT-BR"), "{body}");
    Ok(())
}

/// A v3 glossary may be created without dictionaries, and gets them later.
#[tokio::test]
async fn a_v3_glossary_is_created_without_dictionaries() -> Result<()> {
    let app = InProcess::new("req_glossary_empty").await?;
    let (code, body) = app
        .json(
            Method::POST,
            "/v3/glossaries",
            &json!({"name": "Later", "dictionaries": []}),
        )
        .await?;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["dictionaries"], json!([]));
    let (code, body) = app
        .json(
            Method::POST,
            "/v3/glossaries",
            &json!({"name": "Later too"}),
        )
        .await?;
    assert_eq!(code, 201, "{body}");
    Ok(())
}

#[tokio::test]
async fn translate_answers_404_for_customisations_that_do_not_exist() -> Result<()> {
    let app = InProcess::new("req_translate_404").await?;
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
        let (code, answer) = app.json(Method::POST, "/v2/translate", &body).await?;
        assert_eq!(code, 404, "{body} → {answer}");
        assert!(message(&answer).starts_with(what), "{answer}");
    }
    Ok(())
}

#[tokio::test]
async fn translate_without_a_key_is_a_403() -> Result<()> {
    let app = InProcess::new("req_translate_403").await?;
    let req = Request::post("/v2/translate")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(r#"{"text":["a"],"target_lang":"ES"}"#))?;
    let (code, body) = app.send(req).await?;
    assert_eq!(code, 403, "{body}");
    let (code, _) = app
        .send(Request::get("/v2/languages").body(Body::empty())?)
        .await?;
    assert_eq!(code, 403);
    Ok(())
}

#[tokio::test]
async fn a_request_uri_over_8_kib_is_a_414() -> Result<()> {
    let app = InProcess::new("req_414").await?;
    let path = format!("/v2/translate?x={}", "a".repeat(9000));
    let (code, body) = app
        .json(
            Method::POST,
            &path,
            &json!({"text": ["a"], "target_lang": "ES"}),
        )
        .await?;
    assert_eq!(code, 414);
    assert!(message(&body).contains("URI too long"), "{body}");
    Ok(())
}

#[tokio::test]
async fn a_translate_body_over_128_kib_is_a_413() -> Result<()> {
    let app = InProcess::new("req_413").await?;
    let skeleton = json!({"target_lang": "ES", "text": [""]}).to_string();
    let pad = 128 * 1024 + 1 - skeleton.len();
    let big = json!({"target_lang": "ES", "text": ["a".repeat(pad)]});
    assert_eq!(big.to_string().len(), 128 * 1024 + 1);
    let (code, body) = app.json(Method::POST, "/v2/translate", &big).await?;
    assert_eq!(code, 413);
    assert!(message(&body).contains("too large"), "{body}");
    Ok(())
}

#[tokio::test]
async fn a_reporting_tag_over_100_characters_is_a_400() -> Result<()> {
    let app = InProcess::new("req_tag").await?;
    let req = app
        .keyed(Method::POST, "/v2/translate")
        .header(header::CONTENT_TYPE, "application/json")
        .header("X-DeepL-Reporting-Tag", "t".repeat(101))
        .body(Body::from(r#"{"text":["a"],"target_lang":"ES"}"#))?;
    let (code, body) = app.send(req).await?;
    assert_eq!(code, 400);
    assert!(message(&body).contains("X-DeepL-Reporting-Tag"), "{body}");
    Ok(())
}

/// The `language` codes of a language list.
fn codes(list: &Value) -> Vec<String> {
    list.as_array()
        .map(|a| {
            a.iter()
                .map(|l| l["language"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn source_languages_are_listed_without_formality() -> Result<()> {
    let app = InProcess::new("req_sources").await?;
    let (code, sources) = app.get("/v2/languages").await?;
    assert_eq!(code, 200, "{sources}");
    let (_, explicit) = app.get("/v2/languages?type=source").await?;
    assert_eq!(sources, explicit);
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
    Ok(())
}

#[tokio::test]
async fn target_languages_are_listed_with_their_variants() -> Result<()> {
    let app = InProcess::new("req_targets").await?;
    let (code, targets) = app.get("/v2/languages?type=target").await?;
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
    let (code, body) = app.get("/v2/languages?type=bogus").await?;
    assert_eq!(code, 400);
    assert!(message(&body).contains("'type'"), "{body}");
    Ok(())
}

#[tokio::test]
async fn a_target_that_is_a_variant_of_the_source_returns_the_text() -> Result<()> {
    let app = InProcess::new("req_same_variant").await?;
    let req = |body: Value| {
        app.keyed(Method::POST, "/v2/translate")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
    };
    let (code, body) = app
        .send(req(json!({"text": ["The colour of the house."], "source_lang": "EN", "target_lang": "EN-US"}))?)
        .await?;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["translations"][0]["text"], "The colour of the house.");
    assert_eq!(body["translations"][0]["detected_source_language"], "EN");
    // The same language without a variant is still refused.
    let (code, body) = app
        .send(req(
            json!({"text": ["La casa."], "source_lang": "ES", "target_lang": "ES"}),
        )?)
        .await?;
    assert_eq!(code, 400, "{body}");
    Ok(())
}

/// The kernel's count of connections dropped because a listen queue was full
/// (`TcpExt: ListenOverflows` of /proc/net/netstat).
fn listen_overflows() -> anyhow::Result<u64> {
    let netstat = std::fs::read_to_string("/proc/net/netstat")?;
    let mut lines = netstat.lines().filter(|l| l.starts_with("TcpExt:"));
    let (names, values) = (lines.next(), lines.next());
    let (Some(names), Some(values)) = (names, values) else {
        anyhow::bail!("no TcpExt counters in /proc/net/netstat");
    };
    names
        .split_whitespace()
        .zip(values.split_whitespace())
        .find(|(n, _)| *n == "ListenOverflows")
        .and_then(|(_, v)| v.parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no ListenOverflows counter"))
}

/// A thousand clients connecting at once are all answered, none dropped by
/// a full listen queue (the kernel's ListenOverflows counter stays put): the
/// API listens with a backlog that holds them (`TOLK_LISTEN_BACKLOG`, 4096).
#[tokio::test]
async fn a_thousand_simultaneous_connections_are_all_answered() -> anyhow::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut world = crate::support::World::new("backlog").await?;
    let (api, _pid) = world.start_api_process().await?;
    let overflows = listen_overflows()?;
    let addr = api.direct.trim_start_matches("http://").to_owned();
    let clients = 1000;
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(clients));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..clients {
        let (addr, start) = (addr.clone(), start.clone());
        tasks.spawn(async move {
            start.wait().await;
            let mut stream = tokio::net::TcpStream::connect(&addr).await?;
            stream
                .write_all(b"GET /healthz HTTP/1.1\r\nHost: tolk\r\nConnection: close\r\n\r\n")
                .await?;
            let mut answer = Vec::new();
            stream.read_to_end(&mut answer).await?;
            Ok::<bool, std::io::Error>(answer.starts_with(b"HTTP/1.1 200"))
        });
    }
    let (mut answered, mut failed) = (0, Vec::new());
    while let Some(joined) = tasks.join_next().await {
        match joined? {
            Ok(true) => answered += 1,
            Ok(false) => failed.push("not 200".to_owned()),
            Err(e) => failed.push(e.to_string()),
        }
    }
    assert!(
        failed.is_empty(),
        "{answered} answered, failed: {:?}",
        &failed[..failed.len().min(5)]
    );
    assert_eq!(answered, clients);
    assert_eq!(listen_overflows()?, overflows, "connections were dropped");
    Ok(())
}
