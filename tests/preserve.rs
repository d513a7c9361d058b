//! The preserve contract, across formats: every placeholder, markup element,
//! escape and non-translatable span of a document survives its translation
//! byte for byte. One document per format goes through the queue and the
//! real engine (English to Spanish); an independent reader (the raw bytes for
//! text formats, python-docx, openpyxl, python-pptx, odfpy, translate-toolkit,
//! LibreOffice and lxml for the others) counts each marker in the source and
//! in the translation. Office documents are written by their own libraries,
//! OpenDocument, RTF and macro-enabled workbooks by LibreOffice from them.
//! No free tool writes IDML or MIF: the IDML package is written from Adobe's
//! specification by the filter tests' script (Python's zipfile), the MIF
//! file as FrameMaker lays one out.

use std::collections::BTreeMap;

use anyhow::{Context, Result};

use crate::documents::{platform, testdata_script, translated};
use crate::support::{World, libreoffice, python};

/// A sentence holding the spans the pipeline protects in every format:
/// placeholders of several syntaxes, a URL, a file name, a snake_case
/// identifier and a name with a soft hyphen.
const PROSE: &str = "The house of {0} is big: see https://example.com/a?b=1 and the photo statue_by_nicu.png, set max_retries to %1$s for {{ user }} on Kuber\u{AD}netes.";

/// The markers of [`PROSE`].
const PROSE_MARKERS: &[&str] = &[
    "{0}",
    "https://example.com/a?b=1",
    "statue_by_nicu.png",
    "max_retries",
    "%1$s",
    "{{ user }}",
    "Kuber\u{AD}netes",
];

/// Writes the Office documents of the test with their own libraries.
const MAKE_OFFICE: &str = r#"
import sys, docx, openpyxl, pptx
from pptx.util import Inches
kind, path, prose = sys.argv[1], sys.argv[2], open(sys.argv[3], encoding="utf-8").read()
if kind == "docx":
    d = docx.Document()
    d.add_paragraph(prose)
    p = d.add_paragraph("The dog runs with ")
    p.add_run("{1}").bold = True
    p.add_run(" in the park.")
    d.save(path)
elif kind == "xlsx":
    wb = openpyxl.Workbook()
    wb.active["A1"] = prose
    wb.active["A2"] = "The cat sleeps in {{ place }}."
    wb.save(path)
else:
    p = pptx.Presentation()
    s = p.slides.add_slide(p.slide_layouts[6])
    box = s.shapes.add_textbox(Inches(1), Inches(1), Inches(8), Inches(3))
    box.text_frame.text = prose
    p.save(path)
"#;

/// Writes a .NET resource file with translate-toolkit: the prose and a
/// composite-format placeholder.
const MAKE_RESX: &str = r#"
import sys
from translate.storage import resx
path, prose = sys.argv[1], open(sys.argv[2], encoding="utf-8").read()
store = resx.RESXFile()
for name, text in [("Prose", prose), ("Total", "The total is {1:N2} today.")]:
    unit = store.addsourceunit(text)
    unit.setid(name)
store.savefile(path)
"#;

/// Writes a SCORM 1.2 package with Python's zipfile: the manifest and one
/// page holding the prose.
const MAKE_SCORM: &str = r#"
import sys, zipfile
path, prose = sys.argv[1], open(sys.argv[2], encoding="utf-8").read()
manifest = """<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="course" version="1.0" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="org"><organization identifier="org"><title>The course of {0}</title>
    <item identifier="item" identifierref="res"><title>The lesson</title></item></organization></organizations>
  <resources><resource identifier="res" type="webcontent" adlcp:scormtype="sco" href="index.html"><file href="index.html"/></resource></resources>
</manifest>
"""
page = f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>The lesson</title></head><body><p>{prose}</p><p>The dog runs with <code>max_retries</code> in the park.</p></body></html>"
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("imsmanifest.xml", manifest)
    z.writestr("index.html", page)
"#;

/// Reads the text of a document the way its users' tools do, a line for
/// each paragraph, cell or text frame; XLIFF targets (or sources when there
/// is none) as their markup.
const READ: &str = r#"
import sys
kind, path = sys.argv[1], sys.argv[2]
out = []
if kind == "docx":
    import docx
    out = [p.text for p in docx.Document(path).paragraphs]
elif kind == "xlsx":
    import openpyxl
    out = [str(c.value) for row in openpyxl.load_workbook(path).active.iter_rows() for c in row if c.value is not None]
elif kind == "pptx":
    import pptx
    out = [sh.text_frame.text for s in pptx.Presentation(path).slides for sh in s.shapes if sh.has_text_frame]
elif kind == "odf":
    from odf.opendocument import load
    from odf import teletype, text
    out = [teletype.extractText(p) for p in load(path).getElementsByType(text.P)]
elif kind == "scorm":
    import zipfile
    with zipfile.ZipFile(path) as z:
        out = [z.read(n).decode("utf-8") for n in ("imsmanifest.xml", "index.html")]
elif kind == "idml":
    import zipfile
    with zipfile.ZipFile(path) as z:
        out = [z.read(n).decode("utf-8") for n in sorted(z.namelist()) if n.startswith("Stories/")]
elif kind == "resx":
    from translate.storage import resx
    out = [u.target or u.source for u in resx.RESXFile.parsefile(path).units]
elif kind == "xliff":
    from lxml import etree
    ns = {"x": "urn:oasis:names:tc:xliff:document:1.2"}
    for unit in etree.parse(path).iterfind(".//x:trans-unit", ns):
        el = unit.find("x:target", ns)
        if el is None:
            el = unit.find("x:source", ns)
        inner = (el.text or "") + "".join(etree.tostring(c, encoding="unicode") for c in el)
        out.append(inner.replace(' xmlns="urn:oasis:names:tc:xliff:document:1.2"', ""))
print("\n".join(out))
"#;

/// How a format's text is read for counting.
enum Reader {
    /// The file's bytes as UTF-8.
    Raw,
    /// [`READ`] of this kind.
    Python(&'static str),
    /// LibreOffice's plain text of the file.
    LibreOffice,
}

/// One document of the contract: its name, bytes, reader and markers.
struct Case {
    name: &'static str,
    bytes: Vec<u8>,
    reader: Reader,
    markers: Vec<&'static str>,
}

impl Case {
    fn text(name: &'static str, text: String, markers: &[&'static str]) -> Case {
        Case {
            name,
            bytes: text.into_bytes(),
            reader: Reader::Raw,
            markers: PROSE_MARKERS.iter().chain(markers).copied().collect(),
        }
    }
}

/// The text `reader` reads in `bytes` (written to `name` in the world's
/// folder).
async fn read(world: &World, name: &str, bytes: &[u8], reader: &Reader) -> Result<String> {
    match reader {
        Reader::Raw => Ok(String::from_utf8(bytes.to_vec())?),
        Reader::Python(kind) => {
            let path = world.path(name);
            std::fs::write(&path, bytes)?;
            python(READ, &[std::path::Path::new(kind), &path]).await
        }
        Reader::LibreOffice => {
            let path = world.path(name);
            std::fs::write(&path, bytes)?;
            let text = libreoffice(world, &path, "txt:Text (encoded):UTF8").await?;
            Ok(std::fs::read_to_string(text)?)
        }
    }
}

/// [`PROSE`] in a file of the world's folder, for the writers to read.
fn prose_file(world: &World) -> Result<std::path::PathBuf> {
    let prose = world.path("prose.txt");
    std::fs::write(&prose, PROSE)?;
    Ok(prose)
}

/// Bytes of an Office document `MAKE_OFFICE` writes.
async fn office(world: &World, kind: &str) -> Result<Vec<u8>> {
    let path = world.path(&format!("made.{kind}"));
    python(
        MAKE_OFFICE,
        &[std::path::Path::new(kind), &path, &prose_file(world)?],
    )
    .await?;
    Ok(std::fs::read(&path)?)
}

/// A FrameMaker MIF 2015 file laid out as FrameMaker writes one: a
/// paragraph catalog, a body page and a reference page (whose HTML mapping
/// table names `P:Body`), the text flow with the prose and a paragraph
/// holding a font change, escapes, an index marker, a tab and a hard return.
fn mif(prose: &str) -> String {
    format!(
        "<MIFFile 2015> # Generated by FrameMaker 2015\n<Units Ucm>\n<PgfCatalog\n <Pgf\n  <PgfTag `Body'>\n > # end of Pgf\n> # end of PgfCatalog\n<Tbls\n <Tbl\n  <TblID 2>\n  <TblH\n   <Row\n    <Cell\n     <CellContent\n      <Para\n       <PgfTag `CellBody'>\n       <ParaLine\n        <String `P:Body'>\n       > # end of ParaLine\n      > # end of Para\n     > # end of CellContent\n    > # end of Cell\n   > # end of Row\n  > # end of TblH\n > # end of Tbl\n> # end of Tbls\n<Page\n <PageType BodyPage>\n <TextRect\n  <ID 9>\n > # end of TextRect\n> # end of Page\n<Page\n <PageType ReferencePage>\n <PageTag `HTML'>\n <TextRect\n  <ID 20>\n > # end of TextRect\n> # end of Page\n<TextFlow\n <TFTag `HTML'>\n <Para\n  <ParaLine\n   <TextRectID 20>\n   <String `The headings map.'>\n   <ATbl 2>\n  > # end of ParaLine\n > # end of Para\n> # end of TextFlow\n<TextFlow\n <TFTag `A'>\n <Para\n  <PgfTag `Body'>\n  <ParaLine\n   <TextRectID 9>\n   <String `{prose}'>\n  > # end of ParaLine\n > # end of Para\n <Para\n  <PgfTag `Body'>\n  <ParaLine\n   <TextRectID 9>\n   <String `The house is '>\n   <Font\n    <FTag `Emphasis'>\n   > # end of Font\n   <String `very'>\n   <Font\n    <FTag `'>\n   > # end of Font\n   <String ` big and the garden is \\> the park.'>\n   <Marker\n    <MType 2>\n    <MText `house'>\n   > # end of Marker\n   <Char Tab>\n   <String `The cat'>\n   <Char HardReturn>\n   <String `The dog'>\n  > # end of ParaLine\n > # end of Para\n> # end of TextFlow\n# End of MIFFile\n"
    )
}

/// The statements and escapes of [`mif`] that stay.
const MIF_MARKERS: &[&str] = &[
    "<MIFFile 2015>",
    "<PgfTag `Body'>",
    "<String `P:Body'>",
    "<FTag `Emphasis'>",
    "<FTag `'>",
    "\\>",
    "<MType 2>",
    "<Char Tab>",
    "<Char HardReturn>",
    "<TextRectID 9>",
    "<ATbl 2>",
];

/// The documents of the contract.
async fn cases(world: &World) -> Result<Vec<Case>> {
    let p = PROSE;
    let mut cases = vec![
        Case::text("prose.txt", format!("{p}\n\nThe cat sleeps.\n"), &[]),
        Case::text(
            "page.html",
            format!(
                "<!DOCTYPE html>\n<html><body><p>{p}</p>\n<p>Run <code>cargo build</code> and read <a href=\"https://example.com/guide?x=1&amp;y=2\">the guide</a>&nbsp;now.<br>The tree &amp; the house.</p>\n<p><img src=\"statue_by_nicu.png\" alt=\"The statue\"></p></body></html>\n"
            ),
            &[
                "<code>cargo build</code>",
                "<a href=\"https://example.com/guide?x=1&amp;y=2\">",
                "</a>",
                "&nbsp;",
                "<br>",
                "&amp;",
                "<img src=\"statue_by_nicu.png\" alt=\"",
            ],
        ),
        Case::text(
            "notes.md",
            format!(
                "# The house\n\n{p}\n\nRun `cargo build` and read [the guide](https://example.com/guide) with **the dog**.\n\n{{% raw %}}The tree is green.{{% endraw %}}\n"
            ),
            &[
                "`cargo build`",
                "](https://example.com/guide)",
                "**",
                "{% raw %}",
                "{% endraw %}",
            ],
        ),
        Case::text(
            "en.json",
            serde_json::json!({
                "prose": p,
                "lines": "The house is big.\nThe dog is \"small\".",
                "markup": "Copy <strong>{{count}}</strong> files to $t(app.name).",
            })
            .to_string(),
            &[
                "\\n",
                "\\\"",
                "<strong>",
                "</strong>",
                "{{count}}",
                "$t(app.name)",
            ],
        ),
        Case::text(
            "en.yml",
            format!(
                "en:\n  prose: \"{p}\"\n  more: 'See <a href=\"/docs\">the documentation</a>, %{{name}}.'\n  when: \"The house opens on %A.\"\n"
            ),
            &["<a href=\"/docs\">", "</a>", "%{name}", "%A"],
        ),
        Case::text(
            "messages.properties",
            format!(
                "prose={p}\ncount=The house has {{0,number,integer}} rooms since {{2,time,short}}\nlines=The dog sleeps.\\nThe cat runs.\n"
            ),
            &["{0,number,integer}", "{2,time,short}", "\\n"],
        ),
        Case::text(
            "Localizable.strings",
            format!(
                "\"prose\" = \"{p}\";\n\"files\" = \"%@ has %1$d files in the \\\"house\\\".\\nThe end.\";\n"
            ),
            &["%@", "%1$d", "\\\"", "\\n"],
        ),
        Case::text(
            "strings.xml",
            format!(
                "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<resources xmlns:xliff=\"urn:oasis:names:tc:xliff:document:1.2\">\n    <string name=\"prose\">{p}</string>\n    <string name=\"man\">The man sleeps in <b>the house</b>, <xliff:g id=\"n\">%2$d</xliff:g> times.\\nThe end.</string>\n    <string name=\"updates\">@string/check_for_updates</string>\n</resources>\n"
            ),
            &[
                "<b>",
                "</b>",
                "<xliff:g id=\"n\">%2$d</xliff:g>",
                "\\n",
                "@string/check_for_updates",
            ],
        ),
        Case::text(
            "subtitles.srt",
            format!(
                "1\n00:00:01,000 --> 00:00:03,500\n{p}\n\n2\n00:00:04,000 --> 00:00:06,000\n{{\\an8}}<i>The dog runs.</i>\n"
            ),
            &[
                "00:00:01,000 --> 00:00:03,500",
                "00:00:04,000 --> 00:00:06,000",
                "{\\an8}",
                "<i>",
                "</i>",
            ],
        ),
        Case::text(
            "captions.vtt",
            format!(
                "WEBVTT\n\n00:00:01.000 --> 00:00:03.500\n{p}\n\n00:00:04.000 --> 00:00:06.000 line:0\n<v Roger>The <c.yellow>dog</c> runs.</v>\n"
            ),
            &[
                "WEBVTT",
                "00:00:01.000 --> 00:00:03.500",
                "00:00:04.000 --> 00:00:06.000 line:0",
                "<v Roger>",
                "<c.yellow>",
                "</c>",
            ],
        ),
        Case::text(
            "topic.dita",
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topic PUBLIC \"-//OASIS//DTD DITA Topic//EN\" \"topic.dtd\">\n<topic id=\"t\"><title>The house</title><body><p>{p}</p><p>Run <cmdname>tolk</cmdname> with <parmname>--verbose</parmname> and <codeph>cargo build</codeph>, see <xref href=\"other.dita\">the other topic</xref>.</p></body></topic>\n"
            ),
            &[
                "<cmdname>tolk</cmdname>",
                "<parmname>--verbose</parmname>",
                "<codeph>cargo build</codeph>",
                "<xref href=\"other.dita\">",
            ],
        ),
        Case::text("book.mif", mif(p), MIF_MARKERS),
    ];
    let xliff = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<xliff version=\"1.2\" xmlns=\"urn:oasis:names:tc:xliff:document:1.2\">\n<file source-language=\"en\" target-language=\"es\" datatype=\"plaintext\" original=\"app\"><body>\n<trans-unit id=\"1\"><source>{p}</source></trans-unit>\n<trans-unit id=\"2\"><source>The <g id=\"1\" ctype=\"bold\">house</g> is big<x id=\"2\" ctype=\"lb\"/>and the <ph id=\"3\">&lt;br/&gt;</ph> garden is small.</source></trans-unit>\n</body></file></xliff>\n"
    );
    cases.push(Case {
        name: "app.xlf",
        bytes: xliff.into_bytes(),
        reader: Reader::Python("xliff"),
        markers: PROSE_MARKERS
            .iter()
            .copied()
            .chain([
                "<g id=\"1\" ctype=\"bold\">",
                "</g>",
                "<x id=\"2\" ctype=\"lb\"/>",
                "<ph id=\"3\">&lt;br/&gt;</ph>",
            ])
            .collect(),
    });
    for (kind, name, extra) in [
        ("docx", "report.docx", &["{1}"][..]),
        ("xlsx", "book.xlsx", &["{{ place }}"][..]),
        ("pptx", "slides.pptx", &[][..]),
    ] {
        cases.push(Case {
            name,
            bytes: office(world, kind).await?,
            reader: Reader::Python(kind),
            markers: PROSE_MARKERS.iter().chain(extra).copied().collect(),
        });
    }
    // LibreOffice's own OpenDocument, RTF and macro-enabled workbook of the
    // Office documents.
    for (from, to, name, reader, extra) in [
        (
            "docx",
            "odt",
            "report.odt",
            Reader::Python("odf"),
            &["{1}"][..],
        ),
        (
            "docx",
            "rtf",
            "report.rtf",
            Reader::LibreOffice,
            &["{1}"][..],
        ),
        (
            "xlsx",
            "ods",
            "book.ods",
            Reader::Python("odf"),
            &["{{ place }}"][..],
        ),
        (
            "xlsx",
            "xlsm:Calc MS Excel 2007 VBA XML",
            "book.xlsm",
            Reader::Python("xlsx"),
            &["{{ place }}"][..],
        ),
        ("pptx", "odp", "slides.odp", Reader::Python("odf"), &[][..]),
    ] {
        let source = world.path(&format!("for-{}.{from}", name.replace('.', "-")));
        std::fs::write(&source, office(world, from).await?)?;
        cases.push(Case {
            name,
            bytes: std::fs::read(libreoffice(world, &source, to).await?)?,
            reader,
            markers: PROSE_MARKERS.iter().chain(extra).copied().collect(),
        });
    }
    // A SCORM package written by Python's zipfile.
    let scorm = world.path("made.zip");
    python(MAKE_SCORM, &[&scorm, &prose_file(world)?]).await?;
    cases.push(Case {
        name: "course.zip",
        bytes: std::fs::read(&scorm)?,
        reader: Reader::Python("scorm"),
        markers: PROSE_MARKERS
            .iter()
            .chain(&["<code>max_retries</code>"])
            .copied()
            .collect(),
    });
    // An InDesign package: the IDML filter tests' story, the prose in a
    // second one.
    let idml = world.path("made.idml");
    testdata_script(
        "make_idml.py",
        &[std::path::Path::new("write"), &idml, &prose_file(world)?],
    )
    .await?;
    cases.push(Case {
        name: "book.idml",
        bytes: std::fs::read(&idml)?,
        reader: Reader::Python("idml"),
        markers: PROSE_MARKERS
            .iter()
            .chain(&[
                "<Content><?ACE 18?></Content>",
                "<HyperlinkTextSource Self=\"hts1\" Name=\"link\" Hidden=\"false\">",
                "FontStyle=\"Bold\"",
                "<Br/>",
                "<?ACE 4?>",
                "<Table Self=\"t1\"",
            ])
            .copied()
            .collect(),
    });
    // A .NET resource file written by translate-toolkit.
    let resx = world.path("made.resx");
    python(MAKE_RESX, &[&resx, &prose_file(world)?]).await?;
    cases.push(Case {
        name: "Strings.resx",
        bytes: std::fs::read(&resx)?,
        reader: Reader::Python("resx"),
        markers: PROSE_MARKERS.iter().chain(&["{1:N2}"]).copied().collect(),
    });
    Ok(cases)
}

/// Each marker of each format's document comes back in the translation as
/// often as the source holds it, and the translation did change the text.
#[tokio::test]
async fn every_format_keeps_its_placeholders_markup_and_escapes() -> Result<()> {
    let (world, api, key) = platform("preserve").await?;
    let fields = [("target_lang", "ES"), ("source_lang", "EN")];
    let mut failures: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for case in cases(&world).await? {
        let (_, out) = translated(&api, &key, case.name, case.bytes.clone(), &fields)
            .await
            .with_context(|| case.name)?;
        let before = read(
            &world,
            &format!("source-{}", case.name),
            &case.bytes,
            &case.reader,
        )
        .await?;
        let after = read(
            &world,
            &format!("translated-{}", case.name),
            &out,
            &case.reader,
        )
        .await?;
        let problems = failures.entry(case.name.to_owned()).or_default();
        if !after.contains("casa") {
            problems.push(format!("not translated: {after}"));
        }
        for marker in &case.markers {
            let (source, translation) = (
                before.matches(marker).count(),
                after.matches(marker).count(),
            );
            if source == 0 || source != translation {
                problems.push(format!(
                    "{marker:?}: {source} in the source, {translation} in the translation"
                ));
            }
        }
        if !problems.is_empty() {
            problems.push(format!("translation: {after}"));
        }
    }
    failures.retain(|_, p| !p.is_empty());
    anyhow::ensure!(failures.is_empty(), "{failures:#?}");
    Ok(())
}
