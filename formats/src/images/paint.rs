//! Painting a translation over an image's text: the original lines filled
//! with the background around them (the median of a ring of pixels just
//! outside the paragraph), the ink's colour taken from the pixels of the
//! original text that differ most from that background, and the
//! translation wrapped into the paragraph's box at the original's size,
//! shrunk in 5 % steps (to 60 %) until it fits, each word shaped by
//! rustybuzz and its glyphs drawn with ab_glyph's coverage blended over the
//! background, right-to-left text from the right.

use std::sync::Arc;

use ab_glyph::{Font, FontRef, PxScale, ScaleFont};
use image::{Rgba, RgbaImage};

use crate::{FormatError, bidi};

/// A box in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rect {
    pub left: u32,
    pub top: u32,
    pub width: u32,
    pub height: u32,
}

/// Pixels around a line's box the fill covers too (anti-aliased edges).
const PAD: u32 = 3;

/// Paints a paragraph's lines out with the background around them; the
/// colour its text was in.
pub(crate) fn erase(canvas: &mut RgbaImage, lines: &[Rect]) -> Rgba<u8> {
    let area = union(lines);
    let background = median(&ring(canvas, area));
    let mut inside = Vec::new();
    for line in lines {
        for (x, y) in pixels(canvas, *line, 0) {
            inside.push(*canvas.get_pixel(x, y));
        }
    }
    let ink = ink(&inside, background);
    for line in lines {
        for (x, y) in pixels(canvas, *line, PAD) {
            canvas.put_pixel(x, y, background);
        }
    }
    ink
}

/// A line of text as painted: where its baseline starts and its em (the
/// size a PDF font would be set at to match it), in pixels.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Painted {
    pub text: String,
    pub left: f32,
    pub baseline: f32,
    pub size: f32,
}

/// A word shaped by rustybuzz, in font units: its glyphs (id, advance,
/// offsets) in the order they are drawn, and its width.
struct Shaped {
    glyphs: Vec<(u16, i32, i32, i32)>,
    width: i32,
}

/// Writes `text` into the box of `lines` in the face `data` (`index` in
/// its file), at the lines' size and pitch, shrunk to fit; the lines it
/// painted. Each word is shaped (rustybuzz: ligatures, kerning, joined
/// Arabic letters) and the words of a line laid out in the order they are
/// seen ([`crate::bidi`]); right-to-left text starts at the box's right
/// edge.
pub(crate) fn write(
    canvas: &mut RgbaImage,
    data: &Arc<[u8]>,
    index: u32,
    text: &str,
    lines: &[Rect],
    ink: Rgba<u8>,
) -> Result<Vec<Painted>, FormatError> {
    let unreadable = || FormatError::Write("a font could not be read".to_owned());
    let font = FontRef::try_from_slice_and_index(data, index).map_err(|_| unreadable())?;
    let face = rustybuzz::Face::from_slice(data, index).ok_or_else(unreadable)?;
    let words: Vec<&str> = text.split_whitespace().collect();
    let (rtl, levels) = bidi::levels(&words);
    let shaped: Vec<Shaped> = words.iter().map(|w| shape(&face, w)).collect();
    let space = face
        .glyph_index(' ')
        .and_then(|g| face.glyph_hor_advance(g))
        .map_or(0, i32::from);
    let area = union(lines);
    let mut heights: Vec<u32> = lines.iter().map(|l| l.height).collect();
    heights.sort_unstable();
    let height = heights[heights.len() / 2].max(4) as f32;
    let pitch = match lines {
        [first, .., last] => (last.top - first.top) as f32 / (lines.len() - 1) as f32,
        _ => height * 1.25,
    }
    .max(height);
    // Room to the right of a short box, up to the image's edge.
    let width = (area.width as f32 * 1.15).min(canvas.width().saturating_sub(area.left) as f32);
    let mut scale = 1.0;
    let (size, wrapped) = loop {
        // A line's box is about an em high (ascender to descender).
        let size = height * 1.05 * scale;
        let factor = font.as_scaled(PxScale::from(size)).h_scale_factor();
        let wrapped = wrap(&shaped, space, (width / factor) as i32);
        let fits = wrapped.len() as f32 * pitch * scale <= area.height as f32 + pitch * 0.35;
        if fits || scale <= 0.6 {
            break (size, wrapped);
        }
        scale -= 0.05;
    };
    let scaled = font.as_scaled(PxScale::from(size));
    let factor = scaled.h_scale_factor();
    let em = font.units_per_em().unwrap_or(1000.0) * factor;
    let mut painted = Vec::with_capacity(wrapped.len());
    for (i, line) in wrapped.iter().enumerate() {
        let top = area.top as f32 + i as f32 * pitch * scale;
        let baseline = top + scaled.ascent() * 0.9;
        let units: i32 = line.iter().map(|&w| shaped[w].width).sum::<i32>()
            + space * (line.len() as i32 - 1).max(0);
        let mut x = match rtl {
            true => (area.left as f32 + area.width as f32 - units as f32 * factor).max(0.0),
            false => area.left as f32,
        };
        painted.push(Painted {
            text: line.iter().map(|&w| words[w]).collect::<Vec<_>>().join(" "),
            left: x,
            baseline,
            size: em,
        });
        let order = bidi::visual(&line.iter().map(|&w| levels[w]).collect::<Vec<_>>());
        for (k, &at) in order.iter().enumerate() {
            if k > 0 {
                x += space as f32 * factor;
            }
            for &(id, advance, dx, dy) in &shaped[line[at]].glyphs {
                let position =
                    ab_glyph::point(x + dx as f32 * factor, baseline - dy as f32 * factor);
                x += advance as f32 * factor;
                let glyph = ab_glyph::GlyphId(id).with_scale_and_position(size, position);
                if let Some(outlined) = font.outline_glyph(glyph) {
                    draw(canvas, &outlined, ink);
                }
            }
        }
    }
    Ok(painted)
}

/// A word shaped in `face`, in its own direction.
fn shape(face: &rustybuzz::Face<'_>, word: &str) -> Shaped {
    let mut buffer = rustybuzz::UnicodeBuffer::new();
    buffer.push_str(word);
    buffer.guess_segment_properties();
    let shaped = rustybuzz::shape(face, &[], buffer);
    let glyphs: Vec<(u16, i32, i32, i32)> = shaped
        .glyph_infos()
        .iter()
        .zip(shaped.glyph_positions())
        .map(|(info, p)| (info.glyph_id as u16, p.x_advance, p.x_offset, p.y_offset))
        .collect();
    let width = glyphs.iter().map(|g| g.1).sum();
    Shaped { glyphs, width }
}

/// Blends an outlined glyph's coverage over the canvas in `ink`.
fn draw(canvas: &mut RgbaImage, outlined: &ab_glyph::OutlinedGlyph, ink: Rgba<u8>) {
    let bounds = outlined.px_bounds();
    outlined.draw(|gx, gy, coverage| {
        let (px, py) = (
            bounds.min.x as i64 + i64::from(gx),
            bounds.min.y as i64 + i64::from(gy),
        );
        if px < 0 || py < 0 || px >= i64::from(canvas.width()) || py >= i64::from(canvas.height()) {
            return;
        }
        let pixel = canvas.get_pixel_mut(px as u32, py as u32);
        *pixel = blend(*pixel, ink, coverage);
    });
}

/// The words (their shapes) in lines no wider than `width` font units, as
/// indices (a word wider than that on a line of its own).
fn wrap(words: &[Shaped], space: i32, width: i32) -> Vec<Vec<usize>> {
    let mut lines: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    let mut used = 0;
    for (i, word) in words.iter().enumerate() {
        let extra = if current.is_empty() {
            word.width
        } else {
            space + word.width
        };
        if !current.is_empty() && used + extra > width {
            lines.push(std::mem::take(&mut current));
            used = word.width;
        } else {
            used += extra;
        }
        current.push(i);
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines
}

/// The box around boxes.
pub(crate) fn union(rects: &[Rect]) -> Rect {
    let left = rects.iter().map(|r| r.left).min().unwrap_or(0);
    let top = rects.iter().map(|r| r.top).min().unwrap_or(0);
    let right = rects.iter().map(|r| r.left + r.width).max().unwrap_or(left);
    let bottom = rects.iter().map(|r| r.top + r.height).max().unwrap_or(top);
    Rect {
        left,
        top,
        width: right - left,
        height: bottom - top,
    }
}

/// The pixels of `rect` grown by `pad`, within the canvas.
fn pixels(canvas: &RgbaImage, rect: Rect, pad: u32) -> impl Iterator<Item = (u32, u32)> + use<> {
    let x0 = rect.left.saturating_sub(pad);
    let y0 = rect.top.saturating_sub(pad);
    let x1 = (rect.left + rect.width + pad).min(canvas.width());
    let y1 = (rect.top + rect.height + pad).min(canvas.height());
    (y0..y1).flat_map(move |y| (x0..x1).map(move |x| (x, y)))
}

/// The pixels of a ring 2 to 5 pixels outside `area` (inside the canvas).
fn ring(canvas: &RgbaImage, area: Rect) -> Vec<Rgba<u8>> {
    let (inner, outer) = (PAD + 2, PAD + 5);
    let x0 = area.left.saturating_sub(outer);
    let y0 = area.top.saturating_sub(outer);
    let x1 = (area.left + area.width + outer).min(canvas.width());
    let y1 = (area.top + area.height + outer).min(canvas.height());
    let inside = |x: u32, y: u32| {
        x + inner >= area.left
            && x < area.left + area.width + inner
            && y + inner >= area.top
            && y < area.top + area.height + inner
    };
    let mut out = Vec::new();
    for y in y0..y1 {
        for x in x0..x1 {
            if !inside(x, y) {
                out.push(*canvas.get_pixel(x, y));
            }
        }
    }
    if out.is_empty() {
        // The paragraph fills the image: its own edge pixels.
        out.extend(pixels(canvas, area, 0).map(|(x, y)| *canvas.get_pixel(x, y)));
    }
    out
}

/// Each channel's median.
fn median(pixels: &[Rgba<u8>]) -> Rgba<u8> {
    let mut out = [255u8; 4];
    for (c, slot) in out.iter_mut().enumerate() {
        let mut values: Vec<u8> = pixels.iter().map(|p| p.0[c]).collect();
        if values.is_empty() {
            continue;
        }
        values.sort_unstable();
        *slot = values[values.len() / 2];
    }
    Rgba(out)
}

/// The colour of the text among `pixels`: the mean of those farthest from
/// the background (the stroke cores, not their anti-aliased edges); the
/// background's opposite when nothing stands out.
fn ink(pixels: &[Rgba<u8>], background: Rgba<u8>) -> Rgba<u8> {
    let distance = |p: &Rgba<u8>| {
        (0..3)
            .map(|c| (i32::from(p.0[c]) - i32::from(background.0[c])).pow(2))
            .sum::<i32>()
    };
    let far = pixels.iter().map(distance).max().unwrap_or(0);
    if far < 48 * 48 {
        let luma =
            u32::from(background.0[0]) + u32::from(background.0[1]) + u32::from(background.0[2]);
        return if luma > 3 * 128 {
            Rgba([0, 0, 0, 255])
        } else {
            Rgba([255, 255, 255, 255])
        };
    }
    let cores: Vec<&Rgba<u8>> = pixels
        .iter()
        .filter(|p| distance(p) * 10 >= far * 6)
        .collect();
    let mut sum = [0u64; 4];
    for p in &cores {
        for (c, s) in sum.iter_mut().enumerate() {
            *s += u64::from(p.0[c]);
        }
    }
    let n = cores.len().max(1) as u64;
    Rgba(sum.map(|s| (s / n) as u8))
}

/// `ink` over `under` at `coverage` (0–1).
fn blend(under: Rgba<u8>, ink: Rgba<u8>, coverage: f32) -> Rgba<u8> {
    let a = coverage.clamp(0.0, 1.0);
    let mix = |u: u8, i: u8| (f32::from(u) * (1.0 - a) + f32::from(i) * a).round() as u8;
    Rgba([
        mix(under.0[0], ink.0[0]),
        mix(under.0[1], ink.0[1]),
        mix(under.0[2], ink.0[2]),
        under.0[3].max((a * 255.0) as u8),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ink_is_what_stands_out_from_the_background() {
        let bg = Rgba([250, 245, 230, 255]);
        let text = Rgba([20, 20, 80, 255]);
        let edge = Rgba([135, 132, 155, 255]);
        let mut pixels = vec![bg; 50];
        pixels.extend([text; 10]);
        pixels.extend([edge; 10]);
        assert_eq!(median(&pixels), bg);
        assert_eq!(ink(&pixels, bg), text);
        assert_eq!(ink(&[bg; 4], bg), Rgba([0, 0, 0, 255]));
    }
}
