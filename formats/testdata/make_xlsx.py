"""Writes the Excel workbook of the xlsx filter's tests, with openpyxl.

    python3 make_xlsx.py OUTPUT.xlsx

Two sheets: text cells (shared strings, one with leading spaces and a line
break), numbers, a date, a formula and a comment; a defined name; a bar
chart with a title and an axis title; a second sheet named in English.
"""

import datetime
import sys

from openpyxl import Workbook
from openpyxl.chart import BarChart, Reference
from openpyxl.comments import Comment
from openpyxl.workbook.defined_name import DefinedName


def write(path):
    wb = Workbook()
    ws = wb.active
    ws.title = "Sales"
    ws["A1"] = "The house is small."
    ws["A2"] = "The city"
    ws["A3"] = "  The garden\nThe street"
    ws["B1"] = 10.5
    ws["B2"] = 20
    ws["B3"] = "=SUM(B1:B2)"
    ws["C1"] = datetime.date(2026, 5, 1)
    ws["A1"].comment = Comment("The number is wrong.", "Ana")
    chart = BarChart()
    chart.title = "The sales of the year"
    chart.y_axis.title = "The money"
    chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=2))
    ws.add_chart(chart, "E2")
    other = wb.create_sheet("Summary")
    other["A1"] = "The country"
    other["A2"] = "The city"
    wb.defined_names.append(DefinedName("Total", attr_text="Sales!$B$3"))
    wb.save(path)


if __name__ == "__main__":
    write(sys.argv[1])
