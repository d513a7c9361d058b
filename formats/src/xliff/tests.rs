use crate::testdoc::{python_snippet, test_folder, uppercase_merge};
use crate::{DocumentFormat, FormatError, extract};

const V12: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file original="ui.properties" source-language="en" datatype="plaintext">
    <body>
      <trans-unit id="save">
        <source>Click <g id="1">Save</g> to keep <x id="2"/> changes &amp; go on.</source>
        <note>Shown on the toolbar.</note>
      </trans-unit>
      <trans-unit id="brand" translate="no">
        <source>Tolk Cloud</source>
      </trans-unit>
      <trans-unit id="old">
        <source>Good morning</source>
        <target state="needs-translation">Buenos</target>
      </trans-unit>
      <trans-unit id="bold">
        <source><bpt id="1">&lt;b&gt;</bpt>Bold<ept id="1">&lt;/b&gt;</ept> text</source>
      </trans-unit>
      <group id="legal" translate="no">
        <trans-unit id="law"><source>Terms of service</source></trans-unit>
      </group>
      <trans-unit id="two">
        <source>First sentence. Second sentence.</source>
        <seg-source><mrk mtype="seg" mid="1">First sentence.</mrk> <mrk mtype="seg" mid="2">Second sentence.</mrk></seg-source>
      </trans-unit>
      <trans-unit id="code"><source><x id="1"/></source></trans-unit>
    </body>
  </file>
</xliff>
"#;

const V20: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="fr">
  <file id="f1">
    <unit id="u1">
      <originalData><data id="d1">&lt;br/&gt;</data></originalData>
      <segment id="s1">
        <source>Press <pc id="1">Enter</pc><ph id="2" dataRef="d1"/> now.</source>
      </segment>
      <ignorable><source> </source></ignorable>
      <segment id="s2" state="initial">
        <source>Then wait.</source>
        <target>Puis</target>
      </segment>
    </unit>
    <unit id="u2" translate="no">
      <segment><source>Keep me</source></segment>
    </unit>
  </file>
</xliff>
"#;

fn upper(input: &str) -> String {
    crate::testdoc::uppercase_to_spanish(DocumentFormat::Xliff, input)
}

#[test]
fn xliff_12_sources_become_segments_with_their_inline_codes() {
    let d = extract(DocumentFormat::Xliff, V12.as_bytes()).unwrap();
    assert_eq!(
        d.segments(),
        [
            r#"Click <g id="1">Save</g> to keep <x id="2"/> changes &amp; go on."#,
            "Good morning",
            r#"<x id="1"/>Bold<x id="2"/> text"#,
            "First sentence.",
            "Second sentence.",
        ]
    );
}

#[test]
fn xliff_12_targets_are_written_after_the_source_or_replace_the_old_one() {
    let out = upper(V12);
    assert!(out.contains(r#"<file original="ui.properties" source-language="en" datatype="plaintext" target-language="es">"#), "{out}");
    assert!(out.contains(concat!(
        r#"<source>Click <g id="1">Save</g> to keep <x id="2"/> changes &amp; go on.</source>"#,
        "\n        ",
        r#"<target state="translated" state-qualifier="leveraged-mt" xml:lang="es">CLICK <g id="1">SAVE</g> TO KEEP <x id="2"/> CHANGES &amp; GO ON.</target>"#,
        "\n        <note>Shown on the toolbar.</note>"
    )), "{out}");
    assert!(
        out.contains(
            r#"<target state="translated" state-qualifier="leveraged-mt">GOOD MORNING</target>"#
        ),
        "{out}"
    );
    assert!(!out.contains("Buenos"));
    assert!(out.contains(r#"<target state="translated" state-qualifier="leveraged-mt" xml:lang="es"><bpt id="1">&lt;b&gt;</bpt>BOLD<ept id="1">&lt;/b&gt;</ept> TEXT</target>"#), "{out}");
    assert!(out.contains(r#"<target state="translated" state-qualifier="leveraged-mt" xml:lang="es"><mrk mtype="seg" mid="1">FIRST SENTENCE.</mrk> <mrk mtype="seg" mid="2">SECOND SENTENCE.</mrk></target>"#), "{out}");
    assert!(out.contains(r#"<trans-unit id="code"><source><x id="1"/></source><target state="translated" xml:lang="es"><x id="1"/></target></trans-unit>"#), "{out}");
    // translate="no" (on the unit or its group): no target.
    assert!(out.contains("<trans-unit id=\"brand\" translate=\"no\">\n        <source>Tolk Cloud</source>\n      </trans-unit>"));
    assert!(out.contains(r#"<trans-unit id="law"><source>Terms of service</source></trans-unit>"#));
    assert!(!out.contains("TOLK CLOUD") && !out.contains("TERMS OF SERVICE"));
}

#[test]
fn xliff_2_segments_get_targets_and_states() {
    let d = extract(DocumentFormat::Xliff, V20.as_bytes()).unwrap();
    assert_eq!(
        d.segments(),
        [r#"Press <g id="1">Enter</g><x id="2"/> now."#, "Then wait."]
    );
    let out = upper(V20);
    assert!(out.contains(r#"srcLang="en" trgLang="es">"#), "{out}");
    assert!(
        out.contains(concat!(
            r#"<segment id="s1" state="translated">"#,
            "\n        ",
            r#"<source>Press <pc id="1">Enter</pc><ph id="2" dataRef="d1"/> now.</source>"#,
            "\n        ",
            r#"<target>PRESS <pc id="1">ENTER</pc><ph id="2" dataRef="d1"/> NOW.</target>"#
        )),
        "{out}"
    );
    assert!(
        out.contains(r#"<segment id="s2" state="translated">"#),
        "{out}"
    );
    assert!(
        out.contains("<target>THEN WAIT.</target>") && !out.contains("Puis"),
        "{out}"
    );
    assert!(out.contains("<ignorable><source> </source></ignorable>"));
    assert!(
        out.contains("<segment><source>Keep me</source></segment>"),
        "translate=no"
    );
}

#[test]
fn broken_and_foreign_files_are_refused() {
    let cases: [(&str, &[u8]); 5] = [
        (
            "doctype",
            b"<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a \"b\">]><xliff version=\"1.2\"/>",
        ),
        ("truncated", &V12.as_bytes()[..300]),
        ("not xliff", b"<html><body>Hi</body></html>"),
        ("no version", b"<xliff><file/></xliff>"),
        ("binary", &[0xff, 0x00, 0x12, 0x80]),
    ];
    for (name, input) in cases {
        assert!(
            matches!(
                extract(DocumentFormat::Xliff, input),
                Err(FormatError::Corrupt(_))
            ),
            "{name}"
        );
    }
    assert!(matches!(
        extract(DocumentFormat::Xliff, b"<xliff version=\"3.0\"/>"),
        Err(FormatError::Unsupported(_))
    ));
}

#[test]
fn utf16_files_stay_utf16() {
    let mut input = vec![0xFF, 0xFE];
    for unit in V20
        .replace("encoding=\"UTF-8\"", "encoding=\"UTF-16\"")
        .encode_utf16()
    {
        input.extend_from_slice(&unit.to_le_bytes());
    }
    let d = extract(DocumentFormat::Xliff, &input).unwrap();
    assert_eq!(d.segments().len(), 2);
    let out = uppercase_merge(&d);
    assert_eq!(&out[..2], &[0xFF, 0xFE]);
    let units: Vec<u16> = out[2..]
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    assert!(
        String::from_utf16(&units)
            .unwrap()
            .contains("<target>THEN WAIT.</target>")
    );
}

/// A file written by translate-toolkit (the Translate Toolkit's XLIFF 1.2
/// store, as Pootle and Virtaal write it), translated, and read back by it:
/// every unit has its target, notes and ids are kept.
#[test]
fn translate_toolkit_reads_the_targets_of_its_own_file() {
    let dir = test_folder("xliff");
    let source = dir.join("toolkit.xlf");
    let translated = dir.join("toolkit.es.xlf");
    let write = r#"
import sys
from translate.storage import xliff
store = xliff.xlifffile(sourcelanguage="en")
for i, text in enumerate(["Open the file", "Save & close", "Quit <now>"]):
    unit = store.addsourceunit(text)
    unit.setid(f"u{i}")
    unit.addnote(f"note {i}", origin="developer")
open(sys.argv[1], "wb").write(bytes(store))
"#;
    let run = python_snippet;
    run(write, &[&source]);
    let d = extract(DocumentFormat::Xliff, &std::fs::read(&source).unwrap())
        .unwrap()
        .with_target_language("ES");
    assert_eq!(
        d.segments(),
        ["Open the file", "Save &amp; close", "Quit &lt;now&gt;"]
    );
    std::fs::write(&translated, uppercase_merge(&d)).unwrap();
    let read = r#"
import json, sys
from translate.storage import xliff
store = xliff.xlifffile.parsefile(sys.argv[1])
print(json.dumps({"target_language": store.gettargetlanguage(),
                  "units": [[u.getid().split("\x04")[-1], u.source, u.target, u.getnotes()] for u in store.units]}))
"#;
    let back: serde_json::Value = serde_json::from_str(&run(read, &[&translated])).unwrap();
    assert_eq!(
        back,
        serde_json::json!({
            "target_language": "es",
            "units": [
                ["u0", "Open the file", "OPEN THE FILE", "note 0"],
                ["u1", "Save & close", "SAVE & CLOSE", "note 1"],
                ["u2", "Quit <now>", "QUIT <NOW>", "note 2"],
            ]
        })
    );
}

/// An SDL Trados file as Trados Studio writes one for a Word document: the
/// `sdl` namespace, file and tag definitions in the header, a structure
/// unit, segments in `seg-source` with empty, confirmed and locked targets,
/// and their `sdl:seg` definitions.
const SDLXLIFF: &str = concat!(
    r#"<?xml version="1.0" encoding="utf-8"?><xliff xmlns:sdl="http://sdl.com/FileTypes/SdlXliff/1.0" xmlns="urn:oasis:names:tc:xliff:document:1.2" version="1.2" sdl:version="1.0">"#,
    r#"<file original="C:\Projects\report.docx" datatype="x-sdlfilterframework2" source-language="en-US" target-language="es-ES">"#,
    r#"<header><file-info xmlns="http://sdl.com/FileTypes/SdlXliff/1.0"><value key="SDL:FileId">4f1c</value></file-info>"#,
    r#"<sdl:filetype-info><sdl:filetype-id>Word 2007 v 2.0.0.0</sdl:filetype-id></sdl:filetype-info>"#,
    r#"<tag-defs xmlns="http://sdl.com/FileTypes/SdlXliff/1.0"><tag id="0"><bpt name="cf" word-end="false">&lt;cf bold="True"&gt;</bpt><ept name="cf" word-end="false">&lt;/cf&gt;</ept></tag><tag id="1"><ph name="tab" word-end="false">&lt;tab/&gt;</ph></tag></tag-defs></header>"#,
    r#"<body><trans-unit translate="no" id="b1"><source><x id="2"/></source></trans-unit>"#,
    r#"<group><sdl:cxts><sdl:cxt id="3"/></sdl:cxts><trans-unit id="7a5c">"#,
    r#"<source>The house is <g id="0">big</g>. The dog<x id="1"/>runs. Tolk Cloud</source>"#,
    r#"<seg-source><mrk mtype="seg" mid="1">The house is <g id="0">big</g>.</mrk> <mrk mtype="seg" mid="2">The dog<x id="1"/>runs.</mrk> <mrk mtype="seg" mid="3">Tolk Cloud</mrk></seg-source>"#,
    r#"<target><mrk mtype="seg" mid="1"/> <mrk mtype="seg" mid="2">El perro<x id="1"/>corre.</mrk> <mrk mtype="seg" mid="3">Tolk Cloud</mrk></target>"#,
    r#"<sdl:seg-defs><sdl:seg id="1"/><sdl:seg id="2" conf="Translated" origin="tm" percent="100"/><sdl:seg id="3" locked="true" conf="Draft"/></sdl:seg-defs>"#,
    r#"</trans-unit></group></body></file></xliff>"#,
);

#[test]
fn trados_files_keep_their_settled_segments_and_mark_machine_drafts() {
    let d = crate::extract(DocumentFormat::Xliff, SDLXLIFF.as_bytes())
        .unwrap()
        .with_target_language("ES");
    assert_eq!(d.segments(), [r#"The house is <g id="1">big</g>."#]);
    let out = String::from_utf8(
        d.merge(&[r#"La casa es <g id="1">grande</g>."#.to_owned()])
            .unwrap(),
    )
    .unwrap();
    // The project's target language, header and tag definitions as they were.
    assert!(
        out.contains(r#"source-language="en-US" target-language="es-ES">"#),
        "{out}"
    );
    let header = |s: &str| s[s.find("<header>").unwrap()..s.find("</header>").unwrap()].to_owned();
    assert_eq!(header(&out), header(SDLXLIFF));
    assert!(out.contains(concat!(
        // Trados keeps states in `sdl:seg`: the target gets none of XLIFF's.
        r#"<target><mrk mtype="seg" mid="1">La casa es <g id="0">grande</g>.</mrk> "#,
        r#"<mrk mtype="seg" mid="2">El perro<x id="1"/>corre.</mrk> <mrk mtype="seg" mid="3">Tolk Cloud</mrk></target>"#
    )), "{out}");
    assert!(out.contains(concat!(
        r#"<sdl:seg-defs><sdl:seg id="1" conf="Draft" origin="mt"/>"#,
        r#"<sdl:seg id="2" conf="Translated" origin="tm" percent="100"/><sdl:seg id="3" locked="true" conf="Draft"/></sdl:seg-defs>"#
    )), "{out}");

    // lxml reads it with its namespaces; translate-toolkit sees the targets.
    let path = test_folder("sdlxliff").join("report.sdlxliff");
    std::fs::write(&path, &out).unwrap();
    let read = python_snippet(
        "import sys\nfrom lxml import etree\nfrom translate.storage import xliff\n\
         root = etree.parse(sys.argv[1]).getroot()\n\
         ns = {'x': 'urn:oasis:names:tc:xliff:document:1.2', 's': 'http://sdl.com/FileTypes/SdlXliff/1.0'}\n\
         print(root.nsmap['sdl'], len(root.findall('.//s:seg', ns)), len(root.findall('.//x:target/x:mrk', ns)))\n\
         store = xliff.xlifffile.parsefile(sys.argv[1])\n\
         print([u.target for u in store.units if u.istranslatable()])",
        &[&path],
    );
    assert!(
        read.starts_with("http://sdl.com/FileTypes/SdlXliff/1.0 3 3\n"),
        "{read}"
    );
    assert!(read.contains("La casa es"), "{read}");
}

/// A memoQ file (`.mqxliff`: XLIFF 1.2 with memoQ's `mq` attributes on its
/// units): targets written, every `mq` attribute and element as it was.
const MQXLIFF: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:1.2" xmlns:mq="MQXliff" version="1.2">
  <file original="report.docx" source-language="eng-US" target-language="spa" datatype="x-docx" mq:docid="8c1e">
    <header><mq:historical-unit-info/></header>
    <body>
      <trans-unit id="1" mq:status="NotStarted" mq:segmentguid="a1" mq:percent="0">
        <source xml:space="preserve">The house is <bpt id="1" ctype="bold">{}</bpt>big<ept id="1">{}</ept>.</source>
        <target xml:space="preserve"></target>
        <mq:minorversions><mq:historical-unit lastchangedtimestamp="2026-01-01T00:00:00Z"/></mq:minorversions>
      </trans-unit>
    </body>
  </file>
</xliff>
"#;

#[test]
fn memoq_files_keep_their_attributes_and_get_targets() {
    assert_eq!(
        DocumentFormat::from_filename("report.mqxliff"),
        Some(DocumentFormat::Xliff)
    );
    let d = extract(DocumentFormat::Xliff, MQXLIFF.as_bytes())
        .unwrap()
        .with_target_language("ES");
    assert_eq!(d.segments(), [r#"The house is <x id="1"/>big<x id="2"/>."#]);
    let out = String::from_utf8(
        d.merge(&[r#"La casa es <x id="1"/>grande<x id="2"/>."#.to_owned()])
            .unwrap(),
    )
    .unwrap();
    // memoQ sees the unit pre-translated, no longer "not started".
    assert!(
        out.contains(
            r#"<trans-unit id="1" mq:status="PreTranslated" mq:segmentguid="a1" mq:percent="0">"#
        ),
        "{out}"
    );
    assert!(out.contains(r#"<target xml:space="preserve" state="translated" state-qualifier="leveraged-mt">La casa es <bpt id="1" ctype="bold">{}</bpt>grande<ept id="1">{}</ept>.</target>"#), "{out}");
    assert!(out.contains(r#"<mq:minorversions><mq:historical-unit lastchangedtimestamp="2026-01-01T00:00:00Z"/></mq:minorversions>"#));
    // memoQ's three-letter code for the target is kept.
    assert!(out.contains(r#"target-language="spa""#), "{out}");
    let path = test_folder("mqxliff").join("report.mqxliff");
    std::fs::write(&path, &out).unwrap();
    let read = python_snippet(
        "import sys\nfrom translate.storage import xliff\n\
         store = xliff.xlifffile.parsefile(sys.argv[1])\n\
         print([u.target for u in store.units])",
        &[&path],
    );
    assert!(read.contains("La casa es"), "{read}");
}

/// `input` translated into `target` (a DeepL code) with every segment
/// upper-cased, with `overwrite` as `xliff-targets:overwrite`: the segments
/// sent and the output.
fn upper_into(input: &[u8], target: &str, overwrite: bool) -> (Vec<String>, Vec<u8>) {
    let options = crate::ExtractOptions {
        target_language: Some(target.to_owned()),
        overwrite_targets: overwrite,
        ..Default::default()
    };
    let doc = crate::extract_with(DocumentFormat::Xliff, input, options)
        .unwrap()
        .with_target_language(target);
    (doc.segments().to_vec(), uppercase_merge(&doc))
}

/// A 1.2 file a translator has worked on: approved, final, signed-off,
/// translated and state-less targets are theirs; new, needs-translation and
/// empty ones are still to do.
const WORKED: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file original="app" source-language="en" target-language="es-ES" datatype="plaintext">
    <body>
      <trans-unit id="a" approved="yes"><source>Approved one</source><target state="needs-review-translation">Aprobada</target></trans-unit>
      <trans-unit id="b"><source>Final one</source><target state="final">Definitiva</target></trans-unit>
      <trans-unit id="c"><source>Signed one</source><target state="signed-off">Firmada</target></trans-unit>
      <trans-unit id="d"><source>Done one</source><target state="translated">Hecha</target></trans-unit>
      <trans-unit id="e"><source>Plain one</source><target>Sin estado</target></trans-unit>
      <trans-unit id="f"><source>New one</source><target state="new">New one</target></trans-unit>
      <trans-unit id="g"><source>Open one</source><target state="needs-translation"></target></trans-unit>
      <trans-unit id="h"><source>Empty one</source><target xml:lang="fr"/></trans-unit>
      <trans-unit id="i"><source>Bare one</source></trans-unit>
    </body>
  </file>
</xliff>
"#;

#[test]
fn settled_targets_are_kept_and_only_open_ones_translated() {
    let (segments, out) = upper_into(WORKED.as_bytes(), "ES", false);
    assert_eq!(segments, ["New one", "Open one", "Empty one", "Bare one"]);
    let out = String::from_utf8(out).unwrap();
    for kept in [
        r#"<target state="needs-review-translation">Aprobada</target>"#,
        r#"<target state="final">Definitiva</target>"#,
        r#"<target state="signed-off">Firmada</target>"#,
        r#"<target state="translated">Hecha</target>"#,
        "<target>Sin estado</target>",
    ] {
        assert!(out.contains(kept), "{kept} in {out}");
    }
    assert!(
        out.contains(
            r#"<target state="translated" state-qualifier="leveraged-mt">NEW ONE</target>"#
        ),
        "{out}"
    );
    // A replaced target that named its language names the one asked for
    // (the file's own variant of it).
    assert!(out.contains(r#"<target xml:lang="es-ES" state="translated" state-qualifier="leveraged-mt">EMPTY ONE</target>"#), "{out}");
    assert!(out.contains(r#"target-language="es-ES""#), "{out}");
    // translate-toolkit reads the states a CAT tool would.
    let path = test_folder("xliff_states").join("worked.xlf");
    std::fs::write(&path, &out).unwrap();
    let read = python_snippet(
        "import sys, json\nfrom translate.storage import xliff\n\
         store = xliff.xlifffile.parsefile(sys.argv[1])\n\
         print(json.dumps({u.getid().split('\\x04')[-1]: [u.target, u.isapproved()] for u in store.units}))",
        &[&path],
    );
    let read: serde_json::Value = serde_json::from_str(read.trim()).unwrap();
    assert_eq!(read["a"][0], "Aprobada");
    assert_eq!(read["a"][1], true);
    assert_eq!(read["b"][0], "Definitiva");
    assert_eq!(read["i"][0], "BARE ONE");
}

#[test]
fn every_target_is_translated_when_asked_or_in_another_language() {
    // xliff-targets:overwrite.
    let (segments, _) = upper_into(WORKED.as_bytes(), "ES", true);
    assert_eq!(segments.len(), 9, "{segments:?}");
    // The file's targets are Spanish; French is asked for: none is a
    // French translation, so every one is translated and says French.
    let (segments, out) = upper_into(WORKED.as_bytes(), "FR", false);
    assert_eq!(segments.len(), 9, "{segments:?}");
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains(r#"target-language="fr""#), "{out}");
    assert!(!out.contains("Aprobada") && !out.contains("es-ES"), "{out}");
}

#[test]
fn xliff_2_segments_with_final_targets_are_kept() {
    let doc = r#"<?xml version="1.0" encoding="UTF-8"?>
<xliff xmlns="urn:oasis:names:tc:xliff:document:2.0" version="2.0" srcLang="en" trgLang="es">
  <file id="f1">
    <unit id="u1">
      <segment id="s1" state="final"><source>Keep me.</source><target>Guárdame.</target></segment>
      <segment id="s2" state="reviewed"><source>Me too.</source><target>Yo también.</target></segment>
      <segment id="s3" state="translated"><source>Empty.</source><target></target></segment>
      <segment id="s4"><source>Do me.</source><target>Do me.</target></segment>
    </unit>
  </file>
</xliff>
"#;
    let (segments, out) = upper_into(doc.as_bytes(), "ES", false);
    assert_eq!(segments, ["Empty.", "Do me."]);
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains(r#"<segment id="s1" state="final"><source>Keep me.</source><target>Guárdame.</target></segment>"#), "{out}");
    assert!(out.contains(r#"<segment id="s4" state="translated"><source>Do me.</source><target>DO ME.</target></segment>"#), "{out}");
}

#[test]
fn a_declared_legacy_encoding_is_kept() {
    let mut input = br#"<?xml version="1.0" encoding="windows-1252"?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file original="a" source-language="en" datatype="plaintext"><body>
    <trans-unit id="1"><source>Paragraph</source></trans-unit>
    <trans-unit id="2"><source>Caf"#
        .to_vec();
    input.extend_from_slice(b"\xe9 menu</source></trans-unit>\n  </body></file>\n</xliff>\n");
    let options = crate::ExtractOptions {
        target_language: Some("ES".into()),
        ..Default::default()
    };
    let doc = crate::extract_with(DocumentFormat::Xliff, &input, options)
        .unwrap()
        .with_target_language("ES");
    assert_eq!(doc.segments(), ["Paragraph", "Café menu"]);
    let out = doc
        .merge(&["Párrafo".to_owned(), "Menú del café ☕".to_owned()])
        .unwrap();
    let has = |bytes: &[u8]| out.windows(bytes.len()).any(|w| w == bytes);
    assert!(has(b"P\xe1rrafo") && has(b"&#9749;"), "{out:?}");
    // lxml decodes it by its declaration.
    let path = test_folder("xliff_cp1252").join("a.xlf");
    std::fs::write(&path, &out).unwrap();
    let read = python_snippet(
        "import sys\nfrom lxml import etree\n\
         t = etree.parse(sys.argv[1])\n\
         ns = {'x': 'urn:oasis:names:tc:xliff:document:1.2'}\n\
         print('|'.join(e.text for e in t.findall('.//x:target', ns)))",
        &[&path],
    );
    assert_eq!(read.trim(), "Párrafo|Menú del café ☕");
}

/// The files CAT tools wrote themselves (`$TOLK_FIXTURES_DIR/cat`, when
/// set): settled segments kept byte for byte, each Trados segment its own
/// target `mrk` and `sdl:seg` status, memoQ's status moved on, the tools'
/// own attributes untouched; lxml and translate-toolkit read every output.
#[test]
fn files_written_by_cat_tools_round_trip() {
    let Some(dir) = std::env::var_os("TOLK_FIXTURES_DIR") else {
        return;
    };
    let dir = std::path::Path::new(&dir).join("cat");
    let read = |name: &str| {
        std::fs::read(dir.join(name))
            .unwrap_or_else(|e| panic!("TOLK_FIXTURES_DIR: {}: {e}", dir.join(name).display()))
    };
    let count = |out: &[u8], what: &str| String::from_utf8_lossy(out).matches(what).count();
    let folder = test_folder("cat_fixtures");
    let readers_agree = |name: &str, out: &[u8]| {
        let path = folder.join(name);
        std::fs::write(&path, out).unwrap();
        let units = python_snippet(
            "import sys\nfrom lxml import etree\nfrom translate.storage import xliff\n\
             etree.parse(sys.argv[1])\n\
             store = xliff.xlifffile.parsefile(sys.argv[1])\n\
             print(len(store.units))",
            &[&path],
        );
        assert!(
            units.trim().parse::<usize>().unwrap() > 0,
            "{name}: {units}"
        );
    };

    // Trados Studio 2024: every segment confirmed, some nested in `g`.
    let name = "Supervertaler_DOCX_Advanced_Test_Document.docx.sdlxliff";
    let input = read(name);
    let (segments, out) = upper_into(&input, "NL", false);
    assert!(segments.is_empty(), "{segments:?}");
    assert_eq!(
        out, input,
        "a file with nothing to translate is kept byte for byte"
    );
    let (segments, out) = upper_into(&input, "NL", true);
    assert_eq!(segments.len(), 54, "one segment per mrk");
    assert_eq!(
        count(&out, r#"mtype="seg""#),
        count(&input, r#"mtype="seg""#)
    );
    assert_eq!(count(&out, r#"conf="Draft" origin="mt""#), 54);
    assert!(
        String::from_utf8_lossy(&out).contains(
            r#"<mrk mtype="seg" mid="50">WARNING:</mrk> <mrk mtype="seg" mid="51">THIS PARAGRAPH"#
        ),
        "the segments nested in g keep their own targets"
    );
    readers_agree(name, &out);

    // Trados Studio 2017: one unit of five segments, one a draft.
    let name = "test.txt_en-US_fr-FR.sdlxliff";
    let input = read(name);
    let (segments, out) = upper_into(&input, "FR", false);
    assert_eq!(segments, ["Followed by a third one."]);
    let text = String::from_utf8_lossy(&out);
    for kept in [
        r#"<mrk mtype="seg" mid="1">Première phrase</mrk>"#,
        r#"<mrk mtype="seg" mid="4">Modifier </mrk>"#,
        r#"<sdl:seg id="4" locked="true" conf="ApprovedSignOff""#,
    ] {
        assert!(text.contains(kept), "{kept}");
    }
    assert!(text.contains(r#"<mrk mtype="seg" mid="3">FOLLOWED BY A THIRD ONE.</mrk>"#));
    assert!(
        !text.contains("state-qualifier"),
        "no XLIFF state on a Trados target"
    );
    readers_agree(name, &out);

    // Trados Studio 2019, tracked changes in confirmed targets.
    let name = "ChangeTracking_Trados_1.sdlxliff";
    let input = read(name);
    let (segments, out) = upper_into(&input, "JA", false);
    assert!(segments.is_empty(), "{segments:?}");
    assert_eq!(out, input);

    // memoQ 10: a locked, proofread unit and two not started.
    let name = "locked.mqxliff";
    let input = read(name);
    let (segments, out) = upper_into(&input, "DE", false);
    assert_eq!(segments.len(), 2, "{segments:?}");
    assert_eq!(count(&out, r#"mq:status="Proofread""#), 1);
    assert_eq!(count(&out, r#"mq:status="PreTranslated""#), 2);
    assert_eq!(count(&out, r#"mq:status="NotStarted""#), 0);
    assert_eq!(
        count(&out, "mq:"),
        count(&input, "mq:"),
        "memoQ's attributes kept"
    );
    readers_agree(name, &out);

    // memoQ 12: every unit not started, formatting and hyperlink tags.
    let name = "test_document_memoQ_bilingual.mqxliff";
    let input = read(name);
    let (segments, out) = upper_into(&input, "EN-GB", false);
    assert_eq!(segments.len(), 27);
    assert_eq!(count(&out, r#"mq:status="PreTranslated""#), 27);
    let text = String::from_utf8_lossy(&out);
    for unit in text.split("<trans-unit").skip(1) {
        let inner = |open: &str, close: &str| {
            let start = unit.find(open).unwrap_or(0);
            unit[start..]
                .split(close)
                .next()
                .unwrap_or_default()
                .to_owned()
        };
        let (source, target) = (inner("<source", "</source>"), inner("<target", "</target>"));
        for tag in ["<bpt ", "<ept ", "<ph ", "<x "] {
            assert_eq!(
                source.matches(tag).count(),
                target.matches(tag).count(),
                "{tag}: {target}"
            );
        }
    }
    readers_agree(name, &out);

    // Wordfast Anywhere: machine and fuzzy suggestions, none confirmed, are
    // translated; Wordfast's own attributes stay.
    let name = "The_Man_in_the_Moon_txt.txlf";
    assert_eq!(
        DocumentFormat::from_filename(name),
        Some(DocumentFormat::Xliff)
    );
    let input = read(name);
    let (segments, out) = upper_into(&input, "JA", false);
    assert_eq!(segments.len(), 7, "{segments:?}");
    assert_eq!(count(&out, "gs4tr:"), count(&input, "gs4tr:"));
    readers_agree(name, &out);

    // Angular's extractor with a translator's French targets: only the
    // units without one are translated; the placeholders stay.
    let name = "messages.fr.xlf";
    let input = read(name);
    let (segments, out) = upper_into(&input, "FR", false);
    assert_eq!(segments.len(), 3, "{segments:?}");
    // Each placeholder of a translated source is in its new target.
    let placeholders: usize = segments.iter().map(|s| s.matches("<x ").count()).sum();
    assert_eq!(
        count(&out, "equiv-text="),
        count(&input, "equiv-text=") + placeholders
    );
    readers_agree(name, &out);
}

/// An XLIFF file as Angular's extractor (`ng extract-i18n`) writes plurals
/// and selects: the ICU message in its own unit, interpolations as `x`.
const ANGULAR: &str = r#"<?xml version="1.0" encoding="UTF-8" ?>
<xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2">
  <file source-language="en-US" datatype="plaintext" original="ng2.template">
    <body>
      <trans-unit id="5a134dee893586d02bffc9611056b9cadf9abfad" datatype="html">
        <source>{VAR_PLURAL, plural, =0 {just now} =1 {one minute ago} other {<x id="INTERPOLATION" equiv-text="{{minutes}}"/> minutes ago} }</source>
        <context-group purpose="location">
          <context context-type="sourcefile">src/app/app.component.html</context>
          <context context-type="linenumber">10</context>
        </context-group>
      </trans-unit>
      <trans-unit id="f99f34ac9bd4606345071bd813858dec29f3b7d1" datatype="html">
        <source>The author is <x id="ICU" equiv-text="{gender, select, male {...} female {...} other {...}}"/></source>
      </trans-unit>
      <trans-unit id="eff74b75ab7364b6fa888f1cbfae901aaaf02295" datatype="html">
        <source>{VAR_SELECT, select, male {the man} female {the woman} other {the person} }</source>
      </trans-unit>
    </body>
  </file>
</xliff>
"#;

/// Each ICU message's skeleton is tags, so a translation changes only the
/// branches' words: pyicumessageformat parses every target to the source's
/// message (same variable, type and selectors, interpolations in place).
#[test]
fn icu_messages_of_angular_files_keep_their_skeleton() {
    let d = extract(DocumentFormat::Xliff, ANGULAR.as_bytes())
        .unwrap()
        .with_target_language("ES");
    let plain: Vec<String> = d
        .segments()
        .iter()
        .map(|s| crate::inline::plain_text(s))
        .collect();
    assert_eq!(
        plain,
        [
            "just nowone minute ago minutes ago",
            "The author is ",
            "the manthe womanthe person"
        ]
    );
    let path = test_folder("xliff-icu").join("messages.es.xlf");
    std::fs::write(&path, uppercase_merge(&d)).unwrap();
    let check = r#"
import json, sys
from lxml import etree
from pyicumessageformat import Parser
ns = {"x": "urn:oasis:names:tc:xliff:document:1.2"}
def text(elem):
    out = elem.text or ""
    for child in elem:
        out += "{" + child.get("id") + "}" + (child.tail or "")
    return out
def shape(ast):
    if isinstance(ast, str):
        return "text"
    if isinstance(ast, list):
        return [shape(a) for a in ast]
    return {k: {o: shape(b) for o, b in v.items()} if k == "options" else v for k, v in ast.items()}
parser = Parser()
out = []
for unit in etree.parse(sys.argv[1]).iterfind(".//x:trans-unit", ns):
    source, target = text(unit.find("x:source", ns)), text(unit.find("x:target", ns))
    same = shape(parser.parse(source)) == shape(parser.parse(target))
    out.append([same, target])
print(json.dumps(out))
"#;
    let read: serde_json::Value = serde_json::from_str(&python_snippet(check, &[&path])).unwrap();
    assert_eq!(
        read,
        serde_json::json!([
            [
                true,
                "{VAR_PLURAL, plural, =0 {JUST NOW} =1 {ONE MINUTE AGO} other {{INTERPOLATION} MINUTES AGO} }"
            ],
            [true, "THE AUTHOR IS {ICU}"],
            [
                true,
                "{VAR_SELECT, select, male {THE MAN} female {THE WOMAN} other {THE PERSON} }"
            ],
        ])
    );
}

/// Windows resources in XLIFF (translate-toolkit's store, its file marked
/// `datatype="winres"` as Passolo and rc converters write it; a menu unit of
/// a plain file by its `restype`): each label's access key leaves the text
/// the engine sees and is marked again in the translation, and
/// translate-toolkit reads one `&` in each target.
#[test]
fn access_keys_of_windows_resources_are_kept_out_of_the_text() {
    let dir = test_folder("xliff-access-keys");
    let source = dir.join("menu.xlf");
    let write = r#"
import sys
from translate.storage import xliff
store = xliff.xlifffile(sourcelanguage="en")
for i, text in enumerate(["E&xit", "&Save all", "Tom & Jerry", "Save && close"]):
    store.addsourceunit(text, "Menu.rc", createifmissing=True).setid(f"r{i}")
store.getfilenode("Menu.rc").set("datatype", "winres")
menu = store.addsourceunit("&Open", "notes.txt", createifmissing=True)
menu.setid("m0")
menu.xmlelement.set("restype", "x-menuitem")
store.addsourceunit("R&D", "notes.txt").setid("t0")
open(sys.argv[1], "wb").write(bytes(store))
"#;
    python_snippet(write, &[&source]);
    let (segments, out) = upper_into(&std::fs::read(&source).unwrap(), "ES", false);
    assert_eq!(
        segments,
        [
            "Exit",
            "Save all",
            "Tom &amp; Jerry",
            "Save &amp;&amp; close",
            "Open",
            "R&amp;D"
        ]
    );
    let translated = dir.join("menu.es.xlf");
    std::fs::write(&translated, out).unwrap();
    let read = r#"
import json, sys
from translate.storage import xliff
store = xliff.xlifffile.parsefile(sys.argv[1])
print(json.dumps([u.target for u in store.units]))
"#;
    let targets: Vec<String> = serde_json::from_str(&python_snippet(read, &[&translated])).unwrap();
    assert_eq!(
        targets,
        [
            "E&XIT",
            "&SAVE ALL",
            "TOM & JERRY",
            "SAVE && CLOSE",
            "&OPEN",
            "R&D"
        ]
    );
}
