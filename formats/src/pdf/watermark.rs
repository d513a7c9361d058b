//! The machine-translation mark of a PDF: a line of small grey text at the
//! bottom left of every page as the page is shown (its crop box and
//! rotation), drawn after the page's own content with the graphics state
//! that content leaves undone, and an entry of the document information
//! dictionary.

use lopdf::content::{Content, Operation};
use lopdf::{Dictionary, Object, dictionary};

use super::decode::number;
use super::embed;
use super::write::{add_fonts, info_id, inherited, media_box, page_box};
use crate::FormatError;

/// The font resource the mark is set in (Helvetica, which every reader has).
const FONT: &str = "TolkMark";
/// The mark's size, in points.
const SIZE: f32 = 8.0;

/// The PDF with `mark` on every page and as the information entry
/// `property`.
pub(crate) fn mark(input: &[u8], mark: &str, property: &str) -> Result<Vec<u8>, FormatError> {
    let mut pdf = super::load(input)?;
    let font = pdf.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type1",
        "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let text = Object::String(latin1(mark), lopdf::StringFormat::Literal);
    let pages: Vec<_> = pdf.get_pages().into_values().collect();
    let before = pdf.add_object(embed::compressed(Dictionary::new(), b"q\n".to_vec()));
    for page in pages {
        let shown = page_box(&pdf, page, b"CropBox").unwrap_or_else(|| media_box(&pdf, page));
        let rotate = inherited(&pdf, page, b"Rotate")
            .and_then(number)
            .map_or(0, |r| (r as i64).rem_euclid(360));
        let matrix = placement(shown, rotate).map(Object::Real).to_vec();
        let op = |name: &str, operands: Vec<Object>| Operation::new(name, operands);
        let ops = Content {
            operations: vec![
                op("Q", vec![]),
                op("q", vec![]),
                op("cm", matrix),
                op("BT", vec![]),
                op("Tf", vec![Object::Name(FONT.into()), Object::Real(SIZE)]),
                op("g", vec![Object::Real(0.45)]),
                op("Td", vec![Object::Real(18.0), Object::Real(6.0)]),
                op("Tj", vec![text.clone()]),
                op("ET", vec![]),
                op("Q", vec![]),
            ],
        }
        .encode()
        .map_err(|e| FormatError::Write(e.to_string()))?;
        let after = pdf.add_object(embed::compressed(Dictionary::new(), ops));
        let dict = pdf
            .get_dictionary_mut(page)
            .map_err(|e| FormatError::Write(e.to_string()))?;
        let mut contents = vec![Object::Reference(before)];
        match dict.get(b"Contents") {
            Ok(Object::Array(parts)) => contents.extend(parts.iter().cloned()),
            Ok(part @ Object::Reference(_)) => contents.push(part.clone()),
            _ => {}
        }
        contents.push(Object::Reference(after));
        dict.set("Contents", Object::Array(contents));
        add_fonts(&mut pdf, page, &[(&FONT.to_owned(), font)])?;
    }
    let info = match info_id(&pdf) {
        Some(id) => id,
        None => {
            let id = pdf.add_object(Dictionary::new());
            pdf.trailer.set("Info", Object::Reference(id));
            id
        }
    };
    if let Ok(dict) = pdf.get_dictionary_mut(info) {
        dict.set(property, lopdf::text_string(mark));
    }
    let mut out = Vec::new();
    pdf.save_to(&mut out)
        .map_err(|e| FormatError::Write(e.to_string()))?;
    Ok(out)
}

/// The matrix (`a b c d e f`) that puts the mark's origin at the shown
/// page's bottom left, upright as the page is shown after its rotation
/// (clockwise, in degrees).
fn placement((x0, y0, x1, y1): (f32, f32, f32, f32), rotate: i64) -> [f32; 6] {
    match rotate {
        90 => [0.0, 1.0, -1.0, 0.0, x1, y0],
        180 => [-1.0, 0.0, 0.0, -1.0, x1, y1],
        270 => [0.0, -1.0, 1.0, 0.0, x0, y1],
        _ => [1.0, 0.0, 0.0, 1.0, x0, y0],
    }
}

/// `text` in WinAnsi (Latin-1 for what it holds); other characters as `?`.
fn latin1(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_stands_upright_at_the_bottom_left_of_each_rotation() {
        let page = (0.0, 0.0, 600.0, 800.0);
        assert_eq!(placement(page, 0), [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
        assert_eq!(placement(page, 90), [0.0, 1.0, -1.0, 0.0, 600.0, 0.0]);
        assert_eq!(placement(page, 180), [-1.0, 0.0, 0.0, -1.0, 600.0, 800.0]);
        assert_eq!(placement(page, 270), [0.0, -1.0, 1.0, 0.0, 0.0, 800.0]);
        assert_eq!(latin1("Tolk · ü → x"), b"Tolk \xb7 \xfc ? x");
    }
}
