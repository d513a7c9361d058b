//! Text recognition as the image filter uses it: a [`Recognizer`] the
//! caller supplies (the worker runs tesseract), its answer read as
//! tesseract's TSV (one row per page, block, paragraph, line and word, each
//! with its box), and the languages tesseract names as DeepL's codes.

use std::sync::Arc;

/// Reads the text of an image.
pub trait Recognizer: Send + Sync {
    /// Tesseract's TSV of the image `bytes` (PNG or JPEG) read in the
    /// tesseract language `language` (`eng`, `spa`…); `Err` says why it
    /// could not be read.
    fn recognize(&self, bytes: &[u8], language: &str) -> Result<String, String>;
}

/// A [`Recognizer`] as the filters' options carry it; cheap to clone.
#[derive(Clone)]
pub struct Ocr(pub Arc<dyn Recognizer>);

impl PartialEq for Ocr {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Ocr {}

impl std::fmt::Debug for Ocr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Ocr")
    }
}

/// A recognised word and where it lies, in pixels.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Word {
    pub block: u32,
    pub paragraph: u32,
    pub line: u32,
    pub left: u32,
    pub top: u32,
    pub width: u32,
    pub height: u32,
    /// 0–100.
    pub confidence: f32,
    pub text: String,
}

/// The words of tesseract's TSV output (its word rows; the rows of pages,
/// blocks, paragraphs and lines only repeat their boxes).
pub(crate) fn words(tsv: &str) -> Vec<Word> {
    tsv.lines()
        .skip(1)
        .filter_map(|row| {
            let cols: Vec<&str> = row.splitn(12, '\t').collect();
            if cols.len() != 12 || cols[0] != "5" {
                return None;
            }
            let n = |i: usize| cols[i].trim().parse::<u32>().ok();
            let text = cols[11].trim();
            if text.is_empty() {
                return None;
            }
            Some(Word {
                block: n(2)?,
                paragraph: n(3)?,
                line: n(4)?,
                left: n(6)?,
                top: n(7)?,
                width: n(8)?,
                height: n(9)?,
                confidence: cols[10].trim().parse().ok()?,
                text: text.to_owned(),
            })
        })
        .collect()
}

/// Tesseract's language for a DeepL source language (`EN`, `PT-BR`…);
/// English when it is not given or tesseract has no model of it.
pub fn tesseract_language(deepl: Option<&str>) -> &'static str {
    let code = deepl
        .unwrap_or("EN")
        .split('-')
        .next()
        .unwrap_or("EN")
        .to_ascii_uppercase();
    match code.as_str() {
        "AR" => "ara",
        "BG" => "bul",
        "CA" => "cat",
        "CS" => "ces",
        "DA" => "dan",
        "DE" => "deu",
        "EL" => "ell",
        "ES" => "spa",
        "ET" => "est",
        "EU" => "eus",
        "FI" => "fin",
        "FR" => "fra",
        "GL" => "glg",
        "HU" => "hun",
        "ID" => "ind",
        "IS" => "isl",
        "IT" => "ita",
        "JA" => "jpn",
        "KO" => "kor",
        "LT" => "lit",
        "LV" => "lav",
        "MK" => "mkd",
        "NB" | "NN" | "NO" => "nor",
        "NL" => "nld",
        "OC" => "oci",
        "PL" => "pol",
        "PT" => "por",
        "RO" => "ron",
        "RU" => "rus",
        "SK" => "slk",
        "SL" => "slv",
        "SV" => "swe",
        "TR" => "tur",
        "UK" => "ukr",
        "ZH" => "chi_sim",
        _ => "eng",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_rows_are_read_and_other_rows_left() {
        let tsv = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n\
                   1\t1\t0\t0\t0\t0\t0\t0\t900\t300\t-1\t\n\
                   4\t1\t1\t1\t1\t0\t40\t45\t450\t27\t-1\t\n\
                   5\t1\t1\t1\t1\t1\t40\t45\t51\t21\t95.99\tThe\n\
                   5\t1\t1\t1\t1\t2\t103\t45\t81\t21\t12.5\t \n";
        assert_eq!(
            words(tsv),
            [Word {
                block: 1,
                paragraph: 1,
                line: 1,
                left: 40,
                top: 45,
                width: 51,
                height: 21,
                confidence: 95.99,
                text: "The".to_owned(),
            }]
        );
        assert_eq!(tesseract_language(Some("pt-BR")), "por");
        assert_eq!(tesseract_language(None), "eng");
        assert_eq!(tesseract_language(Some("XX")), "eng");
    }
}
