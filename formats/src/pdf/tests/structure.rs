//! What a PDF carries besides its page text: XMP metadata, the notes of
//! text left as it is, a tagged PDF's structure, and hostile file
//! structures.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;
use crate::testdoc::{python_snippet, test_folder};
use crate::{DocumentFormat, ExtractOptions, extract_with};

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
    use crate::pdf::text::Left;
    use std::collections::BTreeMap;
    let many = BTreeMap::from([
        (Left::Rotated, (1..=12).collect()),
        (Left::InForm, vec![2, 5]),
    ]);
    assert_eq!(
        crate::pdf::notes(&many),
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
