//! The markup segmenter of `tag_handling` requests (`/v2/translate`, document
//! segments): any text, XML or HTML rules, a stand-in translation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tolk_engine::{MarkupOptions, markup_round_trip};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for html in [false, true] {
        let opts = MarkupOptions {
            html,
            outline_detection: true,
            splitting_tags: vec!["p".into()],
            ignore_tags: vec!["x".into()],
            ..MarkupOptions::default()
        };
        let _ = markup_round_trip(text, &opts, str::to_uppercase);
    }
});
