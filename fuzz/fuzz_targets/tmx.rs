//! The streaming TMX reader of translation memory imports.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tolk_formats::tmx::TmxReader;

fuzz_target!(|data: &[u8]| {
    let Ok(mut reader) = TmxReader::new(data) else {
        return;
    };
    let _ = reader.header();
    // Every entry until the end or the first error; the reader must stop.
    for _ in 0..100_000 {
        match reader.next_entry() {
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => return,
        }
    }
    panic!("more than 100,000 entries from {} bytes", data.len());
});
