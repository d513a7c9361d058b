use crate::testdoc::{python_snippet, test_folder, uppercase_merge};
use crate::{DocumentFormat, FormatError, extract};

const RAILS: &str = "# Spanish comes from English\nen:\n  app:\n    title: The house   # shown in the bar\n    greeting: 'Hello %{name}, it''s late'\n    farewell: \"Good night\\tsee you\"\n    count: 42\n    enabled: true\n    url: https://example.com/path\n    defaults: &defaults\n      color: Bright red\n    copy: *defaults\n    intro: |\n      The first line.\n      The second line.\n    summary: >-\n      Folded text\n      on two lines.\n    items:\n      - The cat\n      - The dog\n    tagged: !custom Keep me\n";

fn upper(input: &str) -> String {
    crate::testdoc::uppercase_to_spanish(DocumentFormat::Yaml, input)
}

#[test]
fn scalar_values_are_segments_keys_and_code_never() {
    let d = extract(DocumentFormat::Yaml, RAILS.as_bytes()).unwrap();
    assert_eq!(
        d.segments(),
        [
            "The house",
            r#"Hello <x id="1"/>, it's late"#,
            "Good night\tsee you",
            "Bright red",
            "The first line.\nThe second line.\n",
            "Folded text on two lines.",
            "The cat",
            "The dog",
        ]
    );
    assert_eq!(d.merge(d.segments()).unwrap(), RAILS.as_bytes(), "identity");
}

#[test]
fn translations_keep_each_scalars_style_and_the_locale_key_is_renamed() {
    let out = upper(RAILS);
    assert_eq!(
        out,
        "# Spanish comes from English\nes:\n  app:\n    title: THE HOUSE   # shown in the bar\n    greeting: 'HELLO %{name}, IT''S LATE'\n    farewell: \"GOOD NIGHT\\tSEE YOU\"\n    count: 42\n    enabled: true\n    url: https://example.com/path\n    defaults: &defaults\n      color: BRIGHT RED\n    copy: *defaults\n    intro: |\n      THE FIRST LINE.\n      THE SECOND LINE.\n    summary: >-\n      FOLDED TEXT ON TWO LINES.\n    items:\n      - THE CAT\n      - THE DOG\n    tagged: !custom Keep me\n"
    );
}

#[test]
fn a_plain_value_that_would_change_meaning_is_quoted() {
    let d = extract(DocumentFormat::Yaml, b"a: The value\nb: Other\n").unwrap();
    let out = d.merge(&["Note: read #this".into(), "yes".into()]).unwrap();
    assert_eq!(out, b"a: \"Note: read #this\"\nb: \"yes\"\n");
}

#[test]
fn broken_yaml_is_refused() {
    for input in ["a: [1, 2\n", "a: 'open\n", "key: value\n  bad indent: x\n"] {
        assert!(
            matches!(
                extract(DocumentFormat::Yaml, input.as_bytes()),
                Err(FormatError::Corrupt(_))
            ),
            "{input:?}"
        );
    }
}

/// PyYAML writes a file, the translation is read back by PyYAML: the same
/// structure, every text value upper-cased, the others equal.
#[test]
fn pyyaml_reads_the_translated_file_with_the_same_structure() {
    let dir = test_folder("yaml");
    let source = dir.join("source.yml");
    let translated = dir.join("translated.yml");
    let run = |script: &str, path: &std::path::Path| python_snippet(script, &[path]);
    run(
        "import sys, yaml\ndata = {'en': {'menu': {'open': 'Open the file', 'quit': 'Quit now: bye', 'n': 3,\n  'long': 'A sentence that PyYAML may well wrap over more than one line because it is long enough to do so'},\n  'list': ['First item', 'Second: item'], 'multi': 'Line one\\nLine two\\n'}}\nyaml.safe_dump(data, open(sys.argv[1], 'w'), allow_unicode=True)",
        &source,
    );
    let d = extract(DocumentFormat::Yaml, &std::fs::read(&source).unwrap())
        .unwrap()
        .with_target_language("ES");
    std::fs::write(&translated, uppercase_merge(&d)).unwrap();
    let read = "import json, sys, yaml\nprint(json.dumps(yaml.safe_load(open(sys.argv[1]))))";
    let before: serde_json::Value = serde_json::from_str(&run(read, &source)).unwrap();
    let after: serde_json::Value = serde_json::from_str(&run(read, &translated)).unwrap();
    fn upper(v: &serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::String(s) => serde_json::Value::String(s.to_uppercase()),
            serde_json::Value::Array(a) => a.iter().map(upper).collect(),
            serde_json::Value::Object(o) => o.iter().map(|(k, v)| (k.clone(), upper(v))).collect(),
            other => other.clone(),
        }
    }
    let mut expected = upper(&before["en"]);
    // A multi-line plain scalar (PyYAML's wrapping) is left as it is.
    if !after["es"]["menu"]["long"]
        .as_str()
        .unwrap()
        .starts_with("A SENTENCE")
    {
        expected["menu"]["long"] = before["en"]["menu"]["long"].clone();
    }
    assert_eq!(after, serde_json::json!({ "es": expected }));
}

#[test]
fn values_after_non_ascii_text_are_found_in_place() {
    let src = "título: Café con leche\nbär: 'Der Bär schläft'\n";
    let d = extract(DocumentFormat::Yaml, src.as_bytes()).unwrap();
    assert_eq!(d.segments(), ["Café con leche", "Der Bär schläft"]);
    assert_eq!(
        String::from_utf8(uppercase_merge(&d)).unwrap(),
        "título: CAFÉ CON LECHE\nbär: 'DER BÄR SCHLÄFT'\n"
    );
}
