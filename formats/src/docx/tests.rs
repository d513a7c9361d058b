use std::path::Path;

use crate::testdoc::{entries, map_text, package, part, raw_entries, uppercase_merge, zip_of};
use crate::xml;
use crate::{DocumentFormat, Extracted, FormatError, extract};

/// Word files written by python-docx for these tests
/// (`testdata/make_docx.py`, run once per test process into a temporary
/// folder): hyperlinks, run formatting, headers and footers, odd and even
/// headers, tables, lists, a picture, line breaks, positional tabs and
/// tracked changes inside words, a text box LibreOffice wrote, runs marked
/// with other languages.
const GENERATED: &[&str] = &[
    "hyperlinks",
    "font-props",
    "header-footer",
    "odd-even-headers",
    "tables",
    "numbering",
    "images",
    "breaks",
    "textbox",
    "languages",
];

/// The folder of the generated files.
fn generated_dir() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = crate::testdoc::test_folder("docx-tests");
        crate::testdoc::testdata_script("make_docx.py", &[&dir]);
        dir
    })
}

/// A generated file by name.
fn fixture(name: &str) -> Vec<u8> {
    let path = generated_dir().join(format!("{name}.docx"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every generated file, and the `.docx` files of `$TOLK_FIXTURES_DIR/docx`
/// when that variable names a folder (an external corpus of real files that
/// runs in addition; never needed).
fn fixtures() -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<(String, Vec<u8>)> = GENERATED
        .iter()
        .map(|&n| (n.to_owned(), fixture(n)))
        .collect();
    if let Some(dir) = std::env::var_os("TOLK_FIXTURES_DIR") {
        let dir = std::path::PathBuf::from(dir).join("docx");
        let mut paths: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("TOLK_FIXTURES_DIR: {}: {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "docx"))
            .collect();
        paths.sort();
        for path in paths {
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            all.push((path.display().to_string(), bytes));
        }
    }
    all
}

const TRANSLATED_PARTS: &[&str] = &[
    "word/document.xml",
    "word/header1.xml",
    "word/header2.xml",
    "word/header3.xml",
    "word/footer1.xml",
    "word/footer2.xml",
    "word/footer3.xml",
    "word/footnotes.xml",
    "word/endnotes.xml",
];

fn docx(bytes: &[u8]) -> Extracted {
    extract(DocumentFormat::Docx, bytes).unwrap()
}

/// The same text and tags, written differently, so merge rebuilds the paragraph.
fn rebuilt(segment: &str) -> String {
    format!("{segment}<x id=\"999\"/>")
}

/// Every translated part of a package is well-formed XML.
fn assert_well_formed(docx: &[u8]) {
    for (name, bytes) in entries(docx) {
        if TRANSLATED_PARTS.contains(&name.as_str()) {
            let text = String::from_utf8(bytes).unwrap();
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            if let Err(e) = xml::parse(text) {
                panic!("{name} is not well-formed: {e}\n{text}");
            }
        }
    }
}

#[test]
fn fixtures_identity_is_byte_identical() {
    for (name, bytes) in &fixtures() {
        let doc = docx(bytes);
        let out = doc.merge(doc.segments()).unwrap();
        // Same entries, same order, same content; untouched entries keep
        // their compressed bytes.
        assert_eq!(entries(&out), entries(bytes), "{name}");
        let (before, after) = (raw_entries(bytes), raw_entries(&out));
        assert_eq!(before.len(), after.len());
        for (b, a) in before.iter().zip(&after) {
            assert_eq!(b.0, a.0, "{name}: entry order");
            if !TRANSLATED_PARTS.contains(&b.0.as_str()) {
                assert_eq!(b, a, "{name}: {} must be copied raw", b.0);
            }
        }
    }
}

#[test]
fn fixtures_rebuilt_paragraphs_keep_text_and_formatting() {
    for (name, bytes) in &fixtures() {
        let doc = docx(bytes);
        let translated: Vec<String> = doc.segments().iter().map(|s| rebuilt(s)).collect();
        let out = doc.merge(&translated).unwrap();
        assert_well_formed(&out);
        // Re-extracting gives the same segments: same text, same spans.
        assert_eq!(docx(&out).segments(), doc.segments(), "{name}");
    }
}

#[test]
fn fixtures_translated_text_is_written() {
    for (name, bytes) in &fixtures() {
        let doc = docx(bytes);
        let translated: Vec<String> = doc
            .segments()
            .iter()
            .map(|s| map_text(s, str::to_uppercase))
            .collect();
        let out = doc.merge(&translated).unwrap();
        assert_well_formed(&out);
        assert_eq!(docx(&out).segments(), translated.as_slice(), "{name}");
    }
}

#[test]
fn fixture_segments() {
    // python-docx describes every file it writes; that property is a segment
    // too (see `document_properties_are_translated`), left out here.
    let segments = |name: &str| {
        docx(&fixture(name))
            .segments()
            .iter()
            .filter(|s| *s != PYTHON_DOCX_DESCRIPTION)
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        segments("hyperlinks"),
        [
            "No hyperlinks",
            r#"One <g id="1">awesome hyperlink</g>."#,
            r#"Three hyperlinks: <g id="1">the first one</g> here, the <g id="2">second one</g>, and the <g id="3">third</g>."#,
        ]
    );
    assert_eq!(
        segments("font-props")[1..3],
        [
            r#"Plain, <g id="1">bold</g>, <g id="2">italic</g> and <g id="3">underlined</g> words."#,
            r#"Text having some <g id="1">superscript</g> and some <g id="2">subscript</g>."#,
        ]
    );
    // Body first, then headers and footers in archive order.
    assert_eq!(
        segments("header-footer"),
        [
            "section with header",
            "section without header of its own.",
            "Header for section-1",
            "Footer for section 1",
        ]
    );
    assert_eq!(
        segments("odd-even-headers")[3..],
        ["Odd page header", "Even page header"]
    );
    let cells = segments("tables");
    assert!(cells.contains(&r#"<g id="1">Bold</g> inside a cell"#.to_owned()));
    assert!(cells.contains(&"A merged cell".to_owned()));
    assert_eq!(cells.last().map(String::as_str), Some("After the table."));
    assert_eq!(
        segments("numbering")[1..4],
        ["Open the box.", "Take the cable.", "Plug it in."]
    );
    assert_eq!(segments("images"), ["A picture of a red square."]);
    // A segment never crosses a line break or a positional tab: the links
    // between breaks are three segments without tags, the header's tab zones
    // three more; a tracked change cutting a word leaves it whole.
    assert_eq!(
        segments("breaks"),
        [
            "The first link",
            "The second link",
            "The third link",
            r#"The house is here<x id="1"/> now and the dog is there<x id="2"/> too."#,
            "Left",
            "Centre",
            "Right",
        ]
    );
}

/// What python-docx and lxml read in a Word file (`make_docx.py --read`).
fn read_back(bytes: &[u8]) -> serde_json::Value {
    static FILES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = FILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = crate::testdoc::test_folder("docx-read").join(format!("{n}.docx"));
    std::fs::write(&path, bytes).unwrap();
    let out = crate::testdoc::testdata_script("make_docx.py", &[Path::new("--read"), &path]);
    serde_json::from_str(&out).unwrap()
}

#[test]
fn links_between_line_breaks_keep_their_own_targets_and_words() {
    let doc = docx(&fixture("breaks")).with_target_language("ES");
    let out = uppercase_merge(&doc);
    assert_well_formed(&out);
    let seen = read_back(&out);
    assert_eq!(
        seen["links"],
        serde_json::json!([
            ["https://example.com/a", "THE FIRST LINK"],
            ["https://example.com/b", "THE SECOND LINK"],
            ["https://example.com/c", "THE THIRD LINK"],
        ])
    );
    assert_eq!(seen["nested_links"], 0);
    let paragraphs = seen["paragraphs"].as_array().unwrap();
    for expected in [
        "THE FIRST LINKTHE SECOND LINKTHE THIRD LINK",
        "THE HOUSE IS HERE NOW AND THE DOG IS THERE TOO.",
        "LEFTCENTRERIGHT",
    ] {
        assert!(paragraphs.contains(&expected.into()), "{paragraphs:?}");
    }
    // The breaks and tabs are where they were, the deletion still recorded.
    let xml = part(&out, "word/document.xml");
    assert_eq!(xml.matches("<w:br/>").count(), 2, "{xml}");
    assert!(
        xml.contains("<w:delText xml:space=\"preserve\">x</w:delText>"),
        "{xml}"
    );
    let header = part(&out, "word/header1.xml");
    assert_eq!(header.matches("<w:ptab ").count(), 2, "{header}");
}

#[test]
fn runs_marked_with_another_language_than_the_source_keep_their_text() {
    let bytes = fixture("languages");
    let options = crate::ExtractOptions {
        source_language: Some("EN".to_owned()),
        ..Default::default()
    };
    let doc = crate::extract_with(DocumentFormat::Docx, &bytes, options)
        .unwrap()
        .with_target_language("ES");
    // python-docx's document description first (its archives hold
    // docProps/core.xml before the body); then the French phrase is a
    // placeholder, the German paragraph no segment, the British English run
    // text.
    let texts = crate::testdoc::plain_texts(&doc);
    assert_eq!(
        texts,
        [
            "generated by python-docx",
            "The house has a certain  and a garden.",
            "The colour is red.",
        ],
        "{:?}",
        doc.segments()
    );
    let out = uppercase_merge(&doc);
    assert_well_formed(&out);
    let seen = read_back(&out);
    let paragraphs = seen["paragraphs"].as_array().unwrap();
    for expected in [
        "THE HOUSE HAS A CERTAIN joie de vivre AND A GARDEN.",
        "Das Haus ist groß.",
        "THE COLOUR IS RED.",
    ] {
        assert!(paragraphs.contains(&expected.into()), "{paragraphs:?}");
    }
    // Without a given source language every run is translated; and with a
    // source language no run is marked with (here Spanish), the marks say
    // nothing about the text (Office writes its editing language on runs).
    let spanish = crate::ExtractOptions {
        source_language: Some("ES".to_owned()),
        ..Default::default()
    };
    for all in [
        docx(&bytes),
        crate::extract_with(DocumentFormat::Docx, &bytes, spanish).unwrap(),
    ] {
        let segments = all.segments();
        assert!(
            segments.iter().any(|s| s.contains("joie de vivre"))
                && segments.iter().any(|s| s == "Das Haus ist groß."),
            "{segments:?}"
        );
    }
}

#[test]
fn a_text_box_and_its_vml_fallback_are_translated_alike() {
    let bytes = fixture("textbox");
    let doc = docx(&bytes);
    let copies = doc
        .segments()
        .iter()
        .filter(|s| *s == "The text inside the box.")
        .count();
    assert_eq!(copies, 2, "{:?}", doc.segments());
    let out = uppercase_merge(&doc);
    assert_well_formed(&out);
    let xml = part(&out, "word/document.xml");
    let fallback = &xml[xml.find("<mc:Fallback").unwrap()..];
    let choice = &xml[..xml.find("<mc:Fallback").unwrap()];
    for copy in [choice, fallback] {
        assert!(copy.contains("THE TEXT INSIDE THE BOX."), "{xml}");
        assert!(!copy.contains("The text inside"), "{xml}");
    }
    // python-docx still reads the body.
    let seen = read_back(&out);
    assert!(
        seen["paragraphs"].as_array().unwrap().iter().any(|p| p
            .as_str()
            .unwrap_or("")
            .contains("THE PARAGRAPH BEFORE THE BOX.")),
        "{seen}"
    );
}

#[test]
fn translated_runs_are_marked_with_the_target_language() {
    let bytes = fixture("font-props");
    let doc = docx(&bytes).with_target_language("PT-BR");
    let translated: Vec<String> = doc
        .segments()
        .iter()
        .map(|s| map_text(s, |t| format!("{t}!")))
        .collect();
    let out = doc.merge(&translated).unwrap();
    assert_well_formed(&out);
    assert_eq!(read_back(&out)["languages"], serde_json::json!(["pt-BR"]));
    // Untranslated (identity) output is the source, language marks included.
    let same = doc.merge(doc.segments()).unwrap();
    assert_eq!(raw_entries(&same), raw_entries(&bytes));
}

/// The description python-docx gives every file it writes.
const PYTHON_DOCX_DESCRIPTION: &str = "generated by python-docx";

#[test]
fn document_properties_are_translated() {
    let doc = docx(&fixture("hyperlinks"));
    assert!(doc.segments().contains(&PYTHON_DOCX_DESCRIPTION.to_owned()));
    let out = uppercase_merge(&doc);
    let core = part(&out, "docProps/core.xml");
    assert!(
        core.contains(">GENERATED BY PYTHON-DOCX</dc:description>"),
        "{core}"
    );
}

#[test]
fn hyperlink_translation_and_reordering() {
    let bytes = fixture("hyperlinks");
    let doc = docx(&bytes);
    // The relationship ids of the four links, in document order.
    let source = part(&bytes, "word/document.xml");
    let ids: Vec<String> = source
        .match_indices("<w:hyperlink ")
        .filter_map(|(at, _)| {
            let tail = &source[at..];
            let start = tail.find("r:id=\"")? + 6;
            let end = start + tail[start..].find('"')?;
            Some(tail[start..end].to_owned())
        })
        .collect();
    assert_eq!(ids.len(), 4, "{source}");
    // The body's first three segments (after the properties' description,
    // which python-docx's archives hold first).
    let mut translated = doc.segments().to_vec();
    let body = translated
        .iter()
        .position(|s| s != PYTHON_DOCX_DESCRIPTION)
        .unwrap();
    translated.splice(
        body..body + 3,
        [
            "Keine Hyperlinks".to_owned(),
            r#"Ein <g id="1">toller Hyperlink</g>."#.to_owned(),
            r#"<g id="3">Dritter</g>, <g id="2">zweiter</g> und <g id="1">erster</g>."#.to_owned(),
        ],
    );
    let out = doc.merge(&translated).unwrap();
    let xml = part(&out, "word/document.xml");
    let link = |id: &str| {
        let start = xml.find(&format!("r:id=\"{id}\"")).unwrap();
        let end = start + xml[start..].find("</w:hyperlink>").unwrap();
        xml[start..end].to_owned()
    };
    assert!(link(&ids[0]).contains(">toller Hyperlink</w:t>"));
    assert!(link(&ids[0]).contains(r#"<w:u w:val="single"/>"#));
    assert!(link(&ids[3]).contains(">Dritter</w:t>"));
    assert!(link(&ids[2]).contains(">zweiter</w:t>"));
    assert!(link(&ids[1]).contains(">erster</w:t>"));
    let at = |id: &str| xml.find(&format!("r:id=\"{id}\"")).unwrap();
    assert!(at(&ids[3]) < at(&ids[1]));
    assert_eq!(
        docx(&out).segments()[body + 2],
        r#"<g id="1">Dritter</g>, <g id="2">zweiter</g> und <g id="3">erster</g>."#
    );
}

/// A hand-made document: bold run, hyperlink, field, tab, table, text box, header.
fn sample() -> Vec<u8> {
    let body = concat!(
        r#"<w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:t>Report &amp; summary</w:t></w:r></w:p>"#,
        r#"<w:p><w:r><w:t xml:space="preserve">Click </w:t></w:r>"#,
        r#"<w:r><w:rPr><w:b/></w:rPr><w:t>here</w:t></w:r>"#,
        r#"<w:r><w:t xml:space="preserve"> to visit </w:t></w:r>"#,
        r#"<w:hyperlink r:id="rId7"><w:r><w:rPr><w:rStyle w:val="Hyperlink"/></w:rPr><w:t>our site</w:t></w:r></w:hyperlink>"#,
        r#"<w:r><w:t>.</w:t></w:r></w:p>"#,
        r#"<w:p><w:r><w:t>Name:</w:t></w:r><w:r><w:tab/><w:t>Ann</w:t></w:r>"#,
        r#"<w:r><w:t xml:space="preserve">, updated </w:t></w:r>"#,
        r#"<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> DATE </w:instrText></w:r>"#,
        r#"<w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>1/2/2024</w:t></w:r>"#,
        r#"<w:r><w:fldChar w:fldCharType="end"/></w:r><w:r><w:t>.</w:t></w:r></w:p>"#,
        r#"<w:tbl><w:tblPr><w:tblW w:w="0" w:type="auto"/></w:tblPr><w:tblGrid><w:gridCol w:w="2000"/><w:gridCol w:w="2000"/></w:tblGrid><w:tr>"#,
        r#"<w:tc><w:p><w:r><w:rPr><w:i/></w:rPr><w:t>Cell A</w:t></w:r></w:p></w:tc>"#,
        r#"<w:tc><w:p><w:r><w:t>Cell B</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"#,
        r#"<w:p><w:r><w:t>Before the box.</w:t></w:r><w:r><w:pict><v:shape><v:textbox><w:txbxContent>"#,
        r#"<w:p><w:r><w:t>Inside the box</w:t></w:r></w:p></w:txbxContent></v:textbox></v:shape></w:pict></w:r>"#,
        r#"<w:r><w:t xml:space="preserve"> After the box.</w:t></w:r></w:p>"#,
        r#"<w:p><w:r><w:rPr><w:b/><w:lang w:val="en-US"/></w:rPr><w:t xml:space="preserve">All </w:t></w:r>"#,
        r#"<w:r><w:rPr><w:b/><w:lang w:val="en-GB"/></w:rPr><w:t>bold</w:t></w:r></w:p>"#,
        r#"<w:p><w:r><w:t xml:space="preserve">   </w:t></w:r></w:p><w:p/>"#,
    );
    package(body, r#"<w:p><w:r><w:t>Confidential</w:t></w:r></w:p>"#)
}

#[test]
fn sample_segments() {
    let doc = docx(&sample());
    assert_eq!(
        doc.segments(),
        [
            "Report &amp; summary",
            r#"Click <g id="1">here</g> to visit <g id="2">our site</g>."#,
            r#"Name:<x id="1"/>Ann, updated <g id="2">1/2/2024</g>."#,
            "Cell A",
            "Cell B",
            r#"Before the box.<x id="1"/> After the box."#,
            "Inside the box",
            "All bold",
            "Confidential",
        ]
    );
}

#[test]
fn sample_translation_keeps_formatting() {
    let original = sample();
    let doc = docx(&original);
    let translated: Vec<String> = [
        "Bericht &amp; Zusammenfassung",
        r#"Klicken Sie <g id="1">hier</g>, um <g id="2">unsere Seite</g> zu besuchen."#,
        r#"Name:<x id="1"/>Ann, aktualisiert am <g id="2">2.1.2024</g>."#,
        "Zelle A",
        "Zelle B",
        r#"Vor dem Kasten.<x id="1"/> Nach dem Kasten."#,
        "Im Kasten",
        "Alles fett",
        "Vertraulich",
    ]
    .map(String::from)
    .to_vec();
    let out = doc.merge(&translated).unwrap();
    assert_well_formed(&out);
    let xml = part(&out, "word/document.xml");
    assert!(
        xml.contains(r#"<w:r><w:rPr><w:b/></w:rPr><w:t xml:space="preserve">hier</w:t></w:r>"#)
    );
    assert!(xml.contains(r#"<w:hyperlink r:id="rId7"><w:r><w:rPr><w:rStyle w:val="Hyperlink"/></w:rPr><w:t xml:space="preserve">unsere Seite</w:t></w:r></w:hyperlink>"#));
    assert!(xml.contains(r#"<w:instrText xml:space="preserve"> DATE </w:instrText>"#));
    assert!(xml.contains(r#"<w:tab/></w:r>"#));
    assert!(xml.contains(r#"<w:pPr><w:pStyle w:val="Title"/></w:pPr>"#));
    assert!(xml.contains(r#"<w:rPr><w:i/></w:rPr><w:t xml:space="preserve">Zelle A</w:t>"#));
    assert!(xml.contains(
        r#"<w:rPr><w:b/><w:lang w:val="en-US"/></w:rPr><w:t xml:space="preserve">Alles fett</w:t>"#
    ));
    assert!(xml.contains("<w:tblPr><w:tblW w:w=\"0\" w:type=\"auto\"/></w:tblPr>"));
    assert!(xml.contains(r#"<w:p><w:r><w:t xml:space="preserve">   </w:t></w:r></w:p><w:p/>"#));
    let header = part(&out, "word/header1.xml");
    assert!(header.contains(">Vertraulich</w:t>"));
    // Re-extraction sees the translation, tags included.
    assert_eq!(docx(&out).segments(), translated.as_slice());
    // Everything else is unchanged.
    for ((name, before), (_, after)) in entries(&original).iter().zip(entries(&out)) {
        if name != "word/document.xml" && name != "word/header1.xml" {
            assert_eq!(before, &after, "{name}");
        }
    }
}

#[test]
fn reordered_spans_keep_their_formatting() {
    let doc = docx(&sample());
    let mut translated = doc.segments().to_vec();
    translated[1] = r#"<g id="2">Unsere Seite</g>: <g id="1">hier</g> klicken."#.to_owned();
    let out = doc.merge(&translated).unwrap();
    let xml = part(&out, "word/document.xml");
    let link = xml.find("Unsere Seite").unwrap();
    let bold = xml
        .find(r#"<w:b/></w:rPr><w:t xml:space="preserve">hier"#)
        .unwrap();
    assert!(link < bold);
    assert_eq!(
        docx(&out).segments()[1],
        r#"<g id="1">Unsere Seite</g>: <g id="2">hier</g> klicken."#
    );
}

#[test]
fn broken_translations_do_not_break_the_document() {
    let doc = docx(&sample());
    let n = doc.segments().len();
    let attempts: Vec<Vec<String>> = vec![
        // All tags lost: text in the paragraph's style, the hyperlink and
        // field kept (empty), the text box kept, the tab dropped.
        vec!["plain text only".to_owned(); n],
        // Malformed markup, unknown ids, duplicated placeholders.
        vec![
            r#"a < b & c <g id="42">x</g> <x id="1"/><x id="1"/> </g> <g id="2">open"#.to_owned();
            n
        ],
        // Characters XML forbids, tabs and newlines.
        vec!["bad \u{1} char\tand\nlines".to_owned(); n],
        vec![String::new(); n],
    ];
    for translated in attempts {
        let out = doc.merge(&translated).unwrap();
        assert_well_formed(&out);
        let xml = part(&out, "word/document.xml");
        assert!(xml.contains("<w:txbxContent>"), "the text box must survive");
        assert!(xml.contains(r#"<w:hyperlink r:id="rId7">"#));
        assert!(xml.contains(r#"<w:fldChar w:fldCharType="end"/>"#));
        docx(&out);
    }
    let out = doc
        .merge(&vec!["bad \u{1} char\tand\nlines".to_owned(); n])
        .unwrap();
    let xml = part(&out, "word/document.xml");
    assert!(xml.contains(
        r#"<w:t xml:space="preserve">bad  char</w:t><w:tab/><w:t xml:space="preserve">and</w:t><w:br/><w:t xml:space="preserve">lines</w:t>"#
    ));
}

#[test]
fn merge_checks_the_segment_count() {
    let doc = docx(&sample());
    let err = doc.merge(&[]).unwrap_err();
    assert_eq!(
        err,
        FormatError::Mismatch {
            expected: 9,
            got: 0
        }
    );
}

fn corrupt_message(bytes: &[u8]) -> String {
    match extract(DocumentFormat::Docx, bytes) {
        Err(FormatError::Corrupt(message)) => message,
        other => panic!("expected a Corrupt error, got {other:?}"),
    }
}

#[test]
fn corrupt_inputs_are_reported() {
    assert_eq!(corrupt_message(b""), "The file is empty");
    assert_eq!(
        corrupt_message(b"this is not a zip file at all"),
        "The file is not a valid DOCX document: it is not a ZIP archive"
    );
    let original = sample();
    assert_eq!(
        corrupt_message(&original[..original.len() / 2]),
        "The file is not a valid DOCX document: the ZIP archive is truncated or damaged"
    );
    let no_document = zip_of(&[
        ("[Content_Types].xml", "<Types/>"),
        ("xl/workbook.xml", "<x/>"),
    ]);
    assert_eq!(
        corrupt_message(&no_document),
        "The file is a ZIP archive but not a DOCX document (word/document.xml is missing)"
    );
    for bad in [
        "<w:document><w:body><w:p></w:body></w:document>",
        "<w:document><w:body><w:p><w:r><w:t>cut",
        "no xml here",
        "<w:document>a & b</w:document>",
    ] {
        let package = zip_of(&[("word/document.xml", bad)]);
        let message = corrupt_message(&package);
        assert!(
            message.starts_with(
                "The file is not a valid DOCX document: word/document.xml is not well-formed XML"
            ),
            "{message}"
        );
    }
    let laughs = zip_of(&[(
        "word/document.xml",
        r#"<!DOCTYPE w:document [<!ENTITY a "ha"><!ENTITY b "&a;&a;&a;">]><w:document>&b;</w:document>"#,
    )]);
    assert_eq!(
        corrupt_message(&laughs),
        "The file is not a valid DOCX document: word/document.xml declares a DOCTYPE \
         (entity declarations are not allowed in documents)"
    );
    let latin1 = {
        let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        writer
            .start_file(
                "word/document.xml",
                zip::write::SimpleFileOptions::default(),
            )
            .unwrap();
        std::io::Write::write_all(&mut writer, b"<w:document>caf\xe9</w:document>").unwrap();
        writer.finish().unwrap().into_inner()
    };
    assert!(corrupt_message(&latin1).contains("not valid UTF-8"));
    let mut ole = vec![0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];
    ole.extend([0; 504]);
    let err = extract(DocumentFormat::Docx, &ole).unwrap_err();
    assert!(matches!(err, FormatError::Unsupported(_)));
    assert!(err.to_string().contains("legacy Word (.doc)"));
}

#[test]
fn truncated_and_damaged_files_never_panic() {
    for (_, bytes) in fixtures().iter().take(3) {
        for len in (0..bytes.len()).step_by(bytes.len() / 40 + 1) {
            assert!(extract(DocumentFormat::Docx, &bytes[..len]).is_err());
        }
        for pos in (0..bytes.len()).step_by(bytes.len() / 80 + 1) {
            let mut damaged = bytes.to_vec();
            damaged[pos] ^= 0x5A;
            if let Ok(doc) = extract(DocumentFormat::Docx, &damaged) {
                let translated: Vec<String> = doc.segments().iter().map(|s| rebuilt(s)).collect();
                let _ = doc.merge(&translated);
            }
        }
    }
    let mut noise = Vec::new();
    let mut state = 0x2545_f491_u32;
    for _ in 0..4096 {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        noise.push(state as u8);
    }
    assert!(extract(DocumentFormat::Docx, &noise).is_err());
    let mut fake_zip = b"PK\x03\x04".to_vec();
    fake_zip.extend(&noise);
    assert!(extract(DocumentFormat::Docx, &fake_zip).is_err());
}

#[test]
fn odd_but_valid_markup() {
    let body = concat!(
        // Entities, CDATA, several w:t in a run, an empty run, proofErr.
        r#"<w:p><w:r><w:t>A &lt;b&gt; &#233;</w:t><w:t><![CDATA[ & c]]></w:t></w:r><w:r/>"#,
        r#"<w:proofErr w:type="spellStart"/><w:r><w:t>d</w:t></w:r><w:proofErr w:type="spellEnd"/></w:p>"#,
        // A field spanning paragraphs (TOC-like) and a simple field.
        r#"<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText>TOC</w:instrText></w:r>"#,
        r#"<w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>Chapter 1</w:t></w:r></w:p>"#,
        r#"<w:p><w:r><w:t>Chapter 2</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>"#,
        r#"<w:p><w:r><w:t xml:space="preserve">Page </w:t></w:r><w:fldSimple w:instr="PAGE"><w:r><w:t>3</w:t></w:r></w:fldSimple><w:r><w:t xml:space="preserve"> of the report</w:t></w:r></w:p>"#,
        // A paragraph whose only text is inside a hyperlink, and tracked changes.
        r#"<w:p><w:hyperlink w:anchor="x"><w:r><w:t>Only a link</w:t></w:r></w:hyperlink></w:p>"#,
        r#"<w:p><w:r><w:t xml:space="preserve">Kept </w:t></w:r><w:del w:id="1"><w:r><w:delText>gone</w:delText></w:r></w:del><w:ins w:id="2"><w:r><w:t>new</w:t></w:r></w:ins></w:p>"#,
        // An inline content control.
        r#"<w:p><w:sdt><w:sdtPr><w:alias w:val="Client"/></w:sdtPr><w:sdtContent><w:r><w:t>In a control</w:t></w:r></w:sdtContent></w:sdt>"#,
        r#"<w:r><w:t xml:space="preserve"> and after</w:t></w:r></w:p>"#,
    );
    let doc = docx(&package(body, ""));
    assert_eq!(
        doc.segments(),
        [
            "A &lt;b&gt; é &amp; cd",
            "Chapter 1",
            "Chapter 2",
            r#"Page <g id="1">3</g> of the report"#,
            "Only a link",
            r#"Kept <x id="1"/><g id="2">new</g>"#,
            r#"<g id="1">In a control</g> and after"#,
        ]
    );
    let translated: Vec<String> = doc.segments().iter().map(|s| rebuilt(s)).collect();
    let out = doc.merge(&translated).unwrap();
    assert_well_formed(&out);
    assert_eq!(docx(&out).segments(), doc.segments());
    let xml = part(&out, "word/document.xml");
    assert!(xml.contains(r#"<w:hyperlink w:anchor="x"><w:r><w:t xml:space="preserve">Only a link</w:t></w:r></w:hyperlink>"#));
    assert!(xml.contains("<w:delText>gone</w:delText>"));
    assert!(xml.contains(r#"<w:sdt><w:sdtPr><w:alias w:val="Client"/></w:sdtPr><w:sdtContent><w:r><w:t xml:space="preserve">In a control</w:t></w:r></w:sdtContent></w:sdt>"#));
    assert!(!xml.contains("proofErr"));
}

#[test]
fn entries_with_unsafe_paths_are_refused() {
    for evil in ["../evil.txt", "/etc/evil", "word/../../evil", "C:evil"] {
        let package = zip_of(&[("word/document.xml", "<w:document/>"), (evil, "payload")]);
        let message = corrupt_message(&package);
        assert!(message.contains("unsafe path"), "{evil}: {message}");
        assert!(message.contains(evil), "{evil}: {message}");
    }
}

#[test]
fn a_damaged_entry_the_filter_would_only_copy_is_refused_at_extraction() {
    // Found by the `documents` fuzz target: a package whose untranslated
    // entry has a damaged local header extracted, then failed to merge.
    let mut package = zip_of(&[
        ("word/document.xml", "<w:document/>"),
        ("word/webSettings.xml", "<w:webSettings/>"),
    ]);
    let second = package
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == b"PK\x03\x04")
        .nth(1)
        .map(|(at, _)| at)
        .expect("a second local header");
    package[second + 2] = b'X';
    let message = corrupt_message(&package);
    assert!(message.contains("damaged"), "{message}");
}

#[test]
fn a_marker_inside_a_word_moves_to_the_word_end() {
    let body = r#"<w:p><w:r><w:t xml:space="preserve">The house is her</w:t></w:r><w:commentRangeStart w:id="0"/><w:r><w:t xml:space="preserve">e now.</w:t></w:r><w:commentRangeEnd w:id="0"/></w:p>"#;
    let bytes = package(body, "<w:p/>");
    let doc = docx(&bytes);
    assert_eq!(doc.segments(), [r#"The house is here<x id="1"/> now."#]);
    let out = doc
        .merge(&[r#"La casa está aquí<x id="1"/> ahora."#.to_owned()])
        .unwrap();
    assert_well_formed(&out);
    let xml = part(&out, "word/document.xml");
    assert!(
        xml.contains(r#"aquí</w:t></w:r><w:commentRangeStart w:id="0"/>"#),
        "{xml}"
    );
}

#[test]
fn image_alt_text_is_translated() {
    let body = r#"<w:p><w:r><w:t>The house.</w:t></w:r><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"><wp:docPr id="1" name="Picture 1" descr="A red &amp; white house"/></wp:inline></w:drawing></w:r></w:p>"#;
    let bytes = package(body, "<w:p/>");
    let doc = docx(&bytes);
    assert_eq!(doc.segments(), ["The house.", "A red &amp; white house"]);
    let same = doc.merge(doc.segments()).unwrap();
    assert_eq!(raw_entries(&same), raw_entries(&bytes));
    let out = doc
        .merge(&[
            "La casa.".to_owned(),
            "Una casa \"roja\" &amp; blanca".to_owned(),
        ])
        .unwrap();
    assert_well_formed(&out);
    let xml = part(&out, "word/document.xml");
    assert!(
        xml.contains(r#"descr="Una casa &quot;roja&quot; &amp; blanca""#),
        "{xml}"
    );
    assert!(xml.contains(r#"name="Picture 1""#), "{xml}");
}
