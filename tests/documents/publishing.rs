//! Publishing formats end to end: RTF, InDesign, FrameMaker, DITA and SCORM
//! packages.

use super::*;

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
