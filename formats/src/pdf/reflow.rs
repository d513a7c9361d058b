//! A PDF as an editable Word document (`output_format=docx` of a PDF, made
//! from the translated PDF): its paragraphs in reading order, page after
//! page, as flowing text — headings (Heading 1–3) where the type is larger
//! than the body's, bulleted and numbered lists where lines start with a
//! bullet or a number, bold, italic and coloured stretches as runs in the
//! face class (serif, sans, mono) of the original — and its images in place
//! between them, at their size on the page, and paragraphs laid out as a
//! grid as Word tables ([`super::grid`]). Page numbers alone at a page's
//! top or bottom are left out; the page size is the first page's.

use std::collections::BTreeMap;
use std::io::Cursor;

use docx_rs::{
    AbstractNumbering, AlignmentType, Docx, IndentLevel, Level, LevelJc, LevelText, NumberFormat,
    Numbering, NumberingId, PageMargin, Paragraph as DocxParagraph, Pic, Run as DocxRun, RunFonts,
    SpecialIndentType, Start, Style as DocxStyle, StyleType, Table as DocxTable, TableCell,
    TableRow, WidthType,
};
use lopdf::{Document as Pdf, ObjectId};

use super::fonts::{Class, Fonts, Style};
use super::layout::{Align, ListKind, Paragraph, list_marker, marker_only};
use super::text::Color;
use super::write::media_box;
use super::{grid, xobjects};
use crate::FormatError;

/// The list kinds' numbering ids.
const BULLETS: usize = 1;
const NUMBERS: usize = 2;
/// EMU per point.
const EMU_PER_POINT: f32 = 12_700.0;

/// What goes into the document, in order.
enum Block {
    Paragraph(Paragraph, Align),
    Image(Image),
    Table(Table),
}

/// A table: its columns' widths in points, and its rows of cells.
struct Table {
    widths: Vec<f32>,
    rows: Vec<Vec<Option<(Paragraph, Align)>>>,
}

/// An image as placed on its page.
struct Image {
    png: Vec<u8>,
    pixels: (u32, u32),
    /// Width and height on the page, in points.
    size: (f32, f32),
}

/// A box on a page, in page space (`top` above `bottom`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Area {
    left: f32,
    right: f32,
    top: f32,
    bottom: f32,
}

/// The PDF `input` as a Word document.
pub(crate) fn to_docx(input: &[u8], fonts: Option<&Fonts>) -> Result<Vec<u8>, FormatError> {
    let pdf = super::load(input)?;
    let fonts = fonts.cloned().unwrap_or_default();
    let pages: Vec<ObjectId> = pdf.get_pages().into_values().collect();
    let mut blocks = Vec::new();
    for &page in &pages {
        blocks.extend(page_blocks(&pdf, page, &fonts));
    }
    let body = body_size(&blocks);
    let headings = heading_sizes(&blocks, body);
    let (x0, y0, x1, y1) = pages
        .first()
        .map_or((0.0, 0.0, 612.0, 792.0), |p| media_box(&pdf, *p));
    let twips = |points: f32| (points * 20.0).round().max(0.0) as u32;
    let mut docx = Docx::new()
        .page_size(twips(x1 - x0), twips(y1 - y0))
        .page_margin(
            PageMargin::new()
                .top(1134)
                .bottom(1134)
                .left(1134)
                .right(1134),
        )
        .default_size(half_points(body))
        .add_abstract_numbering(list_definition(BULLETS, "bullet", "\u{2022}"))
        .add_numbering(Numbering::new(BULLETS, BULLETS))
        .add_abstract_numbering(list_definition(NUMBERS, "decimal", "%1."))
        .add_numbering(Numbering::new(NUMBERS, NUMBERS));
    for level in 1..=3 {
        docx = docx.add_style(
            DocxStyle::new(format!("Heading{level}"), StyleType::Paragraph)
                .name(format!("Heading {level}"))
                .based_on("Normal")
                .next("Normal")
                .bold()
                .outline_lvl(level - 1),
        );
    }
    let mut writable = (twips(x1 - x0).saturating_sub(2 * 1134)) as f32 / 20.0;
    if writable <= 0.0 {
        writable = 400.0;
    }
    for block in blocks {
        docx = match block {
            Block::Paragraph(p, align) => {
                let level = headings.get(&size_key(p.size)).copied();
                docx.add_paragraph(docx_paragraph(&p, align, level, body))
            }
            Block::Table(table) => {
                let scale = (writable / table.widths.iter().sum::<f32>()).min(1.0);
                let widths: Vec<usize> = table
                    .widths
                    .iter()
                    .map(|w| twips(w * scale) as usize)
                    .collect();
                let rows = table
                    .rows
                    .iter()
                    .map(|row| {
                        let cells = row
                            .iter()
                            .zip(&widths)
                            .map(|(cell, width)| {
                                let paragraph = match cell {
                                    Some((p, align)) => docx_paragraph(p, *align, None, body),
                                    None => DocxParagraph::new(),
                                };
                                TableCell::new()
                                    .add_paragraph(paragraph)
                                    .width(*width, WidthType::Dxa)
                            })
                            .collect();
                        TableRow::new(cells)
                    })
                    .collect();
                docx.add_table(DocxTable::new(rows).set_grid(widths))
            }
            Block::Image(image) => {
                let scale = (writable / image.size.0).min(1.0);
                let emu = |points: f32| (points * scale * EMU_PER_POINT).round().max(1.0) as u32;
                let pic = Pic::new_with_dimensions(image.png, image.pixels.0, image.pixels.1)
                    .size(emu(image.size.0), emu(image.size.1));
                let run = DocxRun::new().add_image(pic);
                docx.add_paragraph(DocxParagraph::new().style("Normal").add_run(run))
            }
        };
    }
    let mut out = Cursor::new(Vec::new());
    docx.build()
        .pack(&mut out)
        .map_err(|e| FormatError::Write(format!("the Word document could not be written: {e}")))?;
    Ok(out.into_inner())
}

/// A page's paragraphs and images in reading order ([`reading_order`]);
/// list markers set apart from their items, and page numbers alone at the
/// page's top or bottom, left out.
fn page_blocks(pdf: &Pdf, page: ObjectId, fonts: &Fonts) -> Vec<Block> {
    let Some(ops) = super::page_operations(pdf, page) else {
        return Vec::new();
    };
    let (_, paragraphs) = super::page_text(pdf, page, &ops, fonts);
    let (x0, y0, x1, y1) = media_box(pdf, page);
    let center = (x0 + x1) / 2.0;
    let margin = (y1 - y0) * 0.08;
    let mut blocks: Vec<(Area, Block)> = Vec::new();
    for paragraph in paragraphs {
        let (top, bottom) = paragraph.band();
        let (left, right) = paragraph.x_range();
        let markers = paragraph
            .lines
            .iter()
            .all(|l| marker_only(&l.text).is_some());
        let number_only = paragraph
            .text
            .trim()
            .chars()
            .all(|c| c.is_ascii_digit() || c.is_whitespace() || "-–/".contains(c));
        let page_number = number_only && (top > y1 - margin || bottom < y0 + margin);
        if markers || page_number || paragraph.text.trim().is_empty() {
            continue;
        }
        let align = paragraph.align(center);
        let area = Area {
            left,
            right,
            top,
            bottom,
        };
        blocks.push((area, Block::Paragraph(paragraph, align)));
    }
    let mut blocks = with_tables(blocks);
    for placed in xobjects::placed(pdf, page, &ops) {
        let Some(picture) = xobjects::picture(pdf, placed.id) else {
            continue;
        };
        let mut png = Cursor::new(Vec::new());
        if picture
            .image
            .write_to(&mut png, image::ImageFormat::Png)
            .is_err()
        {
            continue;
        }
        let (left, bottom, right, top) = placed.bounds();
        let area = Area {
            left,
            right,
            top,
            bottom,
        };
        let image = Image {
            png: png.into_inner(),
            pixels: (picture.image.width(), picture.image.height()),
            size: placed.size(),
        };
        blocks.push((area, Block::Image(image)));
    }
    let areas: Vec<Area> = blocks.iter().map(|(a, _)| *a).collect();
    let mut slots: Vec<Option<Block>> = blocks.into_iter().map(|(_, b)| Some(b)).collect();
    reading_order(&areas)
        .into_iter()
        .filter_map(|i| slots[i].take())
        .collect()
}

/// A page's paragraphs with those laid out as a grid made tables.
fn with_tables(blocks: Vec<(Area, Block)>) -> Vec<(Area, Block)> {
    let cells: Vec<grid::Cell> = blocks
        .iter()
        .map(|(area, block)| grid::Cell {
            left: area.left,
            right: area.right,
            baseline: match block {
                Block::Paragraph(p, _) => p.lines[0].y,
                _ => f32::NAN,
            },
        })
        .collect();
    let grids = grid::tables(&cells);
    if grids.is_empty() {
        return blocks;
    }
    let mut slots: Vec<Option<(Area, Block)>> = blocks.into_iter().map(Some).collect();
    let mut out = Vec::new();
    for grid in grids {
        let mut area: Option<Area> = None;
        let mut rows = Vec::new();
        for row in &grid.rows {
            let mut cells = Vec::new();
            for index in row {
                let cell = index.and_then(|i| slots[i].take());
                cells.push(match cell {
                    Some((at, Block::Paragraph(p, align))) => {
                        area = Some(area.map_or(at, |a| Area {
                            left: a.left.min(at.left),
                            right: a.right.max(at.right),
                            top: a.top.max(at.top),
                            bottom: a.bottom.min(at.bottom),
                        }));
                        Some((p, align))
                    }
                    _ => None,
                });
            }
            rows.push(cells);
        }
        // Each column reaches to the next one's start.
        let widths = grid
            .columns
            .iter()
            .enumerate()
            .map(|(i, (left, right))| {
                grid.columns
                    .get(i + 1)
                    .map_or(right - left + 12.0, |(next, _)| next - left)
            })
            .collect();
        if let Some(area) = area {
            out.push((area, Block::Table(Table { widths, rows })));
        }
    }
    out.extend(slots.into_iter().flatten());
    out
}

/// The order a reader takes a page's boxes in (a recursive XY cut): split
/// into columns where a vertical gap runs through all of them, else into
/// bands where a horizontal gap does, each part ordered the same way; boxes
/// that no gap parts are read top to bottom, left to right.
fn reading_order(areas: &[Area]) -> Vec<usize> {
    let mut order = Vec::with_capacity(areas.len());
    cut(areas, (0..areas.len()).collect(), &mut order, 0);
    order
}

fn cut(areas: &[Area], mut items: Vec<usize>, order: &mut Vec<usize>, depth: usize) {
    if items.len() > 1 && depth < 64 {
        let columns = split(areas, &mut items, true);
        if columns.len() > 1 {
            for column in columns {
                cut(areas, column, order, depth + 1);
            }
            return;
        }
        // Bands one under another; consecutive bands that are each in
        // columns, and still are together, are one stretch of columns (a
        // gap across both columns is not the end of the first).
        let in_columns = |part: &[usize]| split(areas, &mut part.to_vec(), true).len() > 1;
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for band in split(areas, &mut items, false) {
            match groups.last_mut() {
                Some(group)
                    if in_columns(group)
                        && in_columns(&band)
                        && in_columns(&[group.as_slice(), &band].concat()) =>
                {
                    group.extend(band)
                }
                _ => groups.push(band),
            }
        }
        if groups.len() > 1 {
            for group in groups {
                cut(areas, group, order, depth + 1);
            }
            return;
        }
    }
    items.sort_by(|&a, &b| {
        areas[b]
            .top
            .total_cmp(&areas[a].top)
            .then(areas[a].left.total_cmp(&areas[b].left))
    });
    order.extend(items);
}

/// `items` parted where a gap runs between them: left to right across
/// (`vertical`), else top to bottom.
fn split(areas: &[Area], items: &mut [usize], vertical: bool) -> Vec<Vec<usize>> {
    // Each box as an interval along the cut's axis, the first one read first.
    let span = |i: usize| {
        let a = areas[i];
        match vertical {
            true => (a.left, a.right),
            false => (-a.top, -a.bottom),
        }
    };
    items.sort_by(|&a, &b| span(a).0.total_cmp(&span(b).0));
    let mut parts: Vec<Vec<usize>> = Vec::new();
    let mut reach = f32::MIN;
    for &i in items.iter() {
        let (start, end) = span(i);
        match parts.last_mut() {
            Some(part) if start < reach + 0.5 => part.push(i),
            _ => parts.push(vec![i]),
        }
        reach = reach.max(end);
    }
    parts
}

/// A list's numbering definition: one level, hanging indent.
fn list_definition(id: usize, format: &str, text: &str) -> AbstractNumbering {
    AbstractNumbering::new(id).add_level(
        Level::new(
            0,
            Start::new(1),
            NumberFormat::new(format),
            LevelText::new(text),
            LevelJc::new("left"),
        )
        .indent(Some(720), Some(SpecialIndentType::Hanging(360)), None, None),
    )
}

/// A size as a key (half points).
fn size_key(size: f32) -> u32 {
    (size * 2.0).round().max(0.0) as u32
}

fn half_points(size: f32) -> usize {
    size_key(size).max(2) as usize
}

/// The size most of the text is set in.
fn body_size(blocks: &[Block]) -> f32 {
    let mut by_size: BTreeMap<u32, usize> = BTreeMap::new();
    for block in blocks {
        if let Block::Paragraph(p, _) = block {
            *by_size.entry(size_key(p.size)).or_default() += p.text.chars().count();
        }
    }
    by_size
        .into_iter()
        .max_by_key(|(_, chars)| *chars)
        .map_or(11.0, |(key, _)| key as f32 / 2.0)
}

/// The heading level of each size clearly larger than the body's, set in
/// short paragraphs: the largest level 1, the next 2, the rest 3.
fn heading_sizes(blocks: &[Block], body: f32) -> BTreeMap<u32, usize> {
    let mut sizes: Vec<u32> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Paragraph(p, _)
                if p.size >= body * 1.15
                    && p.text.chars().count() <= 200
                    && p.lines[0].item.is_none() =>
            {
                Some(size_key(p.size))
            }
            _ => None,
        })
        .collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    sizes.dedup();
    sizes
        .into_iter()
        .enumerate()
        .map(|(i, key)| (key, (i + 1).min(3)))
        .collect()
}

/// The Word paragraph of a PDF paragraph: a list item (its marker made
/// the list's) when it starts with a bullet or a number, or beside one.
fn docx_paragraph(p: &Paragraph, align: Align, heading: Option<usize>, body: f32) -> DocxParagraph {
    let Some(kind) = p.lines[0].item else {
        return styled(p, 0..p.text.len(), align, heading, body);
    };
    let id = match kind {
        ListKind::Bullets => BULLETS,
        ListKind::Numbers => NUMBERS,
    };
    let marker = list_marker(&p.text).map_or(0, |(_, length)| length);
    styled(p, marker..p.text.len(), Align::Left, None, body)
        .numbering(NumberingId::new(id), IndentLevel::new(0))
}

/// The Word paragraph of `range` of a PDF paragraph's text, its stretches
/// of one style and colour as runs.
fn styled(
    p: &Paragraph,
    range: std::ops::Range<usize>,
    align: Align,
    heading: Option<usize>,
    body: f32,
) -> DocxParagraph {
    let mut out = DocxParagraph::new().style(&match heading {
        Some(level) => format!("Heading{level}"),
        None => "Normal".to_owned(),
    });
    out = match align {
        Align::Center => out.align(AlignmentType::Center),
        Align::Right => out.align(AlignmentType::Right),
        Align::Justified => out.align(AlignmentType::Both),
        Align::Left => out,
    };
    for (i, run) in p.runs.iter().enumerate() {
        let end = p.runs.get(i + 1).map_or(p.text.len(), |r| r.at);
        let (from, to) = (run.at.max(range.start), end.min(range.end));
        let Some(text) = p.text.get(from..to).filter(|t| !t.is_empty()) else {
            continue;
        };
        let text = if to == range.end {
            text.trim_end()
        } else {
            text
        };
        let mut r = DocxRun::new().add_text(text).fonts(
            RunFonts::new()
                .ascii(face(run.style))
                .hi_ansi(face(run.style)),
        );
        // A list item's size is its text's, not its marker's.
        if (p.size - body).abs() >= 0.5 && p.lines[0].item.is_none() {
            r = r.size(half_points(p.size));
        }
        if run.style.bold {
            r = r.bold();
        }
        if run.style.italic {
            r = r.italic();
        }
        if let Some(hex) = hex(run.color) {
            r = r.color(hex);
        }
        out = out.add_run(r);
    }
    out
}

/// The family a run is set in, by the class of its original face (the
/// Liberation fonts share these families' metrics).
fn face(style: Style) -> &'static str {
    match style.class {
        Class::Serif => "Times New Roman",
        Class::Sans => "Arial",
        Class::Mono => "Courier New",
    }
}

/// A colour as `RRGGBB`; `None` for black.
fn hex(color: Color) -> Option<String> {
    let (r, g, b) = match color {
        Color::Gray(g) => (g, g, g),
        Color::Rgb(r, g, b) => (r, g, b),
        Color::Cmyk(c, m, y, k) => (
            (1.0 - c) * (1.0 - k),
            (1.0 - m) * (1.0 - k),
            (1.0 - y) * (1.0 - k),
        ),
    };
    let byte = |v: f32| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
    let (r, g, b) = (byte(r), byte(g), byte(b));
    (r.max(g).max(b) > 24).then(|| format!("{r:02X}{g:02X}{b:02X}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(left: f32, right: f32, top: f32, bottom: f32) -> Area {
        Area {
            left,
            right,
            top,
            bottom,
        }
    }

    #[test]
    fn a_heading_then_two_columns_read_column_after_column() {
        let areas = [
            area(300.0, 500.0, 700.0, 600.0), // right column, first
            area(100.0, 280.0, 700.0, 600.0), // left column, first
            area(100.0, 500.0, 780.0, 750.0), // heading across both
            area(100.0, 280.0, 590.0, 500.0), // left column, second
            area(300.0, 500.0, 590.0, 400.0), // right column, second
            area(100.0, 500.0, 300.0, 250.0), // a paragraph across, below
        ];
        assert_eq!(reading_order(&areas), [2, 1, 3, 0, 4, 5]);
    }

    #[test]
    fn colours_are_hex_and_black_is_none() {
        assert_eq!(hex(Color::Rgb(0.0, 0.0, 1.0)).as_deref(), Some("0000FF"));
        assert_eq!(hex(Color::Gray(0.0)), None);
        assert_eq!(hex(Color::Cmyk(0.0, 0.0, 0.0, 1.0)), None);
    }
}
