"""Writes a workbook with an Excel table, with openpyxl.

    python3 make_xlsx_table.py OUTPUT.xlsx

Sheet "Orders": a table named Orders (Region, Product, Amount; three rows),
formulas with structured references to its columns (SUM(Orders[Amount]),
COUNTA(Orders[[#Data],[Region]])) and a bar chart of the amounts by region,
its series named by the Amount header. The page header has a bold left
section and a centred page number; the footer a date code after its text.
"""

import sys

from openpyxl import Workbook
from openpyxl.chart import BarChart, Reference
from openpyxl.worksheet.table import Table, TableStyleInfo


def write(path):
    wb = Workbook()
    ws = wb.active
    ws.title = "Orders"
    for row in [
        ("Region", "Product", "Amount"),
        ("East", "Apples", 10),
        ("West", "Pears", 20),
        ("North", "Apples", 30),
    ]:
        ws.append(row)
    table = Table(displayName="Orders", ref="A1:C4")
    table.tableStyleInfo = TableStyleInfo(name="TableStyleMedium9", showRowStripes=True)
    ws.add_table(table)
    ws["E1"] = "Total"
    ws["F1"] = "=SUM(Orders[Amount])"
    ws["E2"] = "Count"
    ws["F2"] = "=COUNTA(Orders[[#Data],[Region]])"
    chart = BarChart()
    chart.title = "The sales"
    chart.add_data(Reference(ws, min_col=3, min_row=1, max_row=4), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=2, max_row=4))
    ws.add_chart(chart, "H2")
    ws.oddHeader.left.text = "Confidential"
    ws.oddHeader.left.font = "Arial,Bold"
    ws.oddHeader.left.size = 12
    ws.oddHeader.center.text = "Page &P of &N"
    ws.oddFooter.right.text = "Printed on &D"
    wb.save(path)


if __name__ == "__main__":
    write(sys.argv[1])
