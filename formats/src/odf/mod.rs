//! OpenDocument files (`.odt`, `.odp`, `.ods`): a ZIP package read and
//! written by [`crate::package`] with the OpenDocument dialect. The
//! translatable parts are `content.xml` (the text, slides or sheets; notes,
//! frames and table cells included), `styles.xml` (headers, footers and
//! master pages) and `meta.xml` (title, subject, description, keywords). Paragraphs (`text:p`, `text:h`) hold character data:
//! `text:span`, `text:a` and `text:meta` become spans, `text:s` spaces,
//! `text:tab` and `text:line-break` placeholders, notes and frames
//! placeholders whose own paragraphs are segments. Every other entry is
//! copied raw, so `mimetype` stays the first, stored entry.

#[cfg(test)]
mod tests;

use crate::package::{Dialect, OPEN_DOCUMENT, PLAIN, Package};

/// OpenDocument text (`.odt`).
pub(crate) static ODT: Package = open_document("ODT");
/// OpenDocument presentation (`.odp`).
pub(crate) static ODP: Package = open_document("ODP");
/// OpenDocument spreadsheet (`.ods`).
pub(crate) static ODS: Package = open_document("ODS");

const fn open_document(kind: &'static str) -> Package {
    Package {
        kind,
        legacy: "legacy StarOffice",
        main: "content.xml",
        is_part: |name| name == "styles.xml" || name == "meta.xml",
        dialect,
        embedded: crate::package::no_embedded,
    }
}

/// The plain elements of `meta.xml`, OpenDocument text elsewhere.
fn dialect(name: &str) -> &'static Dialect {
    if name == "meta.xml" {
        &PLAIN
    } else {
        &OPEN_DOCUMENT
    }
}
