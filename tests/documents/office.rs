//! Office documents end to end: Word, PowerPoint, Excel and OpenDocument files
//! made by python-docx, python-pptx, openpyxl and LibreOffice, read back by them.

use super::*;

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

/// The text pdftotext (poppler, an independent reader) reads from a PDF.
async fn pdf_text(world: &World, name: &str, pdf: &[u8]) -> Result<String> {
    let path = world.path(name);
    std::fs::write(&path, pdf)?;
    let out = tokio::process::Command::new("pdftotext")
        .arg(&path)
        .arg("-")
        .output()
        .await
        .context("pdftotext (apt-get install poppler-utils)")?;
    anyhow::ensure!(out.status.success(), "pdftotext failed on {name}");
    Ok(String::from_utf8(out.stdout)?
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" "))
}

/// Translates `bytes` as `name` into Spanish delivered as `output_format`;
/// (media type, delivered file name, bytes).
async fn delivered_as(
    api: &crate::support::Api,
    key: &str,
    name: &str,
    bytes: Vec<u8>,
    output_format: &str,
) -> Result<(String, String, Vec<u8>)> {
    delivered_with(api, key, name, bytes, &[("output_format", output_format)]).await
}

/// Translates `bytes` as `name` from English into Spanish with the upload
/// fields `more`; (media type, delivered file name, bytes).
async fn delivered_with(
    api: &crate::support::Api,
    key: &str,
    name: &str,
    bytes: Vec<u8>,
    more: &[(&str, &str)],
) -> Result<(String, String, Vec<u8>)> {
    let mut fields = vec![("target_lang", "ES"), ("source_lang", "EN")];
    fields.extend_from_slice(more);
    let (id, doc_key) = api.upload_ok(key, name, bytes, &fields).await?;
    let st = api
        .wait(key, &id, &doc_key, Duration::from_secs(180))
        .await?;
    assert_eq!(st.status, "done", "{name}: {}", st.body);
    let (code, headers, bytes) = api.download(key, &id, &doc_key).await?;
    assert_eq!(code, 200, "{name}");
    let header = |h: &str| {
        headers
            .get(h)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    Ok((header("content-type"), header("content-disposition"), bytes))
}

/// `output_format` as DeepL offers it, made by LibreOffice from the
/// translated document: a Word file (python-docx) and a text file in
/// windows-1252 delivered as PDF (read back by pdftotext), an HTML page as
/// Word (read back by python-docx); conversions LibreOffice cannot make are
/// refused at upload with DeepL's message.
#[tokio::test]
async fn documents_are_delivered_as_pdf_or_word_on_request() -> Result<()> {
    let (world, api, key) = platform("delivered_as").await?;

    let docx = make_docx(&world, "report.docx").await?;
    let (kind, disposition, pdf) = delivered_as(&api, &key, "report.docx", docx, "pdf").await?;
    assert_eq!(kind, "application/pdf");
    assert!(
        disposition.contains("filename=\"report.pdf\""),
        "{disposition}"
    );
    assert!(pdf.starts_with(b"%PDF-"));
    let text = pdf_text(&world, "report.pdf", &pdf).await?;
    assert!(text.contains("La casa es grande"), "{text}");
    assert!(text.contains("La ciudad tiene muchas personas"), "{text}");
    assert!(!text.contains("The house is big"), "{text}");

    let latin = b"Jos\xe9 says that the house is big.\n".to_vec();
    let (_, _, pdf) = delivered_as(&api, &key, "notes.txt", latin, "pdf").await?;
    let text = pdf_text(&world, "notes.pdf", &pdf).await?;
    assert!(text.contains("la casa es grande"), "{text}");
    assert!(
        text.contains("Jos\u{e9}"),
        "the windows-1252 text reads right: {text}"
    );

    let html = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>T</title></head>\
                <body><h1>The city</h1><p>The house is <b>big</b>.</p></body></html>";
    let (kind, disposition, docx) =
        delivered_as(&api, &key, "page.html", html.as_bytes().to_vec(), "docx").await?;
    assert_eq!(
        kind,
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    );
    assert!(
        disposition.contains("filename=\"page.docx\""),
        "{disposition}"
    );
    let read = read_docx(&world, &docx).await?;
    let paragraphs = joined(&read["paragraphs"]);
    assert!(paragraphs.contains("La casa es grande"), "{paragraphs}");
    assert!(paragraphs.contains("La ciudad"), "{paragraphs}");

    for (name, format, message) in [
        (
            "film.srt",
            "pdf",
            "Conversion from srt to pdf is not supported.",
        ),
        (
            "deck.pptx",
            "docx",
            "Conversion from pptx to docx is not supported.",
        ),
        (
            "report.docx",
            "exe",
            "Value for 'output_format' not supported: 'exe'.",
        ),
    ] {
        let (code, body) = api
            .upload(
                &key,
                name,
                b"x".to_vec(),
                &[("target_lang", "ES"), ("output_format", format)],
            )
            .await?;
        assert_eq!(code, 400, "{name} → {format}: {body}");
        assert_eq!(body["message"], message, "{name} → {format}");
    }
    Ok(())
}

/// `enable_watermark`: a Word document delivered as Word carries the mark
/// in its header (python-docx reads it beside the translated header) and
/// as a custom property; delivered as PDF (LibreOffice), on every page
/// (pdftotext, page by page) and in the information dictionary (pdfinfo);
/// output that cannot carry it is refused at upload.
#[tokio::test]
async fn documents_carry_the_machine_translation_mark_on_request() -> Result<()> {
    let (world, api, key) = platform("watermark").await?;
    const MARK: &str = "Machine translated with Tolk";

    let docx = make_docx(&world, "report.docx").await?;
    let watermark = ("enable_watermark", "true");
    let (_, _, marked) =
        delivered_with(&api, &key, "report.docx", docx.clone(), &[watermark]).await?;
    let read = read_docx(&world, &marked).await?;
    let header = joined(&read["header"]);
    let (translated, mark) = header.split_once(" | ").context("two header lines")?;
    assert!(translated.contains("informe"), "{header}");
    assert_eq!(mark, MARK, "{header}");
    assert!(
        !joined(&read["paragraphs"]).contains(MARK),
        "the body is the translation alone: {read}"
    );
    let custom = python(
        "import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read('docProps/custom.xml').decode())",
        &[&world.path("result.docx")],
    )
    .await?;
    assert!(
        custom.contains("MachineTranslation") && custom.contains(MARK),
        "{custom}"
    );

    let fields = [watermark, ("output_format", "pdf")];
    let (kind, _, pdf) = delivered_with(&api, &key, "report.docx", docx, &fields).await?;
    assert_eq!(kind, "application/pdf");
    let path = world.path("marked.pdf");
    std::fs::write(&path, &pdf)?;
    let info = tool("pdfinfo", &["-custom"], &path).await?;
    assert!(
        info.lines()
            .any(|l| l.starts_with("MachineTranslation:") && l.ends_with(MARK)),
        "{info}"
    );
    let info = tool("pdfinfo", &[], &path).await?;
    let count: usize = info
        .lines()
        .find_map(|l| l.strip_prefix("Pages:"))
        .context("pdfinfo names the pages")?
        .trim()
        .parse()?;
    for page in 1..=count {
        let page = page.to_string();
        let text = tool("pdftotext", &["-f", &page, "-l", &page], &path).await?;
        assert!(text.contains(MARK), "page {page}: {text}");
        assert!(
            text.contains("La casa es grande") || page != "1",
            "page {page}: {text}"
        );
    }

    let (code, body) = api
        .upload(
            &key,
            "strings.json",
            br#"{"a": "The house"}"#.to_vec(),
            &[("target_lang", "ES"), watermark],
        )
        .await?;
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        "Parameter 'enable_watermark' is supported for docx, pptx and pdf output only, not json."
    );
    Ok(())
}
