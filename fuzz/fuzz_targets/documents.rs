//! Every document filter: the first byte picks the format, the rest is the
//! file. What extracts must merge back with its own segments, and the merged
//! document must extract again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tolk_formats::{DocumentFormat, extract};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, input)) = data.split_first() else {
        return;
    };
    let format = match pick % 6 {
        0 => DocumentFormat::Txt,
        1 => DocumentFormat::Html,
        2 => DocumentFormat::Docx,
        3 => DocumentFormat::Pptx,
        4 => DocumentFormat::Xlsx,
        _ => DocumentFormat::Odt,
    };
    let Ok(doc) = extract(format, input) else {
        return;
    };
    let segments = doc.segments().to_vec();
    let merged = doc
        .merge(&segments)
        .expect("a document merges with its own segments");
    extract(format, &merged).expect("a merged document extracts again");
});
