//! Word documents (`.docx`): an Office Open XML package ([`crate::package`])
//! whose translatable parts are `word/document.xml`, then
//! `word/header*.xml`, `word/footer*.xml`, `word/footnotes.xml` and
//! `word/endnotes.xml` and `word/comments.xml` in archive order
//! (WordprocessingML), the charts (`word/charts/`, DrawingML), the
//! workbooks holding the charts' data (`word/embeddings/*.xlsx`, as Excel
//! workbooks) and the document properties (title, subject, description,
//! keywords).

#[cfg(test)]
mod tests;
pub(crate) mod watermark;

use crate::package::{CORE_PROPERTIES, DRAWING, Dialect, PLAIN, Package, WORD};

/// The Word package.
pub(crate) static PACKAGE: Package = Package {
    kind: "DOCX",
    legacy: "legacy Word (.doc)",
    main: "word/document.xml",
    is_part: is_translatable_part,
    dialect: word,
    embedded: crate::xlsx::embedded_workbook,
};

/// DrawingML in charts, the properties' plain elements, WordprocessingML
/// elsewhere.
fn word(name: &str) -> &'static Dialect {
    if name.starts_with("word/charts/") {
        &DRAWING
    } else if name == CORE_PROPERTIES {
        &PLAIN
    } else {
        &WORD
    }
}

/// Headers, footers, footnotes, endnotes and comments of the main document,
/// its charts, and the document properties.
fn is_translatable_part(name: &str) -> bool {
    if name == CORE_PROPERTIES {
        return true;
    }
    if let Some(chart) = name.strip_prefix("word/charts/") {
        return !chart.contains('/') && chart.starts_with("chart") && chart.ends_with(".xml");
    }
    let Some(file) = name.strip_prefix("word/") else {
        return false;
    };
    !file.contains('/')
        && file.ends_with(".xml")
        && (file.starts_with("header")
            || file.starts_with("footer")
            || file == "footnotes.xml"
            || file == "endnotes.xml"
            || file == "comments.xml")
}
