//! Cut points of RTF: before a paragraph of the document's group, each piece
//! inside the document's head (its tables, without the text it holds).

use super::{Cut, Envelope, RTF, cut_at};

/// RTF, before a `\pard` of the document's group where no paragraph is open
/// and the text that follows reads as in the whole file
/// ([`crate::rtf::cut_points`]).
pub(crate) fn rtf(input: &[u8], size: usize) -> Option<Cut> {
    cut_at(input, size, |text| {
        if RTF.found_in(text) {
            return None;
        }
        let (points, head) = crate::rtf::cut_points(text.as_bytes())?;
        let (tail, marks) = ("}".to_owned(), RTF);
        Some((points, Envelope::Made { head, tail, marks }))
    })
}
