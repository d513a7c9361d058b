use crate::{DocumentFormat, FormatError, extract};

const SRT: &str = "1\r\n00:00:01,000 --> 00:00:03,500\r\nThe house is <i>very</i> big\r\nand the garden is small.\r\n\r\n2\r\n00:00:04,000 --> 00:00:05,000\r\nHello & goodbye.\r\n\r\n3\r\n00:00:06,000 --> 00:00:07,000\r\n<font color=\"red\">Red</font>\r\n";

const VTT: &str = "WEBVTT - a test\n\nNOTE The notes stay\nas they are.\n\nSTYLE\n::cue { color: yellow }\n\nintro\n00:00:01.000 --> 00:00:03.000 align:start position:10%\n<v Ann>The dog &amp; the cat</v>\nsleep <00:00:02.000>now.\n\n00:00:04.000 --> 00:00:05.000\n<c.loud>Good morning!</c>\n";

fn doc(format: DocumentFormat, text: &str) -> crate::Extracted {
    extract(format, text.as_bytes()).unwrap()
}

/// The document's output with every segment upper-cased.
fn upper(d: &crate::Extracted) -> String {
    String::from_utf8(crate::testdoc::uppercase_merge(d)).unwrap()
}

#[test]
fn srt_cues_are_one_segment_each_with_their_markup_as_tags() {
    let d = doc(DocumentFormat::Srt, SRT);
    assert_eq!(
        d.segments(),
        [
            r#"The house is <g id="1">very</g> big and the garden is small."#,
            "Hello &amp; goodbye.",
            r#"<g id="1">Red</g>"#,
        ]
    );
    // Identity: byte for byte.
    assert_eq!(d.merge(d.segments()).unwrap(), SRT.as_bytes());
}

#[test]
fn srt_translations_keep_indexes_timings_and_wrap_to_two_lines() {
    let d = doc(DocumentFormat::Srt, SRT);
    let out = upper(&d);
    assert_eq!(
        out,
        "1\r\n00:00:01,000 --> 00:00:03,500\r\nTHE HOUSE IS <i>VERY</i> BIG\r\nAND THE GARDEN IS SMALL.\r\n\r\n2\r\n00:00:04,000 --> 00:00:05,000\r\nHELLO & GOODBYE.\r\n\r\n3\r\n00:00:06,000 --> 00:00:07,000\r\n<font color=\"red\">RED</font>\r\n"
    );
}

#[test]
fn vtt_header_notes_styles_settings_voices_and_timestamps_are_kept() {
    let d = doc(DocumentFormat::Vtt, VTT);
    assert_eq!(
        d.segments(),
        [
            r#"<g id="1">The dog &amp; the cat</g> sleep <x id="2"/>now."#,
            r#"<g id="1">Good morning!</g>"#,
        ]
    );
    assert_eq!(d.merge(d.segments()).unwrap(), VTT.as_bytes());
    let out = upper(&d);
    assert!(out.starts_with("WEBVTT - a test\n\nNOTE The notes stay\nas they are.\n\nSTYLE\n::cue { color: yellow }\n\nintro\n00:00:01.000 --> 00:00:03.000 align:start position:10%\n"), "{out}");
    assert!(
        out.contains("<v Ann>THE DOG &amp; THE CAT</v> SLEEP <00:00:02.000>NOW."),
        "{out}"
    );
    assert!(out.ends_with("<c.loud>GOOD MORNING!</c>\n"), "{out}");
}

#[test]
fn a_lost_timestamp_is_kept_and_broken_markup_never_breaks_the_file() {
    let d = doc(DocumentFormat::Vtt, VTT);
    let out = d
        .merge(&[
            "El perro y el gato duermen ahora.".into(),
            "<g id=\"9\">¡Hola".into(),
        ])
        .unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains("El perro y el gato duermen ahora.<00:00:02.000>"),
        "{out}"
    );
    assert!(out.contains("\n¡Hola\n"), "{out}");
}

#[test]
fn a_webvtt_file_must_start_with_its_signature() {
    let err = extract(
        DocumentFormat::Vtt,
        b"1\n00:00:01.000 --> 00:00:02.000\nHi\n",
    )
    .unwrap_err();
    assert!(matches!(err, FormatError::Corrupt(_)), "{err:?}");
    assert!(err.to_string().contains("WEBVTT"));
    // An empty SubRip file has no segments.
    assert!(doc(DocumentFormat::Srt, "").segments().is_empty());
}

#[test]
fn latin1_subtitles_are_written_back_in_latin1() {
    let input = b"1\n00:00:01,000 --> 00:00:02,000\ncaf\xe9\n";
    let d = extract(DocumentFormat::Srt, input).unwrap();
    assert_eq!(d.segments(), ["café"]);
    let out = d.merge(&["thé".into()]).unwrap();
    assert_eq!(out, b"1\n00:00:01,000 --> 00:00:02,000\nth\xe9\n");
}

/// Files the `srt` library and webvtt-py write, translated (upper-cased) and
/// read back by the same libraries: every cue, with its timing, holding its
/// translated text.
#[test]
fn files_real_tools_write_read_back_translated_with_the_same_timings() {
    use crate::testdoc::{test_folder, testdata_script};
    use std::path::Path;
    let dir = test_folder("subtitles");
    testdata_script("make_subtitles.py", &[Path::new("write"), &dir]);
    let read = |path: &Path| -> serde_json::Value {
        serde_json::from_str(&testdata_script(
            "make_subtitles.py",
            &[Path::new("read"), path],
        ))
        .unwrap()
    };
    for (file, format) in [
        ("film.srt", DocumentFormat::Srt),
        ("film.vtt", DocumentFormat::Vtt),
    ] {
        let path = dir.join(file);
        let bytes = std::fs::read(&path).unwrap();
        let d = extract(format, &bytes).unwrap();
        assert_eq!(d.merge(d.segments()).unwrap(), bytes, "{file}: identity");
        let out_path = dir.join(format!("upper-{file}"));
        std::fs::write(&out_path, upper(&d)).unwrap();
        let (before, after) = (read(&path), read(&out_path));
        let (before, after) = (before.as_array().unwrap(), after.as_array().unwrap());
        assert_eq!(before.len(), after.len(), "{file}");
        for (b, a) in before.iter().zip(after) {
            assert_eq!((&b["start"], &b["end"]), (&a["start"], &a["end"]), "{file}");
            // The text upper-cased, the markup as it was.
            let (b, a) = (b["text"].as_str().unwrap(), a["text"].as_str().unwrap());
            assert_eq!(split_tags(a).0, split_tags(b).0.to_uppercase(), "{file}");
            assert_eq!(split_tags(a).1, split_tags(b).1, "{file}");
        }
    }
}

/// The text of a cue without its tags, and its tags.
fn split_tags(cue: &str) -> (String, Vec<String>) {
    let (mut text, mut tags) = (String::new(), Vec::new());
    let mut rest = cue;
    while let Some(at) = rest.find('<') {
        text.push_str(&rest[..at]);
        let end = rest[at..].find('>').map_or(rest.len(), |e| at + e + 1);
        tags.push(rest[at..end].to_owned());
        rest = &rest[end..];
    }
    text.push_str(rest);
    (text, tags)
}

#[test]
fn srt_becomes_webvtt_and_back() {
    use crate::{DocumentFormat::*, Output, can_convert, convert};
    let to = Output::Document;
    assert!(can_convert(Srt, to(Vtt)) && can_convert(Vtt, to(Srt)) && can_convert(Srt, to(Srt)));
    assert!(!can_convert(Srt, to(Docx)) && !can_convert(Json, to(Vtt)));
    let vtt =
        String::from_utf8(convert(SRT.as_bytes().to_vec(), Srt, to(Vtt), None).unwrap()).unwrap();
    assert_eq!(
        vtt,
        "WEBVTT\r\n\r\n1\r\n00:00:01.000 --> 00:00:03.500\r\nThe house is <i>very</i> big\r\nand the garden is small.\r\n\r\n2\r\n00:00:04.000 --> 00:00:05.000\r\nHello &amp; goodbye.\r\n\r\n3\r\n00:00:06.000 --> 00:00:07.000\r\nRed\r\n"
    );
    let srt =
        String::from_utf8(convert(VTT.as_bytes().to_vec(), Vtt, to(Srt), None).unwrap()).unwrap();
    assert_eq!(
        srt,
        "\n1\n00:00:01,000 --> 00:00:03,000\nThe dog & the cat\nsleep now.\n\n2\n00:00:04,000 --> 00:00:05,000\nGood morning!\n"
            .trim_start()
    );
    assert!(matches!(
        convert(b"no cues here".to_vec(), Srt, to(Vtt), None),
        Err(FormatError::Corrupt(_))
    ));
    assert!(matches!(
        convert(b"x".to_vec(), Srt, to(Docx), None),
        Err(FormatError::Unsupported(_))
    ));
}

/// Converted files read by the other format's library (webvtt-py reads the
/// WebVTT made from the `srt` library's file, and the other way round):
/// the same cues, timings and text.
#[test]
fn converted_files_are_read_by_the_other_formats_library() {
    use crate::testdoc::{test_folder, testdata_script};
    use std::path::Path;
    let dir = test_folder("subtitles-convert");
    testdata_script("make_subtitles.py", &[Path::new("write"), &dir]);
    let read = |path: &Path| -> Vec<serde_json::Value> {
        serde_json::from_str::<serde_json::Value>(&testdata_script(
            "make_subtitles.py",
            &[Path::new("read"), path],
        ))
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
    };
    for (file, from, to, out) in [
        (
            "film.srt",
            DocumentFormat::Srt,
            DocumentFormat::Vtt,
            "converted.vtt",
        ),
        (
            "film.vtt",
            DocumentFormat::Vtt,
            DocumentFormat::Srt,
            "converted.srt",
        ),
    ] {
        let bytes = std::fs::read(dir.join(file)).unwrap();
        std::fs::write(
            dir.join(out),
            crate::convert(bytes, from, crate::Output::Document(to), None).unwrap(),
        )
        .unwrap();
        let (before, after) = (read(&dir.join(file)), read(&dir.join(out)));
        assert_eq!(before.len(), after.len(), "{file}");
        for (b, a) in before.iter().zip(&after) {
            assert_eq!(b["seconds"], a["seconds"], "{file}");
            let plain = |v: &serde_json::Value| split_tags(v["text"].as_str().unwrap()).0;
            assert_eq!(plain(b), plain(a), "{file}");
        }
    }
}
