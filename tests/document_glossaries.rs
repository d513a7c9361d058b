//! Glossaries in document jobs (txt, html, docx) and in `/v2/translate`,
//! through every engine: Apertium, a DeepL-wire upstream and an
//! OpenAI-compatible upstream (stand-in HTTP servers that echo their input,
//! so the output shows exactly what Tolk did around the engine). Wherever a
//! source term is in the input, its target term must be in the output.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{Api, Seen, World, call, echo_upstream, error, python};

const MAKE_DOCX: &str = r#"
import sys, docx
d = docx.Document()
d.sections[0].header.paragraphs[0].text = "The cat report"
p = d.add_paragraph("The ")
p.add_run("cat").bold = True
p.add_run(" sleeps in the house.")
d.add_paragraph("My cat and your cat.")
t = d.add_table(rows=1, cols=1)
t.cell(0, 0).text = "A black cat."
d.save(sys.argv[1])
"#;

const READ_DOCX: &str = r#"
import sys, json, docx
d = docx.Document(sys.argv[1])
print(json.dumps({
  "paragraphs": [p.text for p in d.paragraphs],
  "bold": [r.text for p in d.paragraphs for r in p.runs if r.bold],
  "cells": [c.text for t in d.tables for row in t.rows for c in row.cells],
  "header": [p.text for p in d.sections[0].header.paragraphs],
}))
"#;

/// Uploads, waits, downloads; returns the result bytes.
async fn translate_document(
    api: &Api,
    key: &str,
    name: &str,
    data: Vec<u8>,
    fields: &[(&str, &str)],
) -> Result<Vec<u8>> {
    let (id, dk) = api.upload_ok(key, name, data, fields).await?;
    let st = api.wait(key, &id, &dk, Duration::from_secs(90)).await?;
    assert_eq!(st.status, "done", "{name}: {:?}", st.body);
    let (code, _, bytes) = api.download(key, &id, &dk).await?;
    assert_eq!(code, 200);
    Ok(bytes)
}

/// Translates a txt, an html and a docx with `glossary` and checks that
/// every "cat" became `term` (and nothing of the wrapper is left).
async fn documents_with_glossary(
    world: &World,
    api: &Api,
    key: &str,
    fields: &[(&str, &str)],
    term: &str,
) -> Result<()> {
    let txt = translate_document(
        api,
        key,
        "a.txt",
        b"The cat sleeps.\nMy cat eats & drinks.\n".to_vec(),
        fields,
    )
    .await?;
    let txt = String::from_utf8(txt)?;
    assert_eq!(txt.matches(term).count(), 2, "{txt}");
    assert!(!txt.contains("tolk") && txt.contains('&'), "{txt}");

    let html = translate_document(
        api,
        key,
        "a.html",
        b"<html><body><p title=\"A cat\">The <b>cat</b> sleeps.</p><p>A cat &amp; a dog.</p></body></html>"
            .to_vec(),
        fields,
    )
    .await?;
    let html = String::from_utf8(html)?;
    // The title attribute is text too (the html filter translates it).
    assert_eq!(html.matches(term).count(), 3, "{html}");
    assert!(
        html.contains(&format!("<b>{term}</b>")) && html.contains("&amp;"),
        "{html}"
    );
    assert!(!html.contains("tolk"), "{html}");

    let path = world.path("in.docx");
    python(MAKE_DOCX, &[&path]).await?;
    let docx = translate_document(api, key, "a.docx", std::fs::read(&path)?, fields).await?;
    let out = world.path("out.docx");
    std::fs::write(&out, docx)?;
    let v: Value = serde_json::from_str(&python(READ_DOCX, &[&out]).await?)?;
    let all = v.to_string();
    assert_eq!(all.matches(term).count(), 6, "{v}");
    assert_eq!(v["bold"][0], term, "{v}");
    assert!(!all.contains("tolk"), "{v}");
    Ok(())
}

/// A world with an API and a key (the worker is started by each test).
async fn glossary_world(name: &str) -> Result<(World, Api, String)> {
    let mut world = World::new(name).await?;
    let key = world.create_key("g", false).await?;
    let api = world.start_api().await?;
    Ok((world, api, key))
}

/// Creates a glossary through `path` (`/v2/glossaries` or
/// `/v3/glossaries`); its id.
async fn create_glossary(api: &Api, key: &str, path: &str, body: Value) -> Result<String> {
    let (code, g) = call(api, key, Method::POST, path, Some(&body)).await?;
    anyhow::ensure!(code == 201, "{g}");
    Ok(g["glossary_id"].as_str().unwrap_or_default().to_owned())
}

/// The glossary of cats and houses (v3).
async fn pets(api: &Api, key: &str) -> Result<String> {
    create_glossary(
        api,
        key,
        "/v3/glossaries",
        json!({"name": "pets", "dictionaries": [
            {"source_lang": "en", "target_lang": "es", "entries": "cat\tmichi\nhouse\tcasona"}]}),
    )
    .await
}

/// The glossary of reports (v2).
async fn reports(api: &Api, key: &str) -> Result<String> {
    create_glossary(
        api,
        key,
        "/v2/glossaries",
        json!({"name": "more", "source_lang": "en", "target_lang": "es", "entries": "report\tdossier"}),
    )
    .await
}

/// A glossary deleted after the upload, before a worker runs the job: the
/// document fails with a message (the worker loads the entries); a new
/// upload naming it is refused with 404.
#[tokio::test]
async fn a_glossary_deleted_before_its_job_runs_fails_the_document() -> Result<()> {
    let (mut world, api, key) = glossary_world("docgloss_gone").await?;
    let id3 = create_glossary(
        &api,
        &key,
        "/v2/glossaries",
        json!({"name": "gone", "source_lang": "en", "target_lang": "es", "entries": "dog\tchucho"}),
    )
    .await?;
    let (gone_doc, gone_key) = api
        .upload_ok(
            &key,
            "d.txt",
            b"dog".to_vec(),
            &[
                ("source_lang", "EN"),
                ("target_lang", "ES"),
                ("glossary_id", id3.as_str()),
            ],
        )
        .await?;
    let (code, _) = call(
        &api,
        &key,
        Method::DELETE,
        &format!("/v2/glossaries/{id3}"),
        None,
    )
    .await?;
    assert_eq!(code, 204);
    world.start_worker("w")?;
    let st = api
        .wait(&key, &gone_doc, &gone_key, Duration::from_secs(60))
        .await?;
    assert_eq!(st.status, "error", "{:?}", st.body);
    assert!(
        st.body["error_message"]
            .as_str()
            .unwrap_or_default()
            .contains("no longer exists"),
        "{:?}",
        st.body
    );
    let (code, e) = api
        .upload(
            &key,
            "d.txt",
            b"dog".to_vec(),
            &[
                ("source_lang", "EN"),
                ("target_lang", "ES"),
                ("glossary_id", id3.as_str()),
            ],
        )
        .await?;
    error(code, &e, 404, "not found");
    Ok(())
}

/// A glossary applies to a txt, an html and a docx job through Apertium:
/// every "cat" becomes its term.
#[tokio::test]
async fn a_glossary_applies_to_text_html_and_word_documents() -> Result<()> {
    let (mut world, api, key) = glossary_world("docgloss_formats").await?;
    world.start_worker("w")?;
    let id = pets(&api, &key).await?;
    documents_with_glossary(
        &world,
        &api,
        &key,
        &[
            ("source_lang", "EN"),
            ("target_lang", "ES"),
            ("glossary_id", id.as_str()),
        ],
        "michi",
    )
    .await
}

/// `glossary_ids`, comma-separated: both glossaries apply, and both are
/// stored on the document's row.
#[tokio::test]
async fn several_glossary_ids_all_apply_and_are_stored() -> Result<()> {
    let (mut world, api, key) = glossary_world("docgloss_ids").await?;
    world.start_worker("w")?;
    let (id, id2) = (pets(&api, &key).await?, reports(&api, &key).await?);
    let both = format!("{id},{id2}");
    let (doc, dk) = api
        .upload_ok(
            &key,
            "b.txt",
            b"The cat report of the house.".to_vec(),
            &[
                ("source_lang", "EN"),
                ("target_lang", "ES"),
                ("glossary_ids", both.as_str()),
            ],
        )
        .await?;
    let st = api.wait(&key, &doc, &dk, Duration::from_secs(60)).await?;
    assert_eq!(st.status, "done", "{:?}", st.body);
    let (_, _, bytes) = api.download(&key, &doc, &dk).await?;
    let out = String::from_utf8(bytes)?;
    assert!(
        out.contains("michi") && out.contains("dossier") && out.contains("casona"),
        "{out}"
    );
    let db = world.db().await?;
    let stored: Vec<uuid::Uuid> =
        sqlx::query_scalar("SELECT glossary_ids FROM documents WHERE id = $1")
            .bind(&doc)
            .fetch_one(&db)
            .await?;
    assert_eq!(
        stored.iter().map(ToString::to_string).collect::<Vec<_>>(),
        [id.clone(), id2.clone()]
    );
    Ok(())
}

/// Glossary fields a document upload cannot take are refused, each with a
/// JSON message: no source language, an unknown or malformed id, a pair
/// the glossary lacks, both fields at once, more than five ids.
#[tokio::test]
async fn bad_glossary_fields_of_an_upload_are_refused() -> Result<()> {
    let (_world, api, key) = glossary_world("docgloss_bad").await?;
    let (id, id2) = (pets(&api, &key).await?, reports(&api, &key).await?);
    let unknown = "6f1c0f59-2a55-4b43-9e55-9b4f4c1b3f00";
    for (fields, want, needle) in [
        (
            vec![("target_lang", "ES"), ("glossary_id", id.as_str())],
            400,
            "'source_lang'",
        ),
        (
            vec![
                ("source_lang", "EN"),
                ("target_lang", "ES"),
                ("glossary_id", unknown),
            ],
            404,
            "not found",
        ),
        (
            vec![
                ("source_lang", "EN"),
                ("target_lang", "CA"),
                ("glossary_id", id.as_str()),
            ],
            400,
            "No dictionary found for language pair",
        ),
        (
            vec![
                ("source_lang", "EN"),
                ("target_lang", "ES"),
                ("glossary_id", "x1"),
            ],
            400,
            "'glossary_id'",
        ),
        (
            vec![
                ("source_lang", "EN"),
                ("target_lang", "ES"),
                ("glossary_id", id.as_str()),
                ("glossary_ids", id2.as_str()),
            ],
            400,
            "cannot be combined",
        ),
    ] {
        let (code, e) = api.upload(&key, "c.txt", b"cat".to_vec(), &fields).await?;
        error(code, &e, want, needle);
    }
    let six = [id.as_str(); 6].join(",");
    let (code, e) = api
        .upload(
            &key,
            "c.txt",
            b"cat".to_vec(),
            &[
                ("source_lang", "EN"),
                ("target_lang", "ES"),
                ("glossary_ids", six.as_str()),
            ],
        )
        .await?;
    error(code, &e, 400, "at most 5");
    Ok(())
}

/// `/v2/translate` and documents through the DeepL-wire and the
/// OpenAI-compatible upstreams: the engine never sees the source term, and
/// the target term is in the output wherever the source term was.
#[tokio::test]
async fn glossaries_through_upstream_engines() -> Result<()> {
    let seen: Seen = Arc::default();
    let url = echo_upstream(seen.clone()).await?;
    for engine in ["deepl", "openai"] {
        let mut world = World::new(&format!("docgloss_{engine}")).await?;
        let key = world.create_key("g", false).await?;
        world.use_echo_upstream(engine, &url, "EN:DE");
        let api = world.start_api().await?;
        world.start_worker(engine)?;
        let (code, g) = call(
            &api,
            &key,
            Method::POST,
            "/v3/glossaries",
            Some(&json!({"name": "de", "dictionaries": [
                {"source_lang": "en", "target_lang": "de", "entries": "cat\tKatze\nNew York\tNeu-York"}]})),
        )
        .await?;
        assert_eq!(code, 201, "{g}");
        let id = g["glossary_id"].as_str().unwrap_or_default().to_owned();
        seen.lock().map_err(|_| anyhow::anyhow!("lock"))?.clear();

        // Text: plain and XML.
        let (code, res) = call(
            &api,
            &key,
            Method::POST,
            "/v2/translate",
            Some(&json!({"text": ["The cat in New York.", "CAT & Cat"], "source_lang": "EN", "target_lang": "DE", "glossary_id": id})),
        )
        .await?;
        assert_eq!(code, 200, "{engine}: {res}");
        assert_eq!(
            res["translations"][0]["text"], "The Katze in Neu-York.",
            "{engine}: {res}"
        );
        assert_eq!(
            res["translations"][1]["text"], "KATZE & Katze",
            "{engine}: {res}"
        );
        let (code, res) = call(
            &api,
            &key,
            Method::POST,
            "/v2/translate",
            Some(
                &json!({"text": ["<p>My <b>cat</b></p>"], "source_lang": "EN", "target_lang": "DE",
                         "glossary_ids": [id], "tag_handling": "xml"}),
            ),
        )
        .await?;
        assert_eq!(code, 200, "{engine}: {res}");
        assert_eq!(
            res["translations"][0]["text"], "<p>My <b>Katze</b></p>",
            "{engine}: {res}"
        );

        documents_with_glossary(
            &world,
            &api,
            &key,
            &[
                ("source_lang", "EN"),
                ("target_lang", "DE"),
                ("glossary_id", id.as_str()),
            ],
            "Katze",
        )
        .await?;
        let sent = serde_json::to_string(&*seen.lock().map_err(|_| anyhow::anyhow!("lock"))?)?;
        assert!(
            !sent.is_empty() && sent != "[]",
            "{engine}: nothing reached the upstream"
        );
        assert!(
            !sent.contains("cat") && !sent.contains("New York"),
            "{engine}: a source term reached the engine: {sent}"
        );
    }
    Ok(())
}
