//! Text translation (`POST /v2/translate`), languages (`GET /v2/languages`) and
//! usage (`GET /v2/usage`) against a real API process and real Apertium.

mod billing;
mod markup;
mod text;

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
