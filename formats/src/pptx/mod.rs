//! PowerPoint presentations (`.pptx`): an Office Open XML package
//! ([`crate::package`]) whose translatable parts are DrawingML text: the slides
//! (`ppt/slides/slide*.xml`: shapes, grouped shapes, tables), the speaker
//! notes (`ppt/notesSlides/`), SmartArt (its data, `ppt/diagrams/data*.xml`,
//! and the drawing PowerPoint caches from it, `ppt/diagrams/drawing*.xml`,
//! which other readers show: both translated alike) and charts
//! (`ppt/charts/chart*.xml`), comments (`ppt/comments/`) and the document
//! properties. Slide masters and layouts are left as they are (their text is
//! placeholder prompts, not content). A line break (`a:br`) ends a segment;
//! fields (`a:fld`, e.g. the slide number) are placeholders of their
//! paragraph. A shape whose translation is over 10 % longer than its source
//! gets PowerPoint's shrink on overflow (`a:normAutofit` with a font scale,
//! the square root of the length ratio, combined with a scale already set,
//! never under 55 %), unless the box grows with its text (`a:spAutoFit`) or
//! was set never to fit it (`a:noAutofit`). Charts' category labels and
//! series names are translated in their caches (`c:v`), which is what
//! PowerPoint shows, and in the workbook embedded for editing the data
//! (`ppt/embeddings/*.xlsx`, translated as an Excel workbook), so editing a
//! chart's data keeps its labels translated.

#[cfg(test)]
mod tests;
pub(crate) mod watermark;

use crate::package::{CORE_PROPERTIES, DRAWING, Dialect, PLAIN, Package};

/// The PowerPoint package.
pub(crate) static PACKAGE: Package = Package {
    kind: "PPTX",
    legacy: "legacy PowerPoint (.ppt)",
    main: "ppt/presentation.xml",
    is_part: is_translatable_part,
    dialect: drawing,
    embedded: crate::xlsx::embedded_workbook,
};

/// The plain text of legacy comments and of the properties; DrawingML
/// elsewhere (modern comments included).
fn drawing(name: &str) -> &'static Dialect {
    let legacy_comment = name
        .strip_prefix("ppt/comments/")
        .is_some_and(|f| f.starts_with("comment") && !f.starts_with("commentAuthors"));
    if legacy_comment || name == CORE_PROPERTIES {
        &PLAIN
    } else {
        &DRAWING
    }
}

/// Slides, notes, comments, SmartArt data, charts and the properties.
fn is_translatable_part(name: &str) -> bool {
    let in_folder = |folder: &str, prefix: &str| {
        name.strip_prefix(folder)
            .is_some_and(|f| !f.contains('/') && f.starts_with(prefix) && f.ends_with(".xml"))
    };
    name == CORE_PROPERTIES
        || in_folder("ppt/slides/", "slide")
        || in_folder("ppt/notesSlides/", "notesSlide")
        || in_folder("ppt/comments/", "comment")
        || in_folder("ppt/comments/", "modernComment")
        || in_folder("ppt/diagrams/", "data")
        || in_folder("ppt/diagrams/", "drawing")
        || in_folder("ppt/charts/", "chart")
}
