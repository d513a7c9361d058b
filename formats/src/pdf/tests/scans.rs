//! Scanned pages: rasterised by pdftoppm, made PDFs by Pillow, reportlab
//! and tesseract, read by OCR and painted over.

use std::path::Path;
use std::process::Command;

use super::*;
use crate::testdoc::{python_snippet, test_folder};
use crate::{DocumentFormat, ExtractOptions, extract_with};

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
