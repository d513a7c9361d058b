use crate::inline::{Piece, parse};
use crate::{DocumentFormat, Extracted, extract};

const PAGE: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>My &amp; page</title>
  <meta name="description" content="A test page">
  <script>var a = "<p>not text</p>"; if (a < b) {}</script>
  <style>p { color: red }</style>
</head>
<body>
  <h1>Hello <b>world</b>!</h1>
  <p>See <a href="x.html" title="Link title">this link</a> and <img src="a.png" alt="A cat"> here.<br>Next line</p>
  <pre>keep   this</pre>
  <p translate="no">Do not translate</p>
  <div class="x notranslate"><p>Nor this</p></div>
  <p>Use <code>ls -l</code> now&nbsp;&copy; 2024 &weird; x</p>
  <p><strong>All bold</strong></p>
  <ul><li>One</li><li> <br> </li><li>&nbsp;</li></ul>
  <input type="submit" value="Send"> <input type="text" placeholder='Your "name"'>
</body>
</html>
"#;

fn doc(html: &str) -> Extracted {
    extract(DocumentFormat::Html, html.as_bytes()).unwrap()
}

fn merged(doc: &Extracted, translated: &[String]) -> String {
    String::from_utf8(doc.merge(translated).unwrap()).unwrap()
}

/// Uppercases the text of a segment, keeping its tags.
fn upper(segment: &str) -> String {
    let mut out = String::new();
    for piece in parse(segment) {
        match piece {
            Piece::Text(t) => crate::inline::escape_into(&mut out, &t.to_uppercase()),
            Piece::Open(id) => out.push_str(&format!("<g id=\"{id}\">")),
            Piece::Close(_) => out.push_str("</g>"),
            Piece::Placeholder(id) => out.push_str(&format!("<x id=\"{id}\"/>")),
        }
    }
    out
}

#[test]
fn segments_of_a_page() {
    let doc = doc(PAGE);
    assert_eq!(
        doc.segments(),
        [
            "My &amp; page",
            "A test page",
            "Hello <g id=\"1\">world</g>!",
            "Link title",
            "A cat",
            "See <g id=\"1\">this link</g> and <x id=\"2\"/> here.<x id=\"3\"/>Next line",
            "Use <x id=\"1\"/> now\u{a0}© 2024 <x id=\"2\"/> x",
            "All bold",
            "One",
            "Send",
            "Your \"name\"",
        ]
    );
}

#[test]
fn identity_is_byte_identical() {
    let doc = doc(PAGE);
    assert_eq!(merged(&doc, doc.segments()), PAGE);
}

#[test]
fn translation_changes_text_and_keeps_markup() {
    let doc = doc(PAGE);
    let translated: Vec<String> = doc.segments().iter().map(|s| upper(s)).collect();
    let out = merged(&doc, &translated);
    assert!(out.contains("<title>MY &amp; PAGE</title>"), "{out}");
    assert!(out.contains(r#"<meta name="description" content="A TEST PAGE">"#));
    assert!(out.contains("<h1>HELLO <b>WORLD</b>!</h1>"));
    assert!(out.contains(
        r#"<p>SEE <a href="x.html" title="LINK TITLE">THIS LINK</a> AND <img src="a.png" alt="A CAT"> HERE.<br>NEXT LINE</p>"#
    ));
    assert!(
        out.contains("<p>USE <code>ls -l</code> NOW&nbsp;© 2024 &weird; X</p>"),
        "{out}"
    );
    assert!(out.contains("<p><strong>ALL BOLD</strong></p>"));
    assert!(out.contains(r#"<input type="submit" value="SEND">"#));
    assert!(out.contains(r#"placeholder="YOUR &quot;NAME&quot;""#));
    // Untouched parts.
    assert!(out.contains(r#"<script>var a = "<p>not text</p>"; if (a < b) {}</script>"#));
    assert!(out.contains("<style>p { color: red }</style>"));
    assert!(out.contains("<pre>keep   this</pre>"));
    assert!(out.contains(r#"<p translate="no">Do not translate</p>"#));
    assert!(out.contains(r#"<div class="x notranslate"><p>Nor this</p></div>"#));
    assert!(out.contains("<li> <br> </li><li>&nbsp;</li>"));
    // Same structure: re-extracting gives the translated segments.
    let again = extract(DocumentFormat::Html, out.as_bytes()).unwrap();
    assert_eq!(again.segments(), translated.as_slice());
}

#[test]
fn reordered_tags_move_their_markup() {
    let doc = doc(r#"<p>The <b>red</b> <i>car</i>.</p>"#);
    assert_eq!(
        doc.segments(),
        [r#"The <g id="1">red</g> <g id="2">car</g>."#]
    );
    let out = merged(
        &doc,
        &[r#"La <g id="2">voiture</g> <g id="1">rouge</g>."#.into()],
    );
    assert_eq!(out, "<p>La <i>voiture</i> <b>rouge</b>.</p>");
}

#[test]
fn robust_to_broken_translations() {
    let doc = doc(r#"<p>A <a href="u">link</a>, an <img src="i.png"> and a<br>break</p>"#);
    assert_eq!(
        doc.segments(),
        [r#"A <g id="1">link</g>, an <x id="2"/> and a<x id="3"/>break"#]
    );
    // Tags dropped: the image is kept (appended), the break and the link are lost.
    let out = merged(&doc, &["Ein Link, ein und ein Umbruch".into()]);
    assert_eq!(
        out,
        r#"<p>Ein Link, ein und ein Umbruch<img src="i.png"></p>"#
    );
    // Malformed markup and raw special characters are text; unknown ids ignored.
    let out = merged(
        &doc,
        &[r#"x < y & <g id="9">z</g> <g id="1">w<x id="2"/><x id="2"/>"#.into()],
    );
    assert_eq!(
        out,
        r#"<p>x &lt; y &amp; z <a href="u">w<img src="i.png"></a></p>"#
    );
}

#[test]
fn entities_and_whitespace() {
    let doc = doc("<p>\n   Fish &amp; chips\n   &lt;cheap&gt; &#8364;5 &#x263A;\n</p>");
    assert_eq!(doc.segments(), ["Fish &amp; chips &lt;cheap&gt; €5 ☺"]);
    let out = merged(&doc, &["Poisson &amp; frites &lt;pas cher&gt; 5 €".into()]);
    assert_eq!(
        out,
        "<p>\n   Poisson &amp; frites &lt;pas cher&gt; 5 €\n</p>"
    );
}

#[test]
fn nested_blocks_split_segments() {
    let doc = doc("<div>Intro <p>Para <em>one</em></p> outro</div><span>loose</span>");
    assert_eq!(
        doc.segments(),
        ["Intro", "Para <g id=\"1\">one</g>", "outro", "loose"]
    );
}

#[test]
fn unpaired_inline_tags_become_placeholders() {
    let doc = doc("<p>a <b>b <i>c</b> d</p>");
    assert_eq!(doc.segments(), [r#"a <g id="1">b <x id="2"/>c</g> d"#]);
    assert_eq!(merged(&doc, doc.segments()), "<p>a <b>b <i>c</b> d</p>");
    let out = merged(&doc, &["A B C D".into()]);
    assert_eq!(out, "<p>A B C D<i></p>");
}

#[test]
fn odd_inputs_do_not_panic() {
    for html in [
        "",
        "\u{feff}<p>bom</p>",
        "just text",
        "<",
        "<p",
        "<p title='unterminated",
        "</p></b></x>",
        "<b><b><b>x",
        "<code>never closed <p>text</p>",
        "<script>no end",
        "<!-- comment only",
        "<svg><text>Hi</text></svg> icon",
        "&;&#;&#xFFFFFFFF;&#0;",
    ] {
        let doc = doc(html);
        assert_eq!(merged(&doc, doc.segments()), html, "identity of {html:?}");
        let translated: Vec<String> = doc.segments().iter().map(|s| upper(s)).collect();
        let out = merged(&doc, &translated);
        assert!(extract(DocumentFormat::Html, out.as_bytes()).is_ok());
    }
}

#[test]
fn bom_is_kept_outside_segments() {
    let doc = doc("\u{feff}<p>Hi</p>");
    assert_eq!(doc.segments(), ["Hi"]);
    assert_eq!(merged(&doc, &["Salut".into()]), "\u{feff}<p>Salut</p>");
}

#[test]
fn a_latin1_page_is_read_and_written_in_its_declared_charset() {
    let page =
        b"<html><head><meta charset=\"ISO-8859-1\"></head><body><p>caf\xe9</p></body></html>";
    let doc = extract(DocumentFormat::Html, page).unwrap();
    assert_eq!(doc.segments(), ["café"]);
    let out = doc.merge(&["thé 日".into()]).unwrap();
    assert_eq!(
        out,
        b"<html><head><meta charset=\"ISO-8859-1\"></head><body><p>th\xe9 &#26085;</p></body></html>"
    );
    // Undeclared and not UTF-8: Latin-1 (windows-1252), as browsers read it.
    let doc = extract(DocumentFormat::Html, b"<p>caf\xe9</p>").unwrap();
    assert_eq!(doc.segments(), ["café"]);
}

#[test]
fn deeply_nested_markup_is_handled_without_recursion() {
    let depth = 100_000;
    let html = format!(
        "<html><body><p>{}The dog runs.{}</p></body></html>",
        "<span>".repeat(depth),
        "</span>".repeat(depth)
    );
    let doc = crate::extract(crate::DocumentFormat::Html, html.as_bytes()).expect("extracts");
    let segments: Vec<String> = doc.segments().to_vec();
    assert!(!segments.is_empty());
    let out = doc.merge(&segments).expect("merges");
    assert_eq!(out.len(), html.len());
}

#[test]
fn elements_marked_with_another_language_than_the_source_are_kept() {
    let html = "<html lang=\"de\"><body><p>The house <i lang=\"fr\">joie de vivre</i> is big.</p>\
                <p lang=\"de-AT\">Das Haus ist groß.</p><p lang=\"en-GB\">The colour.</p></body></html>";
    let options = crate::ExtractOptions {
        source_language: Some("EN".to_owned()),
        ..Default::default()
    };
    let d = crate::extract_with(DocumentFormat::Html, html.as_bytes(), options).unwrap();
    let texts = crate::testdoc::plain_texts(&d);
    assert_eq!(
        texts,
        ["The house  is big.", "The colour."],
        "{:?}",
        d.segments()
    );
    let translated: Vec<String> = d.segments().iter().map(|s| upper(s)).collect();
    let out = merged(&d, &translated);
    assert!(
        out.contains("THE HOUSE <i lang=\"fr\">joie de vivre</i> IS BIG."),
        "{out}"
    );
    assert!(
        out.contains("<p lang=\"de-AT\">Das Haus ist groß.</p>"),
        "{out}"
    );
    assert!(out.contains("THE COLOUR."), "{out}");
    // Without a given source language everything is translated.
    assert_eq!(doc(html).segments().len(), 3);
}

/// A page is cut before block elements of its body only: never inside an
/// element the filter keeps whole (`pre`, `translate="no"`) nor inside an
/// open inline element, nor in the head.
#[test]
fn pages_are_cut_before_blocks_outside_what_is_kept_whole() {
    let page = concat!(
        "<html lang=\"en\"><head><title>T</title><meta name=\"description\" content=\"D\"></head>",
        "<body><p>A <b>b</b></p><pre><div>x</div></pre>",
        "<div translate=\"no\"><div>y</div></div><span><div>z</div></span>",
        "<section lang=\"fr\"><p>Le</p></section><h1>H</h1></body></html>"
    );
    let at = |s: &str| page.find(s).unwrap();
    assert_eq!(
        super::cut_points(page),
        [
            at("<p>A"),
            at("<pre>"),
            at("<div translate"),
            at("<section"),
            at("<h1>")
        ]
    );
}
