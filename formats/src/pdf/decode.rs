//! What a PDF font's character codes mean: the Unicode text of each (its
//! `ToUnicode` map first, else its encoding), its width, and the font's
//! style. lopdf reads the maps and encodings; a font whose codes cannot be
//! read as text (a Type3 font, a composite font without `ToUnicode`) is
//! marked unreadable and its text left as it is.

use lopdf::{Dictionary, Document, Encoding, Object};
use rustybuzz::ttf_parser;

use super::fonts::{Fonts, Style};

/// The most a font's maps may inflate to.
const MAP_LIMIT: usize = 8 << 20;

/// A font of a page, as its text is read.
pub(crate) struct PdfFont {
    /// Codes are two bytes (a composite font), else one.
    pub two_byte: bool,
    /// Whether its codes can be read as text.
    pub readable: bool,
    /// Whether it is a Type3 font (glyphs drawn by content streams).
    pub type3: bool,
    /// Its style, for the face its translation is set in.
    pub style: Style,
    text: Box<dyn Fn(u32) -> Option<String>>,
    widths: Widths,
}

/// Widths of codes in thousandths of text space.
enum Widths {
    /// A simple font's table from its first code, and the width of codes
    /// outside it.
    Simple {
        first: u32,
        table: Vec<f32>,
        missing: f32,
    },
    /// A composite font's ranges (first code, last code, widths: one for
    /// the range or one per code) and default.
    Composite {
        ranges: Vec<(u32, u32, Vec<f32>)>,
        default: f32,
    },
}

impl PdfFont {
    /// The font of `dict`; `fonts` measures the standard fonts that carry no
    /// widths (Liberation's faces share their metrics).
    pub(crate) fn read(doc: &Document, dict: &Dictionary, fonts: Option<&Fonts>) -> Self {
        let subtype = name(doc, dict, b"Subtype").unwrap_or_default();
        let base = name(doc, dict, b"BaseFont").unwrap_or_default();
        let composite = subtype == "Type0";
        let descendant = composite
            .then(|| {
                let array = deref(doc, dict.get(b"DescendantFonts").ok()?)?
                    .as_array()
                    .ok()?;
                deref(doc, array.first()?)?.as_dict().ok()
            })
            .flatten();
        let descriptor = descendant
            .unwrap_or(dict)
            .get(b"FontDescriptor")
            .ok()
            .and_then(|d| deref(doc, d))
            .and_then(|d| d.as_dict().ok());
        let flags = descriptor
            .and_then(|d| d.get(b"Flags").ok())
            .and_then(number)
            .unwrap_or(0.0) as i64;
        let weight = descriptor
            .and_then(|d| d.get(b"FontWeight").ok())
            .and_then(number);
        let style = Style::of_font(&base, flags, weight);
        let to_unicode = unicode_map(doc, dict, composite);
        let readable = subtype != "Type3" && (!composite || to_unicode.is_some());
        let text: Box<dyn Fn(u32) -> Option<String>> = match composite {
            true => to_unicode.unwrap_or_else(|| Box::new(|_| None)),
            false => {
                let table = simple_table(doc, dict);
                Box::new(move |code| {
                    to_unicode
                        .as_ref()
                        .and_then(|map| map(code))
                        .or_else(|| table.get(code as usize).cloned().flatten())
                })
            }
        };
        let missing = descriptor
            .and_then(|d| d.get(b"MissingWidth").ok())
            .and_then(number);
        let widths = match descendant {
            Some(cid) => composite_widths(doc, cid),
            None => simple_widths(doc, dict, missing, || measured(fonts, style, &text)),
        };
        Self {
            two_byte: composite,
            readable,
            type3: subtype == "Type3",
            style,
            text,
            widths,
        }
    }

    /// The text of `code`; `None` when the font does not say.
    pub(crate) fn text(&self, code: u32) -> Option<String> {
        (self.text)(code).filter(|t| !t.is_empty() && t != "\u{fffd}")
    }

    /// The width of `code`, in thousandths of text space.
    pub(crate) fn width(&self, code: u32) -> f32 {
        match &self.widths {
            Widths::Simple {
                first,
                table,
                missing,
            } => code
                .checked_sub(*first)
                .and_then(|i| table.get(i as usize))
                .copied()
                .unwrap_or(*missing),
            Widths::Composite { ranges, default } => ranges
                .iter()
                .find(|(lo, hi, _)| (*lo..=*hi).contains(&code))
                .map(|(lo, _, w)| match w.len() {
                    1 => w[0],
                    _ => w.get((code - lo) as usize).copied().unwrap_or(*default),
                })
                .unwrap_or(*default),
        }
    }
}

/// `ToUnicode` as a function of codes, read by lopdf (the font's own
/// `Encoding` set aside, which lopdf would read first).
fn unicode_map(
    doc: &Document,
    dict: &Dictionary,
    composite: bool,
) -> Option<Box<dyn Fn(u32) -> Option<String>>> {
    dict.get(b"ToUnicode").ok()?;
    let mut only_map = dict.clone();
    only_map.remove(b"Encoding");
    let length = if composite { 2 } else { 1 };
    match only_map.get_font_encoding_with_limit(doc, MAP_LIMIT).ok()? {
        Encoding::UnicodeMapEncoding(map) => Some(Box::new(move |code| {
            map.get(code, length)
                .map(|units| String::from_utf16_lossy(&units))
        })),
        _ => None,
    }
}

/// A simple font's text of each byte by its encoding.
fn simple_table(doc: &Document, dict: &Dictionary) -> Vec<Option<String>> {
    let mut only_encoding = dict.clone();
    only_encoding.remove(b"ToUnicode");
    let Ok(encoding) = only_encoding.get_font_encoding_with_limit(doc, MAP_LIMIT) else {
        return vec![None; 256];
    };
    (0..=255u8)
        .map(|b| {
            encoding
                .bytes_to_string(&[b])
                .ok()
                .filter(|t| !t.is_empty())
        })
        .collect()
}

fn simple_widths(
    doc: &Document,
    dict: &Dictionary,
    missing: Option<f32>,
    measure: impl FnOnce() -> Option<Vec<f32>>,
) -> Widths {
    let table = dict
        .get(b"Widths")
        .ok()
        .and_then(|w| deref(doc, w))
        .and_then(|w| w.as_array().ok())
        .map(|array| {
            array
                .iter()
                .take(65_536)
                .map(|w| deref(doc, w).and_then(number).unwrap_or(0.0))
                .collect::<Vec<_>>()
        });
    match table {
        Some(table) => Widths::Simple {
            first: dict
                .get(b"FirstChar")
                .ok()
                .and_then(number)
                .unwrap_or(0.0)
                .max(0.0) as u32,
            table,
            missing: missing.unwrap_or(0.0),
        },
        None => Widths::Simple {
            first: 0,
            table: measure().unwrap_or_default(),
            missing: missing.unwrap_or(500.0),
        },
    }
}

/// The widths of a standard font (which carries none) by the face of its
/// style among `fonts`.
fn measured(
    fonts: Option<&Fonts>,
    style: Style,
    text: impl Fn(u32) -> Option<String>,
) -> Option<Vec<f32>> {
    let fonts = fonts?;
    let index = fonts.choose(style, "abcdefghijklmnopqrstuvwxyz")?;
    let (data, face_index) = fonts.face(index);
    let face = ttf_parser::Face::parse(data, face_index).ok()?;
    let scale = 1000.0 / f32::from(face.units_per_em());
    Some(
        (0..256)
            .map(|code| {
                text(code)
                    .and_then(|t| t.chars().next())
                    .and_then(|c| face.glyph_index(c))
                    .and_then(|g| face.glyph_hor_advance(g))
                    .map_or(500.0, |a| f32::from(a) * scale)
            })
            .collect(),
    )
}

/// A composite font's `W` array and `DW`.
fn composite_widths(doc: &Document, cid: &Dictionary) -> Widths {
    let default = cid.get(b"DW").ok().and_then(number).unwrap_or(1000.0);
    let mut ranges = Vec::new();
    let array = cid
        .get(b"W")
        .ok()
        .and_then(|w| deref(doc, w))
        .and_then(|w| w.as_array().ok());
    let items: &[Object] = array.map_or(&[], |a| a.as_slice());
    let mut i = 0;
    while i + 1 < items.len() && ranges.len() < 65_536 {
        let Some(first) = deref(doc, &items[i]).and_then(number) else {
            break;
        };
        let first = first.max(0.0) as u32;
        match deref(doc, &items[i + 1]) {
            Some(Object::Array(ws)) => {
                let ws: Vec<f32> = ws
                    .iter()
                    .take(65_536)
                    .map(|w| deref(doc, w).and_then(number).unwrap_or(default))
                    .collect();
                if !ws.is_empty() {
                    let last = first.saturating_add(ws.len() as u32 - 1);
                    ranges.push((first, last, ws));
                }
                i += 2;
            }
            Some(last) => {
                let (Some(last), Some(w)) = (
                    number(last),
                    items
                        .get(i + 2)
                        .and_then(|w| deref(doc, w))
                        .and_then(number),
                ) else {
                    break;
                };
                ranges.push((first, last.max(0.0) as u32, vec![w]));
                i += 3;
            }
            None => break,
        }
    }
    Widths::Composite { ranges, default }
}

/// The object `object` refers to (itself when it is not a reference).
pub(crate) fn deref<'a>(doc: &'a Document, object: &'a Object) -> Option<&'a Object> {
    doc.dereference(object).ok().map(|(_, o)| o)
}

/// A number object's value.
pub(crate) fn number(object: &Object) -> Option<f32> {
    match object {
        Object::Integer(i) => Some(*i as f32),
        Object::Real(r) => Some(*r).filter(|r| r.is_finite()),
        _ => None,
    }
}

fn name(doc: &Document, dict: &Dictionary, key: &[u8]) -> Option<String> {
    let object = deref(doc, dict.get(key).ok()?)?;
    Some(String::from_utf8_lossy(object.as_name().ok()?).into_owned())
}
