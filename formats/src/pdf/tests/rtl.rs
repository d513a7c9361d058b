//! Right-to-left text: an Arabic translation set from the right, and
//! Arabic a producer placed as it is seen read as it was written.

use super::*;
use crate::testdoc::{python_snippet, test_folder};

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
