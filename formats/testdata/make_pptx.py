"""Writes and reads the PowerPoint file of the pptx filter's tests, with
python-pptx (an independent reader of what the filter writes).

    python3 make_pptx.py write OUTPUT.pptx
    python3 make_pptx.py read INPUT.pptx     # prints the texts as JSON
    python3 make_pptx.py frames INPUT.pptx   # prints how text fits its boxes, chart labels and chart data

The deck has a title slide, a slide with a bold run and a line break in one
paragraph, a table, a group of two shapes, speaker notes and a chart with a
title.
"""

import json
import sys

from pptx import Presentation
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE
from pptx.util import Inches, Pt


def write(path):
    prs = Presentation()
    title = prs.slides.add_slide(prs.slide_layouts[0])
    title.shapes.title.text = "The quarterly report"
    title.placeholders[1].text = "Prepared by the sales team"

    body = prs.slides.add_slide(prs.slide_layouts[1])
    body.shapes.title.text = "What changed"
    frame = body.placeholders[1].text_frame
    p = frame.paragraphs[0]
    first = p.add_run()
    first.text = "The new office is "
    bold = p.add_run()
    bold.text = "very large"
    bold.font.bold = True
    rest = p.add_run()
    rest.text = " and bright."
    p._p.add_br()
    after = p.add_run()
    after.text = "It opened in May."
    frame.add_paragraph().text = "The house is small."
    body.notes_slide.notes_text_frame.text = "Speak slowly about the office."

    table_slide = prs.slides.add_slide(prs.slide_layouts[5])
    table_slide.shapes.title.text = "The numbers"
    table = table_slide.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(6), Inches(1.5)).table
    table.cell(0, 0).text = "The city"
    table.cell(0, 1).text = "The country"
    table.cell(1, 0).text = "The street"
    table.cell(1, 1).text = "The garden"
    group = table_slide.shapes.add_group_shape()
    one = group.shapes.add_textbox(Inches(1), Inches(4), Inches(3), Inches(1))
    one.text_frame.text = "The first box"
    two = group.shapes.add_textbox(Inches(5), Inches(4), Inches(3), Inches(1))
    two.text_frame.text = "The second box"

    chart_slide = prs.slides.add_slide(prs.slide_layouts[5])
    chart_slide.shapes.title.text = "The sales"
    data = CategoryChartData()
    data.categories = ["North", "South"]
    data.add_series("Sales", (10.5, 20.25))
    chart = chart_slide.shapes.add_chart(
        XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(2), Inches(6), Inches(4), data
    ).chart
    chart.has_title = True
    chart.chart_title.text_frame.text = "The sales of the year"
    chart.chart_title.text_frame.paragraphs[0].runs[0].font.size = Pt(18)
    prs.save(path)


def languages(path):
    """Every run marked with an editing language, as PowerPoint writes it:
    English throughout, one French phrase."""
    from pptx.enum.lang import MSO_LANGUAGE_ID

    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[1])
    slide.shapes.title.text = "The quarterly report"
    p = slide.placeholders[1].text_frame.paragraphs[0]
    for text, lang in [
        ("The office has a certain ", MSO_LANGUAGE_ID.ENGLISH_US),
        ("joie de vivre", MSO_LANGUAGE_ID.FRENCH),
        (" and a garden.", MSO_LANGUAGE_ID.ENGLISH_US),
    ]:
        run = p.add_run()
        run.text = text
        run.font.language_id = lang
    for run in slide.shapes.title.text_frame.paragraphs[0].runs:
        run.font.language_id = MSO_LANGUAGE_ID.ENGLISH_US
    prs.save(path)


def shape_texts(shapes, out):
    for shape in shapes:
        if shape.shape_type == 6:  # group
            shape_texts(shape.shapes, out)
            continue
        if shape.has_text_frame:
            for p in shape.text_frame.paragraphs:
                runs = [{"text": r.text, "bold": bool(r.font.bold)} for r in p.runs]
                out.append({"text": p.text, "runs": runs})
        if getattr(shape, "has_table", False) and shape.has_table:
            for row in shape.table.rows:
                for cell in row.cells:
                    out.append({"text": cell.text, "runs": []})
        if getattr(shape, "has_chart", False) and shape.has_chart:
            chart = shape.chart
            if chart.has_title:
                out.append({"text": chart.chart_title.text_frame.text, "runs": []})


def read(path):
    prs = Presentation(path)
    slides = []
    for slide in prs.slides:
        texts = []
        shape_texts(slide.shapes, texts)
        notes = slide.notes_slide.notes_text_frame.text if slide.has_notes_slide else None
        slides.append({"texts": texts, "notes": notes})
    print(json.dumps({"slides": slides, "layouts": len(prs.slide_layouts)}))


def workbook_texts(blob):
    """The text cells of every sheet of an embedded workbook, read with
    openpyxl; None when openpyxl cannot read it."""
    import io
    import zipfile

    from openpyxl import load_workbook

    try:
        book = load_workbook(io.BytesIO(blob))
    except (zipfile.BadZipFile, KeyError, OSError):
        return None
    return [
        cell.value
        for sheet in book.worksheets
        for row in sheet.iter_rows()
        for cell in row
        if isinstance(cell.value, str)
    ]


def frames(path):
    """Each text frame's text, auto-size setting and font scale (as
    PowerPoint's shrink on overflow stores it), each chart's category
    labels and series names (read from the chart's caches), and the text
    cells of the workbook holding each chart's data."""
    prs = Presentation(path)
    fits, charts, data = [], [], []
    for slide in prs.slides:
        for shape in slide.shapes:
            if shape.has_text_frame:
                frame = shape.text_frame
                fit = frame._bodyPr.find("{http://schemas.openxmlformats.org/drawingml/2006/main}normAutofit")
                scale = fit.get("fontScale") if fit is not None else None
                fits.append([frame.text, str(frame.auto_size), scale])
            if getattr(shape, "has_chart", False) and shape.has_chart:
                plot = shape.chart.plots[0]
                charts.append([list(plot.categories), [s.name for s in plot.series]])
                data.append(workbook_texts(shape.chart.part.chart_workbook.xlsx_part.blob))
    print(json.dumps({"fits": fits, "charts": charts, "data": data}))


if __name__ == "__main__":
    {"write": write, "read": read, "languages": languages, "frames": frames}[sys.argv[1]](sys.argv[2])
