//! Document translation end to end: upload → poll → download, per format.

mod images;
mod office;
mod pdf;
mod publishing;
mod software;
mod table;

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

/// A tool's standard output for `file` (`pdftotext` writes to "-").
pub(crate) async fn tool(program: &str, args: &[&str], file: &std::path::Path) -> Result<String> {
    let mut command = tokio::process::Command::new(program);
    command.args(args).arg(file);
    if program == "pdftotext" {
        command.arg("-");
    }
    let out = command
        .output()
        .await
        .with_context(|| format!("{program} (poppler-utils, qpdf: scripts/setup.sh)"))?;
    anyhow::ensure!(
        out.status.success(),
        "{program} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

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
pub(crate) async fn testdata_script(script: &str, args: &[&std::path::Path]) -> Result<String> {
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

/// A converted result is delivered under the uploaded name with the
/// delivered format's extension (an SRT delivered as WebVTT is `….vtt`).
#[tokio::test]
async fn a_converted_download_is_named_with_its_own_extension() -> Result<()> {
    let (world, api, key) = platform("converted_name").await?;
    let dir = world.path("subs");
    testdata_script("make_subtitles.py", &[std::path::Path::new("write"), &dir]).await?;
    let source = std::fs::read(dir.join("film.srt"))?;
    let fields = [
        ("target_lang", "ES"),
        ("source_lang", "EN"),
        ("output_format", "vtt"),
    ];
    let (id, doc_key) = api.upload_ok(&key, "film.srt", source, &fields).await?;
    let done = api
        .wait(&key, &id, &doc_key, Duration::from_secs(120))
        .await?;
    assert_eq!(done.status, "done", "{}", done.body);
    let (code, headers, bytes) = api.download(&key, &id, &doc_key).await?;
    assert_eq!(code, 200);
    assert!(bytes.starts_with(b"WEBVTT"));
    let disposition = headers
        .get("content-disposition")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert!(
        disposition.contains("filename=\"film.vtt\""),
        "{disposition}"
    );
    Ok(())
}
