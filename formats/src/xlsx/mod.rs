//! Excel workbooks (`.xlsx`, and `.xlsm` with macros): an Office Open XML
//! package ([`crate::package`]) whose translatable parts are the shared strings
//! (`xl/sharedStrings.xml`, plain and rich), the inline strings of the
//! worksheets, cell comments (SpreadsheetML) and threaded comments, the
//! document properties, and the DrawingML text of
//! drawings (text boxes, shapes) and charts.
//!
//! Names that repeat a cell's text are translated as the cell is, so the
//! workbook stays consistent (Excel repairs a table whose column names differ
//! from its header cells, and a pivot table drops fields its cache no longer
//! finds): tables' column names and totals labels, the column names of
//! structured references in formulas (`Orders[Amount]`), pivot caches' field
//! names and text items, pivot tables' data field captions, and the text
//! values of chart caches. Formulas otherwise, numbers, dates, sheet names and
//! defined names stay as they are; so does every other entry, the VBA project
//! of an `.xlsm` included (byte-identical).

#[cfg(test)]
mod tests;

use crate::package::{CORE_PROPERTIES, DRAWING, Dialect, PLAIN, Package, SPREADSHEET, no_embedded};

/// The Excel package (`.xlsx`).
pub(crate) static XLSX: Package = excel("XLSX");

/// The macro-enabled Excel package (`.xlsm`).
pub(crate) static XLSM: Package = excel("XLSM");

const fn excel(kind: &'static str) -> Package {
    Package {
        kind,
        legacy: "legacy Excel (.xls)",
        main: "xl/workbook.xml",
        is_part: is_translatable_part,
        dialect,
        embedded: no_embedded,
    }
}

/// The workbook of an Office package's `embeddings/` folder (a chart's data,
/// or an embedded sheet): translated as an Excel package of its own.
pub(crate) fn embedded_workbook(name: &str) -> Option<&'static Package> {
    let (folder, file) = name.rsplit_once('/')?;
    let workbook = folder.ends_with("/embeddings")
        && file.len() > 5
        && file.get(file.len() - 5..)?.eq_ignore_ascii_case(".xlsx");
    workbook.then_some(&XLSX)
}

/// DrawingML in drawings and charts, plain elements in the properties,
/// SpreadsheetML elsewhere.
fn dialect(name: &str) -> &'static Dialect {
    if name.starts_with("xl/drawings/") || name.starts_with("xl/charts/") {
        &DRAWING
    } else if name == CORE_PROPERTIES || name.starts_with("xl/threadedComments/") {
        &PLAIN
    } else {
        &SPREADSHEET
    }
}

/// Shared strings, worksheets, comments, drawings, charts, tables, pivot
/// caches and tables, and the properties.
fn is_translatable_part(name: &str) -> bool {
    let in_folder = |folder: &str, prefix: &str| {
        name.strip_prefix(folder)
            .is_some_and(|f| !f.contains('/') && f.starts_with(prefix) && f.ends_with(".xml"))
    };
    name == "xl/sharedStrings.xml"
        || name == CORE_PROPERTIES
        || in_folder("xl/worksheets/", "sheet")
        || in_folder("xl/", "comments")
        || in_folder("xl/comments/", "comment")
        || in_folder("xl/threadedComments/", "threadedComment")
        || in_folder("xl/drawings/", "drawing")
        || in_folder("xl/charts/", "chart")
        || in_folder("xl/tables/", "table")
        || in_folder("xl/pivotCache/", "pivotCache")
        || in_folder("xl/pivotTables/", "pivotTable")
}
