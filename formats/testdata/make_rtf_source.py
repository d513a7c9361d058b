"""Writes the Word file the RTF filter's tests convert to RTF with
LibreOffice: text in three scripts (Latin with accents, Cyrillic, Greek),
bold and italic runs, a hyperlink, a table and a page header; the body
COPIES times over (once by default) for a large file.

    python3 make_rtf_source.py FILE.docx [COPIES]
"""

import sys

import docx
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml.shared import OxmlElement, qn


def main(path, copies=1):
    d = docx.Document()
    d.sections[0].header.paragraphs[0].text = "The quarterly report"
    for _ in range(copies):
        body(d)
    d.save(path)


def body(d):
    p = d.add_paragraph("The café serves ")
    p.add_run("crème brûlée").bold = True
    p.add_run(" and ")
    p.add_run("naïve").italic = True
    p.add_run(" desserts.")
    d.add_paragraph("Привет, мир: the Russian greeting.")
    d.add_paragraph("Καλημέρα is Greek for good morning.")
    q = d.add_paragraph("Read more on ")
    r_id = q.part.relate_to("https://example.com/", RT.HYPERLINK, is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), r_id)
    run = OxmlElement("w:r")
    text = OxmlElement("w:t")
    text.text = "the website"
    run.append(text)
    link.append(run)
    q._p.append(link)
    q.add_run(" today.")
    t = d.add_table(rows=1, cols=2)
    t.cell(0, 0).text = "The house is big."
    t.cell(0, 1).text = "The water is cold."


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1)
