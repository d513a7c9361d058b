use crate::testdoc::{python_snippet, test_folder};
use crate::{DocumentFormat, extract};

/// A `res/values/strings.xml` as Android Studio writes one.
const STRINGS: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<resources xmlns:tools="http://schemas.android.com/tools" xmlns:xliff="urn:oasis:names:tc:xliff:document:1.2">
    <string name="app_name" translatable="false">Tolk Cloud</string>
    <string name="check_for_updates">@string/check_for_updates_title</string>
    <string name="welcome">Welcome to <b>%1$s</b>! Don\'t wait.</string>
    <string name="greeting">Hello <xliff:g id="user" example="Bob">%1$s</xliff:g>, the house is big.</string>
    <string name="spaced">"The dog   runs"</string>
    <string name="lines">First line\nSecond line</string>
    <plurals name="files">
        <item quantity="one">%d file in the house</item>
        <item quantity="other">%d files in the house</item>
    </plurals>
    <string-array name="animals">
        <item>The cat</item>
        <item>The dog</item>
    </string-array>
    <string-array name="codes" translatable="false">
        <item>The code</item>
    </string-array>
</resources>
"#;

#[test]
fn strings_plurals_and_arrays_are_segments_with_android_syntax_as_tags() {
    assert!(super::is_android(STRINGS.as_bytes()));
    assert!(!super::is_android(
        b"<?xml version=\"1.0\"?><root><string>x</string></root>"
    ));
    let doc = extract(DocumentFormat::Xml, STRINGS.as_bytes()).unwrap();
    assert_eq!(
        doc.segments(),
        [
            r#"Welcome to <g id="1"><x id="2"/></g>! Don't wait."#,
            r#"Hello <x id="1"/>, the house is big."#,
            r#"<x id="1"/>The dog   runs<x id="2"/>"#,
            r#"First line<x id="1"/>Second line"#,
            r#"<x id="1"/> file in the house"#,
            r#"<x id="1"/> files in the house"#,
            "The cat",
            "The dog",
        ]
    );
}

#[test]
fn translations_are_written_with_android_escapes_and_read_back() {
    let doc = extract(DocumentFormat::Xml, STRINGS.as_bytes())
        .unwrap()
        .with_target_language("FR");
    let translated = [
        r#"Bienvenue à <g id="1"><x id="2"/></g> ! N'attendez pas."#,
        r#"Bonjour <x id="1"/>, la maison est "grande" &amp; belle."#,
        r#"<x id="1"/>Le chien   court<x id="2"/>"#,
        r#"Première ligne<x id="1"/>Seconde ligne"#,
        r#"<x id="1"/> fichier dans la maison"#,
        r#"<x id="1"/> fichiers dans la maison"#,
        "@Le chat",
        "Le chien",
    ];
    let out = doc.merge(&translated.map(str::to_owned)).unwrap();
    let out = String::from_utf8(out).unwrap();
    for kept in [
        r#"<string name="app_name" translatable="false">Tolk Cloud</string>"#,
        r#"<string name="check_for_updates">@string/check_for_updates_title</string>"#,
        r#"<string name="welcome">Bienvenue à <b>%1$s</b> ! N\'attendez pas.</string>"#,
        r#"<xliff:g id="user" example="Bob">%1$s</xliff:g>, la maison est \"grande\" &amp; belle."#,
        r#"<string name="spaced">"Le chien   court"</string>"#,
        r#"<string name="lines">Première ligne\nSeconde ligne</string>"#,
        r#"<item quantity="other">%d fichiers dans la maison</item>"#,
        r#"<item>\@Le chat</item>"#,
        r#"<item>The code</item>"#,
    ] {
        assert!(out.contains(kept), "{kept} in {out}");
    }
    // An independent reader: lxml parses the file, and each value read as
    // aapt2 reads it (no apostrophe or quote left unescaped outside quotes).
    let path = test_folder("android").join("strings.xml");
    std::fs::write(&path, &out).unwrap();
    let read = python_snippet(
        r#"import sys, json, re
from lxml import etree
root = etree.parse(sys.argv[1]).getroot()
def value(e):
    raw = ''.join(e.itertext())
    body = raw[1:-1] if raw.startswith('"') and raw.endswith('"') else raw
    bad = re.search(r"(?<!\\)['\"]", body)
    if bad and not (raw.startswith('"') and "'" not in re.sub(r"\\.", "", body)):
        raise SystemExit('unescaped quote in ' + raw)
    return re.sub(r"\\(['\"@?\\])", r"\1", ''.join(e.itertext()))
out = {e.get('name'): value(e) for e in root.iter('string')}
out['files'] = [value(i) for i in root.find("plurals").iter('item')]
print(json.dumps(out, ensure_ascii=False))"#,
        &[&path],
    );
    let read: serde_json::Value = serde_json::from_str(read.trim()).unwrap();
    assert_eq!(read["welcome"], "Bienvenue à %1$s ! N'attendez pas.");
    assert_eq!(read["files"][1], "%d fichiers dans la maison");
}
