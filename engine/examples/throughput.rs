//! Words per second of the raw `apertium eng-spa < file` command versus
//! [`Translator`] on the same generated English text split into ~1,000 texts.
//!
//! ```text
//! cargo run --release -p tolk-engine --example throughput [words] [texts] [texts/request] [requests in flight]
//! ```

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tolk_engine::{ApertiumConfig, TagHandling, TranslateRequest, Translator};

const SUBJECTS: &[&str] = &[
    "The dog",
    "My neighbour",
    "The old teacher",
    "A small child",
    "The government",
    "Our company",
    "The doctor",
    "Every student",
    "The young woman",
    "His brother",
];
const VERBS: &[&str] = &[
    "reads", "buys", "needs", "finds", "writes", "sells", "wants", "sees", "builds", "opens",
];
const OBJECTS: &[&str] = &[
    "a red book",
    "the new house",
    "three green apples",
    "an important letter",
    "the big window",
    "a cheap car",
    "the long report",
    "some fresh bread",
    "the black door",
    "a beautiful garden",
];
const TAILS: &[&str] = &[
    "every morning",
    "in the city",
    "before the meeting",
    "with great care",
    "after the long summer",
    "near the river",
    "for the family",
    "without any help",
    "during the week",
    "at the end of the day",
];

/// Deterministic English text of about `words` words, as sentences.
fn sentences(words: usize) -> Vec<String> {
    let mut seed: u64 = 42;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n
    };
    let mut out = Vec::new();
    let mut count = 0;
    while count < words {
        let s = match next(4) {
            0 => format!(
                "{} {} {} {}.",
                SUBJECTS[next(10)],
                VERBS[next(10)],
                OBJECTS[next(10)],
                TAILS[next(10)]
            ),
            1 => format!(
                "{} {} {}, and {} {} {}.",
                SUBJECTS[next(10)],
                VERBS[next(10)],
                OBJECTS[next(10)],
                SUBJECTS[next(10)].to_lowercase(),
                VERBS[next(10)],
                OBJECTS[next(10)]
            ),
            2 => format!(
                "Why does {} want {} {}?",
                SUBJECTS[next(10)].to_lowercase(),
                OBJECTS[next(10)],
                TAILS[next(10)]
            ),
            _ => format!(
                "{} never {} {}.",
                SUBJECTS[next(10)],
                VERBS[next(10)].trim_end_matches('s'),
                OBJECTS[next(10)]
            ),
        };
        count += s.split_whitespace().count();
        out.push(s);
    }
    out
}

fn raw_apertium(text: &str) -> Duration {
    let path = std::env::temp_dir().join(format!("tolk-throughput-{}.txt", std::process::id()));
    std::fs::write(&path, text).expect("temp file");
    let start = Instant::now();
    let input = std::fs::File::open(&path).expect("temp file");
    let status = Command::new("apertium")
        .arg("eng-spa")
        .stdin(input)
        .stdout(Stdio::null())
        .status()
        .expect("apertium");
    let elapsed = start.elapsed();
    assert!(status.success());
    let _ = std::fs::remove_file(&path);
    elapsed
}

#[tokio::main]
async fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let words = args.first().copied().unwrap_or(20_000);
    let n_texts = args.get(1).copied().unwrap_or(1_000);
    let per_request = args.get(2).copied().unwrap_or(50).max(1);
    let in_flight = args.get(3).copied().unwrap_or(8).max(1);
    let sentences = sentences(words);
    let text = sentences.join(" ");
    let word_count = text.split_whitespace().count();
    // ~n_texts texts of consecutive sentences.
    let per_text = sentences.len().div_ceil(n_texts);
    let texts: Vec<String> = sentences.chunks(per_text).map(|c| c.join(" ")).collect();

    let translator = Translator::apertium(ApertiumConfig::default()).expect("Apertium");
    let request = |texts: Vec<String>| TranslateRequest {
        source_lang: Some("EN".into()),
        target_lang: "ES".into(),
        texts,
        tag_handling: TagHandling::None,
        ..Default::default()
    };
    // Warm-up: start the pipelines of the pool.
    translator
        .translate(request(texts.iter().take(200).cloned().collect()))
        .await
        .expect("warm-up");

    let mut raw = Vec::new();
    let mut ours = Vec::new();
    for _ in 0..5 {
        raw.push(raw_apertium(&format!("{text}\n")));
        let start = Instant::now();
        let res = translator
            .translate(request(texts.clone()))
            .await
            .expect("translate");
        ours.push(start.elapsed());
        assert_eq!(res.texts.len(), texts.len());
    }
    // The same texts as many smaller requests (DeepL takes up to 50 texts).
    let mut small = Vec::new();
    for _ in 0..3 {
        let start = Instant::now();
        let calls = texts.chunks(per_request).map(|c| {
            let t = translator.clone();
            let req = request(c.to_vec());
            tokio::spawn(async move { t.translate(req).await })
        });
        let mut pending = Vec::new();
        for call in calls {
            pending.push(call);
            if pending.len() >= in_flight {
                pending.remove(0).await.expect("task").expect("translate");
            }
        }
        for call in pending {
            call.await.expect("task").expect("translate");
        }
        small.push(start.elapsed());
    }
    raw.sort();
    ours.sort();
    small.sort();
    let wps = |d: Duration| word_count as f64 / d.as_secs_f64();
    let (r, o) = (wps(raw[2]), wps(ours[2]));
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{word_count} words, {} texts, {} pipelines per pair (median of 5)",
        texts.len(),
        ApertiumConfig::default().pipelines_per_pair
    );
    let _ = writeln!(
        out,
        "raw `apertium eng-spa`: {:>8.0} words/s ({:.2?})",
        r, raw[2]
    );
    let _ = writeln!(
        out,
        "Translator:             {:>8.0} words/s ({:.2?})",
        o, ours[2]
    );
    let _ = writeln!(out, "ratio: {:.0} %", 100.0 * o / r);
    let s = wps(small[1]);
    let _ = writeln!(
        out,
        "Translator, requests of {per_request} texts, {in_flight} in flight: {:>8.0} words/s ({:.2?}, {:.0} % of raw)",
        s,
        small[1],
        100.0 * s / r
    );
}
