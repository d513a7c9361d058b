use std::io::{Cursor, Read, Write};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use crate::testdoc::uppercase_merge;
use crate::{DocumentFormat, FormatError, extract};

const MANIFEST: &str = r#"<?xml version="1.0"?>
<manifest identifier="course" xmlns="http://www.imsglobal.org/xsd/imscp_v1p1" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_v1p3" xmlns:imsmd="http://www.imsglobal.org/xsd/imsmd_rootv1p2p1">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion><imsmd:lom>
    <imsmd:general><imsmd:description><imsmd:langstring xml:lang="en">A course about safety.</imsmd:langstring></imsmd:description></imsmd:general>
    <imsmd:rights><imsmd:cost><imsmd:source><imsmd:langstring xml:lang="x-none">LOMv1.0</imsmd:langstring></imsmd:source><imsmd:value><imsmd:langstring xml:lang="x-none">no</imsmd:langstring></imsmd:value></imsmd:cost>
    <imsmd:copyrightandotherrestrictions><imsmd:source><imsmd:langstring>LOMv1.0</imsmd:langstring></imsmd:source><imsmd:value><imsmd:langstring>yes</imsmd:langstring></imsmd:value></imsmd:copyrightandotherrestrictions></imsmd:rights>
  </imsmd:lom></metadata>
  <organizations default="org"><organization identifier="org">
    <title>The safety course</title>
    <item identifier="i1" identifierref="r1"><title>The first lesson</title></item>
  </organization></organizations>
  <resources><resource identifier="r1" type="webcontent" adlcp:scormType="sco" href="lesson1.html">
    <file href="lesson1.html"/>
  </resource></resources>
</manifest>
"#;

const PAGE: &str = "<!DOCTYPE html><html><head><title>Lesson one</title><script>var s = \"Do not translate\";</script></head><body><p>Wear the <b>helmet</b> at all times.</p></body></html>";

fn package() -> Vec<u8> {
    let mut w = ZipWriter::new(Cursor::new(Vec::new()));
    let deflated = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    let stored = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
    w.start_file("imsmanifest.xml", deflated).unwrap();
    w.write_all(MANIFEST.as_bytes()).unwrap();
    w.start_file("lesson1.html", deflated).unwrap();
    w.write_all(PAGE.as_bytes()).unwrap();
    w.start_file("scripts/api.js", deflated).unwrap();
    w.write_all(b"function LMSInitialize() { return \"true\"; }")
        .unwrap();
    w.start_file("media/logo.png", stored).unwrap();
    w.write_all(b"\x89PNG\r\n\x1a\nnot really").unwrap();
    w.finish().unwrap().into_inner()
}

fn entries(zip: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut a = ZipArchive::new(Cursor::new(zip)).unwrap();
    (0..a.len())
        .map(|i| {
            let mut f = a.by_index(i).unwrap();
            let mut b = Vec::new();
            f.read_to_end(&mut b).unwrap();
            (f.name().unwrap().into_owned(), b)
        })
        .collect()
}

#[test]
fn pages_and_manifest_titles_are_translated_vocabulary_and_the_rest_copied() {
    let zip = package();
    let d = extract(DocumentFormat::Scorm, &zip).unwrap();
    assert_eq!(
        d.segments(),
        [
            "A course about safety.",
            "The safety course",
            "The first lesson",
            "Lesson one",
            r#"Wear the <g id="1">helmet</g> at all times."#,
        ]
    );
    assert_eq!(
        d.merge(d.segments()).unwrap(),
        zip,
        "identity keeps every byte"
    );
    let out = entries(&uppercase_merge(&d));
    let before = entries(&zip);
    assert_eq!(
        out.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        [
            "imsmanifest.xml",
            "lesson1.html",
            "scripts/api.js",
            "media/logo.png"
        ]
    );
    let text = |i: usize| String::from_utf8(out[i].1.clone()).unwrap();
    assert!(
        text(0).contains("<title>THE SAFETY COURSE</title>"),
        "{}",
        text(0)
    );
    assert!(text(0).contains(r#"href="lesson1.html""#));
    for term in [">LOMv1.0<", ">no<", ">yes<"] {
        assert!(text(0).contains(term), "vocabulary kept: {}", text(0));
    }
    assert!(
        text(1).contains("<b>HELMET</b>") && text(1).contains("var s = \"Do not translate\""),
        "{}",
        text(1)
    );
    assert_eq!(out[2], before[2]);
    assert_eq!(out[3], before[3]);
}

#[test]
fn a_zip_without_a_manifest_or_with_unsafe_paths_is_refused() {
    let mut w = ZipWriter::new(Cursor::new(Vec::new()));
    w.start_file("page.html", SimpleFileOptions::default())
        .unwrap();
    w.write_all(b"<p>Hi</p>").unwrap();
    let plain = w.finish().unwrap().into_inner();
    assert!(matches!(
        extract(DocumentFormat::Scorm, &plain),
        Err(FormatError::Corrupt(_))
    ));
    let mut w = ZipWriter::new(Cursor::new(Vec::new()));
    w.start_file("imsmanifest.xml", SimpleFileOptions::default())
        .unwrap();
    w.write_all(MANIFEST.as_bytes()).unwrap();
    w.start_file("../evil.html", SimpleFileOptions::default())
        .unwrap();
    w.write_all(b"<p>Hi</p>").unwrap();
    let evil = w.finish().unwrap().into_inner();
    assert!(extract(DocumentFormat::Scorm, &evil).is_err());
    assert!(extract(DocumentFormat::Scorm, b"not a zip").is_err());
}
