//! Marks checked by the documents' own readers: python-docx and python-pptx
//! for Office documents, poppler and qpdf for PDF.

use super::*;
use crate::pdf::tests::{boxes, tool};
use crate::testdoc::{python_snippet, test_folder};

/// A three-section Word document: the second section has its own header and
/// a different first page; the third shows the second's headers.
const SECTIONS: &str = r#"
import sys, docx
from docx.enum.section import WD_SECTION
d = docx.Document()
d.add_paragraph("The first section.")
s2 = d.add_section(WD_SECTION.NEW_PAGE)
s2.header.is_linked_to_previous = False
s2.header.paragraphs[0].text = "Annual report"
s2.different_first_page_header_footer = True
s2.first_page_header.paragraphs[0].text = "Cover"
d.add_paragraph("The second section.")
d.add_section(WD_SECTION.NEW_PAGE)
d.add_paragraph("The third section.")
d.save(sys.argv[1])
"#;

/// Each section's default and first-page headers' text, as python-docx
/// reads them (following the links to previous sections), and the custom
/// property.
const READ_SECTIONS: &str = r#"
import sys, docx, zipfile
d = docx.Document(sys.argv[1])
for s in d.sections:
    first = " | ".join(p.text for p in s.first_page_header.paragraphs) if s.different_first_page_header_footer else "-"
    print(" | ".join(p.text for p in s.header.paragraphs), "%%", first)
print(zipfile.ZipFile(sys.argv[1]).read("docProps/custom.xml").decode())
"#;

#[test]
fn every_header_a_word_documents_pages_show_carries_the_mark() {
    let dir = test_folder("watermark-docx");
    let input = dir.join("in.docx");
    python_snippet(SECTIONS, &[&input]);
    let output = dir.join("out.docx");
    let marked = mark(
        Output::Document(DocumentFormat::Docx),
        &std::fs::read(&input).unwrap(),
    )
    .unwrap();
    std::fs::write(&output, marked).unwrap();
    let read = python_snippet(READ_SECTIONS, &[&output]);
    let lines: Vec<&str> = read.lines().collect();
    // Section 1 had no header: it is given one; section 2 keeps its own
    // headers, marked; section 3 shows section 2's.
    assert_eq!(lines[0], format!("{MARK} %% -"), "{read}");
    assert_eq!(
        lines[1],
        format!("Annual report | {MARK} %% Cover | {MARK}"),
        "{read}"
    );
    assert_eq!(lines[2], lines[1], "{read}");
    assert!(
        read.contains(&format!("name=\"{MARK_PROPERTY}\"")) && read.contains(MARK),
        "{read}"
    );
    // The body is untouched.
    let text = python_snippet(
        "import sys, docx; print([p.text for p in docx.Document(sys.argv[1]).paragraphs])",
        &[&output],
    );
    assert!(
        text.contains("The second section.") && !text.contains(MARK),
        "{text}"
    );
}

#[test]
fn every_slide_carries_the_mark_in_a_shape_of_its_own() {
    let dir = test_folder("watermark-pptx");
    let input = dir.join("in.pptx");
    python_snippet(
        r#"
import sys, pptx
from pptx.util import Inches
p = pptx.Presentation()
p.slide_width, p.slide_height = Inches(13.333), Inches(7.5)
for title in ["The house", "The garden"]:
    s = p.slides.add_slide(p.slide_layouts[1])
    s.shapes.title.text = title
p.save(sys.argv[1])
"#,
        &[&input],
    );
    let output = dir.join("out.pptx");
    let marked = mark(
        Output::Document(DocumentFormat::Pptx),
        &std::fs::read(&input).unwrap(),
    )
    .unwrap();
    std::fs::write(&output, marked).unwrap();
    let read = python_snippet(
        r#"
import sys, pptx
p = pptx.Presentation(sys.argv[1])
for s in p.slides:
    ids = [sh.shape_id for sh in s.shapes]
    assert len(ids) == len(set(ids)), ids
    mark = [sh for sh in s.shapes if sh.has_text_frame and sh.text_frame.text.startswith("Machine")]
    assert len(mark) == 1
    m = mark[0]
    assert m.top + m.height <= p.slide_height and m.left >= 0 and m.top > p.slide_height * 0.8
    print(s.shapes.title.text, "|", m.text_frame.text)
"#,
        &[&output],
    );
    assert_eq!(
        read,
        format!("The house | {MARK}\nThe garden | {MARK}\n"),
        "{read}"
    );
}

#[test]
fn every_page_of_a_pdf_shows_the_mark_whatever_its_rotation() {
    let dir = test_folder("watermark-pdf");
    let input = dir.join("in.pdf");
    python_snippet(
        r#"
import sys
from reportlab.pdfgen import canvas
c = canvas.Canvas(sys.argv[1], pagesize=(595, 842))
c.drawString(72, 760, "The house is big and the garden is green.")
c.translate(10, 10)  # left undone: the mark must not move with it
c.showPage()
c.setPageRotation(90)
c.setFont("Helvetica", 12)
c.drawString(72, 400, "The dog sleeps in the house.")
c.showPage()
c.save()
"#,
        &[&input],
    );
    let output = dir.join("out.pdf");
    let marked = mark(
        Output::Document(DocumentFormat::Pdf),
        &std::fs::read(&input).unwrap(),
    )
    .unwrap();
    std::fs::write(&output, marked).unwrap();
    tool("qpdf", &["--check"], &output);
    for page in ["1", "2"] {
        let text = tool("pdftotext", &["-f", page, "-l", page], &output);
        assert!(text.contains(MARK), "page {page}: {text}");
        assert!(text.contains("The"), "page {page}: {text}");
        // Shown upright at the bottom left: the last line of the page's
        // text, read left to right.
        let bbox = tool("pdftotext", &["-bbox", "-f", page, "-l", page], &output);
        // pdftotext gives the unrotated size but the words as shown.
        let (width, height) = match (page, page_size(&bbox)) {
            ("2", (w, h)) => (h, w),
            (_, size) => size,
        };
        let at = bbox
            .split("<word ")
            .skip(1)
            .position(|w| w.contains(">Machine</word>"))
            .unwrap_or_else(|| panic!("{bbox}"));
        let [x_min, y_min, _, y_max] = boxes(&bbox, "word")[at];
        assert!(x_min < width * 0.1, "page {page}: {x_min}");
        assert!(
            y_min > height * 0.9 && y_max <= height + 0.5,
            "page {page}: {y_min}–{y_max}"
        );
    }
    let info = tool("pdfinfo", &["-custom"], &output);
    assert!(
        info.lines()
            .any(|l| l.starts_with(&format!("{MARK_PROPERTY}:")) && l.ends_with(MARK)),
        "{info}"
    );
}

fn page_size(bbox: &str) -> (f32, f32) {
    let line = bbox.lines().find(|l| l.contains("<page ")).unwrap();
    let value = |key: &str| -> f32 {
        let at = line.find(&format!("{key}=\"")).unwrap() + key.len() + 2;
        line[at..].split('"').next().unwrap().parse().unwrap()
    };
    (value("width"), value("height"))
}

#[test]
fn formats_that_cannot_carry_the_mark_are_refused() {
    assert!(can_mark(Output::Document(DocumentFormat::Docx)));
    assert!(!can_mark(Output::Document(DocumentFormat::Xlsx)));
    let err = mark(Output::Document(DocumentFormat::Json), b"{}").unwrap_err();
    assert!(
        err.to_string().contains("cannot carry a watermark"),
        "{err}"
    );
}
