//! A translation set in its paragraph's box: shaped word by word
//! (rustybuzz), wrapped at the box's width, and shrunk in steps (to 60 %
//! of the original size at least) until its lines fit the original's
//! height; its lines aligned as the original's were. Each stretch of the
//! translation keeps the style and colour its tag says (a bold word, a
//! link's blue), in the face closest to that style.

use std::collections::HashMap;

use rustybuzz::{Face, UnicodeBuffer};

use super::fonts::{Fonts, Style};
use super::layout::{Align, Paragraph};
use super::text::Color;
use crate::bidi;

/// A stretch of translated text and how it looks.
pub(crate) type Span = (String, Style, Color);

/// A glyph of the set text.
#[derive(Debug, Clone)]
pub(crate) struct SetGlyph {
    /// Its face (an index of the fonts) and colour.
    pub face: usize,
    pub color: Color,
    /// Its id in the face.
    pub gid: u16,
    /// Its shaped advance, in thousandths of an em.
    pub advance: i32,
    /// The text it stands for (a cluster's text on its first glyph).
    pub text: String,
}

/// A line of the set text: its start on the baseline, in page space.
#[derive(Debug, Clone)]
pub(crate) struct SetLine {
    pub x: f32,
    pub y: f32,
    pub glyphs: Vec<SetGlyph>,
    /// Room added after each space (justified lines), in points.
    pub word_gap: f32,
}

/// A translation set at a size.
#[derive(Debug, Clone)]
pub(crate) struct Set {
    pub size: f32,
    pub lines: Vec<SetLine>,
}

/// The smallest share of the original size a translation shrinks to.
const MIN_SCALE: f32 = 0.6;
/// The steps it shrinks by.
const STEP: f32 = 0.05;

/// A shaped word: its glyphs and width, and its bidirectional embedding
/// level and the space's after it (odd: right to left).
struct Word {
    glyphs: Vec<SetGlyph>,
    width: i32,
    level: (u8, u8),
}

/// `spans` set in paragraph `p`'s box, each in the face of `fonts` closest
/// to its style; `None` when no face (or none readable) is installed.
pub(crate) fn typeset(
    fonts: &Fonts,
    spans: &[Span],
    p: &Paragraph,
    page_center: f32,
) -> Option<Set> {
    // One face a style, chosen for all the text in it.
    let mut faces: HashMap<usize, Face<'_>> = HashMap::new();
    let mut face_of: Vec<(Style, usize)> = Vec::new();
    for (_, style, _) in spans
        .iter()
        .chain(std::iter::once(&(String::new(), p.style, p.color)))
    {
        if face_of.iter().any(|(s, _)| s == style) {
            continue;
        }
        let text: String = spans
            .iter()
            .filter(|(_, s, _)| s == style)
            .map(|(t, _, _)| t.as_str())
            .collect();
        let index = fonts.choose(*style, &text)?;
        let (data, at) = fonts.face(index);
        faces.insert(index, Face::from_slice(data, at)?);
        face_of.push((*style, index));
    }
    let face_for = |style: &Style| face_of.iter().find(|(s, _)| s == style).map(|(_, f)| *f);
    let base = face_for(&p.style)?;
    let base_face = faces.get(&base)?;
    let space = base_face.glyph_index(' ').map(|g| {
        let advance = base_face.glyph_hor_advance(g).map_or(0, i32::from);
        (g.0, thousandths(advance, base_face))
    });
    let spans_of_words = words_of(spans);
    let texts: Vec<String> = spans_of_words
        .iter()
        .map(|w| w.iter().map(|(t, _, _)| t.as_str()).collect())
        .collect();
    let (rtl, levels) = bidi::levels(&texts);
    let mut words: Vec<Word> = Vec::new();
    for (word, level) in spans_of_words.into_iter().zip(levels) {
        let mut shaped = Word {
            glyphs: Vec::new(),
            width: 0,
            level,
        };
        for (text, style, color) in word {
            let face = face_for(&style)?;
            let piece = shape(faces.get(&face)?, face, color, &text);
            shaped.width += piece.width;
            shaped.glyphs.extend(piece.glyphs);
        }
        words.push(shaped);
    }
    // Widths are in thousandths of an em.
    let per_em = 1000.0;
    let (x0, x1) = p.x_range();
    let align = p.align(page_center);
    // A left-aligned paragraph's box reaches its column's right edge (a
    // short last line, or a one-line paragraph, says nothing of it).
    let box_width = match align {
        Align::Left | Align::Justified => {
            let column = p.lines.iter().map(|l| l.column_right).fold(x1, f32::max);
            column.min(p.room.1).max(x1) - x0
        }
        _ => x1 - x0,
    }
    .max(p.size);
    let first = &p.lines[0];
    let last = &p.lines[p.lines.len() - 1];
    let room_width = match align {
        Align::Left | Align::Justified => p.room.1 - x0,
        Align::Right => x1 - p.room.0,
        Align::Center => {
            let center = (first.x0 + first.x1) / 2.0;
            2.0 * (p.room.1 - center).min(center - p.room.0)
        }
    }
    .max(box_width);
    // At the box's width, shrinking step by step; failing that, at the
    // smallest size, as wide as the room beside it allows.
    let attempts = (0..)
        .map(|step| 1.0 - step as f32 * STEP)
        .take_while(|scale| *scale >= MIN_SCALE - 1e-3)
        .map(|scale| (scale, box_width))
        .chain(std::iter::once((MIN_SCALE, room_width)));
    let space_width = space.map_or(0, |s| s.1);
    // A first line indented as the original's was.
    let indent = match align {
        Align::Left | Align::Justified if p.lines.len() > 1 => first.x0 - x0,
        _ => 0.0,
    };
    let indent = if !rtl && indent > p.size * 0.5 && indent < box_width / 2.0 {
        indent
    } else {
        0.0
    };
    let mut chosen = None;
    for (scale, width) in attempts {
        let size = p.size * scale;
        let leading = p.leading() * scale;
        let units = (width * per_em / size) as i32;
        let fits_width = words.iter().all(|w| w.width <= units);
        let lines = wrap(&words, space_width, units, (indent * per_em / size) as i32);
        let top = first.y + p.size * 0.8 - size * 0.8;
        let bottom = top - (lines.len().max(1) - 1) as f32 * leading;
        let fits = fits_width && bottom >= last.y - p.size * 0.3;
        chosen = Some((size, leading, lines, width));
        if fits {
            break;
        }
    }
    let (size, leading, lines, width) = chosen?;
    let x1 = match align {
        Align::Left | Align::Justified => x0 + width,
        _ => x1,
    };
    let count = lines.len();
    let top = first.y + p.size * 0.8 - size * 0.8;
    let per_unit = size / per_em;
    let set_lines = lines
        .into_iter()
        .enumerate()
        .map(|(n, words_of_line)| {
            let words_of_line = visual(words_of_line);
            let mut glyphs = Vec::new();
            for (k, word) in words_of_line.iter().enumerate() {
                if k > 0
                    && let Some((gid, advance)) = space
                {
                    glyphs.push(SetGlyph {
                        face: base,
                        color: p.color,
                        gid,
                        advance,
                        text: " ".to_owned(),
                    });
                }
                glyphs.extend(word.glyphs.iter().cloned());
            }
            let width = glyphs.iter().map(|g| g.advance).sum::<i32>() as f32 * per_unit;
            let start = if n == 0 { x0 + indent } else { x0 };
            let spaces = glyphs.iter().filter(|g| g.text == " ").count();
            // A justified line (not the last) spreads its spaces, unless
            // that would open gaps wider than two spaces.
            let word_gap = match (align, spaces) {
                (Align::Justified, 1..) if n + 1 < count => {
                    let gap = (x1 - start - width) / spaces as f32;
                    let space = space.map_or(0.0, |s| s.1 as f32 * per_unit);
                    if gap > 0.0 && gap <= space * 2.0 {
                        gap
                    } else {
                        0.0
                    }
                }
                _ => 0.0,
            };
            let last_line = n + 1 == count || word_gap == 0.0;
            let x = match align {
                // Right-to-left text starts at its box's right edge.
                Align::Left | Align::Justified if rtl && last_line => x1 - width,
                Align::Left | Align::Justified => start,
                Align::Center => (first.x0 + first.x1) / 2.0 - width / 2.0,
                Align::Right => x1 - width,
            };
            SetLine {
                x,
                y: top - n as f32 * leading,
                glyphs,
                word_gap,
            }
        })
        .collect();
    Some(Set {
        size,
        lines: set_lines,
    })
}

/// A line's words in the order they are seen, left to right ([`bidi`]).
fn visual(words: Vec<Word>) -> Vec<Word> {
    let order = bidi::visual(&words.iter().map(|w| w.level).collect::<Vec<_>>());
    let mut slots: Vec<Option<Word>> = words.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// Font units of `face` in thousandths of an em.
fn thousandths(units: i32, face: &Face<'_>) -> i32 {
    (units as f32 * 1000.0 / face.units_per_em().max(1) as f32).round() as i32
}

/// The words of `spans` (split at whitespace, whatever the spans), each
/// as its stretches of one look.
fn words_of(spans: &[Span]) -> Vec<Vec<Span>> {
    let mut words: Vec<Vec<Span>> = Vec::new();
    let mut current: Vec<Span> = Vec::new();
    for (text, style, color) in spans {
        for c in text.chars() {
            if c.is_whitespace() {
                if !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                }
                continue;
            }
            match current.last_mut() {
                Some((t, s, k)) if s == style && k == color => t.push(c),
                _ => current.push((c.to_string(), *style, *color)),
            }
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// A line of `text` shaped as it stands in the face `index` of `fonts`,
/// in `color`, starting at `x`, `y`; `None` when the face cannot be read.
pub(crate) fn line_of(
    fonts: &Fonts,
    index: usize,
    color: Color,
    text: &str,
    (x, y): (f32, f32),
) -> Option<SetLine> {
    let (data, at) = fonts.face(index);
    let face = Face::from_slice(data, at)?;
    Some(SetLine {
        x,
        y,
        glyphs: shape(&face, index, color, text).glyphs,
        word_gap: 0.0,
    })
}

/// A word shaped in `face` (the fonts' `index`), painted in `color`.
fn shape(face: &Face<'_>, index: usize, color: Color, word: &str) -> Word {
    let mut buffer = UnicodeBuffer::new();
    buffer.push_str(word);
    buffer.guess_segment_properties();
    let shaped = rustybuzz::shape(face, &[], buffer);
    let infos = shaped.glyph_infos();
    let positions = shaped.glyph_positions();
    let mut glyphs = Vec::with_capacity(infos.len());
    for (i, (info, pos)) in infos.iter().zip(positions).enumerate() {
        let start = info.cluster as usize;
        let first_of_cluster = i == 0 || infos[i - 1].cluster != info.cluster;
        // A cluster's text runs to the next cluster's start (or the end).
        let end = infos
            .iter()
            .map(|g| g.cluster as usize)
            .filter(|&c| c > start)
            .min()
            .unwrap_or(word.len());
        glyphs.push(SetGlyph {
            face: index,
            color,
            gid: info.glyph_id as u16,
            advance: thousandths(pos.x_advance, face),
            text: match first_of_cluster {
                true => word.get(start..end).unwrap_or_default().to_owned(),
                false => String::new(),
            },
        });
    }
    let width = glyphs.iter().map(|g| g.advance).sum();
    Word {
        glyphs,
        width,
        level: (0, 0),
    }
}

/// Words wrapped into lines no wider than `width` (font units), the first
/// `indent` narrower; a word wider than a line is broken between its
/// glyphs.
fn wrap(words: &[Word], space: i32, width: i32, indent: i32) -> Vec<Vec<Word>> {
    let mut lines: Vec<Vec<Word>> = Vec::new();
    let mut current: Vec<Word> = Vec::new();
    let mut used = 0;
    let mut add = |word: Word, lines: &mut Vec<Vec<Word>>| {
        let extra = if current.is_empty() {
            word.width
        } else {
            space + word.width
        };
        let limit = if lines.is_empty() {
            width - indent
        } else {
            width
        };
        if !current.is_empty() && used + extra > limit {
            lines.push(std::mem::take(&mut current));
            used = 0;
        }
        used += if current.is_empty() {
            word.width
        } else {
            space + word.width
        };
        current.push(word);
    };
    for word in words {
        if word.width <= width {
            add(
                Word {
                    glyphs: word.glyphs.clone(),
                    width: word.width,
                    level: word.level,
                },
                &mut lines,
            );
            continue;
        }
        // Too wide for any line: as many glyphs a line as fit.
        let mut piece = Word {
            glyphs: Vec::new(),
            width: 0,
            level: word.level,
        };
        for glyph in &word.glyphs {
            if !piece.glyphs.is_empty() && piece.width + glyph.advance > width {
                add(
                    std::mem::replace(
                        &mut piece,
                        Word {
                            glyphs: Vec::new(),
                            width: 0,
                            level: word.level,
                        },
                    ),
                    &mut lines,
                );
            }
            piece.width += glyph.advance;
            piece.glyphs.push(glyph.clone());
        }
        if !piece.glyphs.is_empty() {
            add(piece, &mut lines);
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(width: i32) -> Word {
        Word {
            glyphs: vec![SetGlyph {
                face: 0,
                color: Color::Gray(0.0),
                gid: 1,
                advance: width,
                text: "x".into(),
            }],
            width,
            level: (0, 0),
        }
    }

    #[test]
    fn words_wrap_at_the_width() {
        let words = vec![word(40), word(40), word(40), word(150)];
        let lines = wrap(&words, 10, 100, 0);
        let widths: Vec<Vec<i32>> = lines
            .iter()
            .map(|l| l.iter().map(|w| w.width).collect())
            .collect();
        assert_eq!(widths, vec![vec![40, 40], vec![40], vec![150]]);
    }
}
