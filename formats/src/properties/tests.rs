use crate::{DocumentFormat, extract};

const FILE: &str = "# Messages\n! also a comment\n\napp.title = The house\ngreeting: Hello {0}, you have %d messages\nlong = The first line \\\n       and the second line\nescaped=Tab\\there and caf\\u00e9\nid = a1b2\nempty =\n";

/// The document's output with every segment upper-cased.
fn upper(d: &crate::Extracted) -> String {
    String::from_utf8(crate::testdoc::uppercase_merge(d)).unwrap()
}

#[test]
fn values_are_segments_keys_and_comments_never() {
    let d = extract(DocumentFormat::Properties, FILE.as_bytes()).unwrap();
    assert_eq!(
        d.segments(),
        [
            "The house",
            r#"Hello <x id="1"/>, you have <x id="2"/> messages"#,
            "The first line and the second line",
            "Tab\there and café",
        ]
    );
    assert_eq!(d.merge(d.segments()).unwrap(), FILE.as_bytes());
}

#[test]
fn translations_are_escaped_back_on_one_line() {
    let d = extract(DocumentFormat::Properties, FILE.as_bytes()).unwrap();
    let out = upper(&d);
    assert_eq!(
        out,
        "# Messages\n! also a comment\n\napp.title = THE HOUSE\ngreeting: HELLO {0}, YOU HAVE %d MESSAGES\nlong = THE FIRST LINE AND THE SECOND LINE\nescaped=TAB\\tHERE AND CAF\\u00C9\nid = a1b2\nempty =\n"
    );
}

#[test]
fn utf8_files_keep_their_characters_and_latin1_files_their_encoding() {
    let utf8 = "title = Café\n";
    let d = extract(DocumentFormat::Properties, utf8.as_bytes()).unwrap();
    assert_eq!(
        d.merge(&["Thé".into()]).unwrap(),
        "title = Thé\n".as_bytes()
    );
    let latin1 = b"title = Caf\xe9\n";
    let d = extract(DocumentFormat::Properties, latin1).unwrap();
    assert_eq!(d.segments(), ["Café"]);
    assert_eq!(d.merge(&["Thé".into()]).unwrap(), b"title = Th\\u00E9\n");
}

/// jproperties (a Python reader of Java properties) reads the translated
/// file: the same keys, every translated value upper-cased, the others as
/// they were.
#[test]
fn jproperties_reads_the_translated_values() {
    use crate::testdoc::{python_snippet, test_folder};
    let dir = test_folder("properties");
    let d = extract(DocumentFormat::Properties, FILE.as_bytes()).unwrap();
    let path = dir.join("upper.properties");
    std::fs::write(&path, upper(&d)).unwrap();
    let read: serde_json::Value =
        serde_json::from_str(&python_snippet(
            "import json, sys\nfrom jproperties import Properties\np = Properties()\np.load(open(sys.argv[1], 'rb'), 'iso-8859-1')\nprint(json.dumps({k: v.data for k, v in p.items()}))",
            &[&path],
        ))
        .unwrap();
    assert_eq!(
        read,
        serde_json::json!({
            "app.title": "THE HOUSE",
            "greeting": "HELLO {0}, YOU HAVE %d MESSAGES",
            "long": "THE FIRST LINE AND THE SECOND LINE",
            "escaped": "TAB\tHERE AND CAFÉ",
            "id": "a1b2",
            "empty": "",
        })
    );
}

/// An Eclipse message bundle, written by jproperties: the access key marked
/// inside a word leaves the engine's text and is marked again in the
/// translation, read back by jproperties; `&` between capitals, between
/// words, doubled or in a URL stays text.
#[test]
fn eclipse_access_keys_are_kept_out_of_the_text() {
    use crate::testdoc::{python_snippet, test_folder};
    let dir = test_folder("properties-access-keys");
    let path = dir.join("messages.properties");
    let values = serde_json::json!({
        "exit": "E&xit",
        "file": "&File",
        "save_as": "Save &As...",
        "budget": "The R&D budget",
        "carrier": "Calls over AT&T",
        "show": "Tom & Jerry",
        "dish": "Fish && chips",
        "link": "See http://example.org/?a=1&b=2 now",
    });
    python_snippet(
        "import json, sys\nfrom jproperties import Properties\np = Properties()\nfor k, v in json.loads(sys.argv[2]).items():\n    p[k] = v\nwith open(sys.argv[1], 'wb') as f:\n    p.store(f, encoding='iso-8859-1')",
        &[&path, std::path::Path::new(&values.to_string())],
    );
    let d = extract(DocumentFormat::Properties, &std::fs::read(&path).unwrap()).unwrap();
    let segments = d.segments();
    for plain in ["Exit", "File", "Save As..."] {
        assert!(
            segments.iter().any(|s| s == plain),
            "{plain} in {segments:?}"
        );
    }
    assert!(
        segments
            .iter()
            .all(|s| !s.contains("&amp;x") && !s.contains("&amp;F")),
        "{segments:?}"
    );
    let out = dir.join("upper.properties");
    std::fs::write(&out, upper(&d)).unwrap();
    let read: serde_json::Value = serde_json::from_str(&python_snippet(
        "import json, sys\nfrom jproperties import Properties\np = Properties()\np.load(open(sys.argv[1], 'rb'), 'iso-8859-1')\nprint(json.dumps({k: v.data for k, v in p.items()}))",
        &[&out],
    ))
    .unwrap();
    assert_eq!(read["exit"], "E&XIT");
    assert_eq!(read["file"], "&FILE");
    assert_eq!(read["save_as"], "SAVE &AS...");
    assert_eq!(read["budget"], "THE R&D BUDGET");
    assert_eq!(read["carrier"], "CALLS OVER AT&T");
    assert_eq!(read["show"], "TOM & JERRY");
    assert_eq!(read["dish"], "FISH && CHIPS");
    assert!(
        read["link"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("?a=1&b=2"),
        "{}",
        read["link"]
    );
}
