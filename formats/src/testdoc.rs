//! Test helpers of the Office Open XML filters: a docx package built by
//! hand, reading parts back, and the Python that writes and reads real files.

use std::io::{Cursor, Read, Write};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

const NS: &str = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:v="urn:schemas-microsoft-com:vml""#;

/// A minimal package: `[Content_Types].xml`, relationships, a document with
/// `body` inside `<w:body>`, and `header1.xml` holding `header`.
pub(crate) fn package(body: &str, header: &str) -> Vec<u8> {
    let content_types = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/header1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml"/></Types>"#;
    let rels = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>"#;
    let doc_rels = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId7" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="https://example.com/" TargetMode="External"/><Relationship Id="rId8" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/header" Target="header1.xml"/></Relationships>"#;
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document {NS}><w:body>{body}<w:sectPr><w:headerReference w:type="default" r:id="rId8"/></w:sectPr></w:body></w:document>"#
    );
    let header = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:hdr {NS}>{header}</w:hdr>"#
    );
    zip_of(&[
        ("[Content_Types].xml", content_types),
        ("_rels/.rels", rels),
        ("word/_rels/document.xml.rels", doc_rels),
        ("word/document.xml", &document),
        ("word/header1.xml", &header),
    ])
}

/// A ZIP archive of `(name, content)` entries, deflated.
pub(crate) fn zip_of(entries: &[(&str, &str)]) -> Vec<u8> {
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    for (name, content) in entries {
        writer.start_file(*name, options).unwrap();
        writer.write_all(content.as_bytes()).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// The names and uncompressed contents of all entries, in order.
pub(crate) fn entries(docx: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut archive = ZipArchive::new(Cursor::new(docx)).unwrap();
    (0..archive.len())
        .map(|i| {
            let mut file = archive.by_index(i).unwrap();
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes).unwrap();
            (file.name().unwrap().into_owned(), bytes)
        })
        .collect()
}

/// The text of one entry.
pub(crate) fn part(docx: &[u8], name: &str) -> String {
    let (_, bytes) = entries(docx)
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no entry {name}"));
    String::from_utf8(bytes).unwrap()
}

/// The raw (compressed) bytes and CRC of every entry, in order.
pub(crate) fn raw_entries(docx: &[u8]) -> Vec<(String, u32, Vec<u8>)> {
    let mut archive = ZipArchive::new(Cursor::new(docx)).unwrap();
    (0..archive.len())
        .map(|i| {
            let mut file = archive.by_index_raw(i).unwrap();
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes).unwrap();
            (file.name().unwrap().into_owned(), file.crc32(), bytes)
        })
        .collect()
}

/// The Python that runs the generator: `TOLK_TEST_PYTHON`, else the first
/// of `python3` and `/usr/bin/python3` that imports python-docx (scripts/test.sh
/// sets it to the tests' environment, which has python-pptx too).
pub(crate) fn python() -> String {
    if let Some(p) = std::env::var_os("TOLK_TEST_PYTHON") {
        return p.to_string_lossy().into_owned();
    }
    ["python3", "/usr/bin/python3"]
        .into_iter()
        .find(|p| {
            std::process::Command::new(p)
                .args(["-c", "import docx"])
                .status()
                .is_ok_and(|s| s.success())
        })
        .unwrap_or("python3")
        .to_owned()
}

pub(crate) use crate::inline::map_text;

/// Runs `testdata/{script}` with [`python`] and `args`; its stdout.
pub(crate) fn testdata_script(script: &str, args: &[&std::path::Path]) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(script);
    run_python(&[path.as_os_str()], args, &path.display().to_string())
}

/// Runs the Python program `code` (`python -c`) with `args`; its stdout.
pub(crate) fn python_snippet(code: &str, args: &[&std::path::Path]) -> String {
    run_python(&["-c".as_ref(), code.as_ref()], args, "a Python snippet")
}

/// Runs [`python`] with `program` then `args`, failing the test (with its
/// stderr) when it fails; its stdout.
fn run_python(program: &[&std::ffi::OsStr], args: &[&std::path::Path], what: &str) -> String {
    let out = std::process::Command::new(python())
        .args(program)
        .args(args)
        .output()
        .expect("python3 runs (scripts/setup.sh installs it with the modules the tests import)");
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap_or_default()
}

/// A folder of one test's own, below the system's temporary folder.
pub(crate) fn test_folder(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tolk-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `bytes` of `format` with the text of every segment upper-cased (the tags
/// kept): a translation anyone can check.
pub(crate) fn uppercased(bytes: &[u8], format: crate::DocumentFormat) -> Vec<u8> {
    uppercase_merge(&crate::extract(format, bytes).unwrap())
}

/// `input` of `format` translated into Spanish by upper-casing (the target
/// language marked where the format records one), as text.
pub(crate) fn uppercase_to_spanish(format: crate::DocumentFormat, input: &str) -> String {
    let doc = crate::extract(format, input.as_bytes())
        .unwrap()
        .with_target_language("ES");
    String::from_utf8(uppercase_merge(&doc)).unwrap()
}

/// An extracted document merged with every segment's text upper-cased.
pub(crate) fn uppercase_merge(doc: &crate::Extracted) -> Vec<u8> {
    let upper: Vec<String> = doc
        .segments()
        .iter()
        .map(|s| map_text(s, |t| t.to_uppercase()))
        .collect();
    doc.merge(&upper).unwrap()
}

/// The plain text of each of `doc`'s segments.
pub(crate) fn plain_texts(doc: &crate::Extracted) -> Vec<String> {
    doc.segments()
        .iter()
        .map(|s| crate::inline::plain_text(s))
        .collect()
}

/// Asserts that each of `wanted` is the plain text of one of `doc`'s segments.
pub(crate) fn assert_segments(doc: &crate::Extracted, wanted: &[&str]) {
    let plain = plain_texts(doc);
    for want in wanted {
        assert!(plain.iter().any(|p| p == want), "{want} missing: {plain:?}");
    }
}

/// A text piece bracketed with `tail` (given the piece) before the closing
/// bracket; spaces at its ends stay outside. The pseudo-translation of the
/// filters' tests.
pub(crate) fn bracketed(text: &str, tail: impl Fn(&str) -> String) -> String {
    let core = text.trim();
    if core.is_empty() {
        return text.to_owned();
    }
    let lead = &text[..text.len() - text.trim_start().len()];
    let trail = &text[text.trim_end().len()..];
    format!("{lead}[{core}{}]{trail}", tail(core))
}

/// The tags of a segment, in order, without its text.
pub(crate) fn tags(segment: &str) -> Vec<crate::inline::Piece> {
    crate::inline::parse(segment)
        .into_iter()
        .filter(|p| !matches!(p, crate::inline::Piece::Text(_)))
        .collect()
}
