"""Writes a spreadsheet with a pivot table (a LibreOffice DataPilot) as an
OpenDocument file, for LibreOffice to save as .xlsx with its pivot cache.

    python3 make_xlsx_pivot.py BOOK.ods
"""

import sys

from odf.opendocument import OpenDocumentSpreadsheet
from odf.table import (
    DataPilotField,
    DataPilotLevel,
    DataPilotTable,
    DataPilotTables,
    SourceCellRange,
    Table,
    TableCell,
    TableRow,
)
from odf.text import P

ROWS = [
    ("Region", "Product", "Amount"),
    ("North", "Apples", 10),
    ("South", "Pears", 20),
    ("North", "Pears", 30),
]

doc = OpenDocumentSpreadsheet()
sales = Table(name="Sales")
for values in ROWS:
    row = TableRow()
    for value in values:
        if isinstance(value, str):
            cell = TableCell(valuetype="string")
        else:
            cell = TableCell(valuetype="float", value=value)
        cell.addElement(P(text=str(value)))
        row.addElement(cell)
    sales.addElement(row)
doc.spreadsheet.addElement(sales)
doc.spreadsheet.addElement(Table(name="Pivot"))
pilot = DataPilotTable(name="Summary", targetrangeaddress="Pivot.A1:Pivot.C5")
pilot.addElement(SourceCellRange(cellrangeaddress="Sales.A1:Sales.C4"))
for name, orientation in (("Region", "row"), ("Product", "column"), ("Amount", "data")):
    field = DataPilotField(sourcefieldname=name, orientation=orientation)
    if orientation == "data":
        field.setAttribute("function", "sum")
    field.addElement(DataPilotLevel(showempty="false"))
    pilot.addElement(field)
pilots = DataPilotTables()
pilots.addElement(pilot)
doc.spreadsheet.addElement(pilots)
doc.save(sys.argv[1])
