//! Images made by Pillow, read by tesseract (its command line, as the
//! worker runs it), translated, and the output read again by tesseract.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use super::*;
use crate::DocumentFormat;
use crate::pdf::tests::system_fonts;
use crate::testdoc::{python_snippet, test_folder};

/// Tesseract's command line: the image on its input, TSV on its output.
pub(crate) struct Tesseract;

impl Recognizer for Tesseract {
    fn recognize(&self, bytes: &[u8], language: &str) -> Result<String, String> {
        tesseract(bytes, language, "tsv")
    }
}

/// What tesseract reads of `bytes` in `language`, as `config` (`tsv`, or
/// nothing for plain text).
pub(crate) fn tesseract(bytes: &[u8], language: &str, config: &str) -> Result<String, String> {
    use std::io::Write;
    let mut child = Command::new("tesseract")
        .args(["stdin", "stdout", "-l", language])
        .args((!config.is_empty()).then_some(config))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("tesseract runs (tesseract-ocr: scripts/setup.sh): {e}"))?;
    child
        .stdin
        .take()
        .ok_or("no input")?
        .write_all(bytes)
        .map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    String::from_utf8(out.stdout).map_err(|e| e.to_string())
}

/// Options that read images with tesseract and paint in the system's
/// fonts.
fn options(source: Option<&str>) -> ExtractOptions {
    ExtractOptions {
        fonts: Some(system_fonts()),
        ocr: Some(Ocr(Arc::new(Tesseract))),
        source_language: source.map(str::to_owned),
        ..ExtractOptions::default()
    }
}

/// A cream picture with two paragraphs in dark blue (the first over two
/// lines) and a red square, as `name` (its extension says the type).
const PICTURE: &str = r#"
import sys
from PIL import Image, ImageDraw, ImageFont
im = Image.new("RGB", (900, 320), (250, 245, 230))
d = ImageDraw.Draw(im)
f = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 30)
d.text((40, 40), "The house is big and the garden", font=f, fill=(20, 20, 90))
d.text((40, 82), "is green.", font=f, fill=(20, 20, 90))
d.text((40, 200), "The dog sleeps in the house.", font=f, fill=(20, 20, 90))
d.rectangle((760, 40, 860, 140), fill=(200, 30, 30))
im.save(sys.argv[1], quality=95) if sys.argv[1].endswith(".jpg") else im.save(sys.argv[1])
"#;

fn picture(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    python_snippet(PICTURE, &[&path]);
    path
}

fn spanish(text: &str) -> String {
    match text {
        "The house is big and the garden is green." => "La casa es grande y el jardín es verde.",
        "The dog sleeps in the house." => "El perro duerme en la casa.",
        other => other,
    }
    .to_owned()
}

/// (width, height, colour type) as Pillow reads them.
fn pillow(path: &Path) -> String {
    python_snippet(
        "import sys; from PIL import Image; im = Image.open(sys.argv[1]); print(im.format, im.size, im.mode)",
        &[path],
    )
}

#[test]
fn an_images_paragraphs_are_read_and_the_translation_painted_over_them() {
    let dir = test_folder("image-translate");
    for (name, format) in [
        ("sign.png", DocumentFormat::Png),
        ("sign.jpg", DocumentFormat::Jpeg),
    ] {
        let path = picture(&dir, name);
        let input = std::fs::read(&path).unwrap();
        let doc = crate::extract_with(format, &input, options(Some("EN"))).unwrap();
        assert_eq!(
            doc.segments(),
            [
                "The house is big and the garden is green.",
                "The dog sleeps in the house."
            ],
            "{name}"
        );
        assert_eq!(
            doc.merge(doc.segments()).unwrap(),
            input,
            "{name}: identity"
        );

        let translated: Vec<String> = doc.segments().iter().map(|s| spanish(s)).collect();
        let output = doc.merge(&translated).unwrap();
        let out = dir.join(format!("translated-{name}"));
        std::fs::write(&out, &output).unwrap();
        assert_eq!(pillow(&out), pillow(&path), "{name}: same type and size");

        let read = tesseract(&output, "spa", "").unwrap();
        let flat = read.split_whitespace().collect::<Vec<_>>().join(" ");
        for spanish in ["La casa es grande", "verde.", "El perro duerme en la casa."] {
            assert!(flat.contains(spanish), "{name}: {spanish:?} in {flat}");
        }
        assert!(
            !flat.contains("house") && !flat.contains("The"),
            "{name}: {flat}"
        );

        // The translation is dark blue on the cream background, and the
        // red square is untouched.
        let image = image::load_from_memory(&output).unwrap().to_rgb8();
        let blue = image
            .pixels()
            .filter(|p| p.0[0] < 60 && p.0[1] < 60 && p.0[2] > 60 && p.0[2] < 130)
            .count();
        assert!(blue > 1_000, "{name}: {blue} dark blue pixels");
        let corner = image.get_pixel(5, 5).0;
        assert!(
            corner
                .iter()
                .zip([250, 245, 230])
                .all(|(a, b)| a.abs_diff(b) <= 4),
            "{name}: {corner:?}"
        );
        let square = image.get_pixel(810, 90).0;
        assert!(square[0] > 180 && square[1] < 60, "{name}: {square:?}");
    }
}

#[test]
fn images_without_ocr_or_damaged_are_clear_errors() {
    let dir = test_folder("image-errors");
    let input = std::fs::read(picture(&dir, "sign.png")).unwrap();
    let no_ocr = ExtractOptions {
        fonts: Some(system_fonts()),
        ..ExtractOptions::default()
    };
    let err = crate::extract_with(DocumentFormat::Png, &input, no_ocr)
        .err()
        .unwrap();
    assert!(err.to_string().contains("no OCR engine"), "{err}");
    let err = crate::extract_with(
        DocumentFormat::Png,
        &input[..input.len() / 2],
        options(None),
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("not a readable image"), "{err}");
    let err = crate::extract_with(DocumentFormat::Jpeg, b"GIF89a....", options(None))
        .err()
        .unwrap();
    assert!(err.to_string().contains("neither PNG nor JPEG"), "{err}");
}

#[test]
fn a_picture_is_delivered_in_the_type_its_name_declares() {
    let dir = test_folder("image-declared");
    let png = std::fs::read(picture(&dir, "sign.png")).unwrap();
    let doc = crate::extract_with(DocumentFormat::Jpeg, &png, options(Some("EN"))).unwrap();
    let same = doc.merge(doc.segments()).unwrap();
    assert!(same.starts_with(&[0xFF, 0xD8, 0xFF]), "a JPEG");
    let doc = crate::extract_with(DocumentFormat::Png, &png, options(Some("EN"))).unwrap();
    assert_eq!(doc.merge(doc.segments()).unwrap(), png);
}

/// A translation into Arabic is painted right to left from the box's
/// right edge, its letters joined: tesseract's Arabic model reads it back.
#[test]
fn a_right_to_left_translation_is_painted_from_the_right_and_reads_back() {
    let dir = test_folder("image-rtl");
    let path = picture(&dir, "sign.png");
    let input = std::fs::read(&path).unwrap();
    let doc = crate::extract_with(DocumentFormat::Png, &input, options(Some("EN"))).unwrap();
    let arabic = ["البيت كبير والحديقة خضراء", "الكلب ينام في البيت"];
    let output = doc.merge(&arabic.map(String::from)).unwrap();
    let read = tesseract(&output, "ara", "").unwrap();
    let flat = read.split_whitespace().collect::<Vec<_>>().join(" ");
    for words in ["البيت كبير", "الكلب ينام في البيت"] {
        assert!(flat.contains(words), "{words:?} in {flat:?}");
    }
    // The first paragraph ends at its box's right edge: dark blue reaches
    // as far right as the original's first line did, and starts further
    // right than its left edge.
    let blue = |image: &image::RgbImage, y0: u32, y1: u32| {
        let xs: Vec<u32> = (y0..y1)
            .flat_map(|y| (0..740).map(move |x| (x, y)))
            .filter(|&(x, y)| {
                let p = image.get_pixel(x, y).0;
                p[0] < 90 && p[1] < 90 && p[2] > 60
            })
            .map(|(x, _)| x)
            .collect();
        (*xs.iter().min().unwrap(), *xs.iter().max().unwrap())
    };
    let before = blue(&image::load_from_memory(&input).unwrap().to_rgb8(), 30, 130);
    let after = blue(
        &image::load_from_memory(&output).unwrap().to_rgb8(),
        30,
        130,
    );
    assert!(after.1.abs_diff(before.1) <= 6, "{after:?} {before:?}");
    assert!(after.0 > before.0 + 20, "{after:?} {before:?}");
}
