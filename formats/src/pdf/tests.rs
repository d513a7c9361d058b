//! PDFs made by real producers (reportlab; LibreOffice from a Word file),
//! read into paragraphs and written back translated, the output checked by
//! poppler (pdftotext, pdfinfo, pdffonts) and qpdf.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::testdoc::{python_snippet, test_folder};
use crate::{DocumentFormat, ExtractOptions, Extracted, Fonts, extract_with};

/// The fonts Debian's fonts-liberation2 and fonts-dejavu-core install
/// (scripts/setup.sh installs both); the tests fail without them.
pub(crate) fn system_fonts() -> Fonts {
    static FONTS: std::sync::OnceLock<Fonts> = std::sync::OnceLock::new();
    FONTS.get_or_init(load_system_fonts).clone()
}

fn load_system_fonts() -> Fonts {
    let mut files = Vec::new();
    for dir in [
        "/usr/share/fonts/truetype/liberation2",
        "/usr/share/fonts/truetype/dejavu",
    ] {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if entry.path().extension().is_some_and(|e| e == "ttf") {
                files.push(std::fs::read(entry.path()).unwrap());
            }
        }
    }
    let fonts = Fonts::from_files(files);
    assert!(
        fonts.families().contains(&"Liberation Sans"),
        "fonts-liberation2 is installed (scripts/setup.sh): {fonts:?}"
    );
    fonts
}

fn read(bytes: &[u8]) -> Extracted {
    let options = ExtractOptions {
        fonts: Some(system_fonts()),
        ..ExtractOptions::default()
    };
    extract_with(DocumentFormat::Pdf, bytes, options).unwrap()
}

/// Runs a poppler or qpdf tool on `file`; its stdout (the test fails when
/// the tool does).
pub(crate) fn tool(program: &str, args: &[&str], file: &Path) -> String {
    // pdftotext writes to a file unless told "-".
    let stdout = (program == "pdftotext").then_some("-");
    let out = Command::new(program)
        .args(args)
        .arg(file)
        .args(stdout)
        .output()
        .unwrap_or_else(|e| panic!("{program} runs (poppler-utils, qpdf: scripts/setup.sh): {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A stand-in translation: every English word of the samples in Spanish.
fn spanish(text: &str) -> String {
    const WORDS: &[(&str, &str)] = &[
        ("Annual report", "Informe anual"),
        ("The state of the house", "El estado de la casa"),
        ("First chapter", "Primer capítulo"),
        (
            "The house is big and the garden is green.",
            "La casa es grande y el jardín es verde.",
        ),
        (
            "The dog sleeps in the house and the cat sleeps in the garden.",
            "El perro duerme en la casa y el gato duerme en el jardín.",
        ),
        (
            "Visit <g id=\"1\">our site</g> for more.",
            "Visite <g id=\"1\">nuestro sitio</g> para más.",
        ),
        (
            "The dog sleeps in the house.",
            "El perro duerme en la casa.",
        ),
        ("The house", "La casa"),
        ("The garden", "El jardín"),
        ("Name", "Nombre"),
        ("City", "Ciudad"),
    ];
    let mut out = text.to_owned();
    for (en, es) in WORDS {
        out = out.replace(en, es);
    }
    out
}

const REPORTLAB: &str = r#"
import sys
from reportlab.lib.pagesizes import A4
from reportlab.platypus import SimpleDocTemplate, Paragraph, Table
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
pdfmetrics.registerFont(TTFont('DejaVu', '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'))
styles = getSampleStyleSheet()
def outline(canvas, doc):
    canvas.bookmarkPage('p1')
    canvas.addOutlineEntry('First chapter', 'p1', level=0)
doc = SimpleDocTemplate(sys.argv[1], pagesize=A4, title='Annual report',
                        subject='The state of the house')
doc.build([
    Paragraph('Annual report', styles['Title']),
    Paragraph('The house is big and the garden is green. ' * 6, styles['Normal']),
    Paragraph('<font name="DejaVu">The dog sleeps in the house and the cat sleeps in the garden.</font>', styles['Normal']),
    Paragraph('Visit <a href="https://example.org/" color="blue">our site</a> for more.', styles['Normal']),
    Table([['Name', 'City'], ['The house', 'The garden']], colWidths=[200, 200]),
], onFirstPage=outline)
"#;

fn reportlab(dir: &Path) -> PathBuf {
    let path = dir.join("report.pdf");
    python_snippet(REPORTLAB, &[&path]);
    path
}

#[test]
fn paragraphs_outline_and_metadata_of_a_reportlab_pdf_are_segments() {
    let dir = test_folder("pdf-segments");
    let doc = read(&std::fs::read(reportlab(&dir)).unwrap());
    let long = ["The house is big and the garden is green."; 6].join(" ");
    assert_eq!(
        doc.segments(),
        [
            "Annual report",
            long.as_str(),
            "The dog sleeps in the house and the cat sleeps in the garden.",
            "Visit <g id=\"1\">our site</g> for more.",
            "Name",
            "City",
            "The house",
            "The garden",
            "First chapter",
            "Annual report",
            "The state of the house",
        ]
    );
}

#[test]
fn a_translated_pdf_keeps_its_pages_links_and_reads_in_the_translation() {
    let dir = test_folder("pdf-translated");
    let source = reportlab(&dir);
    let doc = read(&std::fs::read(&source).unwrap());
    let translations: Vec<String> = doc.segments().iter().map(|s| spanish(s)).collect();
    let out = dir.join("translated.pdf");
    std::fs::write(&out, doc.merge(&translations).unwrap()).unwrap();

    tool("qpdf", &["--check"], &out);
    let text = tool("pdftotext", &["-layout"], &out);
    for wanted in [
        "Informe anual",
        "La casa es grande y el jardín es verde.",
        "El perro duerme",
        "Visite nuestro sitio",
        "Nombre",
        "Ciudad",
        "El jardín",
    ] {
        assert!(text.contains(wanted), "{wanted:?} in {text}");
    }
    for gone in ["house", "garden", "Annual", "Visit our"] {
        assert!(!text.contains(gone), "{gone:?} left in {text}");
    }
    let info = |file: &Path| {
        tool("pdfinfo", &[], file)
            .lines()
            .filter(|l| {
                l.starts_with("Pages:")
                    || l.starts_with("Page size:")
                    || l.starts_with("Title:")
                    || l.starts_with("Subject:")
            })
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let (before, after) = (info(&source), info(&out));
    assert_eq!(before.len(), after.len(), "{before:?} {after:?}");
    assert!(
        after.contains(&"Title:           Informe anual".to_owned()),
        "{after:?}"
    );
    assert!(
        after.iter().any(|l| l.contains("El estado de la casa")),
        "{after:?}"
    );
    assert_eq!(
        before
            .iter()
            .filter(|l| l.starts_with("Pag"))
            .collect::<Vec<_>>(),
        after
            .iter()
            .filter(|l| l.starts_with("Pag"))
            .collect::<Vec<_>>()
    );
    let urls = tool("pdfinfo", &["-url"], &source);
    assert!(urls.contains("https://example.org/"), "{urls}");
    assert_eq!(urls, tool("pdfinfo", &["-url"], &out));
    let fonts = tool("pdffonts", &[], &out);
    assert!(
        fonts.lines().any(|l| l.contains("+LiberationSans")
            && l.contains("CID TrueType")
            && l.contains(" yes ")),
        "{fonts}"
    );
    // The link's words are still blue (its tag kept its colour): pixels of
    // page 1 as poppler renders it.
    assert!(blue_pixels(&source) > 20 && blue_pixels(&out) > 20);
    // The outline's title, read back through the filter.
    let again = read(&std::fs::read(&out).unwrap());
    assert!(
        again.segments().iter().any(|s| s == "Primer capítulo"),
        "{:?}",
        again.segments()
    );
}

/// How many strongly blue pixels page 1 has, rendered by pdftoppm.
fn blue_pixels(pdf: &Path) -> usize {
    rendered(pdf, 100, false)
        .2
        .chunks_exact(3)
        .filter(|p| p[2] > 150 && p[0] < 120 && p[1] < 120)
        .count()
}

/// Page 1 rendered by pdftoppm at `dpi`, in grey (one byte a pixel) or
/// colour (three): its width, height and pixels.
fn rendered(pdf: &Path, dpi: u32, grey: bool) -> (usize, usize, Vec<u8>) {
    let out = Command::new("pdftoppm")
        .args(["-r", &dpi.to_string(), "-f", "1", "-l", "1"])
        .args(grey.then_some("-gray"))
        .arg(pdf)
        .output()
        .expect("pdftoppm runs (poppler-utils)");
    assert!(out.status.success());
    // A binary PGM or PPM: magic, width, height, maximum, one whitespace,
    // pixels.
    let mut fields = Vec::new();
    let mut at = 0;
    while fields.len() < 4 {
        while out.stdout[at].is_ascii_whitespace() {
            at += 1;
        }
        let start = at;
        while !out.stdout[at].is_ascii_whitespace() {
            at += 1;
        }
        fields.push(String::from_utf8_lossy(&out.stdout[start..at]).into_owned());
    }
    let (width, height) = (fields[1].parse().unwrap(), fields[2].parse().unwrap());
    (width, height, out.stdout[at + 1..].to_vec())
}

/// The boxes of the `tag` elements (blocks, words) of pdftotext's `-bbox`
/// output: `[x0, y0, x1, y1]` (top-down).
pub(crate) fn boxes(html: &str, tag: &str) -> Vec<[f32; 4]> {
    let mut out = Vec::new();
    for piece in html.split(&format!("<{tag} ")).skip(1) {
        let attr = |name: &str| {
            let start = piece.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
            piece[start..]
                .split('"')
                .next()
                .unwrap()
                .parse::<f32>()
                .unwrap()
        };
        out.push([attr("xMin"), attr("yMin"), attr("xMax"), attr("yMax")]);
    }
    out
}

#[test]
fn each_translated_word_lies_within_an_original_block() {
    let dir = test_folder("pdf-boxes");
    let source = reportlab(&dir);
    let doc = read(&std::fs::read(&source).unwrap());
    let translations: Vec<String> = doc.segments().iter().map(|s| spanish(s)).collect();
    let out = dir.join("translated.pdf");
    std::fs::write(&out, doc.merge(&translations).unwrap()).unwrap();
    let blocks = boxes(
        &tool(
            "pdftotext",
            &["-bbox-layout", "-f", "1", "-l", "1"],
            &source,
        ),
        "block",
    );
    let words = boxes(
        &tool("pdftotext", &["-bbox", "-f", "1", "-l", "1"], &out),
        "word",
    );
    assert!(
        blocks.len() >= 4 && words.len() >= 30,
        "{blocks:?} {words:?}"
    );
    // Across 3 points; up and down 4.5, as fonts' ascents differ (a
    // word's box is as tall as its font says).
    let (across, up) = (3.0, 4.5);
    for w in &words {
        assert!(
            blocks.iter().any(|b| w[0] >= b[0] - across
                && w[1] >= b[1] - up
                && w[2] <= b[2] + across
                && w[3] <= b[3] + up),
            "word {w:?} outside every block {blocks:?}"
        );
    }
    // No translated word overlaps another.
    for (i, a) in words.iter().enumerate() {
        for b in &words[i + 1..] {
            let across = a[2].min(b[2]) - a[0].max(b[0]);
            let down = a[3].min(b[3]) - a[1].max(b[1]);
            assert!(across <= 0.5 || down <= 1.5, "{a:?} overlaps {b:?}");
        }
    }
    // Rendered at 72 dpi (a pixel a point), every dark pixel of the
    // translation lies in an original block (give or take the tolerances)
    // or was dark in the original (rules, borders, images).
    let (width, height, before) = rendered(&source, 72, true);
    let (w2, h2, after) = rendered(&out, 72, true);
    assert_eq!((width, height), (w2, h2));
    let dark = |pixels: &[u8], x: usize, y: usize| pixels[y * width + x] < 128;
    let mut stray = Vec::new();
    for y in 0..height {
        for x in 0..width {
            if !dark(&after, x, y) {
                continue;
            }
            let (px, py) = (x as f32 + 0.5, y as f32 + 0.5);
            let in_block = blocks.iter().any(|b| {
                px >= b[0] - across && px <= b[2] + across && py >= b[1] - up && py <= b[3] + up
            });
            let was_dark = (y.saturating_sub(1)..=(y + 1).min(height - 1)).any(|y| {
                (x.saturating_sub(1)..=(x + 1).min(width - 1)).any(|x| dark(&before, x, y))
            });
            if !in_block && !was_dark {
                stray.push((x, y));
            }
        }
    }
    assert!(
        stray.is_empty(),
        "{} dark pixels outside the original's layout: {:?}",
        stray.len(),
        &stray[..stray.len().min(20)]
    );
}

#[test]
fn a_pdfs_page_count_is_read_without_loading_it() {
    let dir = test_folder("pdf-pages");
    let path = dir.join("pages.pdf");
    python_snippet(
        r#"
import sys
from reportlab.pdfgen import canvas
c = canvas.Canvas(sys.argv[1])
for i in range(7):
    c.drawString(72, 720, 'Page %d' % i)
    c.showPage()
c.save()
"#,
        &[&path],
    );
    assert_eq!(
        crate::pdf_page_count(&std::fs::read(&path).unwrap()),
        Some(7)
    );
    assert_eq!(crate::pdf_page_count(b"not a pdf"), None);
}

#[test]
fn damaged_and_password_protected_pdfs_are_clear_errors() {
    let options = ExtractOptions::default;
    let err = extract_with(DocumentFormat::Pdf, b"%PDF-1.4\nnot really", options()).unwrap_err();
    assert!(err.to_string().contains("not a readable PDF"), "{err}");
    let dir = test_folder("pdf-protected");
    let locked = dir.join("locked.pdf");
    let owner_only = dir.join("owner.pdf");
    python_snippet(
        r#"
import sys
from reportlab.pdfgen import canvas
from reportlab.lib import pdfencrypt
for path, user in ((sys.argv[1], 'secret'), (sys.argv[2], '')):
    c = canvas.Canvas(path, encrypt=pdfencrypt.StandardEncryption(user, ownerPassword='owner', canPrint=0))
    c.drawString(72, 720, 'The house is big.')
    c.save()
"#,
        &[&locked, &owner_only],
    );
    let err = extract_with(
        DocumentFormat::Pdf,
        &std::fs::read(&locked).unwrap(),
        options(),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("protected with a password"),
        "{err}"
    );
    // Only an owner password: readable by anyone, so translated.
    let doc = read(&std::fs::read(&owner_only).unwrap());
    // reportlab's own Title and Subject too.
    assert_eq!(
        doc.segments(),
        ["The house is big.", "untitled", "unspecified"]
    );
    let out = dir.join("owner-translated.pdf");
    let translations = ["La casa es grande.", "sin título", "sin especificar"].map(String::from);
    std::fs::write(&out, doc.merge(&translations).unwrap()).unwrap();
    assert!(tool("pdftotext", &[], &out).contains("La casa es grande."));
}

const LATEX: &str = r"\documentclass{article}
\setlength{\textwidth}{2.3in}
\pagestyle{empty}
\begin{document}
\section{Introduction}
The internationalization of documentation demands considerable understanding of typographical conventions, and the translation of every paragraph follows.

The second paragraph is short and difficult to find.
\end{document}
";

/// A PDF pdfTeX made (Type1 Computer Modern fonts with their own
/// encodings, ligatures, no spaces between words, words hyphenated at line
/// ends).
fn pdftex(dir: &Path) -> PathBuf {
    latex(dir, "paper", LATEX)
}

/// The PDF pdfTeX makes of `source` (as `name`.pdf in `dir`).
fn latex(dir: &Path, name: &str, source: &str) -> PathBuf {
    let tex = dir.join(format!("{name}.tex"));
    std::fs::write(&tex, source).unwrap();
    let out = Command::new("pdflatex")
        .args([
            "-interaction=nonstopmode",
            "-halt-on-error",
            "-output-directory",
        ])
        .arg(dir)
        .arg(&tex)
        .output()
        .expect("pdflatex runs (texlive-latex-base: scripts/setup.sh)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    tex.with_extension("pdf")
}

#[test]
fn a_pdftex_paper_reads_as_whole_sentences_and_comes_back_translated() {
    let dir = test_folder("pdf-pdftex");
    let source = pdftex(&dir);
    let lines = tool("pdftotext", &["-layout"], &source);
    assert!(
        lines.lines().any(|l| l.trim_end().ends_with('-')),
        "TeX hyphenated a word at a line's end: {lines}"
    );
    let doc = read(&std::fs::read(&source).unwrap());
    assert_eq!(
        doc.segments(),
        [
            "1 Introduction",
            "The internationalization of documentation demands considerable understanding of typographical conventions, and the translation of every paragraph follows.",
            "The second paragraph is short and difficult to find.",
        ]
    );
    let translations = [
        "1 Introducción",
        "La internacionalización de la documentación exige un conocimiento considerable de las convenciones tipográficas, y sigue la traducción de cada párrafo.",
        "El segundo párrafo es corto y difícil de encontrar.",
    ]
    .map(String::from);
    let out = dir.join("translated.pdf");
    std::fs::write(&out, doc.merge(&translations).unwrap()).unwrap();
    tool("qpdf", &["--check"], &out);
    let text = tool("pdftotext", &[], &out)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        text.contains("La internacionalización de la documentación exige"),
        "{text}"
    );
    assert!(
        text.contains("El segundo párrafo es corto y difícil de encontrar."),
        "{text}"
    );
    for gone in ["Introduction", "paragraph", "The "] {
        assert!(!text.contains(gone), "{gone:?} left in {text}");
    }
    let fonts = tool("pdffonts", &[], &out);
    assert!(
        fonts.contains("LiberationSerif"),
        "a serif face for Computer Modern: {fonts}"
    );
}

/// A page whose content stream inflates beyond the bound (a deflate bomb)
/// is left as it is, read no further; the document's other pages are
/// translated.
#[test]
fn a_page_that_inflates_without_end_is_left_and_the_others_translated() {
    let dir = test_folder("pdf-bomb");
    let path = dir.join("bomb.pdf");
    python_snippet(
        r#"
import sys, zlib
from reportlab.pdfgen import canvas
c = canvas.Canvas(sys.argv[1], pageCompression=0)
c.drawString(72, 720, 'The house is big.')
c.showPage()
c.drawString(72, 720, 'BOMBPAGE')
c.showPage()
c.save()
data = open(sys.argv[1], 'rb').read()
# The second page's stream becomes 200 MB of spaces, deflated.
bomb = zlib.compress(b' ' * 200_000_000, 9)
start = data.index(b'BOMBPAGE')
s = data.index(b'\n', data.rindex(b'stream', 0, start)) + 1
e = data.index(b'endstream', start)
head = data[:s]
length_at = head.rindex(b'/Length')
head = head[:length_at] + b'/Filter /FlateDecode /Length %d' % len(bomb) + head[head.index(b'>>', length_at):]
open(sys.argv[1], 'wb').write(head + bomb + b'\n' + data[e:])
"#,
        &[&path],
    );
    let doc = read(&std::fs::read(&path).unwrap());
    assert_eq!(doc.segments()[0], "The house is big.");
    assert!(!doc.segments().iter().any(|s| s.contains("BOMB")));
    let translations: Vec<String> = doc
        .segments()
        .iter()
        .map(|s| match s.as_str() {
            "The house is big." => "La casa es grande.".to_owned(),
            other => other.to_owned(),
        })
        .collect();
    let out = dir.join("translated.pdf");
    std::fs::write(&out, doc.merge(&translations).unwrap()).unwrap();
    assert!(tool("pdftotext", &["-l", "1"], &out).contains("La casa es grande."));
}

/// A paragraph gets the closest face of its style that holds all its
/// characters: Liberation's for Latin (metric-compatible with the
/// standard fonts), DejaVu's for a script Liberation lacks.
#[test]
fn a_face_is_chosen_by_style_and_by_the_characters_it_holds() {
    use super::fonts::{Class, Style};
    let fonts = system_fonts();
    let serif_bold = Style {
        class: Class::Serif,
        bold: true,
        italic: false,
    };
    let face = fonts.choose(serif_bold, "La casa es grande").unwrap();
    assert_eq!(fonts.family(face), "Liberation Serif");
    assert_eq!(fonts.style(face), serif_bold);
    let armenian = fonts.choose(Style::default(), "Բարեւ ձեզ").unwrap();
    assert!(
        fonts.family(armenian).starts_with("DejaVu"),
        "{}",
        fonts.family(armenian)
    );
}

/// A reportlab PDF for the reflow: a title, a heading, body text with a
/// bold word, a bulleted list, an image between paragraphs and a page
/// number; two pages.
const REFLOW: &str = r#"
import sys
from reportlab.lib.pagesizes import A4
from reportlab.platypus import SimpleDocTemplate, Paragraph, Image, PageBreak, ListFlowable, ListItem, Table
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.lib import colors
from PIL import Image as PILImage
PILImage.new("RGB", (90, 60), (40, 160, 40)).save(sys.argv[2])
styles = getSampleStyleSheet()
def number(canvas, doc):
    canvas.setFont("Helvetica", 9)
    canvas.drawString(297, 30, str(doc.page))
doc = SimpleDocTemplate(sys.argv[1], pagesize=A4)
doc.build([
    Paragraph('Annual report', styles['Title']),
    Paragraph('The house is big and the garden is <b>green</b>. ' * 4, styles['Normal']),
    Image(sys.argv[2], width=90, height=60),
    Paragraph('First chapter', styles['Heading2']),
    ListFlowable([ListItem(Paragraph('The house', styles['Normal'])),
                  ListItem(Paragraph('The garden', styles['Normal']))], bulletType='bullet', start='\u2022'),
    PageBreak(),
    Paragraph('The dog sleeps in the house and the cat sleeps in the garden.', styles['Normal']),
    Table([['Name', 'City'], ['The house', 'The garden'], ['The dog', 'The park']],
          colWidths=[150, 150], style=[('GRID', (0, 0), (-1, -1), 0.5, colors.black)]),
    Paragraph('The end.', styles['Normal']),
], onFirstPage=number, onLaterPages=number)
"#;

/// What python-docx reads of a Word document: each paragraph's style, list
/// membership, text, bold runs and inline images.
const READ_REFLOWED: &str = r#"
import sys, json, docx
from docx.oxml.ns import qn
d = docx.Document(sys.argv[1])
out = []
for p in d.paragraphs:
    listed = p._p.find(qn("w:pPr") + "/" + qn("w:numPr")) is not None
    images = p._p.findall(".//" + qn("w:drawing"))
    out.append({"style": p.style.name, "list": listed, "text": p.text,
                "bold": [r.text for r in p.runs if r.bold], "images": len(images)})
body = [c.tag.split("}")[1] for c in d.element.body if not c.tag.endswith("sectPr")]
tables = [[[c.text for c in r.cells] for r in t.rows] for t in d.tables]
print(json.dumps({"paragraphs": out, "shapes": [(s.width, s.height) for s in d.inline_shapes],
                  "body": body, "tables": tables,
                  "page": [d.sections[0].page_width, d.sections[0].page_height]}))
"#;

#[test]
fn a_pdf_reflows_into_a_word_document_with_headings_lists_tables_and_images_in_place() {
    let dir = test_folder("pdf-reflow");
    let (pdf, png) = (dir.join("reflow.pdf"), dir.join("green.png"));
    python_snippet(REFLOW, &[&pdf, &png]);
    let docx = crate::convert(
        std::fs::read(&pdf).unwrap(),
        DocumentFormat::Pdf,
        crate::Output::Document(DocumentFormat::Docx),
        Some(&system_fonts()),
    )
    .unwrap();
    let path = dir.join("reflow.docx");
    std::fs::write(&path, docx).unwrap();
    let read: serde_json::Value =
        serde_json::from_str(&python_snippet(READ_REFLOWED, &[&path])).unwrap();
    let paragraphs = read["paragraphs"].as_array().unwrap();
    let summary: Vec<String> = paragraphs
        .iter()
        .map(|p| {
            let kind = match (p["list"].as_bool(), p["images"].as_u64()) {
                (_, Some(n)) if n > 0 => "image".to_owned(),
                (Some(true), _) => "item".to_owned(),
                _ => p["style"].as_str().unwrap().to_owned(),
            };
            format!("{kind}: {}", p["text"].as_str().unwrap())
        })
        .collect();
    let body = "The house is big and the garden is green. ".repeat(4);
    assert_eq!(
        summary,
        [
            "Heading 1: Annual report".to_owned(),
            format!("Normal: {}", body.trim_end()),
            "image: ".to_owned(),
            "Heading 2: First chapter".to_owned(),
            "item: The house".to_owned(),
            "item: The garden".to_owned(),
            "Normal: The dog sleeps in the house and the cat sleeps in the garden.".to_owned(),
            "Normal: The end.".to_owned(),
        ],
        "{read}"
    );
    // The grid is a table between the last two paragraphs.
    assert_eq!(
        read["tables"],
        serde_json::json!([[
            ["Name", "City"],
            ["The house", "The garden"],
            ["The dog", "The park"]
        ]]),
        "{read}"
    );
    let body: Vec<&str> = read["body"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(body[body.len() - 3..], ["p", "tbl", "p"], "{read}");
    assert_eq!(
        paragraphs[1]["bold"],
        serde_json::json!(["green", "green", "green", "green"]),
        "{read}"
    );
    // The image at its size on the page (90 × 60 pt), A4 pages.
    assert_eq!(
        read["shapes"],
        serde_json::json!([[90 * 12700, 60 * 12700]]),
        "{read}"
    );
    assert_eq!(
        read["page"],
        serde_json::json!([11906 * 635, 16838 * 635]),
        "{read}"
    );
}

/// A PDF/A LibreOffice writes from a Word file with a title and a subject
/// carries them in its XMP metadata too; the translation sets both, as
/// poppler's `pdfinfo -meta` reads them.
#[test]
fn the_xmp_title_and_description_follow_the_translation() {
    let dir = test_folder("pdf-xmp");
    let docx = dir.join("titled.docx");
    python_snippet(
        r#"
import sys, docx
d = docx.Document()
d.core_properties.title = "The annual report"
d.core_properties.subject = "The house"
d.add_paragraph("The house is big and the garden is green.")
d.save(sys.argv[1])
"#,
        &[&docx],
    );
    let pdfa = r#"pdf:writer_pdf_Export:{"SelectPdfVersion":{"type":"long","value":"2"}}"#;
    crate::contract::soffice(&dir, pdfa, &dir, &[docx]);
    let source = dir.join("titled.pdf");
    assert!(tool("pdfinfo", &["-meta"], &source).contains("The annual report"));
    let doc = read(&std::fs::read(&source).unwrap());
    let translated: Vec<String> = doc
        .segments()
        .iter()
        .map(|s| match s.as_str() {
            "The annual report" => "El informe anual".to_owned(),
            other => spanish(other),
        })
        .collect();
    let out = dir.join("translated.pdf");
    std::fs::write(&out, doc.merge(&translated).unwrap()).unwrap();
    let meta = tool("pdfinfo", &["-meta"], &out);
    assert!(meta.contains(">El informe anual</rdf:li>"), "{meta}");
    assert!(meta.contains(">La casa</rdf:li>"), "{meta}");
    assert!(
        !meta.contains("The annual report") && !meta.contains(">The house<"),
        "{meta}"
    );
    let info = tool("pdfinfo", &[], &out);
    assert!(info.contains("El informe anual"), "{info}");
    tool("qpdf", &["--check"], &out);
}

/// A page of text (reportlab) rasterised by pdftoppm at 150 dpi and made a
/// scanned PDF three ways: by Pillow (a JPEG), by reportlab (grey samples,
/// deflated) and by tesseract (the picture with its own invisible OCR
/// text layer).
const SCANS: &str = r#"
import sys, subprocess
from reportlab.pdfgen import canvas
from reportlab.lib.pagesizes import letter
from PIL import Image
out = sys.argv[1]
c = canvas.Canvas(f"{out}/text.pdf", pagesize=letter)
c.setFont("Helvetica", 22)
c.drawString(72, 700, "The house is big and the garden")
c.drawString(72, 672, "is green.")
c.drawString(72, 560, "The dog sleeps in the house.")
c.setFillColorRGB(0.8, 0.1, 0.1)
c.rect(400, 100, 120, 120, fill=1, stroke=0)
c.save()
run = lambda *a: subprocess.run(list(a), check=True, capture_output=True)
run("pdftoppm", "-r", "150", "-png", "-singlefile", f"{out}/text.pdf", f"{out}/scan")
run("pdftoppm", "-r", "150", "-png", "-gray", "-singlefile", f"{out}/text.pdf", f"{out}/grey")
Image.open(f"{out}/scan.png").convert("RGB").save(f"{out}/jpeg.pdf", resolution=150)
c = canvas.Canvas(f"{out}/flate.pdf", pagesize=letter)
c.drawImage(f"{out}/grey.png", 0, 0, width=612, height=792)
c.save()
run("tesseract", f"{out}/scan.png", f"{out}/ocred", "-l", "eng", "pdf")
"#;

/// Options that read scans with tesseract (the worker's recogniser's
/// twin) and write in the system's fonts.
fn ocr_options() -> ExtractOptions {
    ExtractOptions {
        fonts: Some(system_fonts()),
        ocr: Some(crate::Ocr(std::sync::Arc::new(
            crate::images::tests::Tesseract,
        ))),
        source_language: Some("EN".to_owned()),
        ..ExtractOptions::default()
    }
}

/// What `pdfimages -list` says of each image but its object number.
fn image_list(pdf: &Path) -> Vec<String> {
    tool("pdfimages", &["-list"], pdf)
        .lines()
        .skip(2)
        .map(|row| {
            let cols: Vec<&str> = row.split_whitespace().collect();
            cols[..9.min(cols.len())].join(" ")
        })
        .collect()
}

#[test]
fn a_scanned_page_is_read_by_ocr_painted_over_and_given_a_text_layer() {
    let dir = test_folder("pdf-scans");
    python_snippet(SCANS, &[&dir]);
    for name in ["jpeg", "flate", "ocred"] {
        let source = dir.join(format!("{name}.pdf"));
        let input = std::fs::read(&source).unwrap();
        let doc = extract_with(DocumentFormat::Pdf, &input, ocr_options()).unwrap();
        // (Pillow gives the file a Title: its name.)
        assert_eq!(
            doc.segments()[..2],
            [
                "The house is big and the garden is green.",
                "The dog sleeps in the house."
            ],
            "{name}"
        );
        // Unchanged, a page keeps its picture and its own text layer.
        let same = dir.join(format!("{name}-same.pdf"));
        std::fs::write(&same, doc.merge(doc.segments()).unwrap()).unwrap();
        assert_eq!(
            tool("pdftotext", &[], &same),
            tool("pdftotext", &[], &source),
            "{name}"
        );

        let translated: Vec<String> = doc.segments().iter().map(|s| spanish(s)).collect();
        let out = dir.join(format!("{name}-es.pdf"));
        std::fs::write(&out, doc.merge(&translated).unwrap()).unwrap();
        tool("qpdf", &["--check"], &out);
        let info = |pdf: &Path| {
            tool("pdfinfo", &[], pdf)
                .lines()
                .filter(|l| l.starts_with("Pages:") || l.starts_with("Page size:"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(info(&out), info(&source), "{name}: pages and sizes");
        assert_eq!(image_list(&out), image_list(&source), "{name}: images");

        // The text layer reads in Spanish, over the painted lines; the
        // original's layer (tesseract's) is gone.
        let layer = tool("pdftotext", &[], &out);
        let flat = layer.split_whitespace().collect::<Vec<_>>().join(" ");
        for words in ["La casa es grande", "El perro duerme en la casa."] {
            assert!(flat.contains(words), "{name}: {words:?} in {flat:?}");
        }
        assert!(!flat.contains("house"), "{name}: {flat:?}");
        let html = tool("pdftotext", &["-bbox"], &out);
        let words = boxes(&html, "word");
        let perro = html
            .split("<word ")
            .skip(1)
            .position(|w| w.contains(">perro<"))
            .map(|i| words[i])
            .unwrap_or_else(|| panic!("{name}: perro in {html}"));
        // The original line's baseline is 560 pt up: 232 pt from the top.
        assert!(
            (210.0..240.0).contains(&perro[1]) && perro[3] < 240.0 && perro[0] > 60.0,
            "{name}: {perro:?}"
        );

        // The picture itself shows the translation.
        let png = dir.join(format!("{name}-es"));
        let status = Command::new("pdftoppm")
            .args(["-r", "150", "-png", "-singlefile"])
            .arg(&out)
            .arg(&png)
            .status()
            .unwrap();
        assert!(status.success());
        let rendered = std::fs::read(png.with_extension("png")).unwrap();
        let seen = crate::images::tests::tesseract(&rendered, "spa", "").unwrap();
        let seen = seen.split_whitespace().collect::<Vec<_>>().join(" ");
        for words in ["La casa es grande", "El perro duerme en la casa."] {
            assert!(seen.contains(words), "{name}: {words:?} in {seen:?}");
        }
        assert!(!seen.contains("house"), "{name}: {seen:?}");
    }
}

/// pdfTeX with the T1 encoding and no Type1 version of its fonts: the
/// text is set in Type3 bitmap fonts METAFONT makes.
const TYPE3_LATEX: &str = r"\documentclass{article}
\usepackage[T1]{fontenc}
\pagestyle{empty}
\begin{document}
The house is big and the garden is green.
\end{document}
";

/// Three pages by reportlab: text, rotated text, text in a form XObject.
const LEFT_AS_IS: &str = r#"
import sys
from reportlab.pdfgen import canvas
c = canvas.Canvas(sys.argv[1], pagesize=(612, 792))
c.setFont("Helvetica", 14)
c.drawString(72, 700, "The house is big and the garden is green.")
c.showPage()
c.saveState()
c.translate(300, 300)
c.rotate(90)
c.setFont("Helvetica", 14)
c.drawString(0, 0, "The house is big and the garden is green.")
c.restoreState()
c.showPage()
c.beginForm("stamp")
c.setFont("Helvetica", 14)
c.drawString(72, 600, "The house is big and the garden is green.")
c.endForm()
c.doForm("stamp")
c.showPage()
c.save()
"#;

#[test]
fn text_left_as_it_is_is_named_in_the_notes_with_its_pages() {
    let dir = test_folder("pdf-notes");
    let path = dir.join("left.pdf");
    python_snippet(LEFT_AS_IS, &[&path]);
    let doc = read(&std::fs::read(&path).unwrap());
    // (reportlab's Title and Subject: untitled, unspecified.)
    assert_eq!(
        doc.segments()[..1],
        ["The house is big and the garden is green."]
    );
    assert_eq!(
        doc.notes(),
        [
            "Rotated or skewed text was left untranslated on page 2.",
            "Text inside form XObjects was left untranslated on page 3."
        ]
    );

    let type3 = latex(&dir, "type3", TYPE3_LATEX);
    assert!(tool("pdffonts", &[], &type3).contains("Type 3"));
    let doc = read(&std::fs::read(&type3).unwrap());
    assert!(doc.segments().is_empty(), "{:?}", doc.segments());
    assert_eq!(
        doc.notes(),
        [
            "Text in Type3 fonts (glyphs drawn without their characters) was left untranslated on page 1."
        ]
    );
}

#[test]
fn a_note_lists_ten_pages_and_counts_the_rest() {
    use super::text::Left;
    use std::collections::BTreeMap;
    let many = BTreeMap::from([
        (Left::Rotated, (1..=12).collect()),
        (Left::InForm, vec![2, 5]),
    ]);
    assert_eq!(
        super::notes(&many),
        [
            "Rotated or skewed text was left untranslated on pages 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 2 more.",
            "Text inside form XObjects was left untranslated on pages 2 and 5."
        ]
    );
}

/// A tagged PDF LibreOffice writes from a Word file (a heading, two
/// paragraphs, a footer it marks as an artifact): the translation joins
/// the structure elements of the original, as poppler's `pdfinfo
/// -struct-text` reads them, and the footer stays page furniture.
#[test]
fn a_tagged_pdfs_structure_reads_in_the_translation() {
    let dir = test_folder("pdf-tagged");
    let docx = dir.join("tagged.docx");
    python_snippet(
        r#"
import sys, docx
d = docx.Document()
d.sections[0].footer.paragraphs[0].text = "The city report"
d.add_heading("The annual report", level=1)
d.add_paragraph("The house is big and the garden is green.")
d.add_paragraph("The city has many people.")
d.save(sys.argv[1])
"#,
        &[&docx],
    );
    let tagged = r#"pdf:writer_pdf_Export:{"UseTaggedPDF":{"type":"boolean","value":"true"}}"#;
    crate::contract::soffice(&dir, tagged, &dir, &[docx]);
    let source = dir.join("tagged.pdf");
    let structure = |pdf: &Path| -> Vec<String> {
        tool("pdfinfo", &["-struct-text"], pdf)
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with('"'))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(
        structure(&source),
        [
            "\"The annual report\"",
            "\"The house is big and the garden is green.\"",
            "\"The city has many people.\""
        ]
    );
    let doc = read(&std::fs::read(&source).unwrap());
    let translated: Vec<String> = doc
        .segments()
        .iter()
        .map(|s| {
            match s.as_str() {
                "The annual report" => "El informe anual",
                "The city has many people." => "La ciudad tiene mucha gente.",
                "The city report" => "El informe de la ciudad",
                other => return spanish(other),
            }
            .to_owned()
        })
        .collect();
    let out = dir.join("translated.pdf");
    std::fs::write(&out, doc.merge(&translated).unwrap()).unwrap();
    tool("qpdf", &["--check"], &out);
    assert!(tool("pdfinfo", &[], &out).contains("Tagged:          yes"));
    assert_eq!(
        structure(&out),
        [
            "\"El informe anual\"",
            "\"La casa es grande y el jardín es verde.\"",
            "\"La ciudad tiene mucha gente.\""
        ]
    );
    // The footer is translated, and still no part of the structure.
    assert!(tool("pdftotext", &[], &out).contains("El informe de la ciudad"));
}

/// An English paragraph translated into Arabic is set right to left: its
/// words read in order by poppler, the first at the right, its lines
/// ending at the right edge of the original's box.
#[test]
fn a_right_to_left_translation_is_set_from_the_right() {
    let dir = test_folder("pdf-rtl");
    let source = dir.join("paragraph.pdf");
    python_snippet(
        r#"
import sys
from reportlab.lib.pagesizes import A4
from reportlab.platypus import SimpleDocTemplate, Paragraph
from reportlab.lib.styles import getSampleStyleSheet
doc = SimpleDocTemplate(sys.argv[1], pagesize=A4)
doc.build([Paragraph("The house is big and the garden is green. " * 3, getSampleStyleSheet()["Normal"])])
"#,
        &[&source],
    );
    let doc = read(&std::fs::read(&source).unwrap());
    let arabic = "البيت كبير والحديقة خضراء";
    let translated: Vec<String> = doc
        .segments()
        .iter()
        .map(|s| match s.starts_with("The house") {
            true => arabic.to_owned(),
            false => s.clone(),
        })
        .collect();
    let out = dir.join("arabic.pdf");
    std::fs::write(&out, doc.merge(&translated).unwrap()).unwrap();
    let text = tool("pdftotext", &[], &out);
    assert!(text.contains(arabic), "{text}");
    // Read again (as PDF → Word does), it is the Arabic as written.
    let again = read(&std::fs::read(&out).unwrap());
    assert_eq!(again.segments()[0], arabic);
    let original = boxes(&tool("pdftotext", &["-bbox"], &source), "word");
    let right = original.iter().map(|b| b[2]).fold(f32::MIN, f32::max);
    let html = tool("pdftotext", &["-bbox"], &out);
    let words = boxes(&html, "word");
    // (`-bbox` gives each word's letters as they are seen.)
    let at = |word: &str| {
        let seen: String = word.chars().rev().collect();
        html.split("<word ")
            .skip(1)
            .position(|w| w.contains(&format!(">{seen}<")))
            .map(|i| words[i])
            .unwrap_or_else(|| panic!("{word} in {html}"))
    };
    let (first, second, last) = (at("البيت"), at("كبير"), at("خضراء"));
    assert!(first[0] > second[0] && second[0] > last[0], "{html}");
    assert!((first[2] - right).abs() < 3.0, "{first:?} ends at {right}");
}

/// One reportlab page made hostile in the ways PDFs come: object streams
/// and a linearised file (by qpdf), an incremental update that retitles
/// the document, an update with a JavaScript open action, one with an
/// object nested 100,000 arrays deep, and a wrong `startxref`.
const HOSTILE: &str = r#"
import sys, re, subprocess
from reportlab.pdfgen import canvas
out = sys.argv[1]
base = f"{out}/base.pdf"
c = canvas.Canvas(base, pagesize=(612, 792))
c.drawString(72, 700, "The house is big and the garden is green.")
c.save()
subprocess.run(["qpdf", "--object-streams=generate", base, f"{out}/objstm.pdf"], check=True)
subprocess.run(["qpdf", "--linearize", base, f"{out}/linear.pdf"], check=True)
data = open(base, "rb").read()
size = int(re.search(rb"/Size (\d+)", data).group(1))
root = int(re.search(rb"/Root (\d+) 0 R", data).group(1))
info = re.search(rb"/Info (\d+ 0 R)", data).group(1)
prev = int(re.findall(rb"startxref\s+(\d+)", data)[-1])
def update(name, objects):
    body = bytearray(data)
    offsets = {}
    for num, obj in objects.items():
        offsets[num] = len(body)
        body += b"%d 0 obj\n" % num + obj + b"\nendobj\n"
    xref = len(body)
    body += b"xref\n"
    for num in sorted(offsets):
        body += b"%d 1\n%010d 00000 n \n" % (num, offsets[num])
    top = max(size, max(offsets) + 1)
    body += b"trailer\n<< /Size %d /Root %d 0 R /Info %s /Prev %d >>\nstartxref\n%d\n%%%%EOF\n" % (top, root, info, prev, xref)
    open(f"{out}/{name}.pdf", "wb").write(body)
catalog = re.search(rb"\n%d 0 obj\s*(<<.*?>>)\s*endobj" % root, data, re.S).group(1)
update("incremental", {int(info.split()[0]): b"<< /Title (The garden) >>"})
update("javascript", {root: b"<< /OpenAction %d 0 R " % size + catalog[2:],
                      size: b"<< /S /JavaScript /JS (app.alert\\(1\\)) >>"})
update("nested", {size: b"[" * 100000 + b"]" * 100000})
open(f"{out}/badxref.pdf", "wb").write(re.sub(rb"startxref\s+\d+", b"startxref\n999999", data))
"#;

#[test]
fn hostile_structures_are_translated_or_a_clear_error() {
    let dir = test_folder("pdf-hostile");
    python_snippet(HOSTILE, &[&dir]);
    let translate = |name: &str| -> Result<PathBuf, crate::FormatError> {
        let input = std::fs::read(dir.join(format!("{name}.pdf"))).unwrap();
        let options = ExtractOptions {
            fonts: Some(system_fonts()),
            ..ExtractOptions::default()
        };
        let doc = extract_with(DocumentFormat::Pdf, &input, options)?;
        let translated: Vec<String> = doc
            .segments()
            .iter()
            .map(|s| match s.as_str() {
                "The garden" => "El jardín".to_owned(),
                other => spanish(other),
            })
            .collect();
        let out = dir.join(format!("{name}-es.pdf"));
        std::fs::write(&out, doc.merge(&translated)?).unwrap();
        tool("qpdf", &["--check"], &out);
        Ok(out)
    };
    for name in ["objstm", "linear", "incremental", "javascript", "badxref"] {
        let out = translate(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let text = tool("pdftotext", &[], &out);
        assert!(
            text.contains("La casa es grande y el jardín es verde."),
            "{name}: {text}"
        );
    }
    // The update's title is the document's.
    let info = tool("pdfinfo", &[], &dir.join("incremental-es.pdf"));
    assert!(info.contains("El jardín"), "{info}");
    // JavaScript is kept as it is, never run.
    let kept = std::fs::read(dir.join("javascript-es.pdf")).unwrap();
    let qdf = Command::new("qpdf")
        .args(["--qdf", "--object-streams=disable"])
        .arg(dir.join("javascript-es.pdf"))
        .arg("-")
        .output()
        .unwrap();
    assert!(!kept.is_empty() && String::from_utf8_lossy(&qdf.stdout).contains("/JavaScript"));
    // Nesting beyond reason: a clear error, the process unharmed.
    match translate("nested") {
        Ok(out) => assert!(tool("pdftotext", &[], &out).contains("La casa")),
        Err(e) => assert!(e.to_string().contains("not a readable PDF"), "{e}"),
    }
}

/// An Arabic document LibreOffice writes (glyphs placed left to right, as
/// they are seen) reads in the order it is written: each paragraph's
/// words, and each word's letters, as typed.
#[test]
fn right_to_left_text_reads_in_its_logical_order() {
    let dir = test_folder("pdf-rtl-source");
    let docx = dir.join("arabic.docx");
    python_snippet(
        r#"
import sys, docx
from docx.oxml.shared import OxmlElement, qn
d = docx.Document()
for text in ["البيت كبير والحديقة خضراء", "الكلب ينام في البيت 2026 Tolk"]:
    p = d.add_paragraph(text)
    bidi = OxmlElement("w:bidi"); p._p.get_or_add_pPr().append(bidi)
    for r in p.runs:
        rtl = OxmlElement("w:rtl"); r._r.get_or_add_rPr().append(rtl)
d.save(sys.argv[1])
"#,
        &[&docx],
    );
    crate::contract::soffice(&dir, "pdf", &dir, &[docx]);
    let doc = read(&std::fs::read(dir.join("arabic.pdf")).unwrap());
    // (The Latin word is set in another face: a tag of its own.)
    let plain: Vec<String> = doc.segments()[..2]
        .iter()
        .map(|s| crate::inline::plain_text(s))
        .collect();
    assert_eq!(
        plain,
        ["البيت كبير والحديقة خضراء", "الكلب ينام في البيت 2026 Tolk"]
    );
}
