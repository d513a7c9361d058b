//! Document translation end to end: upload → poll → download, per format.

use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::Value;

use crate::support::{World, python};

const MAKE_DOCX: &str = r#"
import sys, docx
from docx.oxml.shared import OxmlElement, qn
from docx.opc.constants import RELATIONSHIP_TYPE as RT
d = docx.Document()
d.sections[0].header.paragraphs[0].text = "The annual report of the company"
p = d.add_paragraph("The dog runs in the park. ")
p.add_run("The cat sleeps").bold = True
p.add_run(" and ")
p.add_run("the bird sings").italic = True
p.add_run(".")
q = d.add_paragraph("Read more on ")
r_id = q.part.relate_to("http://example.com/", RT.HYPERLINK, is_external=True)
h = OxmlElement("w:hyperlink"); h.set(qn("r:id"), r_id)
r = OxmlElement("w:r"); t = OxmlElement("w:t"); t.text = "the website"; r.append(t); h.append(r)
q._p.append(h)
t = d.add_table(rows=2, cols=2)
t.cell(0, 0).text = "The house is big."
t.cell(0, 1).text = "The water is cold."
t.cell(1, 0).text = "The city has many people."
t.cell(1, 1).text = "The tree is green."
d.save(sys.argv[1])
"#;

const READ_DOCX: &str = r#"
import sys, json, docx
from docx.oxml.ns import qn
def lang(run):
    mark = run._r.find(qn("w:rPr") + "/" + qn("w:lang"))
    return "" if mark is None else mark.get(qn("w:val"))
d = docx.Document(sys.argv[1])
out = {
  "paragraphs": [p.text for p in d.paragraphs],
  "bold": [r.text for p in d.paragraphs for r in p.runs if r.bold],
  "italic": [r.text for p in d.paragraphs for r in p.runs if r.italic],
  "cells": [c.text for t in d.tables for row in t.rows for c in row.cells],
  "header": [p.text for p in d.sections[0].header.paragraphs],
  "hyperlinks": len(d.element.body.findall(".//{http://schemas.openxmlformats.org/wordprocessingml/2006/main}hyperlink")),
  "hyperlink_text": ["".join(t.text or "" for t in h.iter("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}t")) for h in d.element.body.iter("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}hyperlink")],
  "languages": sorted({lang(r) for p in d.paragraphs for r in p.runs if r.text}),
}
print(json.dumps(out))
"#;

/// A world with an API, one worker and an API key, for a test named `name`.
pub(crate) async fn platform(name: &str) -> Result<(World, crate::support::Api, String)> {
    let mut world = World::new(name).await?;
    let key = world.create_key(name, false).await?;
    let api = world.start_api().await?;
    world.start_worker("a")?;
    Ok((world, api, key))
}

/// Builds the test docx and returns its bytes.
pub async fn make_docx(world: &World, name: &str) -> Result<Vec<u8>> {
    let path = world.path(name);
    python(MAKE_DOCX, &[&path]).await?;
    Ok(std::fs::read(path)?)
}

async fn read_docx(world: &World, bytes: &[u8]) -> Result<Value> {
    let path = world.path("result.docx");
    std::fs::write(&path, bytes)?;
    Ok(serde_json::from_str(&python(READ_DOCX, &[&path]).await?)?)
}

fn joined(v: &Value) -> String {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str())
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn docx_translates_keeping_runs_table_header_and_hyperlink() -> Result<()> {
    let (world, api, key) = platform("docx").await?;
    let docx = make_docx(&world, "source.docx").await?;
    let before = read_docx(&world, &docx).await?;
    assert_eq!(before["bold"][0], "The cat sleeps");

    let (id, doc_key) = api
        .upload_ok(
            &key,
            "report.docx",
            docx,
            &[("target_lang", "ES"), ("source_lang", "EN")],
        )
        .await?;
    assert_eq!(id.len(), 32);
    assert_eq!(doc_key.len(), 64);
    assert!(
        id.chars()
            .chain(doc_key.chars())
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
    );

    let st = api
        .wait(&key, &id, &doc_key, Duration::from_secs(120))
        .await?;
    assert_eq!(st.status, "done", "{}", st.body);
    let billed = st.body["billed_characters"].as_i64().unwrap_or(0);
    assert!(billed > 100, "billed_characters {billed}");

    let (code, headers, bytes) = api.download(&key, &id, &doc_key).await?;
    assert_eq!(code, 200);
    assert_eq!(
        headers["content-type"],
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    );
    assert!(
        headers["content-disposition"]
            .to_str()?
            .contains("report.docx")
    );
    let after = read_docx(&world, &bytes).await?;
    let text = joined(&after["paragraphs"]).to_lowercase();
    assert!(text.contains("perro"), "no Spanish in {text}");
    assert!(!text.contains("the dog runs"), "English left in {text}");
    // Formatting runs survived, now around Spanish words.
    let bold = joined(&after["bold"]).to_lowercase();
    assert!(
        bold.contains("gato"),
        "bold run lost or not translated: {after}"
    );
    let italic = joined(&after["italic"]).to_lowercase();
    assert!(
        !italic.is_empty() && !italic.contains("bird"),
        "italic run: {after}"
    );
    // Translated runs are marked Spanish for spell checkers.
    assert_eq!(after["languages"], serde_json::json!(["es"]), "{after}");
    // Table, header and hyperlink are still there, translated.
    let cells = joined(&after["cells"]).to_lowercase();
    assert_eq!(after["cells"].as_array().map(Vec::len), Some(4));
    assert!(cells.contains("casa"), "table not translated: {cells}");
    let header = joined(&after["header"]).to_lowercase();
    assert!(
        header.contains("informe") || header.contains("compañía") || header.contains("empresa"),
        "header: {header}"
    );
    assert_eq!(after["hyperlinks"], 1, "{after}");
    assert!(!joined(&after["hyperlink_text"]).is_empty());

    // Downloadable once only.
    let (again, _, _) = api.download(&key, &id, &doc_key).await?;
    assert_eq!(again, 404);

    // Usage recorded once, as document_translation_characters.
    let db = world.db().await?;
    let (kind, amount): (String, i64) =
        sqlx::query_as("SELECT kind, amount FROM usage_events WHERE document_id = $1")
            .bind(&id)
            .fetch_one(&db)
            .await?;
    assert_eq!(kind, "document_translation_characters");
    assert_eq!(amount, billed);
    Ok(())
}

#[tokio::test]
async fn html_and_txt_translate_and_keep_markup() -> Result<()> {
    let (_world, api, key) = platform("html").await?;

    let html = r#"<!DOCTYPE html><html><head><title>The house</title></head><body>
<h1>The big dog</h1><p>The cat <b>sleeps</b> in the house.</p>
<img src="a.png" alt="The green tree"><script>var x = "The dog";</script></body></html>"#;
    let (id, dk) = api
        .upload_ok(
            &key,
            "page.html",
            html.as_bytes().to_vec(),
            &[("target_lang", "ES"), ("source_lang", "EN")],
        )
        .await?;
    let txt = "The dog runs in the park.\n\nThe cat sleeps in the house.\n";
    let (tid, tdk) = api
        .upload_ok(
            &key,
            "notes.txt",
            txt.as_bytes().to_vec(),
            &[("target_lang", "ES")],
        )
        .await?;

    let st = api.wait(&key, &id, &dk, Duration::from_secs(120)).await?;
    assert_eq!(st.status, "done", "{}", st.body);
    let (code, headers, bytes) = api.download(&key, &id, &dk).await?;
    assert_eq!(code, 200);
    assert!(headers["content-type"].to_str()?.starts_with("text/html"));
    let out = String::from_utf8(bytes)?;
    let lower = out.to_lowercase();
    assert!(lower.contains("perro"), "{out}");
    assert!(lower.contains("<b>"), "inline markup lost: {out}");
    assert!(lower.contains("<h1>") && lower.contains("<img"), "{out}");
    assert!(
        out.contains(r#"var x = "The dog";"#),
        "script must stay untouched: {out}"
    );
    assert!(
        !out.contains(r#"alt="The green tree""#),
        "alt not translated: {out}"
    );

    // txt without source_lang: the source language is detected.
    let st = api.wait(&key, &tid, &tdk, Duration::from_secs(120)).await?;
    assert_eq!(st.status, "done", "{}", st.body);
    let (_, headers, bytes) = api.download(&key, &tid, &tdk).await?;
    assert!(headers["content-type"].to_str()?.starts_with("text/plain"));
    let out = String::from_utf8(bytes)?;
    assert!(out.to_lowercase().contains("perro"), "{out}");
    assert_eq!(
        out.matches('\n').count(),
        txt.matches('\n').count(),
        "line structure: {out:?}"
    );
    Ok(())
}

#[tokio::test]
async fn english_to_portuguese_goes_through_the_spanish_pivot() -> Result<()> {
    let (_world, api, key) = platform("pivot").await?;
    let (id, dk) = api
        .upload_ok(
            &key,
            "a.txt",
            b"The dog runs in the park. The house is big.".to_vec(),
            &[("target_lang", "PT-PT"), ("source_lang", "EN")],
        )
        .await?;
    let st = api.wait(&key, &id, &dk, Duration::from_secs(120)).await?;
    assert_eq!(st.status, "done", "{}", st.body);
    let (_, _, bytes) = api.download(&key, &id, &dk).await?;
    let out = String::from_utf8(bytes)?.to_lowercase();
    // Portuguese, not Spanish: "cão" (dog) / "casa é grande"; Spanish would say "perro"/"es".
    assert!(out.contains("cão") || out.contains("parque"), "{out}");
    assert!(
        !out.contains("perro") && !out.contains(" es "),
        "still Spanish: {out}"
    );
    Ok(())
}

#[tokio::test]
async fn corrupt_documents_end_in_error_and_the_worker_goes_on() -> Result<()> {
    let (world, api, key) = platform("corrupt").await?;
    let good = super::documents::make_docx(&world, "good.docx").await?;
    let truncated = good[..good.len() / 2].to_vec();
    let not_docx = {
        let mut buf = std::io::Cursor::new(Vec::new());
        let mut zip = zip::ZipWriter::new(&mut buf);
        zip.start_file("hello.txt", zip::write::SimpleFileOptions::default())?;
        std::io::Write::write_all(&mut zip, b"not a word document")?;
        zip.finish()?;
        buf.into_inner()
    };
    let (t_id, t_key) = api
        .upload_ok(
            &key,
            "broken.docx",
            truncated,
            &[("target_lang", "ES"), ("source_lang", "EN")],
        )
        .await?;
    let (z_id, z_key) = api
        .upload_ok(
            &key,
            "other.docx",
            not_docx,
            &[("target_lang", "ES"), ("source_lang", "EN")],
        )
        .await?;
    let (g_id, g_key) = api
        .upload_ok(
            &key,
            "good.docx",
            good,
            &[("target_lang", "ES"), ("source_lang", "EN")],
        )
        .await?;

    for (id, dk) in [(&t_id, &t_key), (&z_id, &z_key)] {
        let st = api.wait(&key, id, dk, Duration::from_secs(60)).await?;
        assert_eq!(st.status, "error", "{}", st.body);
        let msg = st.body["error_message"]
            .as_str()
            .unwrap_or_default()
            .to_lowercase();
        assert!(
            msg.contains("docx") || msg.contains("zip"),
            "unclear message: {msg}"
        );
        // The result of a failed document is not downloadable.
        let (code, _, _) = api.download(&key, id, dk).await?;
        assert_ne!(code, 200);
    }
    let st = api
        .wait(&key, &g_id, &g_key, Duration::from_secs(120))
        .await?;
    assert_eq!(st.status, "done", "{}", st.body);

    // Same source and target: an error that says so.
    let (s_id, s_key) = api
        .upload_ok(
            &key,
            "same.txt",
            b"The dog runs.".to_vec(),
            &[("target_lang", "EN-GB"), ("source_lang", "EN")],
        )
        .await?;
    let st = api
        .wait(&key, &s_id, &s_key, Duration::from_secs(60))
        .await?;
    assert_eq!(st.status, "error");
    assert!(
        st.body["error_message"]
            .as_str()
            .unwrap_or_default()
            .contains("same"),
        "{}",
        st.body
    );
    Ok(())
}

/// `formats/testdata/make_pptx.py` (python-pptx) with `args`.
async fn make_pptx(args: &[&std::path::Path]) -> Result<String> {
    testdata_script("make_pptx.py", args).await
}

/// Uploads `data` as `name` with `fields`, waits for it to be done and
/// downloads it: (the Content-Type, the bytes).
pub(crate) async fn translated(
    api: &crate::support::Api,
    key: &str,
    name: &str,
    data: Vec<u8>,
    fields: &[(&str, &str)],
) -> Result<(String, Vec<u8>)> {
    let (id, dk) = api.upload_ok(key, name, data, fields).await?;
    let st = api.wait(key, &id, &dk, Duration::from_secs(120)).await?;
    anyhow::ensure!(st.status == "done", "{name}: {}", st.body);
    let (code, headers, bytes) = api.download(key, &id, &dk).await?;
    anyhow::ensure!(code == 200, "{name}: download answered {code}");
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    Ok((content_type, bytes))
}

/// `formats/testdata/{script}` (the formats' own test documents) with `args`.
async fn testdata_script(script: &str, args: &[&std::path::Path]) -> Result<String> {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("formats/testdata")
        .join(script);
    let mut all = vec![script.as_path()];
    all.extend_from_slice(args);
    python(
        "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')",
        &all,
    )
    .await
}

/// Runs python-docx marked with another language than the document's
/// `source_lang` (a French phrase, a German paragraph) come back as written;
/// text marked with a variant of the source language is translated.
#[tokio::test]
async fn docx_runs_in_another_language_are_kept() -> Result<()> {
    let (world, api, key) = platform("docx_lang").await?;
    let dir = world.path("fixtures");
    testdata_script("make_docx.py", &[&dir]).await?;
    let (_, bytes) = translated(
        &api,
        &key,
        "languages.docx",
        std::fs::read(dir.join("languages.docx"))?,
        &[("target_lang", "ES"), ("source_lang", "EN")],
    )
    .await?;
    let read = read_docx(&world, &bytes).await?;
    let paragraphs: Vec<&str> = read["paragraphs"]
        .as_array()
        .context("paragraphs")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(paragraphs.len(), 3, "{paragraphs:?}");
    assert!(
        paragraphs[0].contains("joie de vivre") && paragraphs[0].contains("casa"),
        "{paragraphs:?}"
    );
    assert_eq!(paragraphs[1], "Das Haus ist groß.");
    assert!(paragraphs[2].contains("rojo"), "{paragraphs:?}");
    Ok(())
}

/// A Word file far larger than the filter's chunks (2,400 paragraphs, about
/// 1 MB of XML) goes through the worker a chunk at a time: every paragraph
/// comes back translated and in its place (python-docx reads it back), the
/// language detected on a sample of its first text (none is given), and the
/// characters billed are all of its text.
#[tokio::test]
async fn a_large_docx_is_translated_chunk_by_chunk() -> Result<()> {
    const PARAGRAPHS: usize = 2_400;
    let (world, api, key) = platform("docx_large").await?;
    let path = world.path("large.docx");
    python(
        r#"
import sys, docx
d = docx.Document()
for i in range(int(sys.argv[2])):
    p = d.add_paragraph(f"The dog runs in the park number {i}. ")
    p.add_run("The cat sleeps").bold = True
    p.add_run(" in the house.")
d.save(sys.argv[1])
"#,
        &[&path, std::path::Path::new(&PARAGRAPHS.to_string())],
    )
    .await?;
    let source = std::fs::read(&path)?;
    let (id, doc_key) = api
        .upload_ok(&key, "large.docx", source, &[("target_lang", "ES")])
        .await?;
    let st = api
        .wait(&key, &id, &doc_key, Duration::from_secs(300))
        .await?;
    assert_eq!(st.status, "done", "{}", st.body);
    let (code, _, bytes) = api.download(&key, &id, &doc_key).await?;
    assert_eq!(code, 200);
    let read = read_docx(&world, &bytes).await?;
    let paragraphs: Vec<&str> = read["paragraphs"]
        .as_array()
        .context("paragraphs")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(paragraphs.len(), PARAGRAPHS);
    for (i, paragraph) in paragraphs.iter().enumerate() {
        assert!(
            paragraph.contains("perro") && paragraph.contains(&format!(" {i}.")),
            "paragraph {i}: {paragraph}"
        );
    }
    assert_eq!(read["bold"].as_array().map(Vec::len), Some(PARAGRAPHS));
    let text: usize = (0..PARAGRAPHS)
        .map(|i| format!("The dog runs in the park number {i}. The cat sleeps in the house.").len())
        .sum();
    // The properties' description (python-docx's own) is billed too.
    let billed = st.body["billed_characters"].as_u64().unwrap_or(0) as usize;
    let description = "generated by python-docx".len();
    assert_eq!(billed, text + description, "{}", st.body);
    Ok(())
}

/// An RTF file LibreOffice wrote from a Word file (runs, a hyperlink, a
/// table, a header, Cyrillic and Greek text) comes back in Spanish, read by
/// LibreOffice; the text in other scripts is written back in their code
/// pages or as Unicode escapes and read as it was.
#[tokio::test]
async fn rtf_from_libreoffice_is_translated_and_libreoffice_reads_it() -> Result<()> {
    let (world, api, key) = platform("rtf").await?;
    let docx = world.path("scripts.docx");
    testdata_script("make_rtf_source.py", &[&docx]).await?;
    let out = world.path("rtf");
    soffice(&world, "rtf", &out, &docx).await?;
    let (content_type, bytes) = translated(
        &api,
        &key,
        "scripts.rtf",
        std::fs::read(out.join("scripts.rtf"))?,
        &[("target_lang", "ES"), ("source_lang", "EN")],
    )
    .await?;
    assert_eq!(content_type, "application/rtf");
    let result = world.path("result.rtf");
    std::fs::write(&result, &bytes)?;
    let txt = world.path("txt");
    soffice(&world, "txt:Text", &txt, &result).await?;
    let text = std::fs::read_to_string(txt.join("result.txt"))?;
    for expected in ["casa", "agua", "Привет, мир", "Καλημέρα", "crème brûlée"]
    {
        assert!(text.contains(expected), "{expected:?} in {text}");
    }
    assert!(!text.contains("The house is big"), "{text}");
    Ok(())
}

/// An InDesign package (written from the IDML specification: no free tool
/// writes one) comes back with its stories in Spanish, read by Python's
/// zipfile and xml.dom: the same paragraphs, breaks, table cells and
/// footnote, `mimetype` still first and stored, every other entry as it was.
#[tokio::test]
async fn idml_stories_are_translated_and_the_package_kept() -> Result<()> {
    let (world, api, key) = platform("idml").await?;
    let source = world.path("book.idml");
    testdata_script("make_idml.py", &[std::path::Path::new("write"), &source]).await?;
    let (content_type, bytes) = translated(
        &api,
        &key,
        "book.idml",
        std::fs::read(&source)?,
        &[("target_lang", "ES"), ("source_lang", "EN")],
    )
    .await?;
    assert_eq!(content_type, "application/vnd.adobe.indesign-idml-package");
    let result = world.path("result.idml");
    std::fs::write(&result, &bytes)?;
    let read = |path: &std::path::Path| {
        let path = path.to_owned();
        async move {
            let out =
                testdata_script("make_idml.py", &[std::path::Path::new("read"), &path]).await?;
            anyhow::Ok(serde_json::from_str::<Value>(&out)?)
        }
    };
    let (before, after) = (read(&source).await?, read(&result).await?);
    assert_eq!(after["first"], serde_json::json!(["mimetype", true]));
    assert_eq!(after["entries"], before["entries"]);
    let story = &after["stories"]["Stories/Story_u1.xml"];
    let paragraphs = joined(&story["paragraphs"]);
    assert!(paragraphs.contains("informe anual"), "{paragraphs}");
    assert!(paragraphs.contains("perro"), "{paragraphs}");
    assert!(joined(&story["cells"]).contains("agua"), "{story}");
    assert!(joined(&story["footnotes"]).contains("nota"), "{story}");
    assert_eq!(
        story["counts"]["Br"],
        before["stories"]["Stories/Story_u1.xml"]["counts"]["Br"]
    );
    assert_eq!(story["special"], 2);
    assert!(
        joined(&after["stories"]["Stories/Story_u2.xml"]["paragraphs"]).contains("casa"),
        "{after}"
    );
    Ok(())
}

/// A FrameMaker MIF file comes back with its paragraphs — text flow, table
/// cell, footnote — in Spanish, read by a Python reader of its own
/// (`formats/testdata/read_mif.py`), every statement still there.
#[tokio::test]
async fn mif_paragraphs_are_translated_and_the_statements_kept() -> Result<()> {
    let (world, api, key) = platform("mif").await?;
    let source =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("formats/testdata/report.mif");
    let (content_type, bytes) = translated(
        &api,
        &key,
        "report.mif",
        std::fs::read(&source)?,
        &[("target_lang", "ES"), ("source_lang", "EN")],
    )
    .await?;
    assert_eq!(content_type, "application/vnd.mif");
    let result = world.path("result.mif");
    std::fs::write(&result, &bytes)?;
    let utf8 = std::path::Path::new("utf-8");
    let before: Value =
        serde_json::from_str(&testdata_script("read_mif.py", &[&source, utf8]).await?)?;
    let after: Value =
        serde_json::from_str(&testdata_script("read_mif.py", &[&result, utf8]).await?)?;
    assert_eq!(after["counts"], before["counts"]);
    let paragraphs = joined(&after["paras"]);
    for expected in ["agua", "nota", "informe anual", "casa"] {
        assert!(
            paragraphs.contains(expected),
            "{expected:?} in {paragraphs}"
        );
    }
    Ok(())
}

/// XLIFF 2.0 and 1.2 files written by a real tool (npm `xliff`, locize's
/// writer) come back with Spanish targets that the same tool reads: inline
/// placeholder and span intact, the file's `es-ES` kept.
#[tokio::test]
async fn xliff_from_a_real_writer_is_read_back_by_it() -> Result<()> {
    let (world, api, key) = platform("xliff_tool").await?;
    let node = crate::support::node_packages("xliff")?;
    let tool = |args: Vec<std::ffi::OsString>| {
        let node = node.clone();
        async move {
            let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/clients/xliff_tool.mjs");
            let out = tokio::process::Command::new("node")
                .arg(script)
                .args(args)
                .env("TOLK_TEST_NODE", node)
                .output()
                .await?;
            anyhow::ensure!(
                out.status.success(),
                "xliff tool: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            anyhow::Ok(String::from_utf8(out.stdout)?)
        }
    };
    let dir = world.path("xliff");
    std::fs::create_dir_all(&dir)?;
    tool(vec!["write".into(), dir.clone().into()]).await?;
    for (name, version) in [("app-2.0.xlf", "2.0"), ("app-1.2.xlf", "1.2")] {
        let (_, bytes) = translated(
            &api,
            &key,
            name,
            std::fs::read(dir.join(name))?,
            &[("target_lang", "ES"), ("source_lang", "EN")],
        )
        .await?;
        let result = dir.join(format!("translated-{name}"));
        std::fs::write(&result, &bytes)?;
        let read: Value = serde_json::from_str(&tool(vec!["read".into(), result.into()]).await?)?;
        assert_eq!(read["version"], version);
        assert_eq!(read["targetLanguage"], "es-ES", "{read}");
        let units = &read["units"];
        assert!(
            units["greeting"]["target"]
                .as_str()
                .is_some_and(|t| t.contains("casa")),
            "{read}"
        );
        let welcome = units["welcome"]["target"].to_string();
        assert!(
            welcome.contains("perro") && welcome.contains(r#""id":"name""#),
            "{read}"
        );
        let bold = units["bold"]["target"].to_string();
        assert!(bold.contains(r#""id":"b""#), "{read}");
    }
    Ok(())
}

/// Converts `file` with LibreOffice headless into the folder `out` as `to`.
async fn soffice(
    world: &World,
    to: &str,
    out: &std::path::Path,
    file: &std::path::Path,
) -> Result<()> {
    let profile = world.path("lo-profile");
    let status = tokio::process::Command::new("soffice")
        .arg(format!(
            "-env:UserInstallation=file://{}",
            profile.display()
        ))
        .args(["--headless", "--convert-to", to, "--outdir"])
        .arg(out)
        .arg(file)
        .output()
        .await
        .context("LibreOffice (soffice) runs (scripts/setup.sh installs it for the tests)")?;
    anyhow::ensure!(
        status.status.success(),
        "soffice: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    Ok(())
}

/// A deck written by python-pptx comes back with its slides, table, group,
/// notes and chart title in Spanish, read back by python-pptx, the bold run
/// still bold; the conversion options DeepL documents for pptx are accepted.
#[tokio::test]
async fn pptx_slides_notes_and_charts_are_translated() -> Result<()> {
    let (world, api, key) = platform("pptx").await?;
    let source = world.path("deck.pptx");
    make_pptx(&[std::path::Path::new("write"), &source]).await?;
    let (content_type, bytes) = translated(
        &api,
        &key,
        "deck.pptx",
        std::fs::read(&source)?,
        &[
            ("target_lang", "ES"),
            ("source_lang", "EN"),
            (
                "input_conversion_options",
                "version:1,suppress-image-types:logo-photo",
            ),
        ],
    )
    .await?;
    assert_eq!(
        content_type,
        "application/vnd.openxmlformats-officedocument.presentationml.presentation"
    );
    let result = world.path("result.pptx");
    std::fs::write(&result, bytes)?;
    let deck: Value =
        serde_json::from_str(&make_pptx(&[std::path::Path::new("read"), &result]).await?)?;
    let slides = deck["slides"].as_array().cloned().unwrap_or_default();
    let all: Vec<String> = slides
        .iter()
        .flat_map(|s| s["texts"].as_array().cloned().unwrap_or_default())
        .filter_map(|t| t["text"].as_str().map(str::to_owned))
        .collect();
    let text = all.join(" | ");
    for spanish in [
        "La casa es pequeña",
        "La ciudad",
        "El jardín",
        "La primera caja",
    ] {
        assert!(text.contains(spanish), "{spanish} missing: {text}");
    }
    for english in [
        "The house",
        "The city",
        "The first box",
        "The sales of the year",
    ] {
        assert!(!text.contains(english), "{english} left: {text}");
    }
    let notes = slides[1]["notes"].as_str().unwrap_or_default();
    assert!(
        !notes.is_empty() && !notes.contains("Speak slowly"),
        "notes: {notes}"
    );
    let bold: Vec<&str> = slides[1]["texts"][1]["runs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["bold"] == true)
        .filter_map(|r| r["text"].as_str())
        .collect();
    assert_eq!(bold.len(), 1, "{}", slides[1]);
    let (code, body) = api
        .upload(
            &key,
            "deck.pptx",
            std::fs::read(&source)?,
            &[
                ("target_lang", "ES"),
                ("input_conversion_options", "suppress-image-types:all"),
            ],
        )
        .await?;
    assert_eq!(code, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("version"),
        "{body}"
    );
    Ok(())
}

const READ_XLSX: &str = r#"
import sys, json, openpyxl
wb = openpyxl.load_workbook(sys.argv[1])
out = {"sheets": wb.sheetnames, "cells": {}, "comments": []}
for ws in wb.worksheets:
    for row in ws.iter_rows():
        for c in row:
            if c.value is not None:
                out["cells"][ws.title + "!" + c.coordinate] = str(c.value)
            if c.comment is not None:
                out["comments"].append(c.comment.text)
print(json.dumps(out))
"#;

/// A workbook written by openpyxl comes back with its text cells and comment
/// in Spanish, read back by openpyxl; numbers, the formula and the sheet
/// names are as they were.
#[tokio::test]
async fn xlsx_cells_and_comments_are_translated_and_numbers_kept() -> Result<()> {
    let (world, api, key) = platform("xlsx").await?;
    let source = world.path("book.xlsx");
    testdata_script("make_xlsx.py", &[&source]).await?;
    let (_, bytes) = translated(
        &api,
        &key,
        "book.xlsx",
        std::fs::read(&source)?,
        &[("target_lang", "ES"), ("source_lang", "EN")],
    )
    .await?;
    let result = world.path("result.xlsx");
    std::fs::write(&result, bytes)?;
    let book: Value = serde_json::from_str(&python(READ_XLSX, &[&result]).await?)?;
    assert_eq!(book["sheets"], serde_json::json!(["Sales", "Summary"]));
    let cell = |name: &str| book["cells"][name].as_str().unwrap_or_default().to_owned();
    assert_eq!(cell("Sales!A1"), "La casa es pequeña.");
    assert_eq!(cell("Sales!A2"), "La ciudad");
    assert_eq!(cell("Summary!A1"), "El país");
    assert_eq!(cell("Sales!B1"), "10.5");
    assert_eq!(cell("Sales!B3"), "=SUM(B1:B2)");
    let comment = book["comments"][0].as_str().unwrap_or_default();
    assert!(
        !comment.is_empty() && !comment.contains("The number"),
        "comment: {comment}"
    );
    Ok(())
}

/// An OpenDocument text written by odfpy comes back in Spanish, read back by
/// odfpy, with its bold span and its link; `mimetype` is still the first entry.
#[tokio::test]
async fn odt_paragraphs_notes_and_headers_are_translated() -> Result<()> {
    let (world, api, key) = platform("odt").await?;
    let dir = world.path("odf");
    testdata_script("make_odf.py", &[std::path::Path::new("write"), &dir]).await?;
    let (content_type, bytes) = translated(
        &api,
        &key,
        "doc.odt",
        std::fs::read(dir.join("doc.odt"))?,
        &[("target_lang", "ES"), ("source_lang", "EN")],
    )
    .await?;
    assert_eq!(content_type, "application/vnd.oasis.opendocument.text");
    assert!(bytes.starts_with(b"PK") && bytes[30..38] == *b"mimetype");
    let result = world.path("result.odt");
    std::fs::write(&result, bytes)?;
    let doc: Value = serde_json::from_str(
        &testdata_script("make_odf.py", &[std::path::Path::new("read"), &result]).await?,
    )?;
    let texts = joined(&doc["texts"]);
    for spanish in ["La casa es", "La nota es", "El país", "El informe anual"] {
        assert!(texts.contains(spanish), "{spanish} missing: {texts}");
    }
    for english in ["The house", "The note", "The country", "The annual report"] {
        assert!(!texts.contains(english), "{english} left: {texts}");
    }
    assert_eq!(doc["spans"].as_array().map(Vec::len), Some(1), "{doc}");
    assert_eq!(doc["links"], serde_json::json!(["https://example.com/"]));
    Ok(())
}

/// A Latin-1 text file and an ISO-8859-1 page that declares its charset are
/// translated and come back in their own encoding.
#[tokio::test]
async fn latin1_text_and_html_are_translated_in_their_own_encoding() -> Result<()> {
    let (_world, api, key) = platform("latin1").await?;
    let fields = [("target_lang", "ES"), ("source_lang", "EN")];
    let (_, txt) = translated(
        &api,
        &key,
        "notes.txt",
        b"The caf\xe9 is small.\n".to_vec(),
        &fields,
    )
    .await?;
    assert!(
        std::str::from_utf8(&txt).is_err(),
        "written as Latin-1, not UTF-8"
    );
    let text: String = txt.iter().map(|&b| char::from(b)).collect();
    assert!(text.contains("peque\u{f1}"), "{text}");
    let page = b"<html><head><meta charset=\"ISO-8859-1\"></head><body><p>The house is small.</p><p>caf\xe9</p></body></html>".to_vec();
    let (_, html) = translated(&api, &key, "page.html", page, &fields).await?;
    let text: String = html.iter().map(|&b| char::from(b)).collect();
    assert!(text.contains("La casa es peque\u{f1}a."), "{text}");
    assert!(text.contains("<meta charset=\"ISO-8859-1\">"), "{text}");
    Ok(())
}

const MAKE_LINKS: &str = r#"
import sys, docx
from docx.oxml.shared import OxmlElement, qn
from docx.opc.constants import RELATIONSHIP_TYPE as RT
d = docx.Document()
p = d.add_paragraph("See ")
for url, text, tail in [("http://example.com/1", "the first page", " and "),
                        ("http://example.com/2", "the tangle page", " now.")]:
    r_id = p.part.relate_to(url, RT.HYPERLINK, is_external=True)
    h = OxmlElement("w:hyperlink"); h.set(qn("r:id"), r_id)
    r = OxmlElement("w:r"); t = OxmlElement("w:t"); t.text = text; r.append(t); h.append(r)
    p._p.append(h)
    p.add_run(tail)
d.save(sys.argv[1])
"#;

const READ_LINKS: &str = r#"
import sys, json, docx
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
d = docx.Document(sys.argv[1])
links = d.element.body.findall(".//" + W + "hyperlink")
print(json.dumps({
  "paragraph": d.paragraphs[0].text + "".join(t.text for l in links for t in l.iter(W + "t")),
  "links": ["".join(t.text or "" for t in l.iter(W + "t")) for l in links],
  "nested": sum(len(l.findall(".//" + W + "hyperlink")) for l in links),
}))
"#;

/// An engine answer that puts one link inside another is not written as is:
/// the segment is translated again piece by piece (the text between its
/// tags), so each link keeps its own words.
#[tokio::test]
async fn misplaced_tags_fall_back_to_piece_by_piece_translation() -> Result<()> {
    use crate::support::{Seen, echo_upstream};
    let seen: Seen = std::sync::Arc::default();
    let url = echo_upstream(seen.clone()).await?;
    let mut world = World::new("doctangle").await?;
    let key = world.create_key("tangle", false).await?;
    world.use_echo_upstream("deepl", &url, "EN:DE");
    let api = world.start_api().await?;
    world.start_worker("deepl")?;
    let path = world.path("links.docx");
    python(MAKE_LINKS, &[&path]).await?;
    let (id, doc_key) = api
        .upload_ok(
            &key,
            "links.docx",
            std::fs::read(&path)?,
            &[("target_lang", "DE"), ("source_lang", "EN")],
        )
        .await?;
    let st = api
        .wait(&key, &id, &doc_key, Duration::from_secs(60))
        .await?;
    assert_eq!(st.status, "done", "{}", st.body);
    let (code, _, bytes) = api.download(&key, &id, &doc_key).await?;
    assert_eq!(code, 200);
    let out = world.path("out.docx");
    std::fs::write(&out, bytes)?;
    let read: Value = serde_json::from_str(&python(READ_LINKS, &[&out]).await?)?;
    assert_eq!(
        read["links"],
        serde_json::json!(["the first page", "the tangle page"]),
        "{read}"
    );
    assert_eq!(read["nested"], 0, "{read}");
    // The engine saw the whole segment once, then its pieces on their own.
    let sent: Vec<String> = seen
        .lock()
        .map_err(|_| anyhow::anyhow!("lock"))?
        .iter()
        .flat_map(|body| body["text"].as_array().cloned().unwrap_or_default())
        .filter_map(|t| t.as_str().map(str::to_owned))
        .collect();
    assert!(
        sent.iter()
            .any(|t| t.contains("<g id=\"2\">the tangle page</g>")),
        "{sent:?}"
    );
    assert!(sent.iter().any(|t| t == "the tangle page"), "{sent:?}");
    Ok(())
}

/// Subtitles written by the `srt` library and webvtt-py, translated EN→ES
/// over HTTP: the same cues and timings read back by those libraries, the
/// text Spanish.
#[tokio::test]
async fn srt_and_vtt_subtitles_are_translated_with_their_timings() -> Result<()> {
    let (world, api, key) = platform("subtitles").await?;
    let dir = world.path("subs");
    testdata_script("make_subtitles.py", &[std::path::Path::new("write"), &dir]).await?;
    for file in ["film.srt", "film.vtt"] {
        let source = dir.join(file);
        let (content_type, bytes) = translated(
            &api,
            &key,
            file,
            std::fs::read(&source)?,
            &[("target_lang", "ES"), ("source_lang", "EN")],
        )
        .await?;
        assert!(
            content_type == "application/x-subrip" || content_type == "text/vtt",
            "{content_type}"
        );
        let out = dir.join(format!("es-{file}"));
        std::fs::write(&out, bytes)?;
        let read = |p: &std::path::Path| {
            let p = p.to_owned();
            async move {
                let json =
                    testdata_script("make_subtitles.py", &[std::path::Path::new("read"), &p])
                        .await?;
                Ok::<Value, anyhow::Error>(serde_json::from_str(&json)?)
            }
        };
        let (before, after) = (read(&source).await?, read(&out).await?);
        let (before, after) = (
            before.as_array().cloned().unwrap_or_default(),
            after.as_array().cloned().unwrap_or_default(),
        );
        assert_eq!(before.len(), after.len(), "{file}");
        for (b, a) in before.iter().zip(&after) {
            assert_eq!((&b["start"], &b["end"]), (&a["start"], &a["end"]), "{file}");
        }
        let text = joined(&serde_json::json!(
            after.iter().map(|c| c["text"].clone()).collect::<Vec<_>>()
        ))
        .to_lowercase();
        assert!(
            text.contains("perro") && text.contains("casa"),
            "{file}: {text}"
        );
    }
    Ok(())
}

/// A SubRip file asked for as WebVTT (`output_format=vtt`): webvtt-py reads
/// the result with the same cues and timings, the text Spanish; a conversion
/// Tolk does not make is refused at upload.
#[tokio::test]
async fn srt_is_delivered_as_webvtt_on_request() -> Result<()> {
    let (world, api, key) = platform("srt_to_vtt").await?;
    let dir = world.path("subs");
    testdata_script("make_subtitles.py", &[std::path::Path::new("write"), &dir]).await?;
    let source = dir.join("film.srt");
    let fields = [
        ("target_lang", "ES"),
        ("source_lang", "EN"),
        ("output_format", "vtt"),
    ];
    let (content_type, bytes) =
        translated(&api, &key, "film.srt", std::fs::read(&source)?, &fields).await?;
    assert_eq!(content_type, "text/vtt");
    let out = dir.join("es-film.vtt");
    std::fs::write(&out, bytes)?;
    let read = |p: std::path::PathBuf| async move {
        let json =
            testdata_script("make_subtitles.py", &[std::path::Path::new("read"), &p]).await?;
        let cues: Value = serde_json::from_str(&json)?;
        Ok::<Vec<Value>, anyhow::Error>(cues.as_array().cloned().unwrap_or_default())
    };
    let (before, after) = (read(source.clone()).await?, read(out).await?);
    assert_eq!(before.len(), after.len());
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(b["seconds"], a["seconds"]);
    }
    let text = joined(&serde_json::json!(
        after.iter().map(|c| c["text"].clone()).collect::<Vec<_>>()
    ))
    .to_lowercase();
    assert!(text.contains("perro"), "{text}");
    let (code, body) = api
        .upload(
            &key,
            "film.srt",
            std::fs::read(&source)?,
            &[("target_lang", "ES"), ("output_format", "docx")],
        )
        .await?;
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        "Conversion from srt to docx is not supported."
    );
    Ok(())
}

const MAKE_JSON: &str = r#"
import json, sys
json.dump({
    "title": "The house is big",
    "greeting": "Hello {name}, the dog sleeps",
    "files": "{count, plural, one {# file} other {# files}}",
    "items": ["The cat", "The garden"],
    "count": 3,
}, open(sys.argv[1], "w", encoding="utf-8"), indent=2, ensure_ascii=False)
"#;

/// A JSON localization file (written by Python's json module) translated
/// EN→ES over HTTP, read back by Python's json module: values Spanish,
/// keys, numbers, placeholders and the ICU skeleton as they were.
#[tokio::test]
async fn json_values_are_translated_and_keys_placeholders_kept() -> Result<()> {
    let (world, api, key) = platform("json_doc").await?;
    let path = world.path("strings.json");
    python(MAKE_JSON, &[&path]).await?;
    let (content_type, bytes) = translated(
        &api,
        &key,
        "strings.json",
        std::fs::read(&path)?,
        &[("target_lang", "ES"), ("source_lang", "EN")],
    )
    .await?;
    assert_eq!(content_type, "application/json");
    let out = world.path("es.json");
    std::fs::write(&out, bytes)?;
    let read: Value = serde_json::from_str(
        &python(
            "import json, sys; print(json.dumps(json.load(open(sys.argv[1], encoding='utf-8'))))",
            &[&out],
        )
        .await?,
    )?;
    let text = |k: &str| read[k].as_str().unwrap_or_default().to_lowercase();
    assert!(text("title").contains("casa"), "{read}");
    assert!(
        text("greeting").contains("{name}") && text("greeting").contains("perro"),
        "{read}"
    );
    let files = read["files"].as_str().unwrap_or_default();
    assert!(
        files.starts_with("{count, plural, one {#") && files.contains("} other {#"),
        "{files}"
    );
    assert!(files.ends_with("}}"), "{files}");
    assert!(
        read["items"][0]
            .as_str()
            .unwrap_or_default()
            .to_lowercase()
            .contains("gato"),
        "{read}"
    );
    assert_eq!(read["count"], 3);

    // json-placeholders:translate: the placeholder is text, translated too.
    let (_, bytes) = translated(
        &api,
        &key,
        "strings.json",
        std::fs::read(&path)?,
        &[
            ("target_lang", "ES"),
            ("source_lang", "EN"),
            (
                "input_conversion_options",
                "version:1,json-placeholders:translate",
            ),
        ],
    )
    .await?;
    let greeting: Value = serde_json::from_slice(&bytes)?;
    let greeting = greeting["greeting"].as_str().unwrap_or_default();
    assert!(!greeting.contains("{name}"), "{greeting}");
    Ok(())
}

/// A Markdown file translated EN→ES over HTTP: headings and paragraphs
/// Spanish, code and links as they were.
#[tokio::test]
async fn markdown_blocks_are_translated_and_code_kept() -> Result<()> {
    let (_world, api, key) = platform("markdown_doc").await?;
    let source = "# The house\n\nThe dog sleeps in the [garden](https://example.com/).\n\n```\nThe code stays.\n```\n";
    let (content_type, bytes) = translated(
        &api,
        &key,
        "readme.md",
        source.as_bytes().to_vec(),
        &[("target_lang", "ES"), ("source_lang", "EN")],
    )
    .await?;
    assert_eq!(content_type, "text/markdown");
    let out = String::from_utf8(bytes)?;
    assert!(out.starts_with("# "), "{out}");
    assert!(out.to_lowercase().contains("casa"), "{out}");
    assert!(out.contains("](https://example.com/)"), "{out}");
    assert!(out.contains("```\nThe code stays.\n```\n"), "{out}");
    Ok(())
}

/// A Java properties file translated EN→ES over HTTP: values Spanish and
/// written as ISO-8859-1-safe escapes, keys and placeholders as they were.
#[tokio::test]
async fn properties_values_are_translated_with_keys_and_placeholders_kept() -> Result<()> {
    let (_world, api, key) = platform("properties_doc").await?;
    let source = "# Labels\ntitle = The house is big\ngreeting = The dog sleeps, {0}\n";
    let (content_type, bytes) = translated(
        &api,
        &key,
        "messages.properties",
        source.as_bytes().to_vec(),
        &[("target_lang", "ES"), ("source_lang", "EN")],
    )
    .await?;
    assert_eq!(content_type, "text/x-java-properties");
    let out = String::from_utf8(bytes)?;
    assert!(out.starts_with("# Labels\ntitle = "), "{out}");
    assert!(out.to_lowercase().contains("casa"), "{out}");
    assert!(
        out.contains("{0}") && out.contains("\ngreeting = "),
        "{out}"
    );
    assert!(out.is_ascii(), "non-ASCII written as \\u escapes: {out}");
    Ok(())
}

/// An Apple .strings file translated EN→ES over HTTP: values Spanish, keys,
/// comments and format specifiers as they were.
#[tokio::test]
async fn apple_strings_values_are_translated_with_specifiers_kept() -> Result<()> {
    let (_world, api, key) = platform("strings_doc").await?;
    let source =
        "/* Labels */\n\"title\" = \"The house is big\";\n\"greeting\" = \"The dog sleeps, %@\";\n";
    let (_, bytes) = translated(
        &api,
        &key,
        "Localizable.strings",
        source.as_bytes().to_vec(),
        &[("target_lang", "ES"), ("source_lang", "EN")],
    )
    .await?;
    let out = String::from_utf8(bytes)?;
    assert!(out.starts_with("/* Labels */\n\"title\" = \""), "{out}");
    assert!(out.to_lowercase().contains("casa"), "{out}");
    assert!(out.contains("%@\";\n"), "{out}");
    Ok(())
}

/// An XLIFF 1.2 file translated EN→ES over HTTP: each source gets a Spanish
/// target after it with its inline codes, the file its target language, a
/// `translate="no"` unit nothing; Python's lxml reads the result.
#[tokio::test]
async fn xliff_sources_get_spanish_targets_with_their_codes() -> Result<()> {
    let (world, api, key) = platform("xliff_doc").await?;
    let source = r#"<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file original="app" source-language="en" datatype="plaintext">
    <body>
      <trans-unit id="1"><source>The house is <g id="b">big</g>.</source></trans-unit>
      <trans-unit id="2" translate="no"><source>The dog</source></trans-unit>
    </body>
  </file>
</xliff>
"#;
    let (content_type, bytes) = translated(
        &api,
        &key,
        "app.xlf",
        source.as_bytes().to_vec(),
        &[("target_lang", "ES"), ("source_lang", "EN")],
    )
    .await?;
    assert_eq!(content_type, "application/x-xliff+xml");
    let path = world.path("app.es.xlf");
    std::fs::write(&path, &bytes)?;
    let read = python(
        "import json, sys\nfrom lxml import etree\nns = {'x': 'urn:oasis:names:tc:xliff:document:1.2'}\n\
         doc = etree.parse(sys.argv[1])\n\
         units = {u.get('id'): [etree.tostring(t, encoding='unicode', with_tail=False) for t in u.findall('x:target', ns)] for u in doc.iterfind('.//x:trans-unit', ns)}\n\
         print(json.dumps({'lang': doc.find('x:file', ns).get('target-language'), 'units': units}))",
        &[&path],
    )
    .await?;
    let read: Value = serde_json::from_str(&read)?;
    assert_eq!(read["lang"], "es", "{read}");
    let target = read["units"]["1"][0]
        .as_str()
        .unwrap_or_default()
        .to_lowercase();
    assert!(
        target.contains("casa") && target.contains("<g id=\"b\">"),
        "{read}"
    );
    assert!(target.contains("state=\"translated\""), "{read}");
    assert_eq!(
        read["units"]["2"],
        serde_json::json!([]),
        "translate=no: no target"
    );
    Ok(())
}

/// A Rails locale file translated EN→ES over HTTP: PyYAML reads it with the
/// top-level key `es`, the values Spanish, the interpolations and numbers
/// as they were.
#[tokio::test]
async fn rails_yaml_becomes_a_spanish_locale_file() -> Result<()> {
    let (world, api, key) = platform("yaml_doc").await?;
    let source = "en:\n  house:\n    title: The house is big  # the page title\n    greeting: 'The dog sleeps, %{name}'\n    rooms: 4\n";
    let (content_type, bytes) = translated(
        &api,
        &key,
        "config/locales/en.yml",
        source.as_bytes().to_vec(),
        &[("target_lang", "ES"), ("source_lang", "EN")],
    )
    .await?;
    assert_eq!(content_type, "application/yaml");
    let path = world.path("es.yml");
    std::fs::write(&path, &bytes)?;
    let read = python(
        "import json, sys, yaml\nprint(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
        &[&path],
    )
    .await?;
    let read: Value = serde_json::from_str(&read)?;
    let house = &read["es"]["house"];
    assert!(
        house["title"]
            .as_str()
            .unwrap_or_default()
            .to_lowercase()
            .contains("casa"),
        "{read}"
    );
    assert!(
        house["greeting"]
            .as_str()
            .unwrap_or_default()
            .contains("%{name}"),
        "{read}"
    );
    assert_eq!(house["rooms"], 4);
    assert!(String::from_utf8(bytes)?.contains("# the page title"));
    Ok(())
}

/// A DITA topic (with its DOCTYPE) translated EN→ES over HTTP: lxml reads
/// the title and paragraph in Spanish, the code phrase, the parameter name,
/// the option and the `translate="no"` paragraph as they were.
#[tokio::test]
async fn dita_topics_are_translated_with_code_kept() -> Result<()> {
    let (world, api, key) = platform("dita_doc").await?;
    let source = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topic PUBLIC "-//OASIS//DTD DITA Topic//EN" "topic.dtd">
<topic id="t"><title>The big house</title><body>
<p>The dog sleeps, run <codeph>make dog</codeph> now.</p>
<p>The dog runs with <parmname>--verbose</parmname> and the option <option>quiet</option>.</p>
<p translate="no">The cat</p></body></topic>
"#;
    let (content_type, bytes) = translated(
        &api,
        &key,
        "house.dita",
        source.as_bytes().to_vec(),
        &[("target_lang", "ES"), ("source_lang", "EN")],
    )
    .await?;
    assert_eq!(content_type, "application/dita+xml");
    let path = world.path("house.es.dita");
    std::fs::write(&path, &bytes)?;
    let read = python(
        "import json, sys\nfrom lxml import etree\nroot = etree.parse(sys.argv[1]).getroot()\n\
         print(json.dumps([etree.tostring(e, encoding='unicode', with_tail=False) for e in root.iter('title', 'p', 'codeph', 'parmname', 'option')]))",
        &[&path],
    )
    .await?;
    let read: Value = serde_json::from_str(&read)?;
    let all = read.to_string().to_lowercase();
    assert!(all.contains("casa") && all.contains("perro"), "{read}");
    assert!(all.contains("<codeph>make dog</codeph>"), "{read}");
    assert!(all.contains("<parmname>--verbose</parmname>"), "{read}");
    assert!(all.contains("<option>quiet</option>"), "{read}");
    assert!(all.contains(r#"<p translate=\"no\">the cat</p>"#), "{read}");
    assert!(String::from_utf8(bytes)?.contains("<!DOCTYPE topic PUBLIC"));
    Ok(())
}

/// A SCORM package made by Python's zipfile, translated EN→ES over HTTP:
/// zipfile reads it back with the same entries, the lesson page and the
/// manifest title Spanish, the script byte for byte.
#[tokio::test]
async fn scorm_packages_translate_their_pages_and_keep_the_rest() -> Result<()> {
    let (world, api, key) = platform("scorm_doc").await?;
    let source = world.path("course.zip");
    python(
        "import sys, zipfile\n\
         z = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)\n\
         z.writestr('imsmanifest.xml', '<manifest><organizations><organization><title>The big house</title></organization></organizations></manifest>')\n\
         z.writestr('lesson.html', '<html><body><p>The dog sleeps in the house.</p><script>var t = \"The dog\";</script></body></html>')\n\
         z.writestr('api.js', 'function f() { return \"The dog\"; }')\n\
         z.close()",
        &[&source],
    )
    .await?;
    let (content_type, bytes) = translated(
        &api,
        &key,
        "course.zip",
        std::fs::read(&source)?,
        &[("target_lang", "ES"), ("source_lang", "EN")],
    )
    .await?;
    assert_eq!(content_type, "application/zip");
    let out = world.path("course.es.zip");
    std::fs::write(&out, bytes)?;
    let read = python(
        "import json, sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\n\
         print(json.dumps({n: z.read(n).decode() for n in z.namelist()}))",
        &[&out],
    )
    .await?;
    let read: Value = serde_json::from_str(&read)?;
    let text = |n: &str| read[n].as_str().unwrap_or_default().to_lowercase();
    assert!(text("imsmanifest.xml").contains("casa"), "{read}");
    assert!(
        text("lesson.html").contains("perro")
            && text("lesson.html").contains("var t = \"the dog\""),
        "{read}"
    );
    assert_eq!(read["api.js"], "function f() { return \"The dog\"; }");
    Ok(())
}

/// Runs of spaces are decided run by run: a paragraph whose source has two
/// spaces after a full stop keeps those, but not the two Apertium leaves
/// where it drops a word ("así que  somos"); python-docx writes the file and
/// reads the translation back.
#[tokio::test]
async fn docx_keeps_the_sources_runs_of_spaces_and_no_others() -> Result<()> {
    let (world, api, key) = platform("docx_spaces").await?;
    let path = world.path("spaces.docx");
    python(
        r#"
import sys, docx
d = docx.Document()
d.add_paragraph("Okay, so we are here.  Next one.")
p = d.add_paragraph("Okay, so we are ")
p.add_run("here").bold = True
p.add_run(".")
d.save(sys.argv[1])
"#,
        &[&path],
    )
    .await?;
    let (_, bytes) = translated(
        &api,
        &key,
        "spaces.docx",
        std::fs::read(&path)?,
        &[("source_lang", "EN"), ("target_lang", "ES")],
    )
    .await?;
    let after = read_docx(&world, &bytes).await?;
    let paragraphs: Vec<&str> = after["paragraphs"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert_eq!(paragraphs.len(), 2, "{paragraphs:?}");
    assert_eq!(paragraphs[0].matches("  ").count(), 1, "{paragraphs:?}");
    assert!(paragraphs[0].contains(".  "), "{paragraphs:?}");
    assert!(!paragraphs[1].contains("  "), "{paragraphs:?}");
    assert!(paragraphs[1].contains("Vale"), "{paragraphs:?}");
    Ok(())
}

/// A translator's XLIFF through the queue: approved and final targets stay
/// as they are (translate-toolkit reads them approved), only the new one is
/// translated; `xliff-targets:overwrite` translates them all; a Trados
/// TagEditor file is refused naming what to upload instead.
#[tokio::test]
async fn xliff_settled_targets_are_kept_unless_overwrite_is_asked() -> Result<()> {
    let (world, api, key) = platform("xliff_settled").await?;
    let source = r#"<?xml version="1.0" encoding="windows-1252"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file original="app" source-language="en" target-language="es" datatype="plaintext">
    <body>
      <trans-unit id="1" approved="yes"><source>The house is big.</source><target>La casa es enorme.</target></trans-unit>
      <trans-unit id="2"><source>The dog runs.</source><target state="final">El perro corre mucho.</target></trans-unit>
      <trans-unit id="3"><source>The cat sleeps.</source><target state="new">The cat sleeps.</target></trans-unit>
    </body>
  </file>
</xliff>
"#;
    let read = |name: &'static str, bytes: Vec<u8>| {
        let path = world.path(name);
        async move {
            std::fs::write(&path, &bytes)?;
            let out = python(
                "import json, sys\nfrom translate.storage import xliff\n\
                 store = xliff.xlifffile.parsefile(sys.argv[1])\n\
                 print(json.dumps({u.getid().split('\\x04')[-1]: [u.target, u.isapproved()] for u in store.units}))",
                &[&path],
            )
            .await?;
            anyhow::Ok(serde_json::from_str::<Value>(&out)?)
        }
    };
    let fields = [("target_lang", "ES"), ("source_lang", "EN")];
    let (_, bytes) = translated(&api, &key, "app.xlf", source.as_bytes().to_vec(), &fields).await?;
    assert!(bytes.starts_with(br#"<?xml version="1.0" encoding="windows-1252"?>"#));
    let units = read("kept.xlf", bytes).await?;
    assert_eq!(
        units["1"],
        serde_json::json!(["La casa es enorme.", true]),
        "{units}"
    );
    assert_eq!(units["2"][0], "El perro corre mucho.", "{units}");
    let new = units["3"][0].as_str().unwrap_or_default();
    assert!(new.contains("gato"), "{units}");

    let overwrite = [
        ("target_lang", "ES"),
        ("source_lang", "EN"),
        (
            "input_conversion_options",
            "version:1,xliff-targets:overwrite",
        ),
    ];
    let (_, bytes) = translated(
        &api,
        &key,
        "app.xlf",
        source.as_bytes().to_vec(),
        &overwrite,
    )
    .await?;
    let units = read("overwritten.xlf", bytes).await?;
    assert!(
        units["1"][0]
            .as_str()
            .unwrap_or_default()
            .contains("grande"),
        "{units}"
    );
    assert!(
        units["2"][0].as_str().unwrap_or_default().contains("perro"),
        "{units}"
    );
    assert_ne!(units["2"][0], "El perro corre mucho.", "{units}");

    let (code, body) = api
        .upload(&key, "old.ttx", b"<TRADOStag/>".to_vec(), &fields)
        .await?;
    assert_eq!(code, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains(".sdlxliff"),
        "{body}"
    );
    Ok(())
}

/// Markup and the placeholders of every ecosystem inside software strings
/// (i18next JSON, Rails YAML, Java properties) come back byte for byte
/// around translated words; `&` stays `&`. Read back by Python's json and
/// PyYAML, and the properties file line by line.
#[tokio::test]
async fn markup_and_placeholders_in_software_strings_survive() -> Result<()> {
    let (world, api, key) = platform("strings_markup").await?;
    let fields = [("target_lang", "ES"), ("source_lang", "EN")];
    let json = r#"{"copy": "Copy to <em>{{ location }}</em>", "save": "Save & close the house", "link": "Read <a href=\"/help?a=1&b=2\">the help</a> now.", "nested": "$t(common.house) is big"}"#;
    let (_, bytes) = translated(&api, &key, "en.json", json.as_bytes().to_vec(), &fields).await?;
    let read: Value = serde_json::from_slice(&bytes)?;
    let copy = read["copy"].as_str().unwrap_or_default();
    assert!(
        copy.contains("<em>{{ location }}</em>") && !copy.contains("&lt;"),
        "{read}"
    );
    let save = read["save"].as_str().unwrap_or_default();
    assert!(
        save.contains('&') && !save.contains("&amp;") && save.contains("casa"),
        "{read}"
    );
    let link = read["link"].as_str().unwrap_or_default();
    assert!(
        link.contains(r#"<a href="/help?a=1&b=2">"#) && link.contains("</a>"),
        "{read}"
    );
    assert!(link.contains("ayuda"), "{read}");
    assert!(
        read["nested"]
            .as_str()
            .unwrap_or_default()
            .starts_with("$t(common.house)"),
        "{read}"
    );

    let yaml = "en:\n  post: \"<strong>Post</strong> a comment\"\n  more: 'See <a href=\"/docs\">the documentation</a>, %{name}.'\n  when: \"%A, %B %d\"\n  raw: \"{% raw %}The house{% endraw %}\"\n  dogs: \"{count, plural, one {# dog sleeps} other {# dogs sleep}}\"\n";
    let (_, bytes) = translated(&api, &key, "en.yml", yaml.as_bytes().to_vec(), &fields).await?;
    let path = world.path("es.yml");
    std::fs::write(&path, &bytes)?;
    let read: Value = serde_json::from_str(
        &python(
            "import json, sys, yaml\nprint(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
            &[&path],
        )
        .await?,
    )?;
    let es = &read["es"];
    let post = es["post"].as_str().unwrap_or_default();
    assert!(
        post.starts_with("<strong>") && post.contains("</strong>"),
        "{read}"
    );
    let more = es["more"].as_str().unwrap_or_default();
    assert!(
        more.contains(r#"<a href="/docs">"#) && more.contains("</a>") && more.contains("%{name}"),
        "{read}"
    );
    assert_eq!(es["when"], "%A, %B %d", "{read}");
    let raw = es["raw"].as_str().unwrap_or_default();
    assert!(
        raw.starts_with("{% raw %}") && raw.ends_with("{% endraw %}"),
        "{read}"
    );

    let properties = "error=<span class=error>The house</span> is closed\ncount=The house has {0,number,integer} rooms since {2,time,short}\nfiles={0,choice,0#no files|1#one file|1<{0} files} in the house\n";
    let (_, bytes) = translated(
        &api,
        &key,
        "messages.properties",
        properties.as_bytes().to_vec(),
        &fields,
    )
    .await?;
    let out = String::from_utf8(bytes)?;
    let value = |k: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .unwrap_or_default()
            .to_owned()
    };
    let error = value("error");
    assert!(
        error.starts_with("<span class=error>") && error.contains("</span>"),
        "{out}"
    );
    assert!(error.to_lowercase().contains("casa"), "{out}");
    let count = value("count");
    assert!(
        count.contains("{0,number,integer}") && count.contains("{2,time,short}"),
        "{out}"
    );
    assert!(
        value("files").starts_with("{0,choice,0#no files|1#one file|1<{0} files}"),
        "{out}"
    );
    Ok(())
}

/// An Android `strings.xml` through the queue into Catalan, whose
/// apostrophes Android wants escaped: values translated with `\'`, format
/// specifiers, `<xliff:g>` and styling kept, `translatable="false"` and
/// references untouched; lxml reads the file.
#[tokio::test]
async fn android_strings_are_translated_with_their_escapes() -> Result<()> {
    let (world, api, key) = platform("android_strings").await?;
    let source = r#"<?xml version="1.0" encoding="utf-8"?>
<resources xmlns:xliff="urn:oasis:names:tc:xliff:document:1.2">
    <string name="app_name" translatable="false">The house</string>
    <string name="updates">@string/check_for_updates</string>
    <string name="man">The man sleeps in <b>the house</b>, <xliff:g id="n">%1$s</xliff:g>.</string>
    <plurals name="dogs">
        <item quantity="other">%d dogs sleep in the house</item>
    </plurals>
</resources>
"#;
    let (content_type, bytes) = translated(
        &api,
        &key,
        "strings.xml",
        source.as_bytes().to_vec(),
        &[("target_lang", "CA"), ("source_lang", "EN")],
    )
    .await?;
    assert_eq!(content_type, "application/xml");
    let out = String::from_utf8(bytes)?;
    assert!(
        out.contains(r#"<string name="app_name" translatable="false">The house</string>"#),
        "{out}"
    );
    assert!(
        out.contains(r#"<string name="updates">@string/check_for_updates</string>"#),
        "{out}"
    );
    let man = out
        .lines()
        .find(|l| l.contains(r#"name="man""#))
        .unwrap_or_default();
    // Catalan elides ("d'home"): every apostrophe escaped.
    assert!(
        man.contains(r"\'") && !man.replace(r"\'", "").contains('\''),
        "{man}"
    );
    assert!(
        man.contains("<b>") && man.contains(r#"<xliff:g id="n">%1$s</xliff:g>"#),
        "{man}"
    );
    // The specifier keeps the space after it.
    assert!(out.contains("%d els gossos"), "{out}");
    assert!(man.contains("casa"), "{man}");
    let path = world.path("strings.ca.xml");
    std::fs::write(&path, &out)?;
    let names = python(
        "import sys\nfrom lxml import etree\nprint(','.join(e.get('name') for e in etree.parse(sys.argv[1]).getroot()))",
        &[&path],
    )
    .await?;
    assert_eq!(names.trim(), "app_name,updates,man,dogs");
    Ok(())
}
