"""Writes and reads the OpenDocument files of the odf filter's tests, with
odfpy (an independent reader of what the filter writes).

    python3 make_odf.py write DIR        # DIR/doc.odt, DIR/slides.odp, DIR/book.ods
    python3 make_odf.py read FILE        # the text of every paragraph, as JSON

The text document has a heading, a paragraph with a bold span, a link, a
line break and a run of spaces, a footnote, a table and a page header; the
presentation a slide with a text frame; the spreadsheet text, a number and a
formula.
"""

import json
import sys
from pathlib import Path

from odf import teletype
from odf.draw import Frame, Page, TextBox
from odf.opendocument import (
    OpenDocumentPresentation,
    OpenDocumentSpreadsheet,
    OpenDocumentText,
    load,
)
from odf.style import (
    GraphicProperties,
    MasterPage,
    PageLayout,
    Header,
    Style,
    TextProperties,
)
from odf.table import Table, TableCell, TableColumn, TableRow
from odf.text import A, H, LineBreak, Note, NoteBody, NoteCitation, P, S, Span


def write_odt(path):
    doc = OpenDocumentText()
    bold = Style(name="Bold", family="text")
    bold.addElement(TextProperties(fontweight="bold"))
    doc.automaticstyles.addElement(bold)
    layout = PageLayout(name="Layout")
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="Standard", pagelayoutname=layout)
    header = Header()
    header.addElement(P(text="The annual report"))
    master.addElement(header)
    doc.masterstyles.addElement(master)

    doc.text.addElement(H(outlinelevel=1, text="The house"))
    p = P(text="The house is ")
    p.addElement(Span(stylename=bold, text="very big"))
    p.addText(" and the garden is small.")
    doc.text.addElement(p)
    q = P(text="Read the book on ")
    q.addElement(A(href="https://example.com/", text="the website"))
    q.addText(".")
    q.addElement(LineBreak())
    q.addText("The city")
    q.addElement(S(c=3))
    q.addText("is old.")
    doc.text.addElement(q)
    r = P(text="The street is long.")
    note = Note(id="n1", noteclass="footnote")
    note.addElement(NoteCitation(text="1"))
    body = NoteBody()
    body.addElement(P(text="The note is short."))
    note.addElement(body)
    r.addElement(note)
    doc.text.addElement(r)
    table = Table(name="Table1")
    table.addElement(TableColumn())
    row = TableRow()
    cell = TableCell()
    cell.addElement(P(text="The country"))
    row.addElement(cell)
    table.addElement(row)
    doc.text.addElement(table)
    doc.save(path)


def write_odp(path):
    doc = OpenDocumentPresentation()
    layout = PageLayout(name="Layout")
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="Master", pagelayoutname=layout)
    doc.masterstyles.addElement(master)
    frame_style = Style(name="Frame", family="graphic")
    frame_style.addElement(GraphicProperties())
    doc.automaticstyles.addElement(frame_style)
    page = Page(masterpagename=master)
    frame = Frame(stylename=frame_style, width="20cm", height="3cm", x="1cm", y="1cm")
    box = TextBox()
    box.addElement(P(text="The quarterly report"))
    box.addElement(P(text="The sales are good."))
    frame.addElement(box)
    page.addElement(frame)
    doc.presentation.addElement(page)
    doc.save(path)


def write_ods(path):
    doc = OpenDocumentSpreadsheet()
    table = Table(name="Sales")
    row = TableRow()
    text = TableCell(valuetype="string")
    text.addElement(P(text="The house is small."))
    row.addElement(text)
    row.addElement(TableCell(valuetype="float", value="10.5"))
    formula = TableCell(formula="of:=[.B1]*2", valuetype="float", value="21")
    row.addElement(formula)
    table.addElement(row)
    doc.spreadsheet.addElement(table)
    doc.save(path)


def write(folder):
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_odt(str(folder / "doc.odt"))
    write_odp(str(folder / "slides.odp"))
    write_ods(str(folder / "book.ods"))


def read(path):
    doc = load(path)
    texts = [teletype.extractText(p) for p in doc.getElementsByType(P)]
    texts += [teletype.extractText(h) for h in doc.getElementsByType(H)]
    cells = [
        {"value": c.getAttribute("value"), "formula": c.getAttribute("formula")}
        for c in doc.getElementsByType(TableCell)
    ]
    bold = [teletype.extractText(s) for s in doc.getElementsByType(Span)]
    links = [a.getAttribute("href") for a in doc.getElementsByType(A)]
    print(json.dumps({"texts": texts, "cells": cells, "spans": bold, "links": links}))


if __name__ == "__main__":
    {"write": write, "read": read}[sys.argv[1]](sys.argv[2])
