"""Writes the Word files the docx filter's tests read, with python-docx.

    python3 make_docx.py OUTPUT_DIR
    python3 make_docx.py --read FILE

Each file exercises one feature of real documents: hyperlinks, run
formatting, headers and footers per section, odd and even headers, tables,
numbered and bulleted lists, an inline picture, line breaks, positional tabs
and tracked changes inside words, and a text box (written by LibreOffice from
an odfpy document: Word's modern shape with its VML fallback copy).

--read prints, as JSON, what python-docx and lxml see in FILE: the text of
each body and header paragraph, each hyperlink's target and text (and how
deeply hyperlinks nest), and the languages marked on runs with text.
"""

import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

from docx import Document
from docx.enum.section import WD_SECTION
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Pt, RGBColor


def hyperlink(paragraph, url, text):
    """Appends a w:hyperlink with one underlined, coloured run."""
    r_id = paragraph.part.relate_to(url, RT.HYPERLINK, is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), r_id)
    link.set(qn("w:history"), "1")
    run = OxmlElement("w:r")
    rpr = OxmlElement("w:rPr")
    color = OxmlElement("w:color")
    color.set(qn("w:val"), "0563C1")
    underline = OxmlElement("w:u")
    underline.set(qn("w:val"), "single")
    rpr.append(color)
    rpr.append(underline)
    run.append(rpr)
    t = OxmlElement("w:t")
    t.text = text
    t.set(qn("xml:space"), "preserve")
    run.append(t)
    link.append(run)
    paragraph._p.append(link)


def hyperlinks(out):
    doc = Document()
    doc.add_paragraph("No hyperlinks")
    p = doc.add_paragraph("One ")
    hyperlink(p, "https://example.com/one", "awesome hyperlink")
    p.add_run(".")
    p = doc.add_paragraph("Three hyperlinks: ")
    hyperlink(p, "https://example.com/1", "the first one")
    p.add_run(" here, the ")
    hyperlink(p, "https://example.com/2", "second one")
    p.add_run(", and the ")
    hyperlink(p, "https://example.com/3", "third")
    p.add_run(".")
    doc.save(out / "hyperlinks.docx")


def tracked(tag, run_text, ident):
    """A w:ins or w:del holding one run of `run_text`."""
    change = OxmlElement(tag)
    change.set(qn("w:id"), str(ident))
    change.set(qn("w:author"), "Reviewer")
    change.set(qn("w:date"), "2026-01-01T00:00:00Z")
    run = OxmlElement("w:r")
    text = OxmlElement("w:delText" if tag == "w:del" else "w:t")
    text.text = run_text
    text.set(qn("xml:space"), "preserve")
    run.append(text)
    change.append(run)
    return change


def breaks(out):
    """Hyperlinks between line breaks, a header with positional tabs, tracked
    changes inside words."""
    doc = Document()
    p = doc.add_paragraph()
    hyperlink(p, "https://example.com/a", "The first link")
    p.add_run().add_break()
    hyperlink(p, "https://example.com/b", "The second link")
    p.add_run().add_break()
    hyperlink(p, "https://example.com/c", "The third link")
    header = doc.sections[0].header.paragraphs[0]
    for i, word in enumerate(["Left", "Centre", "Right"]):
        run = header.add_run()
        if i:
            ptab = OxmlElement("w:ptab")
            ptab.set(qn("w:relativeTo"), "margin")
            ptab.set(qn("w:alignment"), "center" if i == 1 else "right")
            ptab.set(qn("w:leader"), "none")
            run._r.append(ptab)
        header.add_run(word)
    p = doc.add_paragraph("The house is her")
    p._p.append(tracked("w:ins", "e", 1))
    p.add_run(" now and the dog is th")
    p._p.append(tracked("w:del", "x", 2))
    p.add_run("ere too.")
    doc.save(out / "breaks.docx")


def languages(out):
    """Runs marked with another language than the text around them (w:lang):
    a French phrase in an English sentence, a whole German paragraph, and a
    run marked British English."""
    doc = Document()

    def marked(run, lang):
        rpr = run._r.get_or_add_rPr()
        el = OxmlElement("w:lang")
        el.set(qn("w:val"), lang)
        rpr.append(el)
        return run

    p = doc.add_paragraph("The house has a certain ")
    marked(p.add_run("joie de vivre"), "fr-FR")
    p.add_run(" and a garden.")
    marked(doc.add_paragraph().add_run("Das Haus ist groß."), "de-DE")
    p = doc.add_paragraph("The ")
    marked(p.add_run("colour"), "en-GB")
    p.add_run(" is red.")
    doc.save(out / "languages.docx")


def textbox(out):
    """A paragraph anchoring a text frame, converted to Word by LibreOffice."""
    from odf.draw import Frame, TextBox
    from odf.opendocument import OpenDocumentText
    from odf.style import GraphicProperties, Style
    from odf.text import P

    doc = OpenDocumentText()
    style = Style(name="Box", family="graphic")
    style.addElement(GraphicProperties())
    doc.automaticstyles.addElement(style)
    p = P(text="The paragraph before the box. ")
    frame = Frame(stylename=style, width="8cm", height="2cm", anchortype="paragraph")
    box = TextBox()
    box.addElement(P(text="The text inside the box."))
    frame.addElement(box)
    p.addElement(frame)
    doc.text.addElement(p)
    source = out / "textbox.odt"
    doc.save(str(source))
    subprocess.run(
        ["soffice", f"-env:UserInstallation=file://{out.resolve()}/lo-profile", "--headless",
         "--convert-to", "docx", "--outdir", str(out), str(source)],
        check=True, capture_output=True,
    )
    source.unlink()


def read(path):
    doc = Document(path)
    w = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
    r_id = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
    parts = [(doc.part, doc.element)]
    for section in doc.sections:
        parts.append((section.header.part, section.header._element))
    paragraphs, links, langs, nested = [], [], set(), 0
    for part, root in parts:
        for p in root.iter(w + "p"):
            paragraphs.append("".join(t.text or "" for t in p.iter(w + "t")))
        for link in root.iter(w + "hyperlink"):
            nested = max(nested, len(list(link.iter(w + "hyperlink"))) - 1)
            target = part.rels[link.get(r_id)].target_ref
            links.append([target, "".join(t.text or "" for t in link.iter(w + "t"))])
        for run in root.iter(w + "r"):
            if run.find(w + "t") is not None:
                lang = run.find(w + "rPr/" + w + "lang")
                langs.add(None if lang is None else lang.get(w + "val"))
    print(json.dumps({
        "paragraphs": paragraphs,
        "links": links,
        "nested_links": nested,
        "languages": sorted(langs, key=str),
    }))


def font_props(out):
    doc = Document()
    doc.add_heading("Font properties", 1)
    p = doc.add_paragraph("Plain, ")
    p.add_run("bold").bold = True
    p.add_run(", ")
    p.add_run("italic").italic = True
    p.add_run(" and ")
    p.add_run("underlined").underline = True
    p.add_run(" words.")
    p = doc.add_paragraph("Text having some ")
    p.add_run("superscript").font.superscript = True
    p.add_run(" and some ")
    p.add_run("subscript").font.subscript = True
    p.add_run(".")
    p = doc.add_paragraph()
    r = p.add_run("Red twelve-point Courier.")
    r.font.color.rgb = RGBColor(0xC0, 0x00, 0x00)
    r.font.size = Pt(12)
    r.font.name = "Courier New"
    doc.save(out / "font-props.docx")


def header_footer(out):
    doc = Document()
    first = doc.sections[0]
    first.header.paragraphs[0].text = "Header for section-1"
    first.footer.paragraphs[0].text = "Footer for section 1"
    doc.add_paragraph("section with header")
    doc.add_section(WD_SECTION.NEW_PAGE)
    doc.add_paragraph("section without header of its own.")
    doc.save(out / "header-footer.docx")


def odd_even_headers(out):
    doc = Document()
    doc.settings.odd_and_even_pages_header_footer = True
    section = doc.sections[0]
    section.header.paragraphs[0].text = "Odd page header"
    section.even_page_header.paragraphs[0].text = "Even page header"
    for i in range(3):
        doc.add_paragraph(f"Page text number {i}.")
        doc.add_page_break()
    doc.save(out / "odd-even-headers.docx")


def tables(out):
    doc = Document()
    doc.add_paragraph("A table follows.")
    table = doc.add_table(rows=3, cols=3)
    table.style = "Table Grid"
    for r, row in enumerate(table.rows):
        for c, cell in enumerate(row.cells):
            cell.text = f"Cell {r} {c}"
    merged = table.cell(2, 0).merge(table.cell(2, 1))
    merged.text = "A merged cell"
    cell = table.cell(0, 2)
    cell.paragraphs[0].text = ""
    cell.paragraphs[0].add_run("Bold").bold = True
    cell.paragraphs[0].add_run(" inside a cell")
    doc.add_paragraph("After the table.")
    doc.save(out / "tables.docx")


def numbering(out):
    doc = Document()
    doc.add_paragraph("Steps:")
    for step in ["Open the box.", "Take the cable.", "Plug it in."]:
        doc.add_paragraph(step, style="List Number")
    for item in ["Red", "Green and blue"]:
        doc.add_paragraph(item, style="List Bullet")
    doc.save(out / "numbering.docx")


def png(width, height):
    """A small opaque PNG, written by hand (no imaging library needed)."""
    rows = b"".join(b"\x00" + bytes([200, 30, 30]) * width for _ in range(height))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def images(out):
    picture = out / "dot.png"
    picture.write_bytes(png(8, 8))
    doc = Document()
    doc.add_picture(str(picture))
    doc.add_paragraph("A picture of a red square.")
    doc.save(out / "images.docx")
    picture.unlink()


def main():
    if sys.argv[1] == "--read":
        read(sys.argv[2])
        return
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    makers = (hyperlinks, font_props, header_footer, odd_even_headers, tables, numbering, images,
              breaks, textbox, languages)
    for make in makers:
        make(out)


if __name__ == "__main__":
    main()
