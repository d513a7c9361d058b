//! PDF → Word: a reportlab PDF reflowed into a Word document, read by
//! python-docx.

use super::*;
use crate::DocumentFormat;
use crate::testdoc::{python_snippet, test_folder};

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
