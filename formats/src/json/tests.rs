use crate::testdoc::uppercase_merge;
use crate::{DocumentFormat, FormatError, extract};

const FILE: &str = r#"{
  "app": {
    "title": "The house",
    "greeting": "Hello {name}, you have %d new messages",
    "files": "{count, plural, =0 {No files} one {# file} other {# files}}",
    "quote": "She said \"yes\"\n",
    "group": "Press {the red button} now",
    "count": 3,
    "list": ["first item", "second item"],
    "id": "a1b2",
    "mustache": "Welcome {{ user.name }} to ${site}"
  },
  "empty": ""
}
"#;

fn doc() -> crate::Extracted {
    extract(DocumentFormat::Json, FILE.as_bytes()).unwrap()
}

#[test]
fn string_values_are_segments_keys_never() {
    let d = doc();
    assert_eq!(
        d.segments(),
        [
            "The house",
            r#"Hello <x id="1"/>, you have <x id="2"/> new messages"#,
            r#"<x id="1"/><x id="2"/>No files<x id="3"/><x id="4"/><x id="5"/> file<x id="6"/><x id="7"/><x id="8"/> files<x id="9"/><x id="10"/>"#,
            "She said \"yes\"\n",
            "Press {the red button} now",
            "first item",
            "second item",
            r#"Welcome <x id="1"/> to <x id="2"/>"#,
        ]
    );
    assert_eq!(d.merge(d.segments()).unwrap(), FILE.as_bytes());
}

#[test]
fn translations_are_spliced_in_with_placeholders_and_icu_skeletons_kept() {
    let d = doc();
    let out = String::from_utf8(uppercase_merge(&d)).unwrap();
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["app"]["title"], "THE HOUSE");
    assert_eq!(
        value["app"]["greeting"],
        "HELLO {name}, YOU HAVE %d NEW MESSAGES"
    );
    assert_eq!(
        value["app"]["files"],
        "{count, plural, =0 {NO FILES} one {# FILE} other {# FILES}}"
    );
    assert_eq!(value["app"]["quote"], "SHE SAID \"YES\"\n");
    assert_eq!(value["app"]["group"], "PRESS {THE RED BUTTON} NOW");
    assert_eq!(value["app"]["count"], 3);
    assert_eq!(value["app"]["list"][1], "SECOND ITEM");
    assert_eq!(value["app"]["id"], "a1b2");
    assert_eq!(
        value["app"]["mustache"],
        "WELCOME {{ user.name }} TO ${site}"
    );
    // Keys and layout untouched.
    assert!(
        out.starts_with("{\n  \"app\": {\n    \"title\": \"THE HOUSE\","),
        "{out}"
    );
}

#[test]
fn a_lost_placeholder_is_kept() {
    let d = doc();
    let mut t: Vec<String> = d.segments().to_vec();
    t[1] = "Hola, tienes mensajes nuevos".into();
    let out = String::from_utf8(d.merge(&t).unwrap()).unwrap();
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        value["app"]["greeting"],
        "Hola, tienes mensajes nuevos{name}%d"
    );
}

#[test]
fn placeholders_are_text_when_asked_and_icu_skeletons_stay_tags() {
    let options = crate::ExtractOptions {
        translate_json_placeholders: true,
        ..Default::default()
    };
    let d = crate::extract_with(DocumentFormat::Json, FILE.as_bytes(), options).unwrap();
    assert_eq!(d.segments()[1], "Hello {name}, you have %d new messages");
    assert!(
        d.segments()[2].starts_with(r#"<x id="1"/><x id="2"/>No files"#),
        "{:?}",
        d.segments()
    );
}

#[test]
fn invalid_json_is_refused_with_a_clear_message() {
    for bad in [&b"{\"a\": "[..], b"not json", b"{\"a\": \"b\",}"] {
        let err = extract(DocumentFormat::Json, bad).unwrap_err();
        assert!(matches!(err, FormatError::Corrupt(_)), "{err:?}");
        assert!(
            err.to_string().starts_with("The file is not valid JSON"),
            "{err}"
        );
    }
}

#[test]
fn an_icu_head_without_branches_is_text() {
    // `{count, plural` with nothing after: not a message, and no panic.
    let doc = crate::extract(crate::DocumentFormat::Json, br#"{"a": "{count, plural"}"#).unwrap();
    assert_eq!(doc.segments().len(), 1);
}
