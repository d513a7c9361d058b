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
    let formats: Vec<DocumentFormat> = DocumentFormat::extensions()
        .filter_map(DocumentFormat::from_extension)
        .collect();
    let format = formats[usize::from(pick) % formats.len()];
    let Ok(doc) = extract(format, input) else {
        return;
    };
    let segments = doc.segments().to_vec();
    let merged = doc
        .merge(&segments)
        .expect("a document merges with its own segments");
    extract(format, &merged).expect("a merged document extracts again");
});
