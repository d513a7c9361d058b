use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::testdoc::{assert_segments, raw_entries, test_folder, testdata_script, uppercased};
use crate::{DocumentFormat, FormatError, extract};

/// The three files odfpy writes (`testdata/make_odf.py`), in a folder of the
/// test's own.
fn files(name: &str) -> PathBuf {
    let dir = test_folder(&format!("odf-{name}"));
    testdata_script("make_odf.py", &[Path::new("write"), &dir]);
    dir
}

/// What odfpy reads in `bytes`.
fn read(dir: &Path, bytes: &[u8], ext: &str) -> Value {
    let path = dir.join(format!("read.{ext}"));
    std::fs::write(&path, bytes).unwrap();
    serde_json::from_str(&testdata_script("make_odf.py", &[Path::new("read"), &path])).unwrap()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t.as_str().map(str::to_owned))
        .collect()
}

#[test]
fn paragraphs_headings_notes_headers_and_cells_are_segments() {
    let dir = files("segments");
    let doc = extract(
        DocumentFormat::Odt,
        &std::fs::read(dir.join("doc.odt")).unwrap(),
    )
    .unwrap();
    assert_segments(
        &doc,
        &[
            "The house",
            "The house is very big and the garden is small.",
            "The note is short.",
            "The country",
            "The annual report",
        ],
    );
    let span = doc
        .segments()
        .iter()
        .find(|s| s.contains("very big"))
        .unwrap();
    assert_eq!(
        span,
        "The house is <g id=\"1\">very big</g> and the garden is small."
    );
    let link = doc
        .segments()
        .iter()
        .find(|s| s.contains("website"))
        .unwrap();
    assert_eq!(link, "Read the book on <g id=\"1\">the website</g>.");
    // The line break ends a segment; text:s is read as spaces.
    assert!(
        doc.segments().iter().any(|s| s == "The city   is old."),
        "{:?}",
        doc.segments()
    );
}

#[test]
fn untranslated_files_are_byte_identical_with_mimetype_first() {
    let dir = files("identity");
    for (file, format) in [
        ("doc.odt", DocumentFormat::Odt),
        ("slides.odp", DocumentFormat::Odp),
        ("book.ods", DocumentFormat::Ods),
    ] {
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let doc = extract(format, &bytes).unwrap();
        let out = doc.merge(doc.segments()).unwrap();
        assert_eq!(raw_entries(&bytes), raw_entries(&out), "{file}");
    }
}

#[test]
fn odfpy_reads_every_paragraph_translated_and_the_markup_kept() {
    let dir = files("translated");
    let bytes = std::fs::read(dir.join("doc.odt")).unwrap();
    let before = read(&dir, &bytes, "odt");
    let out = uppercased(&bytes, DocumentFormat::Odt);
    let after = read(&dir, &out, "odt");
    let want: Vec<String> = strings(&before["texts"])
        .iter()
        .map(|t| t.to_uppercase())
        .collect();
    assert_eq!(strings(&after["texts"]), want);
    assert_eq!(strings(&after["spans"]), ["VERY BIG"]);
    assert_eq!(after["links"], before["links"]);
    let content = crate::testdoc::part(&out, "content.xml");
    assert!(
        content.contains("THE CITY <text:s text:c=\"2\"/>IS OLD."),
        "runs of spaces are written as text:s"
    );
    let entries = raw_entries(&out);
    assert_eq!(entries[0].0, "mimetype");
    assert_eq!(entries[0].2, b"application/vnd.oasis.opendocument.text");
}

#[test]
fn slides_and_sheets_are_translated_and_numbers_and_formulas_kept() {
    let dir = files("slides-sheets");
    let slides = std::fs::read(dir.join("slides.odp")).unwrap();
    let after = read(&dir, &uppercased(&slides, DocumentFormat::Odp), "odp");
    let texts = strings(&after["texts"]);
    assert!(
        texts.contains(&"THE QUARTERLY REPORT".to_owned()),
        "{texts:?}"
    );
    assert!(
        texts.contains(&"THE SALES ARE GOOD.".to_owned()),
        "{texts:?}"
    );
    let book = std::fs::read(dir.join("book.ods")).unwrap();
    let before = read(&dir, &book, "ods");
    let after = read(&dir, &uppercased(&book, DocumentFormat::Ods), "ods");
    assert_eq!(strings(&after["texts"]), ["THE HOUSE IS SMALL."]);
    assert_eq!(after["cells"], before["cells"]);
}

#[test]
fn a_zip_that_is_not_an_open_document_is_refused() {
    let e = extract(
        DocumentFormat::Odt,
        &crate::testdoc::zip_of(&[("word/document.xml", "<w:document/>")]),
    )
    .unwrap_err();
    assert!(matches!(e, FormatError::Corrupt(_)), "{e:?}");
    assert!(e.to_string().contains("content.xml is missing"), "{e}");
}
