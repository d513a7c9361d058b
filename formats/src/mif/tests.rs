use crate::inline;
use crate::testdoc::{bracketed, map_text, tags, test_folder, testdata_script};
use crate::{DocumentFormat, FormatError, extract};

/// A MIF 2015 document as FrameMaker writes one: catalogues, a table, a
/// footnote, a text flow with a heading, a paragraph over two lines with a
/// font change, a tab, a variable and a hard return, escapes and UTF-8.
const MIF: &str = include_str!("../../testdata/report.mif");

fn mif(text: &str) -> crate::Extracted {
    extract(DocumentFormat::Mif, text.as_bytes()).unwrap()
}

#[test]
fn paragraphs_are_segments_across_their_lines() {
    let doc = mif(MIF);
    assert_eq!(
        doc.segments(),
        [
            "The water is cold.",
            "The note is short.",
            "The annual report",
            r#"The house is <x id="1"/>very<x id="2"/> big, the café is small and the 'garden' is &gt; the house."#,
            "Name:<x id=\"1\"/>Ann\u{2014}today",
        ]
    );
}

#[test]
fn identity_gives_the_file_back_and_translations_fill_the_first_line() {
    let doc = mif(MIF);
    assert_eq!(doc.merge(doc.segments()).unwrap(), MIF.as_bytes());
    let mut translated = doc.segments().to_vec();
    translated[3] =
        r#"La casa es <x id="1"/>muy<x id="2"/> grande, el café es pequeño y el 'jardín' es &gt; la casa."#
            .to_owned();
    let out = String::from_utf8(doc.merge(&translated).unwrap()).unwrap();
    let para = &out[out.find("<Unique 1002>").unwrap()..out.find("<Unique 1003>").unwrap()];
    let first_line = &para[..para.find("> # end of ParaLine").unwrap()];
    for expected in [
        "<TextRectID 9>",
        "<String `La casa es '>",
        "<FTag `Emphasis'>",
        "<String `muy'>",
        "<String ` grande, el café es pequeño y el \\qjardín\\q es \\> la casa.'>",
        "<FNote 7>",
        "<Char HardReturn>",
    ] {
        assert!(first_line.contains(expected), "{expected} in {first_line}");
    }
    // The second line keeps only its layout; the third is as it was.
    assert!(para.contains("<ParaLine\n   <TextRectID 9>\n  >"), "{para}");
    assert!(para.contains("<String `Ann'>"), "{para}");
    let again = mif(&out);
    assert_eq!(again.segments(), translated);
}

/// A text piece bracketed, with a character MIF must escape.
fn pseudo(text: &str) -> String {
    bracketed(text, |_| " ~>~".to_owned())
}

/// Python's own reading of a MIF file (`testdata/read_mif.py`):
/// independent of the filter's parser.
fn read(name: &str, bytes: &[u8], encoding: &str) -> serde_json::Value {
    let path = test_folder("mif").join(name);
    std::fs::write(&path, bytes).unwrap();
    let out = testdata_script("read_mif.py", &[&path, std::path::Path::new(encoding)]);
    serde_json::from_str(&out).unwrap()
}

#[test]
fn a_pseudo_translation_keeps_the_statements_and_python_reads_it() {
    let doc = mif(MIF);
    let translated: Vec<String> = doc.segments().iter().map(|s| map_text(s, pseudo)).collect();
    let out = doc.merge(&translated).unwrap();
    let again = extract(DocumentFormat::Mif, &out).unwrap();
    for (before, after) in doc.segments().iter().zip(again.segments()) {
        assert_eq!(tags(after), tags(before));
        assert_eq!(
            inline::plain_text(after),
            inline::plain_text(&map_text(before, pseudo))
        );
    }
    let (source, result) = (
        read("source.mif", MIF.as_bytes(), "utf-8"),
        read("pseudo.mif", &out, "utf-8"),
    );
    assert_eq!(result["counts"], source["counts"], "{result}");
    assert_eq!(
        result["paras"],
        serde_json::json!([
            "[The water is cold. ~>~]",
            "[The note is short. ~>~]",
            "[The annual report ~>~]",
            "[The house is ~>~] [very ~>~] [big, the café is small and the 'garden' is > the house. ~>~][Name: ~>~][Ann\u{2014}today ~>~]",
            ""
        ])
    );
}

#[test]
fn mif_7_is_read_and_written_in_frameroman() {
    // `\xd5 ` is FrameRoman's right single quote, `\x8e ` its é.
    let legacy = "<MIFFile 7.00>\n<TextFlow\n <Para\n  <ParaLine\n   <String `The caf\\x8e \\xd5 s owner'>\n  > # end of ParaLine\n > # end of Para\n> # end of TextFlow\n";
    let doc = mif(legacy);
    assert_eq!(doc.segments(), ["The café’s owner"]);
    let out = doc.merge(&["El dueño del café — Ж".to_owned()]).unwrap();
    let text = String::from_utf8(out.clone()).unwrap();
    assert!(
        text.contains("<String `El due\\x96 o del caf\\x8e  \\xd1  ?'>"),
        "{text}"
    );
    let read = read("legacy.mif", &out, "mac_roman");
    assert_eq!(read["paras"], serde_json::json!(["El dueño del café — ?"]));
}

#[test]
fn broken_files_are_refused_with_a_message() {
    let message = |text: &str| match extract(DocumentFormat::Mif, text.as_bytes()) {
        Err(FormatError::Corrupt(m)) => m,
        other => panic!("expected a Corrupt error, got {other:?}"),
    };
    assert!(message("Hello").contains("does not start with <MIFFile"));
    let cut = MIF.find("<TextFlow").unwrap() + 10;
    assert!(message(&MIF[..cut]).contains("not all ended"));
    assert!(message("<MIFFile 2015>\n<Para <ParaLine <String `open>>>").contains("not closed"));
    assert!(message("<MIFFile 2015>\n>").contains("never begun"));
    let deep = format!("<MIFFile 2015>\n{}", "<A ".repeat(100_000));
    assert!(message(&deep).contains("nested too deeply"));
    let latin1 = b"<MIFFile 2015>\n<Para <ParaLine <String `caf\xe9'>>>";
    assert!(matches!(
        extract(DocumentFormat::Mif, latin1),
        Err(FormatError::Corrupt(m)) if m.contains("UTF-8")
    ));
}

/// The report with a reference page as FrameMaker writes one for HTML
/// export: a page of `ReferencePage` type, its text flow (laid out in the
/// page's rectangle) holding a mapping paragraph and a mapping table.
fn with_reference_page() -> String {
    let table = "<Tbl\n  <TblID 2>\n  <TblTag `Mapping Table'>\n  <TblH\n   <Row\n    <Cell\n     <CellContent\n      <Para\n       <PgfTag `CellBody'>\n       <ParaLine\n        <String `P:Body'>\n       > # end of ParaLine\n      > # end of Para\n     > # end of CellContent\n    > # end of Cell\n    <Cell\n     <CellContent\n      <Para\n       <PgfTag `CellBody'>\n       <ParaLine\n        <String `Parent = UL'>\n       > # end of ParaLine\n      > # end of Para\n     > # end of CellContent\n    > # end of Cell\n   > # end of Row\n  > # end of TblH\n > # end of Tbl\n> # end of Tbls\n";
    let pages = "<Page\n <PageType BodyPage>\n <TextRect\n  <ID 9>\n > # end of TextRect\n> # end of Page\n<Page\n <PageType ReferencePage>\n <PageTag `HTML'>\n <TextRect\n  <ID 20>\n > # end of TextRect\n> # end of Page\n<TextFlow\n <TFTag `HTML'>\n <Para\n  <PgfTag `Mapping Table Title'>\n  <ParaLine\n   <TextRectID 20>\n   <String `The headings map to these elements.'>\n   <ATbl 2>\n  > # end of ParaLine\n > # end of Para\n> # end of TextFlow\n";
    MIF.replacen("> # end of Tbls\n", table, 1).replacen(
        "<TextFlow\n <TFTag `A'>",
        &format!("{pages}<TextFlow\n <TFTag `A'>"),
        1,
    )
}

/// Reference pages hold FrameMaker's format definitions: their flows and the
/// tables anchored there are kept; the body flow is translated as before.
#[test]
fn reference_pages_and_their_tables_are_kept() {
    let source = with_reference_page();
    let doc = mif(&source);
    assert_eq!(doc.segments(), mif(MIF).segments());
    let out = String::from_utf8(crate::testdoc::uppercase_merge(&doc)).unwrap();
    for kept in [
        "`P:Body'",
        "`Parent = UL'",
        "`The headings map to these elements.'",
    ] {
        assert!(out.contains(kept), "{kept}: {out}");
    }
    assert!(out.contains("`THE ANNUAL REPORT'"), "{out}");
}

/// The report's heading with markers as FrameMaker writes them: an index
/// entry with two levels, a building block and a second entry, a comment,
/// and a hypertext command.
fn with_markers() -> String {
    MIF.replacen(
        "   <String `The annual report'>\n",
        "   <String `The annual report'>\n   <Marker\n    <MType 2>\n    <MTypeName `Index'>\n    <MText `Reports:annual<$nopage\\>;[Year]Years'>\n    <MCurrPage `1'>\n    <Unique 1234>\n   > # end of Marker\n   <Marker\n    <MType 3>\n    <MTypeName `Comment'>\n    <MText `Check the figures'>\n   > # end of Marker\n   <Marker\n    <MType 8>\n    <MTypeName `Hypertext'>\n    <MText `gotolink report.fm:firstpage'>\n   > # end of Marker\n",
        1,
    )
}

/// Index entries and comments are translated, their building blocks kept;
/// hypertext commands are not text.
#[test]
fn index_and_comment_markers_are_translated_and_commands_kept() {
    let source = with_markers();
    let doc = mif(&source);
    let segments = doc.segments();
    let at = segments
        .iter()
        .position(|s| s == "The annual report")
        .unwrap();
    assert_eq!(
        segments[at + 1..at + 3],
        [
            r#"Reports<x id="1"/>annual<x id="2"/><x id="3"/><x id="4"/>Years"#,
            "Check the figures",
        ]
    );
    assert_eq!(segments.len(), mif(MIF).segments().len() + 2);
    // The identity gives the file back.
    assert_eq!(doc.merge(segments).unwrap(), source.as_bytes());
    let out = String::from_utf8(crate::testdoc::uppercase_merge(&doc)).unwrap();
    for expected in [
        "<MText `REPORTS:ANNUAL<$nopage\\>;[Year]YEARS'>",
        "<MText `CHECK THE FIGURES'>",
        "<MText `gotolink report.fm:firstpage'>",
        "<String `THE ANNUAL REPORT'>",
    ] {
        assert!(out.contains(expected), "{expected}: {out}");
    }
    // A translated marker in an untranslated paragraph is written too.
    let mut only_marker = segments.to_vec();
    only_marker[at + 2] = "Revisar las cifras".to_owned();
    let out = String::from_utf8(doc.merge(&only_marker).unwrap()).unwrap();
    assert!(out.contains("<MText `Revisar las cifras'>"), "{out}");
    assert!(out.contains("<String `The annual report'>"), "{out}");
    assert_eq!(mif(&out).segments(), only_marker);
}

/// A large file is cut before the body flow's paragraphs, each piece under
/// the reference pages and flows (so their tables stay kept), never before
/// the reference flow that defines tables.
#[test]
fn cuts_come_before_body_paragraphs_under_the_reference_pages() {
    let source = with_reference_page();
    let pieces = super::cut_points(&source).unwrap();
    assert!(
        pieces.prolog.starts_with("<MIFFile 2015>"),
        "{}",
        pieces.prolog
    );
    for held in [
        "<PageType ReferencePage>",
        "The headings map to these elements.",
    ] {
        assert!(pieces.prolog.contains(held), "{held}: {}", pieces.prolog);
    }
    assert!(!pieces.prolog.contains("BodyPage"), "{}", pieces.prolog);
    let body_flow = source.find("<TextFlow\n <TFTag `A'>").unwrap();
    assert!(!pieces.points.is_empty());
    for point in &pieces.points {
        assert!(*point > body_flow && source[*point..].starts_with("<Para"));
    }
    // The body flow opens with its tag, without its footnotes.
    let flow = pieces
        .containers
        .iter()
        .find(|c| c.head.contains("`A'"))
        .unwrap();
    assert!(!flow.head.contains("The note"), "{}", flow.head);
    // Without a reference flow defining tables, tables are cut too.
    let points = super::cut_points(MIF).unwrap().points;
    assert!(
        points.iter().any(|p| MIF[*p..].starts_with("<Tbl\n")),
        "{points:?}"
    );
    // A page after a flow keeps the file whole.
    let late = format!("{source}<Page\n <PageType BodyPage>\n> # end of Page\n");
    assert!(super::cut_points(&late).is_none());
}
