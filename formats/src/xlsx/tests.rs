use std::io::{Cursor, Read, Write};

use calamine::{Data, Reader, Xlsx, open_workbook_from_rs};
use zip::write::SimpleFileOptions;
use zip::{ZipArchive, ZipWriter};

use crate::testdoc::{
    assert_segments, raw_entries, test_folder, testdata_script, uppercased, zip_of,
};
use crate::{DocumentFormat, FormatError, extract};

/// The workbook openpyxl writes (`testdata/make_xlsx.py`).
fn workbook(name: &str) -> Vec<u8> {
    let path = test_folder(&format!("xlsx-{name}")).join("book.xlsx");
    testdata_script("make_xlsx.py", &[&path]);
    std::fs::read(&path).unwrap()
}

/// Every cell of every sheet as calamine reads it, with the sheet names.
fn cells(bytes: &[u8]) -> Vec<(String, Vec<Vec<Data>>)> {
    let mut book: Xlsx<_> = open_workbook_from_rs(Cursor::new(bytes.to_vec())).unwrap();
    book.sheet_names()
        .into_iter()
        .map(|name| {
            let range = book.worksheet_range(&name).unwrap();
            let rows = range.rows().map(<[Data]>::to_vec).collect();
            (name, rows)
        })
        .collect()
}

#[test]
fn cell_strings_and_comments_are_segments_and_numbers_are_not() {
    let doc = extract(DocumentFormat::Xlsx, &workbook("segments")).unwrap();
    let plain = crate::testdoc::plain_texts(&doc);
    assert_segments(
        &doc,
        &[
            "The house is small.",
            "The city",
            "The country",
            "The number is wrong.",
        ],
    );
    assert!(
        plain.iter().any(|p| p.contains("The garden\nThe street")),
        "{plain:?}"
    );
    assert!(
        plain
            .iter()
            .all(|p| !p.contains("SUM") && !p.contains("10.5") && !p.contains("Sales")),
        "{plain:?}"
    );
}

#[test]
fn an_untranslated_workbook_is_byte_identical() {
    let bytes = workbook("identity");
    let doc = extract(DocumentFormat::Xlsx, &bytes).unwrap();
    let out = doc.merge(doc.segments()).unwrap();
    assert_eq!(raw_entries(&bytes), raw_entries(&out));
}

#[test]
fn calamine_reads_translated_strings_and_the_same_numbers_formulas_and_names() {
    let bytes = workbook("translated");
    let out = uppercased(&bytes, DocumentFormat::Xlsx);
    let (before, after) = (cells(&bytes), cells(&out));
    assert_eq!(before.len(), after.len());
    for ((name_b, rows_b), (name_a, rows_a)) in before.iter().zip(&after) {
        assert_eq!(name_b, name_a, "sheet names are not translated");
        for (row_b, row_a) in rows_b.iter().zip(rows_a) {
            for (b, a) in row_b.iter().zip(row_a) {
                match b {
                    Data::String(s) => assert_eq!(a, &Data::String(s.to_uppercase())),
                    other => assert_eq!(a, other, "non-text cells stay as they are"),
                }
            }
        }
    }
    let mut book: Xlsx<_> = open_workbook_from_rs(Cursor::new(out.clone())).unwrap();
    let formulas = book.worksheet_formula("Sales").unwrap();
    assert!(
        formulas.used_cells().any(|(_, _, f)| f == "SUM(B1:B2)"),
        "the formula is kept"
    );
    assert_eq!(
        book.defined_names(),
        [("Total".to_owned(), "Sales!$B$3".to_owned())]
    );
    let comments = String::from_utf8(
        crate::testdoc::entries(&out)
            .into_iter()
            .find(|(n, _)| n == "xl/comments/comment1.xml")
            .map(|(_, b)| b)
            .unwrap_or_default(),
    )
    .unwrap_or_default();
    assert!(comments.contains("THE NUMBER IS WRONG."), "{comments}");
    assert!(comments.contains("<author>Ana</author>"), "{comments}");
}

/// The workbook with an extra binary entry standing for the VBA project.
fn with_macros(bytes: &[u8], project: &[u8]) -> Vec<u8> {
    let mut archive = ZipArchive::new(Cursor::new(bytes)).unwrap();
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    for i in 0..archive.len() {
        let entry = archive.by_index_raw(i).unwrap();
        writer.raw_copy_file(entry).unwrap();
    }
    writer
        .start_file("xl/vbaProject.bin", SimpleFileOptions::default())
        .unwrap();
    writer.write_all(project).unwrap();
    writer.finish().unwrap().into_inner()
}

#[test]
fn the_macros_of_an_xlsm_are_byte_identical() {
    let project: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    let bytes = with_macros(&workbook("xlsm"), &project);
    let out = uppercased(&bytes, DocumentFormat::Xlsm);
    let find = |b: &[u8]| {
        raw_entries(b)
            .into_iter()
            .find(|(n, _, _)| n == "xl/vbaProject.bin")
            .unwrap()
    };
    assert_eq!(find(&bytes), find(&out));
    let mut archive = ZipArchive::new(Cursor::new(out.as_slice())).unwrap();
    let mut read = Vec::new();
    archive
        .by_name("xl/vbaProject.bin")
        .unwrap()
        .read_to_end(&mut read)
        .unwrap();
    assert_eq!(read, project);
}

#[test]
fn a_rich_shared_string_keeps_its_bold_run() {
    let shared = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="2" uniqueCount="2"><si><t>The city</t></si><si><r><t xml:space="preserve">The house is </t></r><r><rPr><b/><sz val="11"/></rPr><t>small</t></r><r><t>.</t></r></si></sst>"#;
    let bytes = zip_of(&[
        ("xl/workbook.xml", "<workbook/>"),
        ("xl/sharedStrings.xml", shared),
    ]);
    let doc = extract(DocumentFormat::Xlsx, &bytes).unwrap();
    assert_eq!(
        doc.segments(),
        ["The city", "The house is <g id=\"1\">small</g>."]
    );
    let out = doc
        .merge(&[
            "La ciudad".to_owned(),
            "La casa es <g id=\"1\">pequeña</g>.".to_owned(),
        ])
        .unwrap();
    let xml = crate::testdoc::part(&out, "xl/sharedStrings.xml");
    assert!(
        xml.contains("<si><t xml:space=\"preserve\">La ciudad</t></si>"),
        "{xml}"
    );
    assert!(
        xml.contains("<rPr><b/><sz val=\"11\"/></rPr><t xml:space=\"preserve\">pequeña</t>"),
        "{xml}"
    );
}

#[test]
fn a_file_that_is_not_a_workbook_is_refused() {
    let e = extract(
        DocumentFormat::Xlsx,
        &zip_of(&[("word/document.xml", "<w:document/>")]),
    )
    .unwrap_err();
    assert!(matches!(e, FormatError::Corrupt(_)), "{e:?}");
    assert!(e.to_string().contains("xl/workbook.xml is missing"), "{e}");
}

#[test]
fn threaded_comments_are_translated() {
    let thread = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<ThreadedComments xmlns="http://schemas.microsoft.com/office/spreadsheetml/2018/threadedcomments"><threadedComment ref="A1" dT="2026-05-01T10:00:00.00" personId="{1}" id="{2}"><text>The number is wrong.</text></threadedComment></ThreadedComments>"#;
    let bytes = zip_of(&[
        ("xl/workbook.xml", "<workbook/>"),
        ("xl/threadedComments/threadedComment1.xml", thread),
    ]);
    let doc = extract(DocumentFormat::Xlsx, &bytes).unwrap();
    assert_eq!(doc.segments(), ["The number is wrong."]);
    let out = doc.merge(&["El número es incorrecto.".to_owned()]).unwrap();
    let xml = crate::testdoc::part(&out, "xl/threadedComments/threadedComment1.xml");
    assert!(
        xml.contains("<text>El número es incorrecto.</text>"),
        "{xml}"
    );
}

#[test]
fn chart_and_axis_titles_are_translated() {
    let bytes = workbook("chart");
    let doc = extract(DocumentFormat::Xlsx, &bytes).unwrap();
    assert_segments(&doc, &["The sales of the year", "The money"]);
    let out = uppercased(&bytes, DocumentFormat::Xlsx);
    let chart = crate::testdoc::part(&out, "xl/charts/chart1.xml");
    assert!(chart.contains(">THE SALES OF THE YEAR<"), "{chart}");
    assert!(chart.contains(">THE MONEY<"), "{chart}");
    // The series still points at the same cells.
    assert!(chart.contains("'Sales'!$B$1:$B$2"), "{chart}");
}

/// `bytes` translated by upper-casing with `'S` added (a quote, which
/// structured references must escape).
fn possessive(bytes: &[u8]) -> Vec<u8> {
    let doc = extract(DocumentFormat::Xlsx, bytes).unwrap();
    let translated: Vec<String> = doc
        .segments()
        .iter()
        .map(|s| crate::testdoc::map_text(s, |t| format!("{}'S", t.to_uppercase())))
        .collect();
    doc.merge(&translated).unwrap()
}

#[test]
fn tables_formulas_and_chart_caches_follow_the_translated_cells() {
    let dir = test_folder("xlsx-table");
    let book = dir.join("book.xlsx");
    testdata_script("make_xlsx_table.py", &[&book]);
    // LibreOffice writes the chart's caches, which openpyxl leaves out.
    let resaved = dir.join("lo");
    crate::contract::soffice(&dir, "xlsx", &resaved, std::slice::from_ref(&book));
    for (name, source) in [
        ("openpyxl", book.clone()),
        ("libreoffice", resaved.join("book.xlsx")),
    ] {
        let out = possessive(&std::fs::read(&source).unwrap());
        let path = dir.join(format!("{name}-translated.xlsx"));
        std::fs::write(&path, &out).unwrap();
        let report = testdata_script("read_xlsx_table.py", &[&path]);
        assert_eq!(report.trim(), "ok", "{name}: {report}");
        let table = crate::testdoc::part(&out, "xl/tables/table1.xml");
        assert!(table.contains("name=\"AMOUNT'S\""), "{table}");
        let sheet = crate::testdoc::part(&out, "xl/worksheets/sheet1.xml");
        assert!(sheet.contains("SUM(Orders[AMOUNT''S])"), "{sheet}");
        assert!(
            sheet.contains("COUNTA(Orders[[#Data],[REGION''S]])"),
            "{sheet}"
        );
    }
    let chart = crate::testdoc::part(
        &possessive(&std::fs::read(resaved.join("book.xlsx")).unwrap()),
        "xl/charts/chart1.xml",
    );
    assert!(
        chart.contains("<c:v>EAST&apos;S</c:v>") || chart.contains("<c:v>EAST'S</c:v>"),
        "{chart}"
    );
    // LibreOffice computes the translated formulas: their references resolve.
    let csv = dir.join("csv");
    crate::contract::soffice(&dir, "csv", &csv, &[dir.join("openpyxl-translated.xlsx")]);
    let values = std::fs::read_to_string(csv.join("openpyxl-translated.csv")).unwrap();
    let rows: Vec<&str> = values.lines().collect();
    assert!(rows[0].ends_with("TOTAL'S,60"), "{values}");
    assert!(rows[1].ends_with("COUNT'S,3"), "{values}");
}

/// A sheet's page header and footer: each section's text translated, its
/// codes (font, size, page number, page count, date) kept as openpyxl reads
/// them.
#[test]
fn page_headers_and_footers_are_translated_with_their_codes() {
    let dir = test_folder("xlsx-headers");
    let book = dir.join("book.xlsx");
    testdata_script("make_xlsx_table.py", &[&book]);
    let path = dir.join("translated.xlsx");
    std::fs::write(&path, possessive(&std::fs::read(&book).unwrap())).unwrap();
    let read = |path: &std::path::Path| -> serde_json::Value {
        serde_json::from_str(&testdata_script(
            "read_xlsx_table.py",
            &[path, std::path::Path::new("headers")],
        ))
        .unwrap()
    };
    assert_eq!(
        read(&book),
        serde_json::json!({
            "oddHeader.left": ["Confidential", "Arial,Bold", 12],
            "oddHeader.center": ["Page &P of &N", null, null],
            "oddFooter.right": ["Printed on &D", null, null],
        })
    );
    assert_eq!(
        read(&path),
        serde_json::json!({
            "oddHeader.left": ["CONFIDENTIAL'S", "Arial,Bold", 12],
            "oddHeader.center": ["PAGE 'S&P OF 'S&N", null, null],
            "oddFooter.right": ["PRINTED ON 'S&D", null, null],
        })
    );
}

/// A pivot table as LibreOffice writes one (a DataPilot saved as .xlsx):
/// its cache's field names and text items follow the translated cells, as
/// Excel needs to refresh it (openpyxl reads the cache against the sheet).
#[test]
fn a_libreoffice_pivot_cache_follows_the_translated_cells() {
    let dir = test_folder("xlsx-pivot");
    let ods = dir.join("book.ods");
    testdata_script("make_xlsx_pivot.py", &[&ods]);
    let made = dir.join("lo");
    crate::contract::soffice(&dir, "xlsx", &made, std::slice::from_ref(&ods));
    let source = std::fs::read(made.join("book.xlsx")).unwrap();
    let cache = crate::testdoc::part(&source, "xl/pivotCache/pivotCacheDefinition1.xml");
    assert!(cache.contains("<s v=\"North\"/>"), "{cache}");
    let out = possessive(&source);
    let path = dir.join("translated.xlsx");
    std::fs::write(&path, &out).unwrap();
    let report = testdata_script("read_xlsx_table.py", &[&path]);
    assert_eq!(report.trim(), "ok", "{report}");
    let cache = crate::testdoc::part(&out, "xl/pivotCache/pivotCacheDefinition1.xml");
    for wanted in [
        "name=\"REGION&apos;S\"",
        "<s v=\"NORTH&apos;S\"/>",
        "<s v=\"PEARS&apos;S\"/>",
    ] {
        let plain = wanted.replace("&apos;", "'");
        assert!(
            cache.contains(wanted) || cache.contains(&plain),
            "{wanted}: {cache}"
        );
    }
}
