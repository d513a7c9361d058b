use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::inline;
use crate::testdoc::{
    bracketed, entries, map_text, raw_entries, tags, test_folder, testdata_script,
};
use crate::{DocumentFormat, FormatError, extract};

/// The package `testdata/make_idml.py` writes, in a folder of the test's own.
fn package(name: &str) -> (PathBuf, Vec<u8>) {
    let dir = test_folder(&format!("idml-{name}"));
    let path = dir.join("book.idml");
    testdata_script("make_idml.py", &[Path::new("write"), &path]);
    let bytes = std::fs::read(&path).unwrap();
    (dir, bytes)
}

/// What Python's zipfile and xml.dom read in `bytes`.
fn read(dir: &Path, bytes: &[u8]) -> Value {
    let path = dir.join("read.idml");
    std::fs::write(&path, bytes).unwrap();
    serde_json::from_str(&testdata_script(
        "make_idml.py",
        &[Path::new("read"), &path],
    ))
    .unwrap()
}

#[test]
fn story_paragraphs_split_at_breaks_are_segments_with_runs_as_spans() {
    let (_, bytes) = package("segments");
    let doc = extract(DocumentFormat::Idml, &bytes).unwrap();
    assert_eq!(
        doc.segments(),
        [
            "The annual report",
            r#"The house is <g id="1">very big</g> and the garden is small."#,
            "The dog runs in the park &amp; the cat sleeps.",
            r#"Page <x id="1"/> of the book."#,
            r#"Read more on <g id="1">the website</g> today."#,
            // A paragraph's segments come before those of the tables and
            // footnotes inside it.
            "The street is long.",
            "The water is cold.",
            "The city is old.",
            "\tThe note is short.",
            "The picture of the house",
        ]
    );
}

/// A text piece bracketed and lengthened.
fn pseudo(text: &str) -> String {
    bracketed(text, |_| " ~~~".to_owned())
}

#[test]
fn identity_is_byte_identical_and_a_translation_keeps_the_structure() {
    let (dir, bytes) = package("round-trip");
    let doc = extract(DocumentFormat::Idml, &bytes).unwrap();
    assert_eq!(
        raw_entries(&doc.merge(doc.segments()).unwrap()),
        raw_entries(&bytes)
    );

    let translated: Vec<String> = doc.segments().iter().map(|s| map_text(s, pseudo)).collect();
    let out = doc.merge(&translated).unwrap();
    // The same segments in the smallest chunks.
    let (segments, chunked) =
        crate::package::extract_in_chunks(&super::PACKAGE, &bytes, None, 1).unwrap();
    assert_eq!(segments, doc.segments());
    assert_eq!(
        entries(&crate::filter::Skeleton::merge(&chunked, &[], &translated, None).unwrap()),
        entries(&out)
    );

    let again = extract(DocumentFormat::Idml, &out).unwrap();
    assert_eq!(again.segments().len(), doc.segments().len());
    for (before, after) in doc.segments().iter().zip(again.segments()) {
        assert_eq!(tags(after), tags(before));
        assert_eq!(
            inline::plain_text(after),
            inline::plain_text(&map_text(before, pseudo))
        );
    }

    let (source, result) = (read(&dir, &bytes), read(&dir, &out));
    assert_eq!(result["first"], json!(["mimetype", true]));
    assert_eq!(result["entries"], source["entries"]);
    let story = &result["stories"]["Stories/Story_u1.xml"];
    let before = &source["stories"]["Stories/Story_u1.xml"];
    // Paragraphs, breaks, tables, cells, footnotes and links are the
    // source's (runs are rewritten: a translated paragraph's runs follow
    // its translation).
    let mut counts = story["counts"].clone();
    let mut counts_before = before["counts"].clone();
    for c in [&mut counts, &mut counts_before] {
        let map = c.as_object_mut().unwrap();
        map.remove("CharacterStyleRange");
        map.remove("Properties");
    }
    assert_eq!(counts, counts_before, "{story}");
    assert_eq!(story["special"], 2);
    assert_eq!(story["bold"], json!(["[very big ~~~]"]));
    assert_eq!(
        story["paragraphs"][1],
        "[The house is ~~~] [very big ~~~] [and the garden is small. ~~~]\n\
         [The dog runs in the park & the cat sleeps. ~~~]\n\
         [Page ~~~]  [of the book. ~~~]\n\
         [Read more on ~~~] [the website ~~~] [today. ~~~]\n",
        "{story}"
    );
    assert_eq!(
        story["cells"],
        json!(["[The water is cold. ~~~]", "[The city is old. ~~~]"])
    );
    assert_eq!(story["footnotes"], json!(["\t[The note is short. ~~~]"]));
    // The link keeps its identity and holds its translated text.
    assert_eq!(story["links"], json!([["hts1", "[the website ~~~]"]]));
    // Every entry but the stories is the source's, compressed bytes included.
    let untouched = |entries: Vec<(String, u32, Vec<u8>)>| -> Vec<(String, u32, Vec<u8>)> {
        entries
            .into_iter()
            .filter(|(name, ..)| !name.starts_with("Stories/"))
            .collect()
    };
    assert_eq!(untouched(raw_entries(&out)), untouched(raw_entries(&bytes)));
}

#[test]
fn broken_packages_are_refused() {
    let message = |bytes: &[u8]| match extract(DocumentFormat::Idml, bytes) {
        Err(FormatError::Corrupt(m)) => m,
        other => panic!("expected a Corrupt error, got {other:?}"),
    };
    let (_, bytes) = package("broken");
    assert!(message(&bytes[..bytes.len() / 2]).contains("truncated or damaged"));
    let no_designmap = crate::testdoc::zip_of(&[("Stories/Story_u1.xml", "<x/>")]);
    assert!(message(&no_designmap).contains("designmap.xml is missing"));
    let laughs = crate::testdoc::zip_of(&[
        ("designmap.xml", "<Document/>"),
        (
            "Stories/Story_u1.xml",
            r#"<!DOCTYPE x [<!ENTITY a "ha">]><x>&a;</x>"#,
        ),
    ]);
    assert!(message(&laughs).contains("declares a DOCTYPE"));
}
