"""Checks a translated workbook as Excel would, with openpyxl and zipfile.

    python3 read_xlsx_table.py BOOK.xlsx

Prints one line per problem: a table column name that is not its header
cell's text (Excel repairs such a table), a structured reference naming a
column the table lacks, a chart cache value that is not the text of the cell
it was read from, a pivot cache field whose name is not its source column's
header cell or whose text item is in no cell of that column (Excel drops such
fields when it refreshes). Prints "ok" when there is none.

    python3 read_xlsx_table.py BOOK.xlsx headers

Prints the sections of the first sheet's page header and footer as openpyxl
reads them (text, font, size), as JSON.
"""

import json
import re
import sys
import zipfile

from openpyxl import load_workbook
from openpyxl.utils import range_boundaries


def unescape(name):
    return re.sub(r"'(.)", r"\1", name)


def check(path):
    problems = []
    wb = load_workbook(path)
    columns = {}
    for ws in wb.worksheets:
        for table in ws.tables.values():
            min_col, min_row, _, _ = range_boundaries(table.ref)
            names = [c.name for c in table.tableColumns]
            columns[table.displayName] = names
            for i, name in enumerate(names):
                cell = ws.cell(row=min_row, column=min_col + i).value
                if cell != name:
                    problems.append(f"table {table.displayName}: column {name!r}, header cell {cell!r}")
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                if isinstance(cell.value, str) and cell.value.startswith("="):
                    for table, body in re.findall(r"(\w+)\[((?:[^\[\]']|'.|\[(?:[^\[\]']|'.)*\])*)\]", cell.value):
                        inner = re.findall(r"\[((?:[^\[\]']|'.)*)\]", body) or [body]
                        for name in inner:
                            name = unescape(name.lstrip("@"))
                            if name.startswith("#"):
                                continue
                            if name not in columns.get(table, []):
                                problems.append(f"{cell.coordinate} {cell.value}: no column {name!r} in {table}")
    for ws in wb.worksheets:
        for pivot in ws._pivots:
            cache = pivot.cache
            source = cache.cacheSource.worksheetSource
            data = wb[source.sheet]
            min_col, min_row, _, max_row = range_boundaries(source.ref)
            for i, field in enumerate(cache.cacheFields):
                column = [data.cell(row=r, column=min_col + i).value for r in range(min_row, max_row + 1)]
                if field.name != column[0]:
                    problems.append(f"pivot {pivot.name}: field {field.name!r}, header cell {column[0]!r}")
                items = field.sharedItems._fields if field.sharedItems is not None else []
                for item in items:
                    if isinstance(item.v, str) and item.v not in column[1:]:
                        problems.append(f"pivot {pivot.name}: item {item.v!r} of {field.name!r} in no cell")
    with zipfile.ZipFile(path) as z:
        for entry in z.namelist():
            if not entry.startswith("xl/charts/chart"):
                continue
            xml = z.read(entry).decode()
            for ref, cache in re.findall(r"<c:strRef><c:f>([^<]*)</c:f><c:strCache>(.*?)</c:strCache>", xml):
                sheet, cells = ref.split("!")
                ws = wb[sheet.strip("'")]
                values = [v for v in re.findall(r"<c:v>([^<]*)</c:v>", cache)]
                cells = cells.replace("$", "")
                wanted = [c.value for row in ws[cells] for c in (row if isinstance(row, tuple) else (row,))] if ":" in cells else [ws[cells].value]
                wanted = [str(v) for v in wanted]
                values = [v.replace("&apos;", "'").replace("&amp;", "&") for v in values]
                if values != wanted:
                    problems.append(f"{entry} cache of {ref}: {values}, cells {wanted}")
    print("\n".join(problems) or "ok")


def headers(path):
    ws = load_workbook(path).worksheets[0]
    out = {}
    for name in ("oddHeader", "oddFooter"):
        part = getattr(ws, name)
        for side in ("left", "center", "right"):
            section = getattr(part, side)
            if section.text is not None:
                out[f"{name}.{side}"] = [section.text, section.font, section.size]
    print(json.dumps(out, ensure_ascii=False))


if __name__ == "__main__":
    if sys.argv[2:] == ["headers"]:
        headers(sys.argv[1])
    else:
        check(sys.argv[1])
