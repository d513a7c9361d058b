//! PDF end to end: a PDF LibreOffice made from a Word file (two columns, a
//! heading, a table, an image, a hyperlink's text) translated EN→ES by
//! Apertium, checked by poppler and qpdf: same pages and sizes, same
//! images, the translation's fonts embedded, Spanish where English was and
//! no English left, the structure sound, and every translated word within
//! an original block of text, overlapping no other. (LibreOffice 7.4 as
//! Debian ships it writes no link annotations; the filter's own tests keep
//! reportlab's.) A scanned page (pdftoppm, Pillow) is read by the worker's
//! tesseract, painted over in Spanish and given a Spanish text layer.

use super::*;
use crate::support::libreoffice;

const MAKE_COLUMNS_DOCX: &str = r#"
import sys, docx
from docx.shared import Inches
from docx.oxml.shared import OxmlElement, qn
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from PIL import Image
Image.new("RGB", (120, 80), (200, 40, 40)).save(sys.argv[2])
d = docx.Document()
cols = d.sections[0]._sectPr.find(qn("w:cols"))
if cols is None:
    cols = OxmlElement("w:cols"); d.sections[0]._sectPr.append(cols)
cols.set(qn("w:num"), "2"); cols.set(qn("w:space"), "720")
d.add_heading("The annual report", level=1)
for _ in range(3):
    d.add_paragraph("The house is big and the garden is green. The dog runs in the park "
                    "and the cat sleeps in the house. The city has many people.")
d.add_picture(sys.argv[2], width=Inches(1.5))
q = d.add_paragraph("Read more on ")
r_id = q.part.relate_to("http://example.com/", RT.HYPERLINK, is_external=True)
h = OxmlElement("w:hyperlink"); h.set(qn("r:id"), r_id)
r = OxmlElement("w:r"); t = OxmlElement("w:t"); t.text = "the website"; r.append(t); h.append(r)
q._p.append(h)
t = d.add_table(rows=2, cols=2)
t.style = "Table Grid"
t.cell(0, 0).text = "The house is big."
t.cell(0, 1).text = "The water is cold."
t.cell(1, 0).text = "The city has many people."
t.cell(1, 1).text = "The tree is green."
d.save(sys.argv[1])
"#;

/// The boxes (`x0 y0 x1 y1`, top down) of `tag` elements pdftotext's
/// `-bbox`/`-bbox-layout` HTML lists.
fn boxes(html: &str, tag: &str) -> Result<Vec<[f32; 4]>> {
    let mut out = Vec::new();
    for piece in html.split(&format!("<{tag} ")).skip(1) {
        let mut b = [0.0; 4];
        for (slot, name) in b.iter_mut().zip(["xMin", "yMin", "xMax", "yMax"]) {
            let at = piece.find(&format!("{name}=\"")).context(name)? + name.len() + 2;
            *slot = piece[at..].split('"').next().unwrap_or_default().parse()?;
        }
        out.push(b);
    }
    Ok(out)
}

#[tokio::test]
async fn a_libreoffice_pdf_comes_back_in_spanish_with_its_pages_images_and_links() -> Result<()> {
    let (world, api, key) = platform("pdf_libreoffice").await?;
    let docx = world.path("columns.docx");
    python(MAKE_COLUMNS_DOCX, &[&docx, &world.path("red.png")]).await?;
    let source = libreoffice(&world, &docx, "pdf").await?;
    let (content_type, bytes) = translated(
        &api,
        &key,
        "columns.pdf",
        std::fs::read(&source)?,
        &[("target_lang", "ES"), ("source_lang", "EN")],
    )
    .await?;
    assert_eq!(content_type, "application/pdf");
    let out = world.path("translated.pdf");
    std::fs::write(&out, bytes)?;

    tool("qpdf", &["--check"], &out).await?;
    let text = tool("pdftotext", &["-layout"], &out).await?;
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for spanish in [
        "La casa es grande",
        "perro en el parque",
        "La ciudad tiene",
        "informe anual",
    ] {
        assert!(flat.contains(spanish), "{spanish:?} in {text}");
    }
    for english in [
        "The house",
        "The dog",
        "The city",
        "Read more",
        "annual report",
        "The tree",
    ] {
        assert!(!flat.contains(english), "{english:?} left in {text}");
    }
    let pages = |info: String| {
        info.lines()
            .filter(|l| l.starts_with("Pages:") || l.starts_with("Page size:"))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        pages(tool("pdfinfo", &[], &source).await?),
        pages(tool("pdfinfo", &[], &out).await?)
    );
    let images = tool("pdfimages", &["-list"], &source).await?;
    assert!(
        images.lines().count() >= 3,
        "the source has its image: {images}"
    );
    assert_eq!(
        images.lines().count(),
        tool("pdfimages", &["-list"], &out).await?.lines().count()
    );
    let fonts = tool("pdffonts", &[], &out).await?;
    assert!(
        fonts
            .lines()
            .any(|l| l.contains("CID TrueType") && l.contains(" yes ")),
        "an embedded font of the translation: {fonts}"
    );

    // Each translated word lies within a block of the original page (3
    // points across, 4.5 up and down, where fonts' ascents differ), and no
    // two words overlap.
    let blocks = boxes(
        &tool("pdftotext", &["-bbox-layout", "-l", "1"], &source).await?,
        "block",
    )?;
    let words = boxes(
        &tool("pdftotext", &["-bbox", "-l", "1"], &out).await?,
        "word",
    )?;
    assert!(words.len() > 40, "{words:?}");
    for w in &words {
        assert!(
            blocks.iter().any(|b| w[0] >= b[0] - 3.0
                && w[2] <= b[2] + 3.0
                && w[1] >= b[1] - 4.5
                && w[3] <= b[3] + 4.5),
            "word {w:?} outside the original blocks {blocks:?}"
        );
    }
    for (i, a) in words.iter().enumerate() {
        for b in &words[i + 1..] {
            let across = a[2].min(b[2]) - a[0].max(b[0]);
            let down = a[3].min(b[3]) - a[1].max(b[1]);
            assert!(
                across <= 0.5 || down <= 2.0,
                "words {a:?} and {b:?} overlap"
            );
        }
    }
    Ok(())
}

/// A PDF of more pages than a document may have is refused at upload (413,
/// its page count read from its page tree); a damaged one ends in state
/// error with the reason, and the worker goes on.
#[tokio::test]
async fn too_many_pages_are_refused_at_upload_and_a_damaged_pdf_ends_in_error() -> Result<()> {
    let (world, api, key) = platform("pdf_limits").await?;
    let big = world.path("big.pdf");
    python(
        r#"
import sys
from reportlab.pdfgen import canvas
c = canvas.Canvas(sys.argv[1])
for i in range(2001):
    c.drawString(72, 720, 'Page %d' % i)
    c.showPage()
c.save()
"#,
        &[&big],
    )
    .await?;
    let fields = [("target_lang", "ES"), ("source_lang", "EN")];
    let (code, body) = api
        .upload(&key, "big.pdf", std::fs::read(&big)?, &fields)
        .await?;
    assert_eq!(code, 413, "{body}");
    assert_eq!(
        body["message"],
        "The PDF has 2001 pages; at most 2000 are translated in one document."
    );

    let (id, dk) = api
        .upload_ok(
            &key,
            "broken.pdf",
            b"%PDF-1.7\n1 0 obj <<".to_vec(),
            &fields,
        )
        .await?;
    let st = api.wait(&key, &id, &dk, Duration::from_secs(60)).await?;
    assert_eq!(st.status, "error", "{}", st.body);
    let message = st.body["error_message"].as_str().unwrap_or_default();
    assert!(message.contains("not a readable PDF"), "{message}");
    let (_, after) = translated(
        &api,
        &key,
        "after.txt",
        b"The house is big.\n".to_vec(),
        &fields,
    )
    .await?;
    assert_eq!(after, b"La casa es grande.\n");
    Ok(())
}

const MAKE_REPORT_DOCX: &str = r#"
import sys, docx
from docx.shared import Inches
from PIL import Image
Image.new("RGB", (120, 80), (40, 40, 200)).save(sys.argv[2])
d = docx.Document()
d.add_heading("The annual report", level=1)
d.add_paragraph("The house is big and the garden is green. The dog runs in the park.")
d.add_picture(sys.argv[2], width=Inches(1.5))
d.add_paragraph("The city has many people.", style="List Bullet")
d.add_paragraph("The tree is green.", style="List Bullet")
d.save(sys.argv[1])
"#;

/// `output_format=docx` of a PDF (LibreOffice's, from a Word file with a
/// heading, an image and a bulleted list) through Apertium EN→ES: an
/// editable Word document in reading order — the heading a Heading, the
/// list items list paragraphs, the image in place — that python-docx reads
/// and LibreOffice opens again.
#[tokio::test]
async fn a_pdf_is_delivered_as_an_editable_word_document() -> Result<()> {
    let (world, api, key) = platform("pdf_to_docx").await?;
    let docx = world.path("report.docx");
    python(MAKE_REPORT_DOCX, &[&docx, &world.path("blue.png")]).await?;
    let source = libreoffice(&world, &docx, "pdf").await?;
    let (content_type, bytes) = translated(
        &api,
        &key,
        "report.pdf",
        std::fs::read(&source)?,
        &[
            ("target_lang", "ES"),
            ("source_lang", "EN"),
            ("output_format", "docx"),
        ],
    )
    .await?;
    assert_eq!(
        content_type,
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    );
    let out = world.path("reflowed.docx");
    std::fs::write(&out, &bytes)?;
    let read = python(
        r#"
import sys, docx
from docx.oxml.ns import qn
d = docx.Document(sys.argv[1])
for p in d.paragraphs:
    listed = p._p.find(qn("w:pPr") + "/" + qn("w:numPr")) is not None
    image = p._p.find(".//" + qn("w:drawing")) is not None
    kind = "image" if image else "item" if listed else p.style.name
    print(kind + ": " + p.text)
"#,
        &[&out],
    )
    .await?;
    let lines: Vec<&str> = read.lines().collect();
    assert_eq!(lines.len(), 5, "{read}");
    assert!(
        lines[0].starts_with("Heading 1: ") && lines[0].contains("informe anual"),
        "{read}"
    );
    assert!(lines[1].starts_with("Normal: La casa es grande"), "{read}");
    assert_eq!(lines[2], "image: ", "{read}");
    assert!(lines[3].starts_with("item: La ciudad tiene"), "{read}");
    assert!(lines[4].starts_with("item: El árbol"), "{read}");
    assert!(!read.contains("The "), "no English left: {read}");

    // LibreOffice opens it: its PDF of the document reads in Spanish.
    let again = libreoffice(&world, &out, "pdf").await?;
    let text = tool("pdftotext", &[], &again).await?;
    assert!(text.contains("La casa es grande"), "{text}");
    Ok(())
}

/// A page of English (reportlab) rasterised by pdftoppm at 150 dpi and
/// made a scanned PDF by Pillow (one JPEG a page, no text).
const MAKE_SCAN: &str = r#"
import sys, subprocess
from reportlab.pdfgen import canvas
from PIL import Image
c = canvas.Canvas(sys.argv[2], pagesize=(612, 792))
c.setFont("Helvetica", 22)
c.drawString(72, 700, "The house is big.")
c.drawString(72, 560, "The dog runs in the park.")
c.save()
subprocess.run(["pdftoppm", "-r", "150", "-png", "-singlefile", sys.argv[2], sys.argv[3]], check=True)
Image.open(sys.argv[3] + ".png").convert("RGB").save(sys.argv[1], resolution=150)
"#;

#[tokio::test]
async fn a_scanned_pdf_comes_back_painted_in_spanish_with_a_text_layer() -> Result<()> {
    let (world, api, key) = platform("pdf_scan").await?;
    let source = world.path("scan.pdf");
    python(
        MAKE_SCAN,
        &[&source, &world.path("text.pdf"), &world.path("page")],
    )
    .await?;
    // Without source_lang: the language is detected from a first reading.
    let (content_type, bytes) = translated(
        &api,
        &key,
        "scan.pdf",
        std::fs::read(&source)?,
        &[("target_lang", "ES")],
    )
    .await?;
    assert_eq!(content_type, "application/pdf");
    let out = world.path("translated.pdf");
    std::fs::write(&out, &bytes)?;
    tool("qpdf", &["--check"], &out).await?;
    let info = |text: String| {
        text.lines()
            .filter(|l| l.starts_with("Pages:") || l.starts_with("Page size:"))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        info(tool("pdfinfo", &[], &out).await?),
        info(tool("pdfinfo", &[], &source).await?)
    );
    let images = |text: String| {
        text.lines()
            .skip(2)
            .map(|row| row.split_whitespace().take(9).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        images(tool("pdfimages", &["-list"], &out).await?),
        images(tool("pdfimages", &["-list"], &source).await?)
    );

    // Its text layer and its picture both read in Spanish.
    let layer = tool("pdftotext", &[], &out).await?;
    let layer = layer.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(layer.contains("La casa es grande"), "{layer}");
    assert!(layer.contains("parque"), "{layer}");
    assert!(!layer.contains("house"), "{layer}");
    let page = world.path("translated-page");
    let status = tokio::process::Command::new("pdftoppm")
        .args(["-r", "150", "-png", "-singlefile"])
        .arg(&out)
        .arg(&page)
        .status()
        .await?;
    anyhow::ensure!(status.success(), "pdftoppm");
    let seen = super::images::read_spanish(&page.with_extension("png")).await?;
    assert!(seen.contains("La casa es grande"), "{seen}");
    assert!(seen.contains("parque"), "{seen}");
    assert!(!seen.contains("house") && !seen.contains("The"), "{seen}");
    Ok(())
}

#[tokio::test]
async fn what_a_pdf_leaves_untranslated_is_named_in_its_status() -> Result<()> {
    let (world, api, key) = platform("pdf_notes").await?;
    let source = world.path("left.pdf");
    python(
        r#"
import sys
from reportlab.pdfgen import canvas
c = canvas.Canvas(sys.argv[1], pagesize=(612, 792))
c.setFont("Helvetica", 14)
c.drawString(72, 700, "The house is big.")
c.showPage()
c.translate(300, 300)
c.rotate(90)
c.setFont("Helvetica", 14)
c.drawString(0, 0, "The dog runs in the park.")
c.showPage()
c.save()
"#,
        &[&source],
    )
    .await?;
    let fields = [("target_lang", "ES"), ("source_lang", "EN")];
    let (id, dk) = api
        .upload_ok(&key, "left.pdf", std::fs::read(&source)?, &fields)
        .await?;
    let st = api.wait(&key, &id, &dk, Duration::from_secs(120)).await?;
    assert_eq!(st.status, "done", "{}", st.body);
    assert_eq!(
        st.body["notes"],
        serde_json::json!(["Rotated or skewed text was left untranslated on page 2."]),
        "{}",
        st.body
    );
    let (code, _, bytes) = api.download(&key, &id, &dk).await?;
    assert_eq!(code, 200);
    let out = world.path("translated.pdf");
    std::fs::write(&out, &bytes)?;
    let text = tool("pdftotext", &[], &out).await?;
    assert!(text.contains("La casa es grande"), "{text}");
    assert!(text.contains("The dog runs in the park."), "{text}");
    Ok(())
}
