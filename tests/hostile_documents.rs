//! Hostile office documents: for every package format, a truncated archive,
//! a main part cut off, a package without its main part, a ZIP bomb entry, an entry climbing out
//! of the package and an entity-expansion part each end in state `error` with
//! a message naming the problem, and the worker goes on to translate the
//! next document; so do localization files that are not what they claim.

use std::time::Duration;

use anyhow::Result;

use crate::support::{World, python};

/// Writes the hostile files of one format into a folder: `truncated`,
/// `cut-part`, `no-main`, `bomb`, `traversal` and `entities`, each `.{ext}`.
const MAKE_HOSTILE: &str = r#"
import io, sys, zipfile
from pathlib import Path
out, ext, main = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
mimetypes = {
    "odt": "application/vnd.oasis.opendocument.text",
    "odp": "application/vnd.oasis.opendocument.presentation",
    "ods": "application/vnd.oasis.opendocument.spreadsheet",
}
part = b'<?xml version="1.0" encoding="UTF-8"?><root><p>The house is big.</p></root>'

def package(entries):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        if ext in mimetypes:
            z.writestr(zipfile.ZipInfo("mimetype"), mimetypes[ext])
        z.writestr("[Content_Types].xml", "<Types/>")
        for name, data in entries:
            z.writestr(name, data)
    return buf.getvalue()

good = package([(main, part * 200)])
(out / f"truncated.{ext}").write_bytes(good[: len(good) // 2])
(out / f"no-main.{ext}").write_bytes(package([("hello.txt", "not a document")]))
# 300 MiB of spaces compress to about 300 KiB.
(out / f"bomb.{ext}").write_bytes(package([(main, b"<root>" + b" " * (300 << 20) + b"</root>")]))
(out / f"traversal.{ext}").write_bytes(package([(main, part), ("../../evil.xml", part)]))
laughs = b'<?xml version="1.0"?><!DOCTYPE root [<!ENTITY a "ha">' + b"".join(
    b'<!ENTITY %s "%s">' % (bytes([98 + i]), (b"&%s;" % bytes([97 + i])) * 10) for i in range(9)
) + b']><root><p>&j;</p></root>'
(out / f"entities.{ext}").write_bytes(package([(main, laughs)]))
# A main part cut off after 200 KB of paragraphs (more than one chunk).
(out / f"cut-part.{ext}").write_bytes(package([(main, b'<?xml version="1.0"?><root>' + b'<p>The house is big.</p>' * 8000)]))
"#;

/// What each hostile file's error message must say (lower-cased).
const EXPECTED: [(&str, &[&str]); 6] = [
    ("truncated", &["truncated or damaged"]),
    ("cut-part", &["may be truncated"]),
    ("no-main", &["is missing"]),
    ("bomb", &["too large"]),
    ("traversal", &["unsafe path"]),
    ("entities", &["doctype"]),
];

#[tokio::test]
async fn hostile_office_packages_end_in_error_and_the_next_document_succeeds() -> Result<()> {
    let mut world = World::new("hostile_docs").await?;
    let key = world.create_key("hostile", false).await?;
    let api = world.start_api().await?;
    world.start_worker("a")?;
    let folder = world.path("hostile");
    std::fs::create_dir_all(&folder)?;
    let mut uploads = Vec::new();
    for (ext, main) in [
        ("pptx", "ppt/presentation.xml"),
        ("xlsx", "xl/workbook.xml"),
        ("xlsm", "xl/workbook.xml"),
        ("odt", "content.xml"),
        ("odp", "content.xml"),
        ("ods", "content.xml"),
    ] {
        python(
            MAKE_HOSTILE,
            &[
                &folder,
                std::path::Path::new(ext),
                std::path::Path::new(main),
            ],
        )
        .await?;
        for (name, needles) in EXPECTED {
            let file = format!("{name}.{ext}");
            let bytes = std::fs::read(folder.join(&file))?;
            let (id, doc_key) = api
                .upload_ok(
                    &key,
                    &file,
                    bytes,
                    &[("target_lang", "ES"), ("source_lang", "EN")],
                )
                .await?;
            uploads.push((file, needles, id, doc_key));
        }
    }
    // A good document queued after all of them.
    let good = world.path("good.txt");
    std::fs::write(&good, "The house is big.")?;
    let (good_id, good_key) = api
        .upload_ok(
            &key,
            "good.txt",
            std::fs::read(&good)?,
            &[("target_lang", "ES"), ("source_lang", "EN")],
        )
        .await?;

    for (file, needles, id, doc_key) in &uploads {
        let st = api
            .wait(&key, id, doc_key, Duration::from_secs(120))
            .await?;
        assert_eq!(st.status, "error", "{file}: {}", st.body);
        let message = st.body["error_message"]
            .as_str()
            .unwrap_or_default()
            .to_lowercase();
        for needle in *needles {
            assert!(
                message.contains(needle),
                "{file}: {message:?} lacks {needle:?}"
            );
        }
    }
    let st = api
        .wait(&key, &good_id, &good_key, Duration::from_secs(120))
        .await?;
    assert_eq!(st.status, "done", "{}", st.body);
    Ok(())
}

/// Localization files that are not what their extension says end in
/// `error` with a message naming the problem; a good one after them is
/// translated.
#[tokio::test]
async fn broken_localization_files_end_in_error_and_the_next_succeeds() -> Result<()> {
    let mut world = World::new("hostile_l10n").await?;
    let key = world.create_key("hostile", false).await?;
    let api = world.start_api().await?;
    world.start_worker("a")?;
    let fields = [("target_lang", "ES"), ("source_lang", "EN")];
    let mut uploads = Vec::new();
    for (name, bytes, needle) in [
        (
            "broken.json",
            b"{\"title\": \"The house\",".to_vec(),
            "not valid json",
        ),
        (
            "binary.json",
            vec![0xff, 0xfe, 0x00, 0x01, 0x02],
            "not valid json",
        ),
        (
            "plain.vtt",
            b"1\n00:00:01.000 --> 00:00:02.000\nHello\n".to_vec(),
            "webvtt",
        ),
        (
            "entities.xlf",
            b"<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a \"b\">]><xliff version=\"1.2\"/>"
                .to_vec(),
            "doctype",
        ),
        (
            "page.xlf",
            b"<html><body>Hi</body></html>".to_vec(),
            "not xliff",
        ),
        (
            "text.rtf",
            b"Hello, plain text".to_vec(),
            "does not start with",
        ),
        (
            "truncated.rtf",
            b"{\\rtf1\\ansi {\\b The house".to_vec(),
            "not all closed",
        ),
        (
            "deep.rtf",
            [&b"{\\rtf1 "[..], &b"{".repeat(100_000)].concat(),
            "nested too deeply",
        ),
        (
            "text.mif",
            b"Hello, plain text".to_vec(),
            "does not start with <miffile",
        ),
        (
            "truncated.mif",
            b"<MIFFile 2015>\n<TextFlow <Para <ParaLine <String `The house'>".to_vec(),
            "not all ended",
        ),
        (
            "deep.mif",
            [&b"<MIFFile 2015>\n"[..], &b"<A ".repeat(100_000)].concat(),
            "nested too deeply",
        ),
    ] {
        let (id, doc_key) = api.upload_ok(&key, name, bytes, &fields).await?;
        uploads.push((name, needle, id, doc_key));
    }
    let (good_id, good_key) = api
        .upload_ok(
            &key,
            "good.json",
            b"{\"t\": \"The house is big.\"}".to_vec(),
            &fields,
        )
        .await?;
    for (name, needle, id, doc_key) in &uploads {
        let st = api.wait(&key, id, doc_key, Duration::from_secs(60)).await?;
        assert_eq!(st.status, "error", "{name}: {}", st.body);
        let message = st.body["error_message"]
            .as_str()
            .unwrap_or_default()
            .to_lowercase();
        assert!(message.contains(needle), "{name}: {message:?}");
    }
    let st = api
        .wait(&key, &good_id, &good_key, Duration::from_secs(60))
        .await?;
    assert_eq!(st.status, "done", "{}", st.body);
    Ok(())
}
