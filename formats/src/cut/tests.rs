use super::xml::{tree_points, xml_tree};
use super::*;
use crate::DocumentFormat;

/// The cut of the format's registered filter.
fn cut(format: DocumentFormat, input: &[u8], size: usize) -> Option<Cut> {
    crate::filter::of(format).cut(input, size)
}

fn pieces(format: DocumentFormat, text: &str, size: usize) -> Vec<String> {
    let Some(cut) = cut(format, text.as_bytes(), size) else {
        return vec![text.to_owned()];
    };
    cut.pieces
        .iter()
        .map(|r| text[r.clone()].to_owned())
        .collect()
}

#[test]
fn subtitles_are_cut_before_a_cue() {
    let srt: String = (1..=6)
        .map(|i| format!("{i}\n00:00:0{i},000 --> 00:00:0{i},500\nLine {i}\n\n"))
        .collect();
    let got = pieces(DocumentFormat::Srt, &srt, 60);
    assert!(got.len() > 1, "{got:?}");
    assert_eq!(got.concat(), srt);
    for piece in &got {
        assert!(piece.starts_with(|c: char| c.is_ascii_digit()), "{piece:?}");
    }
    let vtt = format!(
        "WEBVTT\n\nSTYLE\n::cue {{ color: red }}\n\n{}",
        (1..=6)
            .map(|i| format!("00:00:0{i}.000 --> 00:00:0{i}.500\nLine {i}\n\n"))
            .collect::<String>()
    );
    let got = pieces(DocumentFormat::Vtt, &vtt, 60);
    assert!(got.len() > 1, "{got:?}");
    assert_eq!(got.concat(), vtt);
    assert!(
        got[0].contains("STYLE") && got[0].contains("Line 1"),
        "{got:?}"
    );
    assert!(got[1].starts_with("00:00:0"), "{got:?}");
}

#[test]
fn markdown_is_cut_between_blocks_outside_fences() {
    let md = "# Title\n\nOne paragraph here.\n\n```\ncode\n\nMore code\n```\n\nTwo paragraph.\n\n- item\n\n  continued\n\nThree.\n";
    let got = pieces(DocumentFormat::Markdown, md, 10);
    assert_eq!(got.concat(), md);
    assert!(got.iter().all(|p| !p.starts_with("More code")), "{got:?}");
    assert!(got.iter().all(|p| !p.starts_with("  continued")), "{got:?}");
    assert!(
        got.iter().any(|p| p.starts_with("Two paragraph")),
        "{got:?}"
    );
    // Link reference definitions follow every piece; footnotes, or a
    // definition that would read otherwise away from its place, keep the
    // file whole.
    let with_refs =
        format!("See [the site][home].\n\n{md}\n[home]: https://example.com \"Home\"\n");
    let cut = cut(DocumentFormat::Markdown, with_refs.as_bytes(), 10).unwrap();
    assert!(cut.pieces.len() > 1);
    let mut again = Vec::new();
    for i in 0..cut.pieces.len() {
        let doc = String::from_utf8(cut.document(with_refs.as_bytes(), i)).unwrap();
        assert!(
            doc.ends_with("\n\n[home]: https://example.com \"Home\"\n"),
            "{doc}"
        );
        again.extend_from_slice(cut.own_output(doc.as_bytes(), i).unwrap());
    }
    assert_eq!(String::from_utf8(again).unwrap(), with_refs);
    for whole in [
        format!("{md}\n[^1]: The note.\n"),
        format!("{md}Text\n[home]: https://example.com\n"),
        format!("{md}\n[home]: https://example.com\n  \"The title\"\n"),
    ] {
        assert_eq!(
            pieces(DocumentFormat::Markdown, &whole, 10).len(),
            1,
            "{whole}"
        );
    }
}

#[test]
fn xliff_is_cut_between_the_units_of_its_body() {
    let units: String = (1..=6)
        .map(|i| format!("<trans-unit id=\"{i}\"><source>Line {i}</source></trans-unit>\n"))
        .collect();
    let xliff = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<xliff version=\"1.2\"><file source-language=\"en\" datatype=\"plaintext\" original=\"a\"><body>\n{units}<group id=\"g\"><trans-unit id=\"7\"><source>Seven</source></trans-unit></group>\n</body></file></xliff>\n"
    );
    let pieces = cut(DocumentFormat::Xliff, xliff.as_bytes(), 120).unwrap();
    assert!(pieces.pieces.len() > 1);
    let mut again = Vec::new();
    for i in 0..pieces.pieces.len() {
        let doc = pieces.document(xliff.as_bytes(), i);
        // Each piece reads as XML on its own.
        let mut reader = quick_xml::Reader::from_reader(doc.as_slice());
        let mut buf = Vec::new();
        loop {
            match reader.read_event_into(&mut buf).unwrap() {
                quick_xml::events::Event::Eof => break,
                _ => buf.clear(),
            }
        }
        again.extend_from_slice(pieces.own_output(&doc, i).unwrap());
    }
    assert_eq!(String::from_utf8(again).unwrap(), xliff);
    // A single-byte encoding is cut (its markup is ASCII), a multi-byte one
    // is not.
    let declared = xliff
        .replace("UTF-8", "windows-1252")
        .replace("Line 3", "Línea 3");
    let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(&declared);
    let legacy = cut(DocumentFormat::Xliff, &bytes, 120).unwrap();
    let mut again = Vec::new();
    for i in 0..legacy.pieces.len() {
        again.extend_from_slice(legacy.own_output(&legacy.document(&bytes, i), i).unwrap());
    }
    assert_eq!(again, bytes.as_ref());
    let declared = xliff.replace("UTF-8", "Shift_JIS");
    assert!(cut(DocumentFormat::Xliff, declared.as_bytes(), 120).is_none());
}

#[test]
fn xliff_with_several_files_puts_each_piece_inside_its_own_file() {
    let file = |name: &str, lang: &str| {
        let units: String = (1..=6)
            .map(|i| {
                format!("<trans-unit id=\"{name}{i}\"><source>Line {i}</source></trans-unit>\n")
            })
            .collect();
        format!(
            "<file original=\"{name}\" source-language=\"en\" target-language=\"{lang}\" datatype=\"plaintext\">\n<header><note>{name}</note></header>\n<body>\n{units}</body>\n</file>\n"
        )
    };
    let xliff = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<xliff version=\"1.2\">\n{}{}</xliff>\n",
        file("a", "es"),
        file("b", "fr")
    );
    let cut = cut(DocumentFormat::Xliff, xliff.as_bytes(), 150).unwrap();
    assert!(cut.pieces.len() > 3, "{:?}", cut.pieces);
    let mut again = Vec::new();
    for (i, piece) in cut.pieces.iter().enumerate() {
        let doc = String::from_utf8(cut.document(xliff.as_bytes(), i)).unwrap();
        let body = &xliff[piece.clone()];
        // Every piece after the first stands in the file it starts in (its
        // header too), and every piece before the last closes the file it
        // ends in.
        let starts_in = if xliff[..piece.start].contains("original=\"b\"") {
            "b"
        } else {
            "a"
        };
        if i > 0 {
            let head = format!("<xliff version=\"1.2\">\n<file original=\"{starts_in}\"");
            assert!(doc.contains(&head), "{doc}");
            assert_eq!(
                doc.matches("<header>").count(),
                1 + body.matches("<header>").count(),
                "{doc}"
            );
        }
        if i + 1 < cut.pieces.len() {
            assert!(doc.ends_with("</body>\n</file>\n</xliff>\n"), "{doc}");
        }
        assert_eq!(
            crate::extract(DocumentFormat::Xliff, doc.as_bytes()).map(|_| ()),
            Ok(())
        );
        again.extend_from_slice(cut.own_output(doc.as_bytes(), i).unwrap());
    }
    assert_eq!(String::from_utf8(again).unwrap(), xliff);
}

#[test]
fn json_is_cut_between_the_members_of_its_largest_object() {
    let members: String = (0..40)
        .map(|i| format!("    \"key{i}\": {{\"a\": \"The house {i}\", \"b\": [1, true, null]}},\n"))
        .collect();
    let json = format!(
        "\u{feff}{{\n  \"title\": \"The book\",\n  \"messages\": {{\n{}    \"last\": \"The end\"\n  }},\n  \"n\": 1\n}}\n",
        members
    );
    let pieces = cut(DocumentFormat::Json, json.as_bytes(), 300).unwrap();
    assert!(pieces.pieces.len() > 2, "{pieces:?}");
    let mut again = Vec::new();
    for i in 0..pieces.pieces.len() {
        let doc = pieces.document(json.as_bytes(), i);
        let text = String::from_utf8(doc.clone()).unwrap();
        serde_json::from_str::<serde_json::Value>(text.trim_start_matches('\u{feff}'))
            .unwrap_or_else(|e| panic!("piece {i}: {e}: {text}"));
        again.extend_from_slice(pieces.own_output(&doc, i).unwrap());
        again.extend_from_slice(pieces.separator(json.as_bytes(), i));
    }
    assert_eq!(String::from_utf8(again).unwrap(), json);
}

/// Generic XML is cut between the children of the element with the most
/// of them and no text, each piece under the prolog and that element's
/// and its ancestors' start tags; global ITS rules keep a file whole.
#[test]
fn xml_is_cut_between_the_children_of_its_largest_element() {
    let doc = "<?xml version=\"1.0\"?>\n<d a=\"1\"><h>The title</h><list translate=\"no\"><i>x</i><i>y</i><i>z</i></list></d>";
    let (points, head, tail) = tree_points(doc).unwrap();
    let at = |s: &str| doc.find(s).unwrap();
    assert_eq!(points, [at("<i>y"), at("<i>z")]);
    assert_eq!(
        head,
        "<?xml version=\"1.0\"?>\n<d a=\"1\"><list translate=\"no\">"
    );
    assert_eq!(tail, "</list></d>\n");
    // A list inside a paragraph's text is in its segment: no cut.
    let nested = "<d><li>Step <ul><i>a</i><i>b</i><i>c</i></ul> done</li><li>x</li></d>";
    assert!(tree_points(nested).is_none());
    // A paragraph with inline children holds text: never the container.
    let mixed = "<d><p>A <b>b</b> <i>c</i> <u>d</u></p><q/></d>";
    assert_eq!(tree_points(mixed).unwrap().0, [mixed.find("<q/>").unwrap()]);
    let rules = format!(
        "<d><its:rules xmlns:its=\"http://www.w3.org/2005/11/its\" version=\"2.0\"><its:translateRule selector=\"//p[2]\" translate=\"no\"/></its:rules>{}</d>",
        "<p>The dog</p>".repeat(20)
    );
    assert!(xml_tree(rules.as_bytes(), 64).is_none());
    assert!(xml_tree(rules.replace("translateRule", "x").as_bytes(), 64).is_some());
}

#[test]
fn small_utf16_and_multi_byte_files_stay_whole() {
    assert!(cut(DocumentFormat::Txt, b"One\nTwo\n", 100).is_none());
    // Plain text in windows-1252 is cut, its pieces read as UTF-8; in
    // UTF-16 it stays whole.
    let latin1: Vec<u8> = b"Caf\xe9\n".repeat(100);
    let latin1_cut = cut(DocumentFormat::Txt, &latin1, 100).expect("cut");
    assert_eq!(
        latin1_cut.legacy,
        Some(super::Legacy::Transcoded(encoding_rs::WINDOWS_1252))
    );
    assert_eq!(latin1_cut.document(&latin1, 1)[..6], *"Café\n".as_bytes());
    let utf16: Vec<u8> = [&b"\xff\xfe"[..], &b"C\0a\0f\0\xe9\0\n\0".repeat(100)].concat();
    assert!(cut(DocumentFormat::Txt, &utf16, 100).is_none());
    // A page in a multi-byte legacy charset stays whole; a single-byte one
    // is cut, each later piece under a meta naming its charset.
    let page = |charset: &str| {
        format!(
            "<html><head><meta charset=\"{charset}\"></head><body>{}</body></html>",
            "<p>The text.</p>\n".repeat(100)
        )
    };
    assert!(cut(DocumentFormat::Html, page("Shift_JIS").as_bytes(), 100).is_none());
    let latin = page("ISO-8859-1");
    let cut = cut(DocumentFormat::Html, latin.as_bytes(), 100).unwrap();
    assert!(
        String::from_utf8(cut.document(latin.as_bytes(), 1))
            .unwrap()
            .starts_with("<meta charset=\"windows-1252\">\n<p>")
    );
}
