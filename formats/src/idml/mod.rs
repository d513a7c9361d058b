//! Adobe InDesign Markup packages (`.idml`): a ZIP package read and written
//! by [`crate::package`] with the [`IDML`] dialect. The translatable parts are
//! the stories (`Stories/Story_*.xml`): each paragraph
//! (`ParagraphStyleRange`, split at its `Br` elements) is a segment, its
//! runs (`CharacterStyleRange`, their style in their attributes and
//! `Properties`) spans; tables, footnotes and anchored frames inside a run
//! are placeholders whose own paragraphs are segments; special characters
//! (`<?ACE n?>`) and hyperlink text sources inside a run are placeholders.
//! Every other entry (`designmap.xml`, spreads, styles, fonts) is copied
//! raw, so `mimetype` stays the first, stored entry.

#[cfg(test)]
mod tests;

use crate::package::{Dialect, IDML, Package, no_embedded};

/// The IDML package.
pub(crate) static PACKAGE: Package = Package {
    kind: "IDML",
    legacy: "InDesign (.indd)",
    main: "designmap.xml",
    is_part: is_story,
    dialect: story,
    embedded: no_embedded,
};

fn story(_: &str) -> &'static Dialect {
    &IDML
}

/// `Stories/Story_*.xml`.
fn is_story(name: &str) -> bool {
    name.strip_prefix("Stories/Story_")
        .is_some_and(|f| !f.contains('/') && f.ends_with(".xml"))
}
