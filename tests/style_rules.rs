//! Style rule lists (`/v3/style_rules`): CRUD with custom instructions, every
//! 400/404, the language matching of `style_id`, the deterministic rules in
//! `/v2/translate` and document output, and the rules handed to the
//! OpenAI-compatible and DeepL-wire upstreams (stand-in HTTP servers).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{Api, Seen, World, call, echo_upstream, error};

/// A world with a key and an API process.
async fn client(tag: &str) -> Result<(World, Api, String)> {
    let mut world = World::new(tag).await?;
    let key = world.create_key("s", false).await?;
    let api = world.start_api().await?;
    Ok((world, api, key))
}

/// Creates "House style" (en-GB, curly apostrophes, one custom instruction);
/// returns the created list, failing on a non-201.
async fn create_house_style(api: &Api, key: &str) -> Result<Value> {
    let (code, l) = call(
        api,
        key,
        Method::POST,
        "/v3/style_rules",
        Some(&json!({
            "name": "House style",
            "language": "EN-gb",
            "configured_rules": {"punctuation": {"apostrophe": "use_curly_apostrophes"}},
            "custom_instructions": [
                {"label": "Currency", "prompt": "Put currency symbols before amounts.", "source_language": "de"}
            ]
        })),
    )
    .await?;
    anyhow::ensure!(code == 201, "create answered {code}: {l}");
    Ok(l)
}

/// The list's `style_id` and its first custom instruction's id.
fn ids(l: &Value) -> (String, String) {
    (
        l["style_id"].as_str().unwrap_or_default().to_owned(),
        l["custom_instructions"][0]["id"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

/// Created, changed (each change bumps the version), its custom instructions
/// added, replaced and deleted, and the list deleted.
#[tokio::test]
async fn a_style_rule_list_lives_from_creation_to_deletion() -> Result<()> {
    let (_world, api, key) = client("style_lifecycle").await?;
    let l = create_house_style(&api, &key).await?;
    assert_eq!(l["language"], "en-GB");
    assert_eq!(l["version"], 1);
    assert_eq!(l["name"], "House style");
    assert_eq!(
        l["configured_rules"],
        json!({"punctuation": {"apostrophe": "use_curly_apostrophes"}})
    );
    assert_eq!(l["custom_instructions"][0]["source_language"], "de");
    assert!(
        l["creation_time"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    let (id, first_instruction) = ids(&l);

    // Rename, replace the rules: each change bumps the version.
    let (code, l) = call(
        &api,
        &key,
        Method::PATCH,
        &format!("/v3/style_rules/{id}"),
        Some(&json!({"name": "Renamed"})),
    )
    .await?;
    assert_eq!(
        (code, l["name"].as_str(), l["version"].as_i64()),
        (200, Some("Renamed"), Some(2))
    );
    let (code, l) = call(
        &api,
        &key,
        Method::PUT,
        &format!("/v3/style_rules/{id}/configured_rules"),
        Some(&json!({"numbers": {"decimal_separator": "use_comma_as_decimal_separator"}})),
    )
    .await?;
    assert_eq!(code, 200, "{l}");
    assert_eq!(
        l["configured_rules"],
        json!({"numbers": {"decimal_separator": "use_comma_as_decimal_separator"}})
    );
    assert_eq!(l["version"], 3);

    // Custom instructions.
    let base = format!("/v3/style_rules/{id}/custom_instructions");
    let (code, ci) = call(
        &api,
        &key,
        Method::POST,
        &base,
        Some(&json!({"label": "Tone", "prompt": "Be friendly."})),
    )
    .await?;
    assert_eq!(code, 201, "{ci}");
    let ci_id = ci["id"].as_str().unwrap_or_default().to_owned();
    let (code, got) = call(&api, &key, Method::GET, &format!("{base}/{ci_id}"), None).await?;
    assert_eq!((code, got["prompt"].as_str()), (200, Some("Be friendly.")));
    let (code, got) = call(
        &api,
        &key,
        Method::PUT,
        &format!("{base}/{ci_id}"),
        Some(&json!({"label": "Tone", "prompt": "Be formal."})),
    )
    .await?;
    assert_eq!(
        (code, got["prompt"].as_str(), got["id"].as_str()),
        (200, Some("Be formal."), Some(ci_id.as_str()))
    );
    let (code, _) = call(
        &api,
        &key,
        Method::DELETE,
        &format!("{base}/{first_instruction}"),
        None,
    )
    .await?;
    assert_eq!(code, 204);
    let (_, l) = call(
        &api,
        &key,
        Method::GET,
        &format!("/v3/style_rules/{id}"),
        None,
    )
    .await?;
    assert_eq!(
        l["custom_instructions"].as_array().map(Vec::len),
        Some(1),
        "{l}"
    );
    assert_eq!(l["version"], 6, "{l}");

    let (code, _) = call(
        &api,
        &key,
        Method::DELETE,
        &format!("/v3/style_rules/{id}"),
        None,
    )
    .await?;
    assert_eq!(code, 204);
    let (code, e) = call(
        &api,
        &key,
        Method::GET,
        &format!("/v3/style_rules/{id}"),
        None,
    )
    .await?;
    error(code, &e, 404, "not found");
    Ok(())
}

/// Paging, and the configured rules only in the detailed listing.
#[tokio::test]
async fn style_rule_lists_are_paged_with_details_on_request() -> Result<()> {
    let (_world, api, key) = client("style_paging").await?;
    create_house_style(&api, &key).await?;
    for n in 0..3 {
        let (code, b) = call(
            &api,
            &key,
            Method::POST,
            "/v3/style_rules",
            Some(&json!({"name": format!("list {n}"), "language": "de"})),
        )
        .await?;
        assert_eq!(code, 201, "{b}");
    }
    let (code, page) = call(
        &api,
        &key,
        Method::GET,
        "/v3/style_rules?page=1&page_size=3",
        None,
    )
    .await?;
    assert_eq!(code, 200, "{page}");
    let items = page["style_rules"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 1, "{page}");
    assert!(items[0].get("configured_rules").is_none(), "{page}");
    let (_, page) = call(
        &api,
        &key,
        Method::GET,
        "/v3/style_rules?detailed=true",
        None,
    )
    .await?;
    assert_eq!(page["style_rules"].as_array().map(Vec::len), Some(4));
    assert!(
        page["style_rules"][0]["configured_rules"].is_object(),
        "{page}"
    );
    Ok(())
}

/// 400s, each with a message naming the fault.
#[tokio::test]
async fn invalid_style_rule_requests_are_refused_naming_the_fault() -> Result<()> {
    let (_world, api, key) = client("style_400").await?;
    let (id, _) = ids(&create_house_style(&api, &key).await?);
    let base = format!("/v3/style_rules/{id}/custom_instructions");
    for (body, needle) in [
        (json!({"language": "en"}), "'name'"),
        (json!({"name": "x"}), "'language'"),
        (json!({"name": "x", "language": "pt"}), "'language'"),
        (
            json!({"name": "x", "language": "en", "configured_rules": {"colours": {}}}),
            "'colours'",
        ),
        (
            json!({"name": "x", "language": "en", "configured_rules": {"numbers": {"decimal_separator": "dots"}}}),
            "'dots'",
        ),
        (
            json!({"name": "x", "language": "en", "configured_rules": {"numbers": {"no_such_rule": "x"}}}),
            "'no_such_rule'",
        ),
        (
            json!({"name": "x", "language": "en", "custom_instructions": [{"label": "l"}]}),
            "'prompt'",
        ),
        (
            json!({"name": "x", "language": "en", "custom_instructions": [{"label": "l", "prompt": "p".repeat(301)}]}),
            "300",
        ),
        (json!({"name": "", "language": "en"}), "'name'"),
    ] {
        let (code, e) = call(&api, &key, Method::POST, "/v3/style_rules", Some(&body)).await?;
        error(code, &e, 400, needle);
    }
    let (code, e) = call(
        &api,
        &key,
        Method::POST,
        &base,
        Some(&json!({"label": "l".repeat(101), "prompt": "p"})),
    )
    .await?;
    error(code, &e, 400, "100");
    let (code, e) = call(
        &api,
        &key,
        Method::GET,
        "/v3/style_rules?page_size=26",
        None,
    )
    .await?;
    error(code, &e, 400, "'page_size'");
    let (code, e) = call(
        &api,
        &key,
        Method::PUT,
        &format!("/v3/style_rules/{id}/configured_rules"),
        Some(&json!({"punctuation": {"apostrophe": "sometimes"}})),
    )
    .await?;
    error(code, &e, 400, "'sometimes'");
    let res = api
        .keyed(reqwest::Method::POST, "/v3/style_rules", &key)
        .form(&[("name", "x"), ("language", "en")])
        .send()
        .await?;
    let code = res.status().as_u16();
    let e: Value = res.json().await?;
    error(code, &e, 400, "JSON");
    Ok(())
}

/// 404s: unknown or malformed list ids, unknown or deleted instructions.
#[tokio::test]
async fn unknown_style_rule_lists_and_instructions_are_not_found() -> Result<()> {
    let (_world, api, key) = client("style_404").await?;
    let (id, first_instruction) = ids(&create_house_style(&api, &key).await?);
    let base = format!("/v3/style_rules/{id}/custom_instructions");
    let (code, e) = call(
        &api,
        &key,
        Method::DELETE,
        &format!("{base}/{first_instruction}"),
        None,
    )
    .await?;
    anyhow::ensure!(code == 204, "deleting the instruction answered {code}: {e}");
    let unknown = "6f1c0f59-2a55-4b43-9e55-9b4f4c1b3f00";
    for (method, path) in [
        (Method::GET, format!("/v3/style_rules/{unknown}")),
        (Method::GET, "/v3/style_rules/not-a-uuid".to_owned()),
        (Method::DELETE, format!("/v3/style_rules/{unknown}")),
        (Method::GET, format!("{base}/{unknown}")),
        (Method::DELETE, format!("{base}/{first_instruction}")),
    ] {
        let (code, e) = call(&api, &key, method, &path, None).await?;
        error(code, &e, 404, "not found");
    }
    let (code, e) = call(
        &api,
        &key,
        Method::PATCH,
        &format!("/v3/style_rules/{unknown}"),
        Some(&json!({"name": "n"})),
    )
    .await?;
    error(code, &e, 404, "not found");
    Ok(())
}

/// Another organization sees none of it.
#[tokio::test]
async fn another_organization_sees_no_style_rule_lists() -> Result<()> {
    let (world, api, key) = client("style_other_org").await?;
    let (id, _) = ids(&create_house_style(&api, &key).await?);
    let other = world.create_key_in("other-org").await?;
    let (code, e) = call(
        &api,
        &other,
        Method::GET,
        &format!("/v3/style_rules/{id}"),
        None,
    )
    .await?;
    error(code, &e, 404, "not found");
    let (code, e) = call(
        &api,
        &other,
        Method::DELETE,
        &format!("/v3/style_rules/{id}"),
        None,
    )
    .await?;
    error(code, &e, 404, "not found");
    let (code, page) = call(&api, &other, Method::GET, "/v3/style_rules", None).await?;
    assert_eq!(
        (code, page["style_rules"].as_array().map(Vec::len)),
        (200, Some(0))
    );
    let (code, e) = api
        .translate(
            &other,
            &json!({"text": ["a"], "source_lang": "ES", "target_lang": "EN-GB", "style_id": id}),
            None,
        )
        .await?;
    error(code, &e, 404, "Style rule list");
    Ok(())
}

async fn create_list(api: &Api, key: &str, language: &str, rules: Value) -> Result<String> {
    let (code, l) = call(
        api,
        key,
        Method::POST,
        "/v3/style_rules",
        Some(&json!({"name": language, "language": language, "configured_rules": rules})),
    )
    .await?;
    assert_eq!(code, 201, "{l}");
    Ok(l["style_id"].as_str().unwrap_or_default().to_owned())
}

fn text(res: &Value) -> String {
    res["translations"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A world with an API, a worker and a key, for a test named `name`.
async fn style_world(name: &str) -> Result<(World, Api, String)> {
    let mut world = World::new(name).await?;
    let key = world.create_key("s", false).await?;
    let api = world.start_api().await?;
    world.start_worker("w")?;
    Ok((world, api, key))
}

/// The Spanish list: decimal comma, guillemets, dd/mm/yyyy.
async fn spanish_list(api: &Api, key: &str) -> Result<String> {
    create_list(
        api,
        key,
        "es",
        json!({
            "numbers": {"decimal_separator": "use_comma_as_decimal_separator"},
            "punctuation": {"quotation_mark": "use_guillemets"},
            "dates_and_times": {"date_format": "use_dd_slash_mm_slash_yyyy_with_leading_zeros_for_single_digit_days_and_months"}
        }),
    )
    .await
}

/// The French list: regular spaces and guillemets.
async fn french_list(api: &Api, key: &str) -> Result<String> {
    create_list(
        api,
        key,
        "fr",
        json!({"punctuation": {"spacing_and_punctuation": "use_regular_space", "quotation_mark": "use_guillemets"}}),
    )
    .await
}

/// Without a list Apertium keeps the English number and quotes; with the
/// Spanish list numbers, quotes and dates follow it; with markup only
/// character data changes.
#[tokio::test]
async fn a_style_list_rewrites_numbers_quotes_and_dates() -> Result<()> {
    let (_world, api, key) = style_world("style_rules_text").await?;
    let es = spanish_list(&api, &key).await?;
    let src = "The cat weighs 3.5 kilos and says \"hello\" on 2024-3-5.";
    let (code, plain) = api
        .translate(
            &key,
            &json!({"text": [src], "source_lang": "EN", "target_lang": "ES"}),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{plain}");
    assert!(text(&plain).contains("3.5"), "{plain}");

    let (code, res) = api
        .translate(
            &key,
            &json!({"text": [src], "source_lang": "EN", "target_lang": "ES", "style_id": es}),
            None,
        )
        .await?;
    assert_eq!(code, 200, "{res}");
    let t = text(&res);
    assert!(t.contains("3,5") && !t.contains("3.5"), "{t}");
    assert!(
        t.contains('«') && t.contains('»') && !t.contains('"'),
        "{t}"
    );
    assert!(t.contains("05/03/2024"), "{t}");

    // With markup only character data changes.
    let (code, res) = api.translate(&key, &json!({"text": ["<p title=\"a 1.5 \">It costs <b>2.5</b> euros.</p>"], "source_lang": "EN",
               "target_lang": "ES", "style_id": es, "tag_handling": "xml"}), None)
    .await?;
    assert_eq!(code, 200, "{res}");
    let t = text(&res);
    assert!(
        t.contains("title=\"a 1.5 \"") && t.contains("<b>2,5</b>"),
        "{t}"
    );
    Ok(())
}

/// French spacing rules apply to a translation made through the pivot
/// (EN → ES → FR).
#[tokio::test]
async fn french_spacing_applies_through_the_pivot() -> Result<()> {
    let (_world, api, key) = style_world("style_rules_french").await?;
    let fr = french_list(&api, &key).await?;
    let (code, res) = api.translate(&key, &json!({"text": ["Where is the cat? Here!"], "source_lang": "EN", "target_lang": "FR", "style_id": fr}), None)
    .await?;
    assert_eq!(code, 200, "{res}");
    let t = text(&res);
    assert!(t.contains("\u{a0}?") && t.contains("\u{a0}!"), "{t:?}");
    Ok(())
}

/// A list for a root language covers every variant; a list for a variant
/// only itself, and any other target is refused.
#[tokio::test]
async fn a_root_list_covers_every_variant_and_a_variant_list_only_itself() -> Result<()> {
    let (_world, api, key) = style_world("style_rules_variants").await?;
    let en = create_list(
        &api,
        &key,
        "en",
        json!({"punctuation": {"ellipsis": "use_ellipsis_character"}}),
    )
    .await?;
    let en_us = create_list(&api, &key, "en-US", json!({})).await?;
    let en_gb = create_list(&api, &key, "en-GB", json!({})).await?;
    let es = spanish_list(&api, &key).await?;
    for (list, target, want) in [
        (&en, "EN-US", 200),
        (&en, "EN-GB", 200),
        (&en_us, "EN-US", 200),
        (&en_gb, "EN-US", 400),
        (&en_us, "EN-GB", 400),
        (&es, "EN-US", 400),
    ] {
        let (code, res) = api.translate(&key, &json!({"text": ["El gato duerme..."], "source_lang": "ES", "target_lang": target, "style_id": list}), None)
        .await?;
        assert_eq!(code, want, "{list} → {target}: {res}");
        if want == 400 {
            error(code, &res, 400, "does not match target_lang");
        } else if list == &en {
            assert!(text(&res).contains('\u{2026}'), "{res}");
        }
    }
    Ok(())
}

/// An unknown list is 404, a malformed id 400; a form's `style_id` reads as
/// in JSON (deepl-node sends forms).
#[tokio::test]
async fn unknown_or_malformed_style_ids_are_refused_and_forms_read_like_json() -> Result<()> {
    let (_world, api, key) = style_world("style_rules_ids").await?;
    let es = spanish_list(&api, &key).await?;
    let (code, e) = api.translate(&key, &json!({"text": ["a"], "target_lang": "ES", "source_lang": "EN", "style_id": "6f1c0f59-2a55-4b43-9e55-9b4f4c1b3f00"}), None)
    .await?;
    error(code, &e, 404, "Style rule list");
    let (code, e) = api
        .translate(
            &key,
            &json!({"text": ["a"], "target_lang": "ES", "style_id": "nope"}),
            None,
        )
        .await?;
    error(code, &e, 400, "'style_id'");
    // deepl-node sends style_id in a form: read as in JSON.
    let (code, e) = api
        .post_form(
            &key,
            "/v2/translate",
            &[
                ("text", "The house"),
                ("source_lang", "EN"),
                ("target_lang", "ES"),
                ("style_id", es.as_str()),
            ],
        )
        .await?;
    assert_eq!(code, 200, "{e}");
    assert!(!text(&e).is_empty(), "{e}");
    Ok(())
}

/// A document job applies the list to its result and keeps its id on the
/// row; a list for another language or an unknown one is refused at upload.
#[tokio::test]
async fn document_jobs_apply_the_list_and_refuse_mismatched_ones() -> Result<()> {
    let (world, api, key) = style_world("style_rules_docs").await?;
    let es = spanish_list(&api, &key).await?;
    let fr = french_list(&api, &key).await?;
    let (id, dk) = api
        .upload_ok(
            &key,
            "prices.txt",
            b"The cat weighs 3.5 kilos.\n".to_vec(),
            &[
                ("target_lang", "ES"),
                ("source_lang", "EN"),
                ("style_id", es.as_str()),
            ],
        )
        .await?;
    let st = api.wait(&key, &id, &dk, Duration::from_secs(60)).await?;
    assert_eq!(st.status, "done", "{:?}", st.body);
    let (_, _, bytes) = api.download(&key, &id, &dk).await?;
    let out = String::from_utf8(bytes)?;
    assert!(out.contains("3,5"), "{out}");
    let db = world.db().await?;
    let stored: Option<uuid::Uuid> =
        sqlx::query_scalar("SELECT style_id FROM documents WHERE id = $1")
            .bind(&id)
            .fetch_one(&db)
            .await?;
    assert_eq!(stored.map(|u| u.to_string()), Some(es.clone()));

    let (code, e) = api
        .upload(
            &key,
            "a.txt",
            b"x".to_vec(),
            &[("target_lang", "ES"), ("style_id", fr.as_str())],
        )
        .await?;
    error(code, &e, 400, "does not match target_lang");
    let (code, e) = api
        .upload(
            &key,
            "a.txt",
            b"x".to_vec(),
            &[
                ("target_lang", "ES"),
                ("style_id", "6f1c0f59-2a55-4b43-9e55-9b4f4c1b3f00"),
            ],
        )
        .await?;
    error(code, &e, 404, "Style rule list");
    Ok(())
}

/// The list reaches the OpenAI-compatible upstream's prompt and the DeepL-wire
/// upstream's custom instructions; the deterministic rules apply after both.
#[tokio::test]
async fn style_rules_reach_upstream_engines() -> Result<()> {
    let seen: Seen = Arc::default();
    let url = echo_upstream(seen.clone()).await?;
    for engine in ["openai", "deepl"] {
        let mut world = World::new(&format!("style_{engine}")).await?;
        let key = world.create_key("s", false).await?;
        world.use_echo_upstream(engine, &url, "EN:FR");
        let api = world.start_api().await?;
        let (code, l) = call(
            &api,
            &key,
            Method::POST,
            "/v3/style_rules",
            Some(&json!({"name": "fr", "language": "fr",
                "configured_rules": {"punctuation": {"spacing_and_punctuation": "use_regular_space"},
                                     "spelling_and_grammar": {"contractions": "do_not_use_contractions"}},
                "custom_instructions": [{"label": "t", "prompt": "Address the reader formally."}]})),
        )
        .await?;
        assert_eq!(code, 201, "{l}");
        seen.lock().map_err(|_| anyhow::anyhow!("lock"))?.clear();
        let (code, res) = api.translate(&key, &json!({"text": ["Ready? Go!"], "source_lang": "EN", "target_lang": "FR", "style_id": l["style_id"]}), None)
        .await?;
        assert_eq!(code, 200, "{engine}: {res}");
        assert_eq!(text(&res), "Ready\u{a0}? Go\u{a0}!", "{engine}");
        let sent = seen.lock().map_err(|_| anyhow::anyhow!("lock"))?.clone();
        let sent = serde_json::to_string(&sent)?;
        assert!(
            sent.contains("Address the reader formally."),
            "{engine}: {sent}"
        );
        assert!(sent.contains("do not use contractions"), "{engine}: {sent}");
    }
    Ok(())
}

/// `PATCH /v3/style_rules/{id}` takes `name` as optional, as documented:
/// without it the list is answered as it is.
#[tokio::test]
async fn a_patch_without_a_name_leaves_the_list_as_it_is() -> Result<()> {
    let mut world = World::new("style_patch_empty").await?;
    let key = world.create_key("style-patch", false).await?;
    let api = world.start_api().await?;
    let (code, created) = call(
        &api,
        &key,
        Method::POST,
        "/v3/style_rules",
        Some(&json!({"name": "House style", "language": "de"})),
    )
    .await?;
    assert_eq!(code, 201, "{created}");
    let id = created["style_id"].as_str().unwrap_or_default().to_owned();
    let (code, same) = call(
        &api,
        &key,
        Method::PATCH,
        &format!("/v3/style_rules/{id}"),
        Some(&json!({})),
    )
    .await?;
    assert_eq!(code, 200, "{same}");
    assert_eq!(same["name"], "House style");
    assert_eq!(same["version"], created["version"]);
    let (code, _) = call(
        &api,
        &key,
        Method::PATCH,
        &format!("/v3/style_rules/{id}"),
        Some(&json!({"name": "  "})),
    )
    .await?;
    assert_eq!(code, 400);
    Ok(())
}
