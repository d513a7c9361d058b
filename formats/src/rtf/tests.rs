use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::contract::soffice;
use crate::inline;
use crate::testdoc::{bracketed, map_text, plain_texts, tags, test_folder, testdata_script};
use crate::{DocumentFormat, FormatError, extract};

const HAND_MADE: &str = concat!(
    r"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\fswiss\fcharset0 Arial;}{\f1\fswiss\fcharset204 Arial Cyr;}}",
    r"{\colortbl;\red255\green0\blue0;}{\*\generator Hand;}{\info{\title A title}}",
    "\n",
    r"\pard\plain Caf\'e9 {\b bold} text\par",
    "\n",
    r"{\f1 \'cf\'f0\'e8\'e2\'e5\'f2}\par",
    "\n",
    r"\u8364?5 and\tab tab\par",
    "\n",
    r#"{\field{\*\fldinst HYPERLINK "https://example.com/"}{\fldrslt {\ul the site}}} is here\line next line\par"#,
    "\n",
    r"Before{\footnote \pard\plain The note.\par} after\par",
    "\n",
    r"{\b Open here\par and close} there\par",
    "}\n",
);

fn rtf(text: &str) -> crate::Extracted {
    extract(DocumentFormat::Rtf, text.as_bytes()).unwrap()
}

#[test]
fn paragraphs_are_segments_with_groups_as_spans_and_codes_as_placeholders() {
    let doc = rtf(HAND_MADE);
    assert_eq!(
        doc.segments(),
        [
            // The document information's title.
            "A title",
            r#"Café <g id="1">bold</g> text"#,
            "Привет",
            r#"€5 and<x id="1"/>tab"#,
            r#"<g id="1"><g id="2"><g id="3">the site</g></g></g> is here"#,
            "next line",
            // A footnote's paragraphs come before the paragraph it stands in.
            "The note.",
            r#"Before<x id="1"/> after"#,
            "Open here",
            r#"and close<x id="1"/> there"#,
        ]
    );
}

#[test]
fn identity_gives_the_file_back_and_translations_are_written_in_rtf() {
    let doc = rtf(HAND_MADE);
    assert_eq!(doc.merge(doc.segments()).unwrap(), HAND_MADE.as_bytes());
    let translated = [
        "Un título",
        r#"Café <g id="1">negrita</g> {texto}"#,
        "Здравствуйте",
        r#"€5 y<x id="1"/>tabulación Ж"#,
        r#"<g id="1"><g id="2"><g id="3">el sitio</g></g></g> está aquí"#,
        "línea siguiente",
        "La nota.",
        r#"Antes<x id="1"/> después"#,
        "Abre aquí",
        r#"y cierra<x id="1"/> allí"#,
    ]
    .map(str::to_owned);
    let out = String::from_utf8(doc.merge(&translated).unwrap()).unwrap();
    assert!(out.contains(r"{\info{\title Un t\'edtulo}}"), "{out}");
    assert!(
        out.contains(r"\pard\plain Caf\'e9 {\b negrita} \{texto\}\par"),
        "{out}"
    );
    assert!(
        out.contains(r"{\f1 \'c7\'e4\'f0\'e0\'e2\'f1\'f2\'e2\'f3\'e9\'f2\'e5}\par"),
        "{out}"
    );
    assert!(
        out.contains(r"\'805 y\tab tabulaci\'f3n \u1046?\par"),
        "{out}"
    );
    assert!(
        out.contains(r"{\fldrslt {\ul el sitio}}} est\'e1 aqu\'ed\line l\'ednea"),
        "{out}"
    );
    assert!(
        out.contains(r"Antes{\footnote \pard\plain La nota.\par} despu\'e9s\par"),
        "{out}"
    );
    assert!(
        out.contains(r"{\b Abre aqu\'ed\par y cierra} all\'ed\par"),
        "{out}"
    );
    let again = extract(DocumentFormat::Rtf, out.as_bytes()).unwrap();
    assert_eq!(again.segments(), translated);
}

#[test]
fn a_translation_losing_an_unbalanced_brace_keeps_the_groups() {
    let doc = rtf(HAND_MADE);
    let mut translated = doc.segments().to_vec();
    // The `}` closing the group opened in the paragraph before is lost: the
    // translation is written with the source's tags after its text.
    translated[9] = "y cierra allí".to_owned();
    let out = String::from_utf8(doc.merge(&translated).unwrap()).unwrap();
    assert!(out.contains(r"y cierra all\'ed}\par"), "{out}");
    extract(DocumentFormat::Rtf, out.as_bytes()).unwrap();
}

#[test]
fn text_after_a_control_word_gets_its_delimiting_space() {
    let doc = rtf(r"{\rtf1 one\tab{\i two}\par}");
    assert_eq!(doc.segments(), [r#"one<x id="1"/><g id="2">two</g>"#]);
    let out = doc.merge(&[r#"uno<x id="1"/>dos"#.to_owned()]).unwrap();
    assert_eq!(out, br"{\rtf1 uno\tab dos\par}");
}

#[test]
fn unicode_escapes_skip_their_fallback_and_fonts_choose_the_code_page() {
    let text = r"{\rtf1\ansi\ansicpg1251{\fonttbl{\f0\fcharset0 Times;}{\f2\fcharset161 Greek;}}\uc2\u1046\'3f\'3fa \'c6 {\f2 \'e1}{\f0 \'e9}\par}";
    assert_eq!(
        rtf(text).segments(),
        [r#"Жa Ж <g id="1">α</g><g id="2">é</g>"#]
    );
}

#[test]
fn hostile_and_broken_files_are_refused_with_a_message() {
    let message = |bytes: &[u8]| match extract(DocumentFormat::Rtf, bytes) {
        Err(FormatError::Corrupt(m)) => m,
        other => panic!("expected a Corrupt error, got {other:?}"),
    };
    assert!(message(b"Hello, plain text").contains("does not start with {\\rtf"));
    assert!(message(&HAND_MADE.as_bytes()[..200]).contains("not all closed"));
    assert!(message(b"{\\rtf1 a}}").contains("never opened"));
    let deep = format!("{{\\rtf1 {}", "{".repeat(100_000));
    assert!(message(deep.as_bytes()).contains("nested too deeply"));
    // A long line of text and a large \bin are read, not feared.
    let long = format!("{{\\rtf1 {}\\par}}", "word ".repeat(1_000_000));
    assert_eq!(rtf(&long).segments().len(), 1);
    assert_eq!(
        rtf(r"{\rtf1 {\pict\bin3 {}\}Text\par}").segments(),
        ["Text"]
    );
    assert!(message(br"{\rtf1 {\pict\bin999999999 }}").contains("not all closed"));
}

/// RTF files LibreOffice wrote: a Word file (three scripts, runs, a
/// hyperlink, a table, a header) and an OpenDocument text (heading, span,
/// link, line break, footnote, table, header), both converted.
fn libreoffice_files() -> &'static (PathBuf, Vec<PathBuf>) {
    static FILES: OnceLock<(PathBuf, Vec<PathBuf>)> = OnceLock::new();
    FILES.get_or_init(|| {
        let dir = test_folder("rtf");
        let docx = dir.join("scripts.docx");
        testdata_script("make_rtf_source.py", &[&docx]);
        testdata_script("make_odf.py", &[Path::new("write"), &dir]);
        let sources = [docx, dir.join("doc.odt")];
        let out = dir.join("rtf");
        soffice(&dir, "rtf", &out, &sources);
        let files = ["scripts.rtf", "doc.rtf"].map(|f| out.join(f)).to_vec();
        (dir, files)
    })
}

/// A text piece bracketed and given characters outside the Latin-1 code
/// page (Cyrillic and the euro sign).
fn pseudo(text: &str) -> String {
    bracketed(text, |_| " Ж€~".to_owned())
}

#[test]
fn libreoffice_rtf_round_trips_and_libreoffice_reads_the_translation() {
    let (dir, files) = libreoffice_files();
    let mut outputs = Vec::new();
    for path in files {
        let bytes = std::fs::read(path).unwrap();
        let doc = extract(DocumentFormat::Rtf, &bytes).unwrap();
        assert_eq!(
            doc.merge(doc.segments()).unwrap(),
            bytes,
            "{path:?}: identity"
        );
        let translated: Vec<String> = doc.segments().iter().map(|s| map_text(s, pseudo)).collect();
        let out = doc.merge(&translated).unwrap();
        let again = extract(DocumentFormat::Rtf, &out).unwrap();
        assert_eq!(again.segments().len(), doc.segments().len(), "{path:?}");
        for (before, after) in doc.segments().iter().zip(again.segments()) {
            assert_eq!(tags(after), tags(before), "{before} → {after}");
            assert_eq!(
                inline::plain_text(after),
                inline::plain_text(&map_text(before, pseudo))
            );
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let out_path = dir.join(format!("translated-{name}"));
        std::fs::write(&out_path, out).unwrap();
        outputs.push(out_path);
    }
    let text_of = |path: &Path| {
        let doc = extract(DocumentFormat::Rtf, &std::fs::read(path).unwrap()).unwrap();
        plain_texts(&doc).join("\n")
    };
    let scripts = text_of(&files[0]);
    for expected in [
        "The quarterly report",
        "The café serves crème brûlée and naïve desserts.",
        "Привет, мир: the Russian greeting.",
        "Καλημέρα is Greek for good morning.",
        "Read more on the website today.",
        "The house is big.",
    ] {
        assert!(scripts.contains(expected), "{expected:?} in {scripts}");
    }
    let odt = text_of(&files[1]);
    for expected in [
        "The annual report",
        "The house",
        "The house is very big and the garden is small.",
        "The note is short.",
        "The country",
    ] {
        assert!(odt.contains(expected), "{expected:?} in {odt}");
    }
    // LibreOffice reads the translations back, in every script.
    let txt = dir.join("txt");
    soffice(dir, "txt:Text", &txt, &outputs);
    let read = std::fs::read_to_string(txt.join("translated-scripts.txt")).unwrap();
    for expected in [
        "[The café serves Ж€~]",
        "[Привет, мир: the Russian greeting. Ж€~]",
        "[Καλημέρα is Greek for good morning. Ж€~]",
        "[The house is big. Ж€~]",
    ] {
        assert!(read.contains(expected), "{expected:?} in {read}");
    }
    let read = std::fs::read_to_string(txt.join("translated-doc.txt")).unwrap();
    assert!(read.contains("[The house Ж€~]"), "{read}");
}

/// A long Word document LibreOffice saved as RTF is read a piece at a time
/// into what the whole file gives, and LibreOffice reads every paragraph of
/// the pieced translation.
#[test]
fn a_large_libreoffice_rtf_is_translated_piece_by_piece() {
    let copies = 300;
    let dir = test_folder("rtf-large");
    let docx = dir.join("large.docx");
    testdata_script(
        "make_rtf_source.py",
        &[&docx, Path::new(&copies.to_string())],
    );
    let out_dir = dir.join("rtf");
    soffice(&dir, "rtf", &out_dir, &[docx]);
    let bytes = std::fs::read(out_dir.join("large.rtf")).unwrap();
    let cut = crate::cut::rtf(&bytes, crate::cut::PIECE_SIZE).expect("the file is cut");
    assert!(cut.pieces.len() > 2, "{} pieces", cut.pieces.len());
    let translate = |segments: &[String]| -> Vec<String> {
        segments.iter().map(|s| map_text(s, pseudo)).collect()
    };
    let mut batches = 0;
    let pieced = crate::stream::translate::<()>(
        DocumentFormat::Rtf,
        &bytes,
        crate::ExtractOptions::default(),
        "ES",
        &mut |segments, _| {
            batches += 1;
            Ok(translate(segments))
        },
    )
    .unwrap()
    .bytes;
    assert_eq!(batches, cut.pieces.len());
    let doc = extract(DocumentFormat::Rtf, &bytes).unwrap();
    let whole = doc.merge(&translate(doc.segments())).unwrap();
    assert!(pieced == whole, "the pieces differ from the whole file");
    let translated = dir.join("translated-large.rtf");
    std::fs::write(&translated, pieced).unwrap();
    let txt = dir.join("txt");
    soffice(&dir, "txt:Text", &txt, &[translated]);
    let read = std::fs::read_to_string(txt.join("translated-large.txt")).unwrap();
    for expected in [
        "[Привет, мир: the Russian greeting. Ж€~]",
        "[Καλημέρα is Greek for good morning. Ж€~]",
    ] {
        assert_eq!(read.matches(expected).count(), copies, "{expected:?}");
    }
}

#[test]
fn cuts_fall_between_paragraphs_read_as_in_the_whole_file() {
    let src = concat!(
        r"{\rtf1\ansi{\fonttbl{\f0 A;}{\f1\fcharset204 B;}}{\info{\title T}}",
        r"{\header\pard Top\par}\pard\plain A\par \pard B\pard C\par \f1 D\par \pard E\par ",
        r"\pard\plain F\par {\b G\par }\pard H\par \uc0 I\par \pard\plain J\par}",
    );
    let (points, head) = super::cut_points(src.as_bytes()).unwrap();
    // The head keeps the tables, not the text of the information or header.
    assert_eq!(head, r"{\rtf1\ansi{\fonttbl{\f0 A;}{\f1\fcharset204 B;}}");
    let at = |s: &str| src.find(s).unwrap();
    // Not inside an open paragraph (C), under a font of another code page
    // (E, not reset by \plain) or another \uc (J); a paragraph ended inside
    // a group (G) is ended.
    assert_eq!(
        points,
        [
            at(r"\pard B"),
            at(r"\f1 D"),
            at(r"\pard\plain F"),
            at(r"{\b G"),
            at(r"\pard H"),
            at(r"\uc0 I"),
        ]
    );
}
