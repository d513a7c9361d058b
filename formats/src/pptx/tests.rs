use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::testdoc::{
    assert_segments, raw_entries, test_folder, testdata_script, uppercase_merge, uppercased,
};
use crate::{DocumentFormat, Extracted, FormatError, extract};

/// `testdata/make_pptx.py` with `args`; its stdout.
fn make_pptx(args: &[&Path]) -> String {
    testdata_script("make_pptx.py", args)
}

/// A folder of this test's own.
fn folder(name: &str) -> PathBuf {
    test_folder(&format!("pptx-{name}"))
}

/// The deck python-pptx writes (title, runs and a line break, a table, a
/// group, notes, a chart).
fn deck(dir: &Path) -> Vec<u8> {
    let path = dir.join("deck.pptx");
    make_pptx(&[Path::new("write"), &path]);
    std::fs::read(&path).unwrap()
}

/// What python-pptx reads in `bytes`.
fn read(dir: &Path, bytes: &[u8]) -> Value {
    let path = dir.join("read.pptx");
    std::fs::write(&path, bytes).unwrap();
    serde_json::from_str(&make_pptx(&[Path::new("read"), &path])).unwrap()
}

fn pptx(bytes: &[u8]) -> Extracted {
    extract(DocumentFormat::Pptx, bytes).unwrap()
}

/// Every paragraph text python-pptx reads, slide by slide, notes included.
fn texts(deck: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for slide in deck["slides"].as_array().into_iter().flatten() {
        for t in slide["texts"].as_array().into_iter().flatten() {
            out.push(t["text"].as_str().unwrap_or_default().to_owned());
        }
        if let Some(n) = slide["notes"].as_str() {
            out.push(n.to_owned());
        }
    }
    out
}

#[test]
fn slides_notes_tables_groups_and_charts_are_segments() {
    let dir = folder("segments");
    let doc = pptx(&deck(&dir));
    assert_segments(
        &doc,
        &[
            "The quarterly report",
            "Prepared by the sales team",
            "The house is small.",
            "The city",
            "The garden",
            "The first box",
            "The second box",
            "Speak slowly about the office.",
            "The sales of the year",
        ],
    );
    // One paragraph with a bold run and a line break: a segment on each side
    // of the break (a segment never crosses one), the bold run a span.
    let para = doc
        .segments()
        .iter()
        .find(|s| s.contains("very large"))
        .unwrap();
    assert!(para.contains("<g id=\"1\">very large</g>"), "{para}");
    assert!(!para.contains("<x id="), "{para}");
    assert!(
        doc.segments().iter().any(|s| s == "It opened in May."),
        "{:?}",
        doc.segments()
    );
}

#[test]
fn an_untranslated_deck_is_byte_identical() {
    let dir = folder("identity");
    let bytes = deck(&dir);
    let doc = pptx(&bytes);
    let out = doc.merge(doc.segments()).unwrap();
    assert_eq!(raw_entries(&bytes), raw_entries(&out));
}

#[test]
fn a_translated_deck_reads_back_with_every_text_translated_and_formatting_kept() {
    let dir = folder("translated");
    let bytes = deck(&dir);
    let before = read(&dir, &bytes);
    let out = uppercased(&bytes, DocumentFormat::Pptx);
    let after = read(&dir, &out);
    let want: Vec<String> = texts(&before).iter().map(|t| t.to_uppercase()).collect();
    assert_eq!(texts(&after), want);
    // The bold run is still bold; the line break still between its runs.
    let para = &after["slides"][1]["texts"][1];
    let bold: Vec<&str> = para["runs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["bold"] == true)
        .filter_map(|r| r["text"].as_str())
        .collect();
    assert_eq!(bold, ["VERY LARGE"], "{para}");
    assert!(
        para["text"].as_str().unwrap_or_default().contains('\u{b}'),
        "{para}"
    );
    assert_eq!(before["layouts"], after["layouts"]);
}

/// A translation twice as long as its source shrinks to fit its box, as
/// PowerPoint's shrink on overflow does (`normAutofit` with a font scale);
/// text boxes that grow with their text are left to grow; chart categories
/// and series names are translated in the chart's caches and in the
/// workbook holding its data alike (read back with openpyxl).
#[test]
fn grown_text_shrinks_to_fit_and_chart_labels_are_translated() {
    let dir = folder("fit");
    let bytes = deck(&dir);
    let doc = pptx(&bytes);
    let doubled: Vec<String> = doc
        .segments()
        .iter()
        .map(|s| crate::testdoc::map_text(s, |t| t.to_uppercase().repeat(2)))
        .collect();
    let path = dir.join("fit.pptx");
    std::fs::write(&path, doc.merge(&doubled).unwrap()).unwrap();
    let read: Value = serde_json::from_str(&make_pptx(&[Path::new("frames"), &path])).unwrap();
    let fits = read["fits"].as_array().cloned().unwrap_or_default();
    let title = fits
        .iter()
        .find(|f| f[0] == "THE QUARTERLY REPORTTHE QUARTERLY REPORT")
        .unwrap_or_else(|| panic!("{read}"));
    assert_eq!(title[1], "TEXT_TO_FIT_SHAPE (2)", "{read}");
    let scale: u32 = title[2]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    assert!((55_000..100_000).contains(&scale), "{read}");
    assert_eq!(
        read["charts"],
        serde_json::json!([[["NORTHNORTH", "SOUTHSOUTH"], ["SALESSALES"]]]),
        "{read}"
    );
    assert_eq!(
        read["data"],
        serde_json::json!([["SALESSALES", "NORTHNORTH", "SOUTHSOUTH"]]),
        "{read}"
    );
    // Untranslated, nothing changes.
    let same: Value = {
        let path = dir.join("same.pptx");
        std::fs::write(&path, doc.merge(doc.segments()).unwrap()).unwrap();
        serde_json::from_str(&make_pptx(&[Path::new("frames"), &path])).unwrap()
    };
    assert!(
        same["fits"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|f| f[2].is_null()),
        "{same}"
    );
}

#[test]
fn masters_and_layouts_are_copied_as_they_are() {
    let dir = folder("masters");
    let bytes = deck(&dir);
    let doc = pptx(&bytes);
    let x: Vec<String> = doc.segments().iter().map(|_| "X".to_owned()).collect();
    let out = doc.merge(&x).unwrap();
    let (before, after) = (raw_entries(&bytes), raw_entries(&out));
    assert_eq!(before.len(), after.len());
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(b.0, a.0, "entry order");
        let translated = b.0 == "docProps/core.xml"
            || b.0.starts_with("ppt/slides/slide")
            || b.0.starts_with("ppt/notesSlides/notesSlide")
            || b.0.starts_with("ppt/charts/chart")
            || b.0.starts_with("ppt/embeddings/");
        if !translated {
            assert_eq!(b, a, "{} changed", b.0);
        }
    }
}

#[test]
fn a_file_that_is_not_a_presentation_is_refused() {
    for (bytes, says) in [
        (b"".to_vec(), "empty"),
        (b"not a zip".to_vec(), "not a ZIP archive"),
        (
            crate::testdoc::zip_of(&[("word/document.xml", "<w:document/>")]),
            "ppt/presentation.xml is missing",
        ),
    ] {
        let e = extract(DocumentFormat::Pptx, &bytes).unwrap_err();
        assert!(matches!(e, FormatError::Corrupt(_)), "{e:?}");
        assert!(e.to_string().contains(says), "{e}");
    }
}

#[test]
fn translated_runs_are_marked_with_the_target_language() {
    let dir = folder("language");
    let doc = pptx(&deck(&dir)).with_target_language("ES");
    let translated: Vec<String> = doc
        .segments()
        .iter()
        .map(|s| crate::inline::map_text(s, |t| format!("{t}!")))
        .collect();
    let out = doc.merge(&translated).unwrap();
    let slide = crate::testdoc::part(&out, "ppt/slides/slide1.xml");
    let runs = slide.matches("<a:r>").count();
    assert!(runs > 0, "{slide}");
    assert_eq!(slide.matches("<a:rPr lang=\"es\"").count(), runs, "{slide}");
    // python-pptx still reads every text.
    assert!(texts(&read(&dir, &out)).iter().any(|t| t.ends_with('!')));
}

/// `bytes` with more entries (copied raw, then the new ones deflated).
fn with_entries(bytes: &[u8], more: &[(&str, &str)]) -> Vec<u8> {
    use std::io::Write as _;
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..archive.len() {
        writer
            .raw_copy_file(archive.by_index_raw(i).unwrap())
            .unwrap();
    }
    for (name, text) in more {
        writer
            .start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        writer.write_all(text.as_bytes()).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// SmartArt as PowerPoint saves it (no free tool writes SmartArt): the
/// diagram's data points and the drawing cached from them hold the same
/// text; both are translated, alike.
#[test]
fn smartart_data_and_its_cached_drawing_are_translated_alike() {
    const A: &str = r#"xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main""#;
    let data = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<dgm:dataModel xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram" {A}><dgm:ptLst><dgm:pt modelId="{{1}}" type="doc"><dgm:prSet/><dgm:spPr/><dgm:t><a:bodyPr/><a:lstStyle/><a:p><a:endParaRPr lang="en-US"/></a:p></dgm:t></dgm:pt><dgm:pt modelId="{{2}}"><dgm:prSet phldrT="[Text]"/><dgm:spPr/><dgm:t><a:bodyPr/><a:lstStyle/><a:p><a:r><a:rPr lang="en-US"/><a:t>Plan the work</a:t></a:r></a:p></dgm:t></dgm:pt><dgm:pt modelId="{{3}}"><dgm:prSet phldrT="[Text]"/><dgm:spPr/><dgm:t><a:bodyPr/><a:lstStyle/><a:p><a:r><a:rPr lang="en-US"/><a:t>Do the work</a:t></a:r></a:p></dgm:t></dgm:pt></dgm:ptLst><dgm:cxnLst/><dgm:bg/><dgm:whole/></dgm:dataModel>"#
    );
    let drawing = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<dsp:drawing xmlns:dsp="http://schemas.microsoft.com/office/drawing/2008/diagram" {A}><dsp:spTree><dsp:nvGrpSpPr><dsp:cNvPr id="0" name=""/><dsp:cNvGrpSpPr/></dsp:nvGrpSpPr><dsp:grpSpPr/><dsp:sp modelId="{{2}}"><dsp:nvSpPr><dsp:cNvPr id="0" name=""/><dsp:cNvSpPr/></dsp:nvSpPr><dsp:spPr/><dsp:txBody><a:bodyPr/><a:lstStyle/><a:p><a:r><a:rPr lang="en-US"/><a:t>Plan the work</a:t></a:r></a:p></dsp:txBody></dsp:sp><dsp:sp modelId="{{3}}"><dsp:nvSpPr><dsp:cNvPr id="0" name=""/><dsp:cNvSpPr/></dsp:nvSpPr><dsp:spPr/><dsp:txBody><a:bodyPr/><a:lstStyle/><a:p><a:r><a:rPr lang="en-US"/><a:t>Do the work</a:t></a:r></a:p></dsp:txBody></dsp:sp></dsp:spTree></dsp:drawing>"#
    );
    let dir = folder("smartart");
    let bytes = with_entries(
        &deck(&dir),
        &[
            ("ppt/diagrams/data1.xml", &data),
            ("ppt/diagrams/drawing1.xml", &drawing),
        ],
    );
    let doc = pptx(&bytes);
    let count = |text: &str| doc.segments().iter().filter(|s| *s == text).count();
    assert_eq!(count("Plan the work"), 2, "{:?}", doc.segments());
    assert_eq!(count("Do the work"), 2, "{:?}", doc.segments());
    let out = uppercased(&bytes, DocumentFormat::Pptx);
    for name in ["ppt/diagrams/data1.xml", "ppt/diagrams/drawing1.xml"] {
        let xml = crate::testdoc::part(&out, name);
        assert!(xml.contains("<a:t>PLAN THE WORK</a:t>"), "{xml}");
        assert!(xml.contains("<a:t>DO THE WORK</a:t>"), "{xml}");
        assert!(!xml.contains("the work"), "{xml}");
    }
}

#[test]
fn a_run_in_another_language_is_kept_when_the_marks_are_meaningful() {
    let dir = folder("languages");
    let path = dir.join("languages.pptx");
    make_pptx(&[Path::new("languages"), &path]);
    let bytes = std::fs::read(&path).unwrap();
    let with_source = |code: &str| {
        let options = crate::ExtractOptions {
            source_language: Some(code.to_owned()),
            ..Default::default()
        };
        crate::extract_with(DocumentFormat::Pptx, &bytes, options).unwrap()
    };
    // English source: the runs marked en-US are text, the French one stays.
    let english = with_source("EN-GB");
    let body: Vec<String> = english
        .segments()
        .iter()
        .filter(|s| s.contains("office"))
        .map(|s| crate::inline::plain_text(s))
        .collect();
    assert_eq!(body, ["The office has a certain  and a garden."]);
    let out = uppercase_merge(&english);
    let seen = texts(&read(&dir, &out));
    assert!(
        seen.contains(&"THE OFFICE HAS A CERTAIN joie de vivre AND A GARDEN.".to_owned()),
        "{seen:?}"
    );
    // A Spanish source no run is marked with: the en-US marks are only the
    // editing language, and every run is translated.
    let spanish = with_source("ES");
    assert!(
        spanish
            .segments()
            .iter()
            .any(|s| s.contains("joie de vivre")),
        "{:?}",
        spanish.segments()
    );
}

/// A chart workbook that cannot be read is copied as it is; the rest of the
/// deck is translated, chart caches included.
#[test]
fn a_damaged_chart_workbook_is_kept_as_it_is() {
    use std::io::Write;
    let dir = folder("damaged-workbook");
    let bytes = deck(&dir);
    let mut damaged = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let mut found = false;
    for (name, data) in crate::testdoc::entries(&bytes) {
        let workbook = name.starts_with("ppt/embeddings/") && name.ends_with(".xlsx");
        found |= workbook;
        let data = if workbook {
            b"PK\x03\x04 not a workbook".to_vec()
        } else {
            data
        };
        damaged
            .start_file(name.as_str(), zip::write::SimpleFileOptions::default())
            .unwrap();
        damaged.write_all(&data).unwrap();
    }
    assert!(found, "python-pptx embeds the chart's workbook");
    let damaged = damaged.finish().unwrap().into_inner();
    let doc = pptx(&damaged);
    let out = uppercase_merge(&doc);
    let (before, after) = (
        crate::testdoc::entries(&damaged),
        crate::testdoc::entries(&out),
    );
    let workbook = |entries: &[(String, Vec<u8>)]| {
        entries
            .iter()
            .find(|(n, _)| n.starts_with("ppt/embeddings/"))
            .map(|(_, d)| d.clone())
    };
    assert_eq!(workbook(&before), workbook(&after));
    let path = dir.join("out.pptx");
    std::fs::write(&path, &out).unwrap();
    let read: Value = serde_json::from_str(&make_pptx(&[Path::new("frames"), &path])).unwrap();
    assert_eq!(
        read["charts"],
        serde_json::json!([[["NORTH", "SOUTH"], ["SALES"]]]),
        "{read}"
    );
}
