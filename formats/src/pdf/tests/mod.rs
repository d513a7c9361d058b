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

mod reflow;
mod rtl;
mod scans;
mod structure;
