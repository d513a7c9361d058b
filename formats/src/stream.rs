//! Translating a document batch by batch, so that what a worker holds does
//! not grow with the document: [`translate`] hands the segments to a
//! translator a batch at a time and writes each batch back as it returns.
//!
//! Each format's filter goes through the document ([`crate::filter`]):
//! Office Open XML and OpenDocument packages are read, translated and
//! written a part at a time and, within a part, a chunk of about 128 KiB of
//! XML at a time: besides its input, a translation holds its output (about
//! the input's size) and one chunk. Large plain text, subtitle, Markdown,
//! XLIFF, JSON, RTF and other text files are cut into pieces of about
//! 128 KiB at unit boundaries ([`crate::cut`]), each read, translated and
//! written on its own. Other formats are one batch.

use crate::filter::{self, Halt, Stop, Walk};
use crate::{DocumentFormat, ExtractOptions, FormatError, inline};

/// What [`translate`] hands each batch to: the batch's segments and the
/// share (0 to 1) of the document read so far; it gives one translation per
/// segment back.
pub type Translator<'t, E> = dyn FnMut(&[String], f32) -> Result<Vec<String>, E> + 't;

/// A translated document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translation {
    /// The document, written.
    pub bytes: Vec<u8>,
    /// What its filter left untranslated and why, a sentence each (text a
    /// PDF shows in a Type3 font, say); empty when nothing was.
    pub notes: Vec<String>,
}

/// Why [`translate`] stopped.
#[derive(Debug, thiserror::Error)]
pub enum TranslateError<E> {
    /// The document could not be read or written.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The translator failed; the document is not finished.
    #[error("the translator failed")]
    Translator(E),
}

/// Translates the document `input` of `format` into `target_lang` (a DeepL
/// code, marked on translated text where the format records a language).
///
/// `translator` gets the segments of each batch in document order, in
/// [`inline`] markup, with the share (0 to 1) of the document read so far,
/// and returns one translation per segment. The output is what
/// [`Extracted::merge`](crate::Extracted::merge) gives for the same
/// translations, with the notes [`Extracted::notes`](crate::Extracted::notes)
/// gives.
pub fn translate<E>(
    format: DocumentFormat,
    input: &[u8],
    options: ExtractOptions,
    target_lang: &str,
    translator: &mut Translator<'_, E>,
) -> Result<Translation, TranslateError<E>> {
    let lang = tolk_lang::bcp47(target_lang);
    let options = ExtractOptions {
        target_language: options
            .target_language
            .or_else(|| Some(target_lang.to_owned())),
        ..options
    };
    let notes = std::cell::RefCell::new(Vec::new());
    let walk = Walk {
        options: &options,
        lang: Some(&lang),
        write: true,
        notes: Some(&notes),
    };
    let mut failure = None;
    let mut batches = |segments: &[String], read: f32| {
        translator(segments, read).map_err(|e| {
            failure = Some(e);
            Halt
        })
    };
    let walked = filter::of(format).walk(input, &walk, &mut batches);
    match walked {
        Ok(out) => Ok(Translation {
            bytes: out.unwrap_or_default(),
            notes: notes.into_inner(),
        }),
        Err(Stop::Format(e)) => Err(e.into()),
        Err(Stop::Halted) => Err(match failure {
            Some(e) => TranslateError::Translator(e),
            None => FormatError::Write("the translation stopped".to_owned()).into(),
        }),
    }
}

/// The plain text of the document's first segments, one per line, until it
/// holds at least `chars` bytes (or the document ends): a sample for
/// language detection, read without holding the whole document where the
/// format allows.
pub fn sample(
    format: DocumentFormat,
    input: &[u8],
    options: ExtractOptions,
    chars: usize,
) -> Result<String, FormatError> {
    let mut text = String::new();
    let mut add = |segments: &[String], _: f32| {
        for segment in segments {
            if text.len() >= chars {
                return Err(Halt);
            }
            text.push_str(&inline::plain_text(segment));
            text.push('\n');
        }
        match text.len() < chars {
            true => Ok(Vec::new()),
            false => Err(Halt),
        }
    };
    let walk = Walk {
        options: &options,
        lang: None,
        write: false,
        notes: None,
    };
    match filter::of(format).walk(input, &walk, &mut add) {
        Ok(_) | Err(Stop::Halted) => Ok(text),
        Err(Stop::Format(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{cut, extract_with};

    #[test]
    fn text_formats_are_one_batch_and_merge_as_extract_does() {
        let input = b"Hello\n\nWorld\n";
        let mut batches = Vec::new();
        let out = translate::<()>(
            DocumentFormat::Txt,
            input,
            ExtractOptions::default(),
            "DE",
            &mut |segments, done| {
                batches.push((segments.to_vec(), done));
                Ok(segments.iter().map(|s| s.to_uppercase()).collect())
            },
        )
        .unwrap()
        .bytes;
        assert_eq!(out, b"HELLO\n\nWORLD\n");
        assert_eq!(batches, [(vec!["Hello".into(), "World".into()], 1.0)]);
    }

    /// Large text documents of every format that is cut, as their writers
    /// lay them out.
    fn large(format: DocumentFormat) -> String {
        let n = 6000;
        match format {
            DocumentFormat::Txt => (0..n)
                .map(|i| format!("The house number {i} is big.\n\nThe garden {i} is small.\r\n"))
                .collect(),
            DocumentFormat::Srt => (0..n)
                .map(|i| {
                    format!(
                        "{}\n00:{:02}:{:02},000 --> 00:{:02}:{:02},500\n{i} dogs run in the park.\nThe cat sleeps.\n\n",
                        i + 1,
                        i / 60 % 60,
                        i % 60,
                        i / 60 % 60,
                        i % 60
                    )
                })
                .collect(),
            DocumentFormat::Vtt => format!(
                "\u{feff}WEBVTT\n\nNOTE made by a test\n\n{}",
                (0..n)
                    .map(|i| format!(
                        "cue-{i}\n00:{:02}:{:02}.000 --> 00:{:02}:{:02}.500 line:0\n<v Ann>The house {i}</v>\n\n",
                        i / 60 % 60,
                        i % 60,
                        i / 60 % 60,
                        i % 60
                    ))
                    .collect::<String>()
            ),
            DocumentFormat::Markdown => format!(
                "---\ntitle: The book\n---\n\n[site]: https://example.com \"The site\"\n\n{}[home]: </home>\n",
                (0..n)
                    .map(|i| format!(
                        "## Part {i}\n\nThe *house* {i} is `big`, see [the site][site] and [home].\n\n```\ncode {i}\n\nmore\n```\n\n- one\n\n  two\n\n"
                    ))
                    .collect::<String>()
            ),
            DocumentFormat::Yaml => format!(
                "# The locale\nen:\n{}  last: The end.\n",
                (0..n)
                    .map(|i| format!(
                        "  k{i}:\n    title: The house {i} is big  # a comment\n    rooms: 4\n    note: |\n      The garden is small.\n\n      The dog sleeps.\n    list:\n      - The cat\n      - 'The bird'\n  m{i}: \"The river %{{name}}\"\n"
                    ))
                    .collect::<String>()
            ),
            DocumentFormat::Html => format!(
                "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>The book</title>\n<meta name=\"description\" content=\"The big house\"></head>\n<body class=\"page\">\n{}<p>The end.</body></html>\n",
                (0..n)
                    .map(|i| format!(
                        "<h2 title=\"Part {i}\">The house {i}</h2>\n<p>The <b>dog</b> sleeps <a href=\"/x\">in the <em>garden</em></a>.\n<p>The cat {i}<br>runs.</p>\n<ul><li>The bird<li>The tree</ul>\n<pre>\n<div>The code {i}</div>\n</pre>\n<div translate=\"no\"><div><p>The name</p></div><p>The brand</p></div>\n<script>var s = \"<p>The dog</p>\";</script>\n<table><tr><td>The river<td>The sea</table>\n<span>The start <div>of a block</div> the end</span>\n"
                    ))
                    .collect::<String>()
            ),
            DocumentFormat::Xml => format!(
                "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<resources xmlns:xliff=\"urn:oasis:names:tc:xliff:document:1.2\">\n    <string name=\"app\" translatable=\"false\">The app</string>\n{}</resources>\n",
                (0..n)
                    .map(|i| format!(
                        "    <string name=\"k{i}\">The man\\'s house <b>{i}</b>, <xliff:g id=\"n\">%1$s</xliff:g>.</string>\n    <!-- The note -->\n    <plurals name=\"p{i}\">\n        <item quantity=\"other\">%d dogs sleep</item>\n    </plurals>\n"
                    ))
                    .collect::<String>()
            ),
            DocumentFormat::Dita => format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topic PUBLIC \"-//OASIS//DTD DITA Topic//EN\" \"topic.dtd\">\n<topic id=\"t\" xml:lang=\"en\"><title>The book</title>\n<body>\n{}</body></topic>\n",
                (0..n)
                    .map(|i| format!(
                        "<p>The <b>dog</b> {i} sleeps, run <codeph>make dog</codeph>.</p>\n<section translate=\"no\"><p>The brand</p></section>\n<ul><li>The cat</li><li><p>The bird</p></li></ul>\n<p/>\n<!-- The note -->\n"
                    ))
                    .collect::<String>()
            ),
            DocumentFormat::Properties => format!(
                "# Labels\n{}last = The end.\n",
                (0..n)
                    .map(|i| format!(
                        "k{i} = The house {i} is big, \\\n    the garden is {{0}}.\n! a comment\nm{i}: The dog\\\\\n\n"
                    ))
                    .collect::<String>()
            ),
            DocumentFormat::Strings => format!(
                "/* Labels */\n{}\"last\" = \"The end.\";\n",
                (0..n)
                    .map(|i| format!(
                        "\"k{i}\" = \"The house {i} is big; the \\\"garden\\\" %@\";\n/* The dog;\n\"x\" = \"y\"; */\n// The cat \"\n\"m{i}\"\n  = \"The dog\";\n"
                    ))
                    .collect::<String>()
            ),
            DocumentFormat::Resx => format!(
                "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<root>\n  <resheader name=\"resmimetype\"><value>text/microsoft-resx</value></resheader>\n{}</root>\n",
                (0..n)
                    .map(|i| format!(
                        "  <data name=\"k{i}\" xml:space=\"preserve\"><value>The house {i} is {{0}} big.</value><comment>The note</comment></data>\n"
                    ))
                    .collect::<String>()
            ),
            DocumentFormat::Rtf => format!(
                "{{\\rtf1\\ansi\\ansicpg1252\\deff0\\uc1\n{{\\fonttbl{{\\f0\\froman\\fcharset0 Times;}}{{\\f1\\fswiss\\fcharset204 Arial Cyr;}}}}\n{{\\info{{\\title The book}}{{\\subject The house}}{{\\author Ann}}}}\n\\sectd{{\\header\\pard\\plain The top\\par}}{{\\footer\\pard\\plain The foot\\par}}\n{}\\pard\\plain The end.\\par\n}}\n",
                (0..n / 3)
                    .map(|i| format!(
                        "\\pard\\plain \\s20\\f0\\fs20\\ltrpar{{\\loch\nThe house {i} is big, caf\\u233\\'e9.}}\n\\par \\pard\\plain \\f1{{\\rtlch\\fcs1 \\insrsid1 \\'c4\\'ee\\'ec {i}{{\\b bold}}}}{{\\rtlch\\fcs1 \\insrsid1 \\par }}\\pard The garden{{\\footnote\\pard\\plain The note {i}.\\par}} is {{\\field{{\\*\\fldinst HYPERLINK \"x\"}}{{\\fldrslt small}}}}.\\par\n\\trowd\\cellx1000\\cellx2000\\pard\\plain\\intbl The dog\\cell \\pard\\plain\\intbl The cat\\cell\\row\n\\pard\\plain The bird\\line sings\\par\n"
                    ))
                    .collect::<String>()
            ),
            DocumentFormat::Mif => {
                let cell = |id: usize, text: &str| {
                    format!(
                        " <Tbl\n  <TblID {id}>\n  <TblH\n   <Row\n    <Cell\n     <CellContent\n      <Para\n       <PgfTag `CellBody'>\n       <ParaLine\n        <String `{text}'>\n       > # end of ParaLine\n      > # end of Para\n     > # end of CellContent\n    > # end of Cell\n   > # end of Row\n  > # end of TblH\n > # end of Tbl\n"
                    )
                };
                let para = |i: usize, rect: usize| {
                    format!(
                        " <Para\n  <Unique {i}>\n  <PgfTag `Body'>\n  <ParaLine\n   <TextRectID {rect}>\n   <String `The house {i} is '>\n   <Font\n    <FTag `Emphasis'>\n   > # end of Font\n   <String `very'>\n   <Font\n    <FTag `'>\n   > # end of Font\n   <String ` big, the \\qgarden\\q is \\> the house.'>\n   <FNote 7>\n  > # end of ParaLine\n  <ParaLine\n   <Marker\n    <MType 2>\n    <MText `house:{i}'>\n   > # end of Marker\n   <String `The cat'>\n   <Char HardReturn>\n   <String `The dog'>\n  > # end of ParaLine\n > # end of Para\n"
                    )
                };
                format!(
                    "<MIFFile 2015> # Generated by FrameMaker\n<Units Ucm>\n<PgfCatalog\n <Pgf\n  <PgfTag `Body'>\n > # end of Pgf\n> # end of PgfCatalog\n<Tbls\n{}{}> # end of Tbls\n<Page\n <PageType BodyPage>\n <TextRect\n  <ID 9>\n > # end of TextRect\n> # end of Page\n<Page\n <PageType ReferencePage>\n <PageTag `HTML'>\n <TextRect\n  <ID 20>\n > # end of TextRect\n> # end of Page\n<TextFlow\n <TFTag `HTML'>\n{}> # end of TextFlow\n<TextFlow\n <TFTag `A'>\n <Notes\n  <FNote\n   <ID 7>\n   <Para\n    <ParaLine\n     <String `The note is short.'>\n    > # end of ParaLine\n   > # end of Para\n  > # end of FNote\n > # end of Notes\n{}> # end of TextFlow\n<TextFlow\n <TFTag `B'>\n{}> # end of TextFlow\n<TextFlow\n <TFTag `IX'>\n <Para\n  <ParaLine\n   <TextRectID 20>\n   <String `The index template.'>\n  > # end of ParaLine\n > # end of Para\n> # end of TextFlow\n# End of MIFFile\n",
                    (0..n / 20).map(|i| cell(100 + i, &format!("The cell {i}"))).collect::<String>(),
                    cell(2, "P:Body"),
                    " <Para\n  <ParaLine\n   <TextRectID 20>\n   <String `The headings map.'>\n   <ATbl 2>\n  > # end of ParaLine\n > # end of Para\n",
                    (0..n / 3).map(|i| para(i, 9)).collect::<String>(),
                    (0..n / 6).map(|i| para(i, 9)).collect::<String>(),
                )
            }
            DocumentFormat::Json => format!(
                "{{\"title\": \"The book\", \"en\": {{{}\n  \"end\": \"The end.\"}}}}\n",
                (0..n)
                    .map(|i| format!(
                        "\n  \"k{i}\": {{\"one\": \"The house {{count}} is big\", \"list\": [\"The dog\", 2]}},"
                    ))
                    .collect::<String>()
            ),
            _ => {
                // Three files: plain text, a Windows resource (access keys
                // kept out of the text) and another target language.
                let file = |original: &str, datatype: &str, target: &str, k: usize| {
                    format!(
                        "<file source-language=\"en\" target-language=\"{target}\" datatype=\"{datatype}\" original=\"{original}\">\n<header><note>The {original}</note></header>\n<body>\n{}</body></file>\n",
                        (0..n / 3)
                            .map(|i| format!(
                                "<trans-unit id=\"{k}.{i}\"><source>The <g id=\"1\">house</g> {i} is big, E&amp;xit.</source></trans-unit>\n"
                            ))
                            .collect::<String>()
                    )
                };
                format!(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<xliff version=\"1.2\" xmlns=\"urn:oasis:names:tc:xliff:document:1.2\">\n{}{}{}</xliff>\n",
                    file("a", "plaintext", "es", 1),
                    file("b.rc", "winres", "es", 2),
                    file("c", "plaintext", "fr", 3),
                )
            }
        }
    }

    /// A document cut into pieces is translated batch by batch into what a
    /// whole extract and merge gives.
    #[test]
    fn large_text_documents_are_translated_piece_by_piece() {
        let upper = |segments: &[String]| -> Vec<String> {
            segments
                .iter()
                .map(|s| crate::inline::map_text(s, str::to_uppercase))
                .collect()
        };
        for format in [
            DocumentFormat::Txt,
            DocumentFormat::Srt,
            DocumentFormat::Vtt,
            DocumentFormat::Markdown,
            DocumentFormat::Xliff,
            DocumentFormat::Json,
            DocumentFormat::Properties,
            DocumentFormat::Strings,
            DocumentFormat::Resx,
            DocumentFormat::Yaml,
            DocumentFormat::Html,
            DocumentFormat::Xml,
            DocumentFormat::Dita,
            DocumentFormat::Rtf,
            DocumentFormat::Mif,
        ] {
            let input = large(format);
            assert!(input.len() > 2 * cut::PIECE_SIZE, "{format:?}");
            let mut batches = Vec::new();
            let mut segments_read = Vec::new();
            let out = translate::<()>(
                format,
                input.as_bytes(),
                ExtractOptions::default(),
                "ES",
                &mut |segments, read| {
                    batches.push((segments.len(), read));
                    segments_read.extend_from_slice(segments);
                    Ok(upper(segments))
                },
            )
            .unwrap()
            .bytes;
            assert!(batches.len() > 1, "{format:?}: {batches:?}");
            assert!(
                batches.windows(2).all(|w| w[0].1 < w[1].1) && batches.last().unwrap().1 == 1.0,
                "{format:?}: {batches:?}"
            );
            let options = ExtractOptions {
                target_language: Some("ES".into()),
                ..ExtractOptions::default()
            };
            let whole = extract_with(format, input.as_bytes(), options)
                .unwrap()
                .with_target_language("ES");
            let mut expected = whole.segments().to_vec();
            if format == DocumentFormat::Html {
                // A page read whole gives the text after a block inside an
                // inline element (`<span>… <div>…</div> the end</span>`)
                // after the next element's attributes; a piece ends first.
                segments_read.sort();
                expected.sort();
            }
            assert!(
                segments_read == expected,
                "{format:?}: the pieces read other segments than the whole document"
            );
            let expected = whole.merge(&upper(whole.segments())).unwrap();
            assert!(
                out == expected,
                "{format:?}: the pieces differ from the whole document"
            );
        }
    }

    /// `large(format)` in windows-1252, with "café" in its units and the
    /// declaration `declared` (from, to) changed.
    fn large_legacy(format: DocumentFormat, declared: (&str, &str)) -> Vec<u8> {
        let text = large(format)
            .replace('\u{feff}', "")
            .replace(declared.0, declared.1)
            .replace("is big", "está en el café")
            .replace("The house", "The café house")
            .replace("The cat", "The café cat")
            .replace("## Part", "## Café part");
        let (input, _, unmappable) = encoding_rs::WINDOWS_1252.encode(&text);
        assert!(!unmappable, "{format:?}");
        assert!(std::str::from_utf8(&input).is_err(), "{format:?}");
        input.into_owned()
    }

    /// The output of `input` translated by `translate_batch` piece by piece
    /// (asserting there are several) and what a whole extract and merge
    /// gives for the same translations.
    fn pieces_and_whole(
        format: DocumentFormat,
        input: &[u8],
        translate_batch: impl Fn(&[String]) -> Vec<String>,
    ) -> (Vec<u8>, Vec<u8>) {
        let mut batches = 0;
        let out = translate::<()>(
            format,
            input,
            ExtractOptions::default(),
            "ES",
            &mut |segments, _| {
                batches += 1;
                Ok(translate_batch(segments))
            },
        )
        .unwrap();
        assert!(batches > 1, "{format:?}: {batches}");
        let options = ExtractOptions {
            target_language: Some("ES".into()),
            ..ExtractOptions::default()
        };
        let whole = extract_with(format, input, options)
            .unwrap()
            .with_target_language("ES");
        let expected = whole.merge(&translate_batch(whole.segments())).unwrap();
        (out.bytes, expected)
    }

    fn upper(segments: &[String]) -> Vec<String> {
        segments
            .iter()
            .map(|s| crate::inline::map_text(s, str::to_uppercase))
            .collect()
    }

    /// Large XLIFF and HTML files in windows-1252, Java properties in
    /// ISO-8859-1 and plain text, subtitles, Markdown, JSON, YAML and Apple
    /// strings in windows-1252 are cut too, and written back in their
    /// encoding as a whole extract and merge writes them (properties with
    /// `\uXXXX` escapes).
    #[test]
    fn large_legacy_files_are_translated_piece_by_piece_in_their_encoding() {
        let plain = ("", "");
        for (format, declaration, written) in [
            (
                DocumentFormat::Xliff,
                ("encoding=\"UTF-8\"", "encoding=\"windows-1252\""),
                "CAFÉ",
            ),
            (
                DocumentFormat::Html,
                ("charset=\"utf-8\"", "charset=\"windows-1252\""),
                "CAFÉ",
            ),
            (DocumentFormat::Properties, plain, "CAF\\u00C9"),
            (DocumentFormat::Txt, plain, "CAFÉ"),
            (DocumentFormat::Srt, plain, "CAFÉ"),
            (DocumentFormat::Vtt, plain, "CAFÉ"),
            (DocumentFormat::Markdown, plain, "CAFÉ"),
            (DocumentFormat::Json, plain, "CAFÉ"),
            (DocumentFormat::Yaml, plain, "CAFÉ"),
            (DocumentFormat::Strings, plain, "CAFÉ"),
        ] {
            let input = large_legacy(format, declaration);
            let (out, whole) = pieces_and_whole(format, &input, upper);
            assert!(
                out == whole,
                "{format:?}: the pieces differ from the whole file"
            );
            let (read, _, errors) = encoding_rs::WINDOWS_1252.decode(&out);
            assert!(!errors && read.contains(written), "{format:?}");
            assert!(!read.starts_with('\u{feff}'), "{format:?}");
            assert!(
                read.matches("charset=").count() <= 1,
                "{format:?}: a piece's meta stayed"
            );
        }
    }

    /// A windows-1252 text file whose translation of a late piece holds a
    /// character the encoding lacks is written as UTF-8 with a byte-order
    /// mark, as a whole, as the file read whole is: the pieces written
    /// before are turned into UTF-8 too.
    #[test]
    fn a_translation_the_legacy_encoding_lacks_turns_the_whole_file_to_utf8() {
        for format in [
            DocumentFormat::Txt,
            DocumentFormat::Srt,
            DocumentFormat::Markdown,
            DocumentFormat::Json,
            DocumentFormat::Yaml,
        ] {
            let input = large_legacy(format, ("", ""));
            let greek = |segments: &[String]| -> Vec<String> {
                // The last unit's text, or the file's last words.
                let late = |s: &String| s.contains("5999") || s.contains("The end.");
                segments
                    .iter()
                    .zip(upper(segments))
                    .map(|(source, s)| match late(source) {
                        true => format!("{s} Ω"),
                        false => s,
                    })
                    .collect()
            };
            let (out, whole) = pieces_and_whole(format, &input, greek);
            assert!(
                out == whole,
                "{format:?}: the pieces differ from the whole file"
            );
            let text = std::str::from_utf8(&out).expect("UTF-8");
            assert!(text.starts_with('\u{feff}'), "{format:?}");
            assert!(text.contains("CAFÉ") && text.contains(" Ω"), "{format:?}");
        }
    }

    /// Damaged large files (cut short, a bracket or quote dropped in) end in
    /// an error or an output, never a panic.
    #[test]
    fn damaged_large_text_documents_never_panic() {
        for format in [
            DocumentFormat::Srt,
            DocumentFormat::Vtt,
            DocumentFormat::Markdown,
            DocumentFormat::Xliff,
            DocumentFormat::Json,
            DocumentFormat::Properties,
            DocumentFormat::Strings,
            DocumentFormat::Resx,
            DocumentFormat::Yaml,
            DocumentFormat::Html,
            DocumentFormat::Xml,
            DocumentFormat::Dita,
            DocumentFormat::Rtf,
            DocumentFormat::Mif,
        ] {
            let input = large(format).into_bytes();
            for at in [1, input.len() / 3, input.len() / 2 + 7, input.len() - 3] {
                for damage in [&b""[..], b"{", b"\"", b"]", b"<"] {
                    let mut bad = input[..at].to_vec();
                    bad.extend_from_slice(damage);
                    bad.extend_from_slice(&input[at + 1..]);
                    let _ = translate::<()>(
                        format,
                        &bad,
                        ExtractOptions::default(),
                        "ES",
                        &mut |segments, _| Ok(segments.to_vec()),
                    );
                }
            }
        }
    }

    /// A large file damaged near its end, so that it cannot be read whole,
    /// fails before any of it is translated: no batch reaches the engine.
    #[test]
    fn damage_in_a_late_piece_fails_before_the_first_is_translated() {
        for format in [
            DocumentFormat::Xliff,
            DocumentFormat::Resx,
            DocumentFormat::Xml,
            DocumentFormat::Json,
            DocumentFormat::Rtf,
            DocumentFormat::Mif,
        ] {
            let input = large(format).into_bytes();
            let input = &input;
            // The first damage in the last tenth that the whole-file reader refuses.
            let bad = (0..400)
                .map(|k| input.len() * 9 / 10 + k * 97)
                .filter(|at| *at < input.len())
                .flat_map(|at| {
                    [&b"<"[..], b"]", b"{", b"\"", b"}"]
                        .into_iter()
                        .map(move |damage| {
                            let mut bad = input[..at].to_vec();
                            bad.extend_from_slice(damage);
                            bad.extend_from_slice(&input[at..]);
                            bad
                        })
                })
                .find(|bad| crate::extract(format, bad).is_err())
                .unwrap_or_else(|| panic!("{format:?}: no damage found"));
            let mut batches = 0;
            let result = translate::<()>(
                format,
                &bad,
                ExtractOptions::default(),
                "ES",
                &mut |segments, _| {
                    batches += 1;
                    Ok(segments.to_vec())
                },
            );
            assert!(
                matches!(result, Err(TranslateError::Format(_))),
                "{format:?}: {:?}",
                result.map(|o| o.bytes.len())
            );
            assert_eq!(batches, 0, "{format:?}");
        }
    }

    #[test]
    fn a_translator_failure_stops_the_translation() {
        let failed = translate(
            DocumentFormat::Txt,
            b"Hello\n",
            ExtractOptions::default(),
            "DE",
            &mut |_, _| Err("engine down"),
        );
        assert!(matches!(
            failed,
            Err(TranslateError::Translator("engine down"))
        ));
    }

    #[test]
    fn the_sample_stops_at_its_size() {
        let input = "One.\n\nTwo.\n\nThree.\n";
        let text = sample(
            DocumentFormat::Txt,
            input.as_bytes(),
            ExtractOptions::default(),
            8,
        )
        .unwrap();
        assert_eq!(text, "One.\nTwo.\n");
    }
}
