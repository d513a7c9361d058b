//! The fonts a translated PDF's text is written in: a set of OpenType
//! faces the caller loads (the worker reads Debian's Liberation, DejaVu and
//! Noto folders), each paragraph set in the face closest to its original
//! font's style (serif, sans or monospaced; bold; italic) that covers every
//! character of its translation.

use rustybuzz::ttf_parser;
use std::sync::Arc;

/// The broad design of a typeface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Serif,
    Sans,
    Mono,
}

/// How an original font looks, as far as a replacement is chosen by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Style {
    pub class: Class,
    pub bold: bool,
    pub italic: bool,
}

impl Default for Style {
    fn default() -> Self {
        Self {
            class: Class::Sans,
            bold: false,
            italic: false,
        }
    }
}

impl Style {
    /// The style a PDF font's name and descriptor flags say (`ABCDEF+`
    /// subset tags ignored): `Times-BoldItalic`, `CMBX10`,
    /// `LiberationSerif-Italic`…
    pub(crate) fn of_font(base_font: &str, flags: i64, weight: Option<f32>) -> Self {
        let name = base_font
            .split_once('+')
            .map_or(base_font, |(_, rest)| rest)
            .to_ascii_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| name.contains(w));
        let class = if flags & 1 != 0 || has(&["mono", "courier", "consol", "code", "cmtt"]) {
            Class::Mono
        } else if has(&["sans", "arial", "helvetica", "verdana", "calibri", "cmss"]) {
            Class::Sans
        } else if flags & 2 != 0
            || has(&[
                "serif",
                "times",
                "roman",
                "georgia",
                "garamond",
                "cambria",
                "minion",
                "palatino",
                "book",
                "cmr",
                "cmbx",
                "cmti",
                "cmsl",
                "lmr",
                "nimbusrom",
                "utopia",
                "charter",
            ])
        {
            Class::Serif
        } else {
            Class::Sans
        };
        let bold = flags & (1 << 18) != 0
            || weight.is_some_and(|w| w >= 600.0)
            || has(&["bold", "black", "heavy", "semibold", "demi", "cmbx"]);
        let italic =
            flags & (1 << 6) != 0 || has(&["italic", "oblique", "cmti", "cmsl", "-it", "slant"]);
        Self {
            class,
            bold,
            italic,
        }
    }
}

/// One face of a font file.
struct FontFace {
    family: String,
    style: Style,
    data: Arc<[u8]>,
    index: u32,
}

/// A set of fonts to write translated PDF text in; cheap to clone.
///
/// ```
/// let fonts = tolk_formats::Fonts::default();
/// assert!(fonts.is_empty());
/// ```
#[derive(Clone, Default)]
pub struct Fonts(Arc<Vec<FontFace>>);

impl Fonts {
    /// The regular, bold, italic and bold italic faces of these font files
    /// (TrueType or OpenType, collections too); other weights and widths,
    /// and files that are not fonts, are left out.
    pub fn from_files(files: impl IntoIterator<Item = Vec<u8>>) -> Self {
        let mut faces = Vec::new();
        for file in files {
            let data: Arc<[u8]> = file.into();
            let count = ttf_parser::fonts_in_collection(&data).unwrap_or(1);
            for index in 0..count.min(64) {
                if let Some(face) = read_face(&data, index) {
                    faces.push(face);
                }
            }
        }
        // The metric-compatible Liberation faces first, then DejaVu, Noto,
        // the rest by name: the order ties are broken in.
        faces.sort_by_key(|f| (family_rank(&f.family), f.family.clone()));
        Self(Arc::new(faces))
    }

    /// Whether the set holds no face.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The families of the set, each once.
    pub fn families(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for face in self.0.iter() {
            if !out.contains(&face.family.as_str()) {
                out.push(&face.family);
            }
        }
        out
    }

    /// The face for text of `style`: of those holding a glyph for every
    /// character of `text`, the closest in style; when none holds them
    /// all, the one holding most.
    pub(crate) fn choose(&self, style: Style, text: &str) -> Option<usize> {
        let wanted: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
        // Closest first (ties in the set's order): the first that holds
        // every character is the one.
        let mut order: Vec<usize> = (0..self.0.len()).collect();
        order.sort_by_key(|&i| 7 - closeness(self.0[i].style, style));
        let mut best: Option<(usize, usize)> = None;
        for i in order {
            let face = &self.0[i];
            let Ok(parsed) = ttf_parser::Face::parse(&face.data, face.index) else {
                continue;
            };
            let missing = wanted
                .iter()
                .filter(|c| parsed.glyph_index(**c).is_none())
                .count();
            if missing == 0 {
                return Some(i);
            }
            if best.is_none_or(|(_, m)| missing < m) {
                best = Some((i, missing));
            }
        }
        best.map(|(i, _)| i)
    }

    /// The face at `index` (as [`Fonts::choose`] gave it): its bytes and
    /// index in its file.
    pub(crate) fn face(&self, index: usize) -> (&Arc<[u8]>, u32) {
        let face = &self.0[index];
        (&face.data, face.index)
    }

    /// The family name of the face at `index`.
    pub(crate) fn family(&self, index: usize) -> &str {
        &self.0[index].family
    }

    /// The face at `index`'s style.
    pub(crate) fn style(&self, index: usize) -> Style {
        self.0[index].style
    }
}

impl PartialEq for Fonts {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Fonts {}

impl std::fmt::Debug for Fonts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Fonts").field(&self.families()).finish()
    }
}

/// How close a face's style is to a wanted one (0 to 7).
fn closeness(face: Style, wanted: Style) -> u32 {
    u32::from(face.class == wanted.class) * 4
        + u32::from(face.bold == wanted.bold) * 2
        + u32::from(face.italic == wanted.italic)
}

fn family_rank(family: &str) -> u8 {
    match family {
        f if f.starts_with("Liberation") => 0,
        f if f.starts_with("DejaVu") => 1,
        f if f.starts_with("Noto") => 2,
        _ => 3,
    }
}

fn read_face(data: &Arc<[u8]>, index: u32) -> Option<FontFace> {
    let face = ttf_parser::Face::parse(data, index).ok()?;
    // Regular and bold, normal width: what a paragraph is set in.
    if face.width() != ttf_parser::Width::Normal
        || !matches!(face.weight().to_number(), 400 | 700)
        || face.tables().glyf.is_none() && face.tables().cff.is_none()
    {
        return None;
    }
    let family = face
        .names()
        .into_iter()
        .filter(|n| n.name_id == ttf_parser::name_id::FAMILY && n.is_unicode())
        .find_map(|n| n.to_string())?;
    let lower = family.to_ascii_lowercase();
    let class = if face.is_monospaced() || lower.contains("mono") {
        Class::Mono
    } else if lower.contains("serif") && !lower.contains("sans") {
        Class::Serif
    } else {
        Class::Sans
    };
    let style = Style {
        class,
        bold: face.is_bold(),
        italic: face.is_italic() || face.is_oblique(),
    };
    Some(FontFace {
        family,
        style,
        data: data.clone(),
        index,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pdf_font_names_and_flags_give_their_style() {
        let s = Style::of_font("ABCDEF+Times-BoldItalic", 0, None);
        assert_eq!((s.class, s.bold, s.italic), (Class::Serif, true, true));
        let s = Style::of_font("CMR10", 4, None);
        assert_eq!((s.class, s.bold, s.italic), (Class::Serif, false, false));
        let s = Style::of_font("Helvetica-Oblique", 0, None);
        assert_eq!((s.class, s.bold, s.italic), (Class::Sans, false, true));
        let s = Style::of_font("XYZ+SomeFont", 1, Some(700.0));
        assert_eq!((s.class, s.bold, s.italic), (Class::Mono, true, false));
        let s = Style::of_font("BAAAAA+LiberationSerif", 6, None);
        assert_eq!(s.class, Class::Serif);
    }

    #[test]
    fn files_that_are_not_fonts_are_left_out() {
        let fonts = Fonts::from_files([b"not a font".to_vec()]);
        assert!(fonts.is_empty());
        assert_eq!(fonts.choose(Style::default(), "abc"), None);
    }
}
