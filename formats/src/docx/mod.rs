//! Word documents (`.docx`): an Office Open XML package ([`crate::ooxml`])
//! whose translatable parts are `word/document.xml`, then
//! `word/header*.xml`, `word/footer*.xml`, `word/footnotes.xml` and
//! `word/endnotes.xml` in archive order, all WordprocessingML.

#[cfg(test)]
mod tests;

use crate::ooxml::{Dialect, Package, WORD};

/// The Word package.
pub(crate) static PACKAGE: Package = Package {
    kind: "DOCX",
    legacy: "legacy Word (.doc)",
    main: "word/document.xml",
    is_part: is_translatable_part,
    dialect: word,
};

fn word(_: &str) -> &'static Dialect {
    &WORD
}

/// Headers, footers, footnotes and endnotes of the main document.
fn is_translatable_part(name: &str) -> bool {
    let Some(file) = name.strip_prefix("word/") else {
        return false;
    };
    !file.contains('/')
        && file.ends_with(".xml")
        && (file.starts_with("header")
            || file.starts_with("footer")
            || file == "footnotes.xml"
            || file == "endnotes.xml")
}
