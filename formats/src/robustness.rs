//! Damaged input never panics a filter: a sample of every registered format
//! (the whole file of a text format, one part of a package) is mutated many
//! times over — bytes replaced with the formats' own special characters,
//! ranges cut out or doubled — and each mutant is extracted and, when it
//! reads, merged with its own segments and with changed ones. A
//! deterministic generator keeps every run the same.

use crate::DocumentFormat;
use crate::testdoc::map_text;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes with a meaning in one of the formats.
const SPECIAL: &[u8] = b"{}\\<>`'\"&;#/=!?[]-*\n\t \x00\xff\xc3";

fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        if out.is_empty() {
            break;
        }
        let at = rng.below(out.len());
        match rng.below(4) {
            0 => out[at] = SPECIAL[rng.below(SPECIAL.len())],
            1 => {
                let end = (at + rng.below(40)).min(out.len());
                out.drain(at..end);
            }
            2 => {
                let end = (at + rng.below(40)).min(out.len());
                let copy = out[at..end].to_vec();
                out.splice(at..at, copy);
            }
            _ => out.insert(at, SPECIAL[rng.below(SPECIAL.len())]),
        }
    }
    out
}

/// What the mutation tests mutate of a format.
enum Sample {
    /// The whole file.
    File(Vec<u8>),
    /// One part of a package: its text, and how a package is made around a
    /// mutant of it.
    Part(&'static str, Build),
}

/// How a package is made around a part.
type Build = fn(&str) -> Vec<u8>;

/// The samples of `format`. The match names every format: a new one gets
/// a sample here before the crate builds its tests.
fn samples_of(format: DocumentFormat) -> Vec<Sample> {
    use crate::testdoc::zip_of;
    use DocumentFormat as F;
    let file = |bytes: &[u8]| Sample::File(bytes.to_vec());
    match format {
        F::Txt => vec![file(TXT)],
        F::Html => vec![file(HTML)],
        F::Docx => vec![Sample::Part(WORD, |part| {
            crate::testdoc::package(part, "<w:p><w:r><w:t>Header</w:t></w:r></w:p>")
        })],
        F::Pptx => vec![Sample::Part(SLIDE, |part| {
            zip_of(&[
                ("ppt/presentation.xml", "<p:presentation xmlns:p=\"p\"/>"),
                ("ppt/slides/slide1.xml", part),
            ])
        })],
        F::Xlsx | F::Xlsm => vec![Sample::Part(SHARED_STRINGS, |part| {
            zip_of(&[
                ("xl/workbook.xml", "<workbook xmlns=\"s\"/>"),
                ("xl/sharedStrings.xml", part),
            ])
        })],
        F::Odt => vec![Sample::Part(ODF_CONTENT, |part| {
            zip_of(&[
                ("mimetype", "application/vnd.oasis.opendocument.text"),
                ("content.xml", part),
            ])
        })],
        F::Odp => vec![Sample::Part(ODF_CONTENT, |part| {
            zip_of(&[
                (
                    "mimetype",
                    "application/vnd.oasis.opendocument.presentation",
                ),
                ("content.xml", part),
            ])
        })],
        F::Ods => vec![Sample::Part(ODF_CONTENT, |part| {
            zip_of(&[
                ("mimetype", "application/vnd.oasis.opendocument.spreadsheet"),
                ("content.xml", part),
            ])
        })],
        F::Srt => vec![file(SRT)],
        F::Vtt => vec![file(VTT)],
        F::Json => vec![file(JSON)],
        F::Markdown => vec![file(MARKDOWN)],
        F::Properties => vec![file(PROPERTIES)],
        F::Strings => vec![file(STRINGS)],
        F::Xliff => vec![file(XLIFF)],
        F::Resx => vec![file(RESX)],
        F::Yaml => vec![file(YAML)],
        F::Xml => vec![file(ITS), file(ANDROID)],
        F::Dita => vec![file(DITA)],
        F::Rtf => vec![file(RTF)],
        F::Idml => vec![Sample::Part(STORY, |part| {
            zip_of(&[
                ("mimetype", "application/vnd.adobe.indesign-idml-package"),
                ("designmap.xml", "<Document/>"),
                ("Stories/Story_u1.xml", part),
            ])
        })],
        F::Mif => vec![file(include_bytes!("../testdata/report.mif"))],
        F::Scorm => vec![Sample::Part(HTML_PAGE, |part| {
            zip_of(&[("imsmanifest.xml", SCORM_MANIFEST), ("index.html", part)])
        })],
        F::Pdf => vec![file(&pdf_sample())],
        F::Png => vec![file(&image_sample(F::Png).0)],
        F::Jpeg => vec![file(&image_sample(F::Jpeg).0)],
    }
}

/// A picture with text (Pillow), and tesseract's reading of it (once per
/// format): what the mutants of the image formats are read with, so that
/// each mutant that decodes is painted over where the original's text was.
fn image_sample(format: DocumentFormat) -> (Vec<u8>, String) {
    static SAMPLES: std::sync::OnceLock<[(Vec<u8>, String); 2]> = std::sync::OnceLock::new();
    let samples = SAMPLES.get_or_init(|| {
        let dir = crate::testdoc::test_folder("image-sample");
        ["sample.png", "sample.jpg"].map(|name| {
            let path = dir.join(name);
            crate::testdoc::python_snippet(SMALL_PICTURE, &[&path]);
            let bytes = std::fs::read(&path).unwrap();
            let tsv = crate::images::tests::tesseract(&bytes, "eng", "tsv").unwrap();
            (bytes, tsv)
        })
    });
    match format {
        DocumentFormat::Jpeg => samples[1].clone(),
        _ => samples[0].clone(),
    }
}

/// A small picture with a line of text (Pillow): small, as each of its
/// thousands of mutants is painted over three times.
const SMALL_PICTURE: &str = r#"
import sys
from PIL import Image, ImageDraw, ImageFont
im = Image.new("RGB", (300, 60), (250, 245, 230))
f = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 24)
ImageDraw.Draw(im).text((10, 15), "The house is big.", font=f, fill=(20, 20, 90))
im.save(sys.argv[1], quality=90) if sys.argv[1].endswith(".jpg") else im.save(sys.argv[1])
"#;

/// A recogniser that answers what tesseract read of a sample, whatever
/// the image (a mutant of it).
struct Recorded(String);

impl crate::Recognizer for Recorded {
    fn recognize(&self, _bytes: &[u8], _language: &str) -> Result<String, String> {
        Ok(self.0.clone())
    }
}

/// A one-page PDF with uncompressed content, written by reportlab (once).
fn pdf_sample() -> Vec<u8> {
    static SAMPLE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    SAMPLE
        .get_or_init(|| {
            let dir = crate::testdoc::test_folder("pdf-sample");
            let path = dir.join("sample.pdf");
            crate::testdoc::python_snippet(
                r#"
import sys
from reportlab.pdfgen import canvas
c = canvas.Canvas(sys.argv[1], pageCompression=0)
c.setTitle('The report')
c.setFont('Helvetica-Bold', 14)
c.drawString(72, 740, 'The house is big.')
c.setFont('Times-Roman', 11)
t = c.beginText(72, 710)
t.textLines('The dog runs in the garden and the cat\nsleeps in the house (50 %).')
c.drawText(t)
c.linkURL('https://example.com/', (72, 700, 200, 720))
c.save()
"#,
                &[&path],
            );
            std::fs::read(&path).expect("reportlab wrote the sample")
        })
        .clone()
}

/// How the mutation tests read a document: with fonts, which a PDF's
/// and an image's translations are written in, and an image's text as
/// tesseract read its sample.
fn read(format: DocumentFormat, input: &[u8]) -> Result<crate::Extracted, crate::FormatError> {
    let ocr = matches!(format, DocumentFormat::Png | DocumentFormat::Jpeg)
        .then(|| crate::Ocr(std::sync::Arc::new(Recorded(image_sample(format).1))));
    let options = crate::ExtractOptions {
        fonts: Some(crate::pdf::tests::system_fonts()),
        ocr,
        ..crate::ExtractOptions::default()
    };
    crate::extract_with(format, input, options)
}

const RTF: &[u8] = concat!(
    r"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\fcharset0 Arial;}{\f1\fcharset204 Cyr;}}",
    r"\pard Caf\'e9 {\b bold} text\par{\f1 \'cf\'f0}\par\u8364?5\tab x\par",
    r#"{\field{\*\fldinst HYPERLINK "u"}{\fldrslt {\ul site}}} here\line next\par"#,
    r"Before{\footnote \pard Note.\par} after\par{\b Open\par close} there\par}",
)
.as_bytes();
const ITS: &[u8] = br#"<doc xmlns:its="http://www.w3.org/2005/11/its"><its:rules version="2.0"><its:translateRule selector="//p[@c='x'] | //img/@alt" translate="yes"/><its:translateRule selector="//code" translate="no"/></its:rules><p c="x">One <b>two</b></p><code>x</code><img alt="Alt text"/></doc>"#;
const XLIFF: &[u8] = br#"<?xml version="1.0"?><xliff version="1.2" xmlns="urn:oasis:names:tc:xliff:document:1.2"><file source-language="en" target-language="es-ES" datatype="plaintext" original="a"><body><trans-unit id="1"><source>The <g id="1">house</g><x id="2"/> is big.</source><seg-source><mrk mtype="seg" mid="1">The <g id="1">house</g><x id="2"/> is big.</mrk></seg-source></trans-unit></body></file></xliff>"#;
const DITA: &[u8] = br#"<?xml version="1.0" encoding="UTF-8"?><topic id="t"><title>The <b>house</b></title><body><p>Run <cmdname>ls</cmdname> with <parmname>--all</parmname> now.</p><codeblock>x = 1</codeblock><p translate="no">Keep</p><ul><li>One item</li></ul></body></topic>"#;
const STORY: &str = r#"<idPkg:Story xmlns:idPkg="http://ns.adobe.com/AdobeInDesign/idml/1.0/packaging"><Story Self="u1"><ParagraphStyleRange AppliedParagraphStyle="P"><CharacterStyleRange AppliedCharacterStyle="C"><Content>The house is </Content></CharacterStyleRange><CharacterStyleRange FontStyle="Bold"><Content>very big</Content><Br/><Content>Next line</Content></CharacterStyleRange></ParagraphStyleRange></Story></idPkg:Story>"#;
const HTML_PAGE: &str = r#"<html><head><title>The page</title></head><body><p>The <b>house</b> is big.</p></body></html>"#;
const SCORM_MANIFEST: &str = r#"<manifest identifier="m"><organizations><organization><title>The course</title><item identifier="i" identifierref="r"><title>The lesson</title></item></organization></organizations><resources><resource identifier="r" href="index.html"/></resources></manifest>"#;
const WORD: &str = concat!(
    r#"<w:p><w:r><w:t xml:space="preserve">The house </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>is big</w:t></w:r>"#,
    r#"<w:hyperlink r:id="rId7"><w:r><w:t>a link</w:t></w:r></w:hyperlink><w:r><w:br/><w:t>next</w:t></w:r></w:p>"#,
    r#"<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Cell &amp; one</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Two</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"#,
    r#"<!-- a comment --><w:p><w:r><w:t><![CDATA[Raw <text>]]></w:t></w:r></w:p>"#,
);
const SLIDE: &str = concat!(
    r#"<p:sld xmlns:a="a" xmlns:p="p"><p:cSld><p:spTree><p:sp><p:nvSpPr><p:cNvPr id="2" name="T" descr="A box"/></p:nvSpPr>"#,
    r#"<p:txBody><a:bodyPr/><a:p><a:r><a:rPr lang="en-US" b="1"/><a:t>The house</a:t></a:r><a:br/><a:r><a:t>is big</a:t></a:r></a:p>"#,
    r#"<a:p><a:fld id="1" type="slidenum"><a:t>1</a:t></a:fld><a:r><a:t> of the deck</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>"#,
);
const SHARED_STRINGS: &str = concat!(
    r#"<sst xmlns="s" count="3"><si><t>The house is big</t></si><si><r><rPr><b/></rPr><t>Bold</t></r><r><t xml:space="preserve"> and plain</t></r></si>"#,
    r#"<si><t>Caf&#233; &amp; bar</t></si></sst>"#,
);
const ODF_CONTENT: &str = concat!(
    r#"<office:document-content xmlns:office="o" xmlns:text="t"><office:body><office:text>"#,
    r#"<text:h text:outline-level="1">The house</text:h><text:p>The house is <text:span text:style-name="B">very big</text:span>"#,
    r#"<text:s text:c="2"/>and<text:tab/>small<text:line-break/>next</text:p>"#,
    r#"<text:p>Note<text:note><text:note-body><text:p>The note.</text:p></text:note-body></text:note></text:p>"#,
    r#"</office:text></office:body></office:document-content>"#,
);
const ANDROID: &[u8] = br#"<?xml version="1.0" encoding="utf-8"?><resources xmlns:xliff="urn:oasis:names:tc:xliff:document:1.2"><string name="a">Don\'t <b>go</b> %1$s\n<xliff:g id="x">%2$d</xliff:g> \u00e9</string><string name="r">@string/a</string><string name="q">"  The  dog "</string><plurals name="p"><item quantity="one">%d file</item></plurals><string-array name="s"><item>The cat</item></string-array></resources>"#;
const HTML: &[u8] = br#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>T</title></head><body><p>The <b>house</b> is <a href="x" title="Link">big</a>.</p><img alt="A cat"><script>var a = "<p>";</script><pre>code</pre><p translate="no">Keep</p></body></html>"#;
const JSON: &[u8] = br#"{"a": "The house {name} is big", "b": {"c": ["One %s", "{count, plural, one {# dog} other {# dogs}}"]}, "n": 3}"#;
const MARKDOWN: &[u8] = br#"---
title: The house
---
# Heading

The *house* is [big](http://x).

```
code
```

| a | b |
|---|---|
| one | two |

- item `code`
"#;
const YAML: &[u8] = br#"en:
  greeting: "Hello %{name}"
  list:
    - One
    - 'Two'
  block: |
    The house
    is big
  anchor: &a The cat
  alias: *a
"#;
const PROPERTIES: &[u8] = br#"# comment
greeting=Hello {0}\
  and more
key\ with\ space = Caf\u00e9
"#;
const STRINGS: &[u8] = br#"/* comment */
"greeting" = "Hello %@";
"count" = "%1$d dogs";
"#;
const RESX: &[u8] = br#"<?xml version="1.0"?><root><data name="a" xml:space="preserve"><value>The house {0}</value></data><data name="b" type="System.Int32"><value>3</value></data></root>"#;
const SRT: &[u8] = br#"1
00:00:01,000 --> 00:00:02,000
The <i>house</i>
is big.

2
00:00:03,000 --> 00:00:04,000
The dog.
"#;
const VTT: &[u8] = br#"WEBVTT

NOTE a note

00:01.000 --> 00:02.000 align:start
<v Ann>The <c.loud>house</c> is big.
"#;
const TXT: &[u8] = b"The house is big.\n\nThe dog runs: https://example.com/a\n";

/// Every registered format's sample files, mutated.
fn files() -> impl Iterator<Item = (DocumentFormat, Vec<u8>)> {
    crate::filter::FORMATS.iter().flat_map(|row| {
        samples_of(row.format)
            .into_iter()
            .filter_map(move |sample| match sample {
                Sample::File(bytes) => Some((row.format, bytes)),
                Sample::Part(..) => None,
            })
    })
}

/// Every registered format's package parts, with how a package is made of
/// a part.
fn parts() -> impl Iterator<Item = (DocumentFormat, &'static str, Build)> {
    crate::filter::FORMATS.iter().flat_map(|row| {
        samples_of(row.format)
            .into_iter()
            .filter_map(move |sample| match sample {
                Sample::File(_) => None,
                Sample::Part(part, build) => Some((row.format, part, build)),
            })
    })
}

#[test]
fn every_format_has_a_sample_that_reads() {
    for row in crate::filter::FORMATS {
        for sample in samples_of(row.format) {
            let file = match sample {
                Sample::File(bytes) => bytes,
                Sample::Part(part, build) => build(part),
            };
            let doc = self::read(row.format, &file)
                .unwrap_or_else(|e| panic!("{:?}: the sample does not read: {e}", row.format));
            assert!(!doc.segments().is_empty(), "{:?}", row.format);
        }
    }
}

/// A mutant read: merged with its own segments, with changed ones, and with
/// tags lost or duplicated, never failing.
fn merges_whatever_the_translation(format: DocumentFormat, doc: &crate::Extracted) {
    doc.merge(doc.segments())
        .unwrap_or_else(|e| panic!("{format:?}: identity merge failed: {e}"));
    let changed: Vec<String> = doc
        .segments()
        .iter()
        .map(|s| map_text(s, |t| format!("«{t}»")))
        .collect();
    doc.merge(&changed)
        .unwrap_or_else(|e| panic!("{format:?}: merge failed: {e}"));
    let mangled: Vec<String> = doc
        .segments()
        .iter()
        .map(|s| crate::inline::plain_text(s) + "<x id=\"1\"/><x id=\"1\"/></g>")
        .collect();
    doc.merge(&mangled)
        .unwrap_or_else(|e| panic!("{format:?}: merge failed: {e}"));
}

#[test]
fn mutated_inputs_are_read_or_refused_never_a_panic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for (format, sample) in files() {
        let mut read = 0;
        for _ in 0..3_000 {
            let input = mutate(&mut rng, &sample);
            let Ok(doc) = self::read(format, &input) else {
                continue;
            };
            read += 1;
            merges_whatever_the_translation(format, &doc);
        }
        // Every PNG chunk carries a checksum: most mutants are refused.
        let least = if format == DocumentFormat::Png {
            10
        } else {
            100
        };
        assert!(read > least, "{format:?}: only {read} mutants read");
    }
}

/// Package parts mutated the same way — a Word body, a slide, shared
/// strings, an OpenDocument text, an InDesign story, a SCORM page — and
/// read; a package format's part also in the smallest chunks: read (or
/// refused) alike whole and in chunks, never a panic.
#[test]
fn mutated_package_parts_read_alike_in_chunks_and_never_panic() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    for (format, part, build) in parts() {
        let mut read = 0;
        for _ in 0..2_000 {
            let mutant = String::from_utf8_lossy(&mutate(&mut rng, part.as_bytes())).into_owned();
            let file = build(&mutant);
            let Some(package) = crate::filter::of(format).package() else {
                if let Ok(doc) = self::read(format, &file) {
                    read += 1;
                    merges_whatever_the_translation(format, &doc);
                }
                continue;
            };
            let whole = crate::package::extract(package, &file, None);
            let chunked = crate::package::extract_in_chunks(package, &file, None, 1);
            match (whole, chunked) {
                (Ok((segments, skeleton)), Ok((small, chunked))) => {
                    read += 1;
                    assert_eq!(segments, small, "{format:?}: {mutant}");
                    let changed: Vec<String> = segments
                        .iter()
                        .map(|s| map_text(s, |t| format!("«{t}»")))
                        .collect();
                    let merge = |s: &crate::package::Skeleton| {
                        crate::filter::Skeleton::merge(s, &[], &changed, Some("es")).unwrap()
                    };
                    let (out, out_chunked) = (merge(&skeleton), merge(&chunked));
                    assert_eq!(
                        crate::testdoc::entries(&out),
                        crate::testdoc::entries(&out_chunked),
                        "{format:?}: {mutant}"
                    );
                }
                (Err(_), Err(_)) => {}
                (whole, chunked) => panic!(
                    "{format:?}: {mutant}: whole {:?}, in chunks {:?}",
                    whole.map(|w| w.0),
                    chunked.map(|c| c.0)
                ),
            }
        }
        assert!(read > 100, "{format:?}: only {read} mutants read");
    }
}
