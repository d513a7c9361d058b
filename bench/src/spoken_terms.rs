//! `tolk-bench spoken-terms`: the keyword-spotting threshold of spoken terms.
//!
//! Sentences holding a term and sentences holding none (some close to a term
//! in sound) are spoken by espeak-ng in several voices and at several rates;
//! for each threshold, the terms spotted are counted as hits (the sentence's
//! own term) or false alarms (any other). The baseline, in the same run, is
//! recognition without spotting: how often the plain transcript already holds
//! the term.

use anyhow::{Context, Result};
use clap::Args;
use tolk_voice::asr::{self, DEFAULT_TERM_THRESHOLD, Recognizer};
use tolk_voice::tts::{self, Espeak};
use tolk_voice::voices::{self, TtsVoice, VoiceLookup};

#[derive(Debug, Args)]
pub struct SpokenTermsArgs {
    /// Thresholds tried, as exponents of ten (20 is 1e-20).
    #[arg(long, value_delimiter = ',', default_value = "10,15,20,25,30,35,40,45")]
    exponents: Vec<i32>,
}

/// The collection's terms.
const TERMS: &[&str] = &[
    "turbine",
    "Siemens",
    "Tolkien",
    "gearbox",
    "substation",
    "voltage",
];

/// Sentences holding one term: (the term, the sentence).
const WITH: &[(&str, &str)] = &[
    ("turbine", "The turbine in the north field stopped at noon."),
    (
        "Siemens",
        "We ordered the spare parts from Siemens last week.",
    ),
    (
        "Tolkien",
        "The engineers from Tolkien arrive tomorrow morning.",
    ),
    ("gearbox", "The gearbox needs new oil before the winter."),
    (
        "substation",
        "Power came back when the substation was repaired.",
    ),
    (
        "voltage",
        "Check the voltage on every cable before you start.",
    ),
];

/// Sentences holding none (several close to a term in sound).
const WITHOUT: &[&str] = &[
    "We told you about the cake in the kitchen.",
    "The girl turned around and smiled at the station.",
    "Some men were waiting by the gate in the rain.",
    "The gear was packed in a box near the door.",
    "The total of the bill was paid in the morning.",
    "Please see the manual for the volume settings.",
];

/// Voices and rates: (voice id, words per minute).
const SPEAKERS: &[(u32, u16)] = &[
    (101, 170),
    (101, 150),
    (101, 130),
    (102, 130),
    (103, 165),
    (105, 140),
];

/// One spoken sentence.
struct Clip {
    /// The term it holds, if any.
    term: Option<&'static str>,
    /// 16 kHz speech.
    speech: Vec<f32>,
}

pub async fn run(args: SpokenTermsArgs) -> Result<()> {
    let recognizer = Recognizer::default();
    recognizer
        .check()
        .context("pocketsphinx and its en-us model are needed")?;
    let clips = speak().await?;
    let terms: Vec<String> = TERMS.iter().map(|t| (*t).to_owned()).collect();
    let with = clips.iter().filter(|c| c.term.is_some()).count();
    println!(
        "spoken terms: {} sentences with a term, {} without, {} voices and rates",
        with,
        clips.len() - with,
        SPEAKERS.len()
    );

    let mut baseline = 0;
    for clip in &clips {
        let heard = recognizer.recognize(&clip.speech).await?;
        if let Some(term) = clip.term
            && heard.contains(&term.to_lowercase())
        {
            baseline += 1;
        }
    }
    println!("{:>10} {:>12} {:>14}", "threshold", "hits", "false alarms");
    println!(
        "{:>10} {:>7}/{:<4} {:>14}   (baseline: recognition without spotting)",
        "none", baseline, with, "-"
    );
    for exponent in &args.exponents {
        let threshold = 10f64.powi(-exponent);
        let (mut hits, mut false_alarms) = (0, 0);
        for clip in &clips {
            for spotted in recognizer.spot(&clip.speech, &terms, threshold).await? {
                if Some(spotted.as_str()) == clip.term {
                    hits += 1;
                } else {
                    false_alarms += 1;
                }
            }
        }
        let mark = if threshold == DEFAULT_TERM_THRESHOLD {
            "   (the default)"
        } else {
            ""
        };
        println!(
            "{:>10} {:>7}/{:<4} {:>14}{mark}   hits {:.1}x the baseline",
            format!("1e-{exponent}"),
            hits,
            with,
            false_alarms,
            f64::from(hits) / f64::from(baseline.max(1))
        );
    }
    Ok(())
}

/// Every sentence spoken by every speaker, at 16 kHz.
async fn speak() -> Result<Vec<Clip>> {
    let espeak = Espeak::default();
    let sentences = WITH
        .iter()
        .map(|(term, text)| (Some(*term), *text))
        .chain(WITHOUT.iter().map(|text| (None, *text)));
    let sentences: Vec<(Option<&'static str>, &'static str)> = sentences.collect();
    let mut clips = Vec::new();
    for &(id, rate) in SPEAKERS {
        let VoiceLookup::Found(voice) = voices::tts_voice(i64::from(id)) else {
            anyhow::bail!("no voice {id}");
        };
        let voice = TtsVoice { rate, ..*voice };
        for &(term, text) in &sentences {
            let pcm = espeak.synthesize(&voice, text).await?;
            let speech = tolk_voice::resample::resample(
                &tolk_voice::wav::to_f32(&pcm),
                tts::SAMPLE_RATE,
                asr::SAMPLE_RATE,
            );
            clips.push(Clip { term, speech });
        }
    }
    Ok(clips)
}
