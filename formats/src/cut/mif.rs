//! Cut points of FrameMaker MIF: before a paragraph of a body text flow or
//! a table of `<Tbls>`.

use super::{Cut, Envelope, MIF, cut_at};

/// MIF 8 or later, before the paragraphs of its body text flows and the
/// tables of `<Tbls>` ([`crate::mif::cut_points`]), each piece under the
/// file's reference pages and flows.
pub(crate) fn mif(input: &[u8], size: usize) -> Option<Cut> {
    cut_at(input, size, |text| {
        if MIF.found_in(text) {
            return None;
        }
        let pieces = crate::mif::cut_points(text)?;
        Some((
            pieces.points,
            Envelope::Containers {
                prolog: pieces.prolog,
                containers: pieces.containers,
                epilog: String::new(),
                marks: MIF,
            },
        ))
    })
}
