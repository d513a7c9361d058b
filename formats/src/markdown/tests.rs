use crate::{DocumentFormat, extract};

const DOC: &str = "---\ntitle: The garden\nlayout: post\ntags: [home, garden]\n---\n\n# The *big* house\n\nThe dog sleeps in the [garden](https://example.com/g \"Garden\").\nIt is **very** quiet, run `make test` now.\n\n- The first item\n- The second item\n\n> The quoted text.\n\n```rust\nlet x = \"not text\";\n```\n\n<div>Raw HTML</div>\n\n| Name | Value |\n|------|-------|\n| The cat | The dog |\n\n![A red house](house.png)\n";

/// The document's output with every segment upper-cased.
fn upper(d: &crate::Extracted) -> String {
    String::from_utf8(crate::testdoc::uppercase_merge(d)).unwrap()
}

#[test]
fn blocks_are_segments_with_inline_markup_as_tags() {
    let d = extract(DocumentFormat::Markdown, DOC.as_bytes()).unwrap();
    assert_eq!(
        d.segments(),
        [
            "The garden",
            r#"The <g id="1">big</g> house"#,
            r#"The dog sleeps in the <g id="1">garden</g>. It is <g id="2">very</g> quiet, run <x id="3"/> now."#,
            "The first item",
            "The second item",
            "The quoted text.",
            "Name",
            "Value",
            "The cat",
            "The dog",
        ]
    );
    assert_eq!(d.merge(d.segments()).unwrap(), DOC.as_bytes());
}

#[test]
fn translations_keep_markup_code_front_matter_keys_and_html() {
    let d = extract(DocumentFormat::Markdown, DOC.as_bytes()).unwrap();
    let out = upper(&d);
    assert!(
        out.starts_with(
            "---\ntitle: THE GARDEN\nlayout: post\ntags: [home, garden]\n---\n\n# THE *BIG* HOUSE\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("THE DOG SLEEPS IN THE [GARDEN](https://example.com/g \"Garden\"). IT IS **VERY** QUIET, RUN `make test` NOW.\n"),
        "{out}"
    );
    assert!(
        out.contains("- THE FIRST ITEM\n- THE SECOND ITEM\n"),
        "{out}"
    );
    assert!(out.contains("> THE QUOTED TEXT.\n"), "{out}");
    assert!(
        out.contains("```rust\nlet x = \"not text\";\n```\n"),
        "{out}"
    );
    assert!(out.contains("<div>Raw HTML</div>"), "{out}");
    assert!(out.contains("| THE CAT | THE DOG |"), "{out}");
    assert!(out.contains("![A red house](house.png)"), "{out}");
}

#[test]
fn markup_characters_in_a_translation_are_escaped() {
    let d = extract(
        DocumentFormat::Markdown,
        b"Some text.\n\n| A |\n|---|\n| B |\n",
    )
    .unwrap();
    let out = d
        .merge(&[
            "Use *stars* and [x] _here_ with max_retries".into(),
            "A | B".into(),
            "C".into(),
        ])
        .unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.starts_with("Use \\*stars\\* and \\[x\\] \\_here\\_ with max_retries\n"),
        "{out}"
    );
    assert!(out.contains("| A \\| B |"), "{out}");
}

/// Python-Markdown reads the translated file as it read the source: the same
/// elements, the text of every block upper-cased (code kept as it was).
#[test]
fn python_markdown_reads_the_same_structure_with_the_text_translated() {
    use crate::testdoc::{test_folder, testdata_script};
    let dir = test_folder("markdown");
    let source = dir.join("doc.md");
    std::fs::write(&source, DOC).unwrap();
    let d = extract(DocumentFormat::Markdown, DOC.as_bytes()).unwrap();
    let out = dir.join("upper.md");
    std::fs::write(&out, upper(&d)).unwrap();
    let read = |p: &std::path::Path| -> serde_json::Value {
        serde_json::from_str(&testdata_script("read_markdown.py", &[p])).unwrap()
    };
    let (before, after) = (read(&source), read(&out));
    assert_eq!(before["counts"], after["counts"]);
    let texts = |v: &serde_json::Value| -> Vec<String> {
        v["texts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_owned())
            .collect()
    };
    let expected: Vec<String> = texts(&before)
        .iter()
        .map(|t| t.to_uppercase().replace("MAKE TEST", "make test"))
        .collect();
    assert_eq!(texts(&after), expected);
}

#[test]
fn front_matter_that_is_not_yaml_stays_as_it_is() {
    let doc = "---\ntitle: [broken\n---\n\nThe text.\n";
    let d = extract(DocumentFormat::Markdown, doc.as_bytes()).unwrap();
    assert_eq!(d.segments(), ["The text."]);
    assert_eq!(upper(&d), "---\ntitle: [broken\n---\n\nTHE TEXT.\n");
}
