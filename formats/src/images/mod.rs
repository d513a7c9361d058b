//! Images (`.png`, `.jpg`, `.jpeg`): their text read by OCR (a
//! [`Recognizer`] the caller supplies; the worker runs tesseract), each
//! recognised paragraph a segment (lines joined, a hyphen at a line's end
//! joined away), and the translation painted over the original: the
//! paragraph's lines filled with the background around them, the
//! translation set in a face of the fonts given, in the colour of the
//! original text, as large as the original and shrunk to fit its box
//! ([`paint`]). The image keeps its size and is delivered in the type its
//! name declares (a PNG uploaded as `.jpg` comes back a JPEG); one whose
//! translation is the original is given back byte for byte.

mod ocr;
mod paint;

use std::io::Cursor;

use image::{DynamicImage, ImageFormat, ImageReader, Limits, RgbaImage};

use crate::filter::Document;
use crate::pdf::fonts::{Fonts, Style};
use crate::{ExtractOptions, FormatError, inline};
pub use ocr::{Ocr, Recognizer, tesseract_language};
pub(crate) use paint::{Painted, Rect};

/// Wider or higher images are refused.
const MAX_SIDE: u32 = 20_000;
/// What decoding an image may allocate.
const MAX_ALLOC: u64 = 512 << 20;
/// Words recognised with less confidence (0–100) are not text.
const MIN_CONFIDENCE: f32 = 40.0;

/// A recognised paragraph to translate: its segment and its lines' boxes.
struct Block {
    segment: usize,
    lines: Vec<Rect>,
}

/// Everything of an image but its text.
struct Skeleton {
    input: Vec<u8>,
    /// Whether the input's bytes are of the declared type.
    same: bool,
    /// The declared type, the output's.
    format: ImageFormat,
    image: DynamicImage,
    blocks: Vec<Block>,
    fonts: Fonts,
}

/// Reads a PNG picture's text as segments, one per recognised paragraph.
pub(crate) fn extract_png(input: &[u8], options: &ExtractOptions) -> Result<Document, FormatError> {
    extract(input, options, ImageFormat::Png)
}

/// Reads a JPEG picture's text as segments.
pub(crate) fn extract_jpeg(
    input: &[u8],
    options: &ExtractOptions,
) -> Result<Document, FormatError> {
    extract(input, options, ImageFormat::Jpeg)
}

/// Reads a picture uploaded as `declared` (whatever its bytes are: it is
/// delivered as declared).
fn extract(
    input: &[u8],
    options: &ExtractOptions,
    declared: ImageFormat,
) -> Result<Document, FormatError> {
    let (image, format) = decode(input)?;
    let Some(ocr) = &options.ocr else {
        return Err(FormatError::unsupported(
            "Text in images is read by OCR, and this server has no OCR engine (tesseract-ocr).",
        ));
    };
    let mut segments = Vec::new();
    let mut blocks = Vec::new();
    for paragraph in recognise(input, ocr, options.source_language.as_deref())? {
        blocks.push(Block {
            segment: segments.len(),
            lines: paragraph.lines,
        });
        segments.push(inline::escape(&paragraph.text));
    }
    Ok(Document::new(
        segments,
        Skeleton {
            input: input.to_vec(),
            same: format == declared,
            format: declared,
            image,
            blocks,
            fonts: options.fonts.clone().unwrap_or_default(),
        },
    ))
}

/// A recognised paragraph with a letter in it: its text (lines joined) and
/// its lines' boxes.
pub(crate) struct Recognised {
    pub text: String,
    pub lines: Vec<Rect>,
}

/// The paragraphs `ocr` reads in the picture `bytes` (PNG or JPEG) with
/// the model of the DeepL language `source` (English when not given).
pub(crate) fn recognise(
    bytes: &[u8],
    ocr: &Ocr,
    source: Option<&str>,
) -> Result<Vec<Recognised>, FormatError> {
    let tsv = ocr
        .0
        .recognize(bytes, tesseract_language(source))
        .map_err(|e| {
            FormatError::unsupported(format!("The image's text could not be read: {e}"))
        })?;
    Ok(paragraphs(ocr::words(&tsv))
        .into_iter()
        .map(|paragraph| Recognised {
            text: paragraph_text(&paragraph),
            lines: paragraph.iter().map(|line| line_box(line)).collect(),
        })
        .filter(|p| p.text.chars().any(char::is_alphabetic))
        .collect())
}

/// Paints translations over a picture: every paragraph's original lines
/// (`lines`) painted out first (so that no fill covers another's text),
/// then each `text` written into its box; the face (an index of `fonts`)
/// each paragraph was written in, and the lines painted.
pub(crate) fn paint_over(
    canvas: &mut RgbaImage,
    paragraphs: &[(&[Rect], String)],
    fonts: &Fonts,
) -> Result<Vec<(usize, Vec<Painted>)>, FormatError> {
    let inks: Vec<_> = paragraphs
        .iter()
        .map(|(lines, _)| paint::erase(canvas, lines))
        .collect();
    let mut painted = Vec::with_capacity(paragraphs.len());
    for ((lines, text), ink) in paragraphs.iter().zip(inks) {
        let Some(face) = fonts.choose(Style::default(), text) else {
            return Err(FormatError::Write(
                "no font is installed to write the translation in (fonts-liberation2, fonts-dejavu-core)".to_owned(),
            ));
        };
        let (data, index) = fonts.face(face);
        painted.push((face, paint::write(canvas, data, index, text, lines, ink)?));
    }
    Ok(painted)
}

/// The image and its format (PNG or JPEG, by its bytes), decoded within
/// bounds.
fn decode(input: &[u8]) -> Result<(DynamicImage, ImageFormat), FormatError> {
    let unreadable =
        |why: String| FormatError::corrupt(format!("The file is not a readable image ({why})."));
    let mut reader = ImageReader::new(Cursor::new(input))
        .with_guessed_format()
        .map_err(|e| unreadable(e.to_string()))?;
    let format = match reader.format() {
        Some(f @ (ImageFormat::Png | ImageFormat::Jpeg)) => f,
        _ => return Err(unreadable("it is neither PNG nor JPEG".to_owned())),
    };
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_ALLOC);
    reader.limits(limits);
    let image = reader.decode().map_err(|e| unreadable(e.to_string()))?;
    Ok((image, format))
}

/// The confident words as paragraphs of lines, in the recogniser's order.
fn paragraphs(words: Vec<ocr::Word>) -> Vec<Vec<Vec<ocr::Word>>> {
    let mut out: Vec<Vec<Vec<ocr::Word>>> = Vec::new();
    let mut last: Option<(u32, u32, u32)> = None;
    for word in words.into_iter().filter(|w| w.confidence >= MIN_CONFIDENCE) {
        let key = (word.block, word.paragraph, word.line);
        match (last, out.last_mut()) {
            (Some(k), Some(p)) if k == key => {
                if let Some(line) = p.last_mut() {
                    line.push(word);
                }
            }
            (Some((b, q, _)), Some(p)) if (b, q) == (key.0, key.1) => p.push(vec![word]),
            _ => out.push(vec![vec![word]]),
        }
        last = Some(key);
    }
    out
}

/// A paragraph's text: words spaced, lines joined (a hyphen at a line's
/// end joined away before a lower-case word).
fn paragraph_text(lines: &[Vec<ocr::Word>]) -> String {
    let mut text = String::new();
    for line in lines {
        for word in line {
            let hyphen = text.ends_with('-')
                && text[..text.len() - 1].ends_with(char::is_alphabetic)
                && word.text.starts_with(char::is_lowercase);
            if hyphen && std::ptr::eq(word, &line[0]) {
                text.pop();
            } else if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&word.text);
        }
    }
    text
}

/// The box around a line's words.
fn line_box(line: &[ocr::Word]) -> Rect {
    let words: Vec<Rect> = line
        .iter()
        .map(|w| Rect {
            left: w.left,
            top: w.top,
            width: w.width,
            height: w.height,
        })
        .collect();
    paint::union(&words)
}

impl crate::filter::Skeleton for Skeleton {
    fn merge(
        &self,
        source: &[String],
        translated: &[String],
        _lang: Option<&str>,
    ) -> Result<Vec<u8>, FormatError> {
        let changed: Vec<&Block> = self
            .blocks
            .iter()
            .filter(|b| source.get(b.segment) != translated.get(b.segment))
            .collect();
        if changed.is_empty() && self.same {
            return Ok(self.input.clone());
        }
        let mut canvas: RgbaImage = self.image.to_rgba8();
        let paragraphs: Vec<(&[Rect], String)> = changed
            .iter()
            .map(|b| {
                let text = inline::plain_text(&translated[b.segment]);
                (b.lines.as_slice(), text)
            })
            .collect();
        paint_over(&mut canvas, &paragraphs, &self.fonts)?;
        encode(canvas, &self.image, self.format)
    }
}

/// The painted image in the original's format (and, for PNG, with an alpha
/// channel only when the original had one).
fn encode(
    canvas: RgbaImage,
    original: &DynamicImage,
    format: ImageFormat,
) -> Result<Vec<u8>, FormatError> {
    let mut out = Cursor::new(Vec::new());
    let write = |e: image::ImageError| FormatError::Write(e.to_string());
    let painted = DynamicImage::ImageRgba8(canvas);
    match format {
        ImageFormat::Jpeg => {
            let rgb = painted.to_rgb8();
            image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 92)
                .encode_image(&rgb)
                .map_err(write)?;
        }
        _ if original.color().has_alpha() => painted
            .write_to(&mut out, ImageFormat::Png)
            .map_err(write)?,
        _ => DynamicImage::ImageRgb8(painted.to_rgb8())
            .write_to(&mut out, ImageFormat::Png)
            .map_err(write)?,
    }
    Ok(out.into_inner())
}

#[cfg(test)]
pub(crate) mod tests;
