//! Scanned pages: a page that shows no text of its own but draws an image
//! covering at least half of it is read by OCR (the recogniser the options
//! carry; without one the page is left as it is), each recognised
//! paragraph a segment. Writing back paints each translation over the
//! image as the image filter does (the original lines filled with the
//! background around them, the translation in the original's colour and
//! size), stores the image again (a JPEG as a JPEG, other samples
//! deflated) and lays over it an invisible text layer (render mode 3) of
//! the translation, line on painted line, so that the page's text can be
//! searched, selected and copied. A text layer the page had (invisible
//! text, as OCR tools write it) is in the source language and is removed.
//!
//! An image drawn on several pages is read and painted once; the text
//! layer goes on the first page that draws it.

use std::collections::{BTreeSet, HashSet};
use std::io::Cursor;

use image::{DynamicImage, ImageFormat, RgbaImage};
use lopdf::content::Operation;
use lopdf::{Document as Pdf, Object, ObjectId, Stream};

use super::embed::{self, Embedder};
use super::fonts::Fonts;
use super::text::{Color, Matrix};
use super::typeset::{Set, line_of};
use super::xobjects::{self, Placed};
use crate::images::{Rect, paint_over, recognise};
use crate::{ExtractOptions, FormatError, inline};

/// The share of a page an image covers to be taken for a scan.
const COVER: f32 = 0.5;
/// The quality a painted JPEG is stored at.
const JPEG_QUALITY: u8 = 90;

/// A scanned image of a page and the paragraphs read in it.
pub(super) struct Scan {
    pub placed: Placed,
    /// Each paragraph's segment and its lines' boxes, in the image's
    /// pixels.
    pub paragraphs: Vec<(usize, Vec<Rect>)>,
}

impl Scan {
    /// Whether a paragraph's translation differs from its source.
    pub fn changed(&self, source: &[String], translated: &[String]) -> bool {
        self.paragraphs
            .iter()
            .any(|(segment, _)| differs(source, translated, *segment))
    }
}

fn differs(source: &[String], translated: &[String], segment: usize) -> bool {
    source.get(segment) != translated.get(segment)
}

/// The scans of a page whose `shows` paint no text, read by OCR; their
/// paragraphs are pushed to `segments`. Images already read (`seen`) are
/// not read again.
pub(super) fn read(
    pdf: &Pdf,
    page: ObjectId,
    ops: &[Operation],
    options: &ExtractOptions,
    seen: &mut HashSet<ObjectId>,
    segments: &mut Vec<String>,
) -> Result<Vec<Scan>, FormatError> {
    let Some(ocr) = &options.ocr else {
        return Ok(Vec::new());
    };
    let (x0, y0, x1, y1) = super::write::media_box(pdf, page);
    let page_area = (x1 - x0) * (y1 - y0);
    let mut scans = Vec::new();
    for placed in xobjects::placed(pdf, page, ops) {
        let (left, bottom, right, top) = placed.bounds();
        let covered =
            (right.min(x1) - left.max(x0)).max(0.0) * (top.min(y1) - bottom.max(y0)).max(0.0);
        if covered < page_area * COVER || !seen.insert(placed.id) {
            continue;
        }
        let Some(bytes) = ocr_input(pdf, placed.id) else {
            continue;
        };
        let mut paragraphs = Vec::new();
        for paragraph in recognise(&bytes, ocr, options.source_language.as_deref())? {
            paragraphs.push((segments.len(), paragraph.lines));
            segments.push(inline::escape(&paragraph.text));
        }
        if !paragraphs.is_empty() {
            scans.push(Scan { placed, paragraphs });
        }
    }
    Ok(scans)
}

/// The image as the recogniser reads it: a JPEG's own bytes, other samples
/// as PNG.
fn ocr_input(pdf: &Pdf, id: ObjectId) -> Option<Vec<u8>> {
    let picture = xobjects::picture(pdf, id)?;
    if picture.jpeg {
        return Some(pdf.get_object(id).ok()?.as_stream().ok()?.content.clone());
    }
    let mut png = Cursor::new(Vec::new());
    picture.image.write_to(&mut png, ImageFormat::Png).ok()?;
    Some(png.into_inner())
}

/// Paints the translations of a scan's changed paragraphs over its image,
/// stores the image again, and gives the operators of its text layer (the
/// resource names of the faces they use go to `names`); nothing when no
/// paragraph changed.
pub(super) fn write(
    pdf: &mut Pdf,
    scan: &Scan,
    source: &[String],
    translated: &[String],
    fonts: &Fonts,
    embedder: &mut Embedder,
    names: &mut BTreeSet<String>,
) -> Result<Vec<Operation>, FormatError> {
    let changed: Vec<(&[Rect], String)> = scan
        .paragraphs
        .iter()
        .filter(|(segment, _)| differs(source, translated, *segment))
        .map(|(segment, lines)| (lines.as_slice(), inline::plain_text(&translated[*segment])))
        .collect();
    if changed.is_empty() {
        return Ok(Vec::new());
    }
    let picture = xobjects::picture(pdf, scan.placed.id).ok_or_else(|| {
        FormatError::Write("a scanned page's image could not be read again".to_owned())
    })?;
    let (width, height) = (picture.image.width(), picture.image.height());
    let mut canvas: RgbaImage = picture.image.to_rgba8();
    let painted = paint_over(&mut canvas, &changed, fonts)?;
    let stream = stored(pdf, scan.placed.id, canvas, &picture)?;
    pdf.objects.insert(scan.placed.id, Object::Stream(stream));

    // The layer is set in the image's pixels (y up), placed as the image is.
    let pixels = Matrix([1.0 / width as f32, 0.0, 0.0, 1.0 / height as f32, 0.0, 0.0]);
    let mut ops = vec![
        Operation::new("q", vec![]),
        matrix("cm", &scan.placed.ctm),
        matrix("cm", &pixels),
    ];
    for (face, lines) in painted {
        let Some(size) = lines.first().map(|l| l.size) else {
            continue;
        };
        let lines = lines
            .iter()
            .filter_map(|l| {
                let at = (l.left, height as f32 - l.baseline);
                line_of(fonts, face, Color::Gray(0.0), &l.text, at)
            })
            .collect();
        let set = Set { size, lines };
        let mut drawn = super::write::draw(&set, embedder, fonts, names);
        // After `BT`: nothing painted, the text there to find.
        drawn.insert(1, Operation::new("Tr", vec![Object::Integer(3)]));
        ops.extend(drawn);
    }
    ops.push(Operation::new("Q", vec![]));
    Ok(ops)
}

/// The operator `operator` (`cm`) with a matrix's six numbers.
fn matrix(operator: &str, m: &Matrix) -> Operation {
    Operation::new(operator, m.0.iter().copied().map(Object::Real).collect())
}

/// The painted image as the stream of XObject `id`: a JPEG again when it
/// was one (grey or RGB as decoded), else its samples deflated in the
/// original's colour space.
fn stored(
    pdf: &Pdf,
    id: ObjectId,
    canvas: RgbaImage,
    picture: &xobjects::Picture,
) -> Result<Stream, FormatError> {
    let mut dict = pdf
        .get_object(id)
        .and_then(Object::as_stream)
        .map(|s| s.dict.clone())
        .map_err(|e| FormatError::Write(e.to_string()))?;
    for key in [&b"Filter"[..], b"DecodeParms", b"Length"] {
        dict.remove(key);
    }
    dict.set("BitsPerComponent", 8);
    let grey = !picture.image.color().has_color();
    let painted = DynamicImage::ImageRgba8(canvas);
    if picture.jpeg {
        let mut out = Cursor::new(Vec::new());
        let mut encoder =
            image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY);
        let encoded = match grey {
            true => encoder.encode_image(&painted.to_luma8()),
            false => encoder.encode_image(&painted.to_rgb8()),
        };
        encoded.map_err(|e| FormatError::Write(e.to_string()))?;
        dict.remove(b"Decode");
        dict.set(
            "ColorSpace",
            Object::Name(
                if grey {
                    &b"DeviceGray"[..]
                } else {
                    b"DeviceRGB"
                }
                .to_vec(),
            ),
        );
        dict.set("Filter", Object::Name(b"DCTDecode".to_vec()));
        return Ok(Stream::new(dict, out.into_inner()));
    }
    let samples = match grey {
        true => painted.to_luma8().into_raw(),
        false => painted.to_rgb8().into_raw(),
    };
    Ok(embed::compressed(dict, samples))
}
