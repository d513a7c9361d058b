//! The XObjects a page draws: each `Do` of an image XObject in its content
//! with the transformation that places it, and the image's samples
//! decoded — JPEG (`DCTDecode`) and 8-bit grey or RGB samples under any
//! filter lopdf inflates; other kinds (JPEG 2000, CCITT, indexed colours,
//! other depths) are left out. And whether it draws form XObjects that
//! show text (text the filter leaves as it is).

use std::collections::BTreeMap;

use image::DynamicImage;
use lopdf::content::{Content, Operation};
use lopdf::{Document as Pdf, Object, ObjectId};

use super::decode::{deref, number};
use super::text::Matrix;

/// The largest image decoded, in pixels (a bound on what decoding holds).
const MAX_IMAGE_PIXELS: u64 = 40_000_000;

/// An image XObject as a page's content draws it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Placed {
    pub id: ObjectId,
    /// The transformation at the `Do`: it maps the unit square (the
    /// image's bottom left at 0 0, its top right at 1 1) onto the page.
    pub ctm: Matrix,
}

impl Placed {
    /// Its bounds on the page: `left, bottom, right, top`.
    pub fn bounds(&self) -> (f32, f32, f32, f32) {
        let [a, b, c, d, e, f] = self.ctm.0;
        let xs = [e, e + a, e + c, e + a + c];
        let ys = [f, f + b, f + d, f + b + d];
        (
            xs.iter().copied().fold(f32::MAX, f32::min),
            ys.iter().copied().fold(f32::MAX, f32::min),
            xs.iter().copied().fold(f32::MIN, f32::max),
            ys.iter().copied().fold(f32::MIN, f32::max),
        )
    }

    /// Its width and height on the page, in points.
    pub fn size(&self) -> (f32, f32) {
        let [a, b, c, d, ..] = self.ctm.0;
        (a.hypot(b), c.hypot(d))
    }
}

/// An image's samples, and how they were stored.
pub(super) struct Picture {
    pub image: DynamicImage,
    /// Stored as a JPEG (`DCTDecode`).
    pub jpeg: bool,
}

/// The images a page's content draws (`Do` of an image XObject at least a
/// point wide and high), in drawing order.
pub(super) fn placed(pdf: &Pdf, page: ObjectId, ops: &[Operation]) -> Vec<Placed> {
    let xobjects = page_xobjects(pdf, page);
    let mut stack: Vec<Matrix> = Vec::new();
    let mut ctm = Matrix::IDENTITY;
    let mut images = Vec::new();
    for op in ops {
        match op.operator.as_str() {
            "q" if stack.len() < 256 => stack.push(ctm),
            "Q" => ctm = stack.pop().unwrap_or(Matrix::IDENTITY),
            "cm" => {
                let n: Vec<f32> = op.operands.iter().filter_map(number).collect();
                if let [a, b, c, d, e, f] = n[..] {
                    ctm = Matrix([a, b, c, d, e, f]).then(&ctm);
                }
            }
            "Do" => {
                let Some(id) = op
                    .operands
                    .first()
                    .and_then(|n| n.as_name().ok())
                    .and_then(|n| xobjects.get(n))
                else {
                    continue;
                };
                let image = pdf
                    .get_object(*id)
                    .and_then(Object::as_stream)
                    .is_ok_and(|s| {
                        s.dict
                            .get(b"Subtype")
                            .and_then(Object::as_name)
                            .is_ok_and(|n| n == b"Image")
                    });
                let placed = Placed { id: *id, ctm };
                let (width, height) = placed.size();
                if image && width >= 1.0 && height >= 1.0 {
                    images.push(placed);
                }
            }
            _ => {}
        }
    }
    images
}

/// The most a form XObject's content may inflate to while it is looked at.
const FORM_LIMIT: usize = 16 << 20;

/// Whether the page's content draws a form XObject whose own content shows
/// text.
pub(super) fn draws_form_text(pdf: &Pdf, page: ObjectId, ops: &[Operation]) -> bool {
    let xobjects = page_xobjects(pdf, page);
    ops.iter()
        .filter(|op| op.operator == "Do")
        .filter_map(|op| op.operands.first()?.as_name().ok())
        .filter_map(|name| xobjects.get(name))
        .filter_map(|id| pdf.get_object(*id).and_then(Object::as_stream).ok())
        .filter(|s| {
            s.dict
                .get(b"Subtype")
                .and_then(Object::as_name)
                .is_ok_and(|n| n == b"Form")
        })
        .any(|form| {
            let content = match form.dict.get(b"Filter") {
                Ok(_) => form.decompressed_content_with_limit(FORM_LIMIT).ok(),
                Err(_) => Some(form.content.clone()),
            };
            content
                .and_then(|c| Content::decode(&c).ok())
                .is_some_and(|c| {
                    c.operations
                        .iter()
                        .any(|op| matches!(op.operator.as_str(), "Tj" | "TJ" | "'" | "\""))
                })
        })
}

/// The page's XObjects by resource name (its own, or inherited).
fn page_xobjects(pdf: &Pdf, page: ObjectId) -> BTreeMap<Vec<u8>, ObjectId> {
    let mut found = BTreeMap::new();
    let Ok((direct, inherited)) = pdf.get_page_resources(page) else {
        return found;
    };
    let dicts = direct.into_iter().chain(
        inherited
            .iter()
            .filter_map(|id| pdf.get_dictionary(*id).ok()),
    );
    for resources in dicts {
        let Some(Object::Dictionary(xobjects)) =
            resources.get(b"XObject").ok().and_then(|x| deref(pdf, x))
        else {
            continue;
        };
        for (name, value) in xobjects.iter() {
            if let Ok(id) = value.as_reference() {
                found.entry(name.clone()).or_insert(id);
            }
        }
    }
    found
}

/// An image XObject's samples; `None` for kinds not read (see the module's
/// note), damaged ones and ones over the size bound.
pub(super) fn picture(pdf: &Pdf, id: ObjectId) -> Option<Picture> {
    let stream = pdf.get_object(id).ok()?.as_stream().ok()?;
    let dict = &stream.dict;
    if dict.get(b"Subtype").ok()?.as_name().ok()? != b"Image" {
        return None;
    }
    let width = u32::try_from(dict.get(b"Width").ok()?.as_i64().ok()?).ok()?;
    let height = u32::try_from(dict.get(b"Height").ok()?.as_i64().ok()?).ok()?;
    if width == 0 || height == 0 || u64::from(width) * u64::from(height) > MAX_IMAGE_PIXELS {
        return None;
    }
    let filters: Vec<Vec<u8>> = match dict.get(b"Filter").ok().and_then(|f| deref(pdf, f)) {
        Some(Object::Name(n)) => vec![n.clone()],
        Some(Object::Array(a)) => a
            .iter()
            .filter_map(|f| f.as_name().ok().map(<[u8]>::to_vec))
            .collect(),
        _ => Vec::new(),
    };
    if filters.last().is_some_and(|f| f == b"DCTDecode") {
        if filters.len() != 1 {
            return None;
        }
        let mut reader = image::ImageReader::with_format(
            std::io::Cursor::new(&stream.content),
            image::ImageFormat::Jpeg,
        );
        let mut limits = image::Limits::default();
        limits.max_alloc = Some(MAX_IMAGE_PIXELS * 4);
        reader.limits(limits);
        let image = reader.decode().ok()?;
        return Some(Picture { image, jpeg: true });
    }
    if dict.get(b"BitsPerComponent").ok()?.as_i64().ok()? != 8 {
        return None;
    }
    let samples = match filters.is_empty() {
        true => stream.content.clone(),
        false => {
            // Room for the samples and some slack, not for a bomb.
            let bound = width as usize * height as usize * 3 * 2 + 4096;
            stream.decompressed_content_with_limit(bound).ok()?
        }
    };
    let image = match components(pdf, dict)? {
        1 => image::GrayImage::from_raw(width, height, truncated(samples, width, height, 1)?)
            .map(DynamicImage::ImageLuma8)?,
        3 => image::RgbImage::from_raw(width, height, truncated(samples, width, height, 3)?)
            .map(DynamicImage::ImageRgb8)?,
        _ => return None,
    };
    Some(Picture { image, jpeg: false })
}

/// The samples of a `width` × `height` image of `n` components, cut to
/// their size; `None` when there are too few.
fn truncated(mut samples: Vec<u8>, width: u32, height: u32, n: usize) -> Option<Vec<u8>> {
    let size = width as usize * height as usize * n;
    (samples.len() >= size).then(|| {
        samples.truncate(size);
        samples
    })
}

/// How many colour components an image's colour space has (grey 1, RGB 3;
/// an ICC profile says); `None` for others.
fn components(pdf: &Pdf, dict: &lopdf::Dictionary) -> Option<usize> {
    match dict.get(b"ColorSpace").ok().and_then(|c| deref(pdf, c))? {
        Object::Name(n) if n == b"DeviceGray" || n == b"CalGray" => Some(1),
        Object::Name(n) if n == b"DeviceRGB" || n == b"CalRGB" => Some(3),
        Object::Array(a) => match a.first()?.as_name().ok()? {
            b"ICCBased" => {
                let profile = a.get(1)?.as_reference().ok()?;
                let n = pdf
                    .get_object(profile)
                    .ok()?
                    .as_stream()
                    .ok()?
                    .dict
                    .get(b"N")
                    .ok()?;
                usize::try_from(n.as_i64().ok()?)
                    .ok()
                    .filter(|n| *n == 1 || *n == 3)
            }
            b"CalGray" => Some(1),
            b"CalRGB" => Some(3),
            _ => None,
        },
        _ => None,
    }
}
