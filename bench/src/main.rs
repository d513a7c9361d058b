//! Tolk's benchmarks.
//!
//! - `tolk-bench queue`: the job queue (apalis-postgres as the platform configures it)
//!   against Graphile Worker 0.17.3 and a hand-written SKIP LOCKED loop, on the local
//!   PostgreSQL, in a throwaway database.
//! - `tolk-bench documents`: docx documents through the whole platform against the raw
//!   `apertium` command on the same text.
//! - `tolk-bench voice`: real-time factors of TTS, voice conversion and the voice job,
//!   and time to first audio of the simplex stream, beside the bare `espeak-ng` command.
//! - `tolk-bench analytics`: admin usage reports over a generated 10-million-entry
//!   ledger, and metering's overhead on `/v2/translate`.
//! - `tolk-bench translate`: `POST /v2/translate` under 8 and 64 concurrent clients
//!   against Apertium-APY (started by the bench) on the same sentences, plus the raw
//!   `apertium` command's batch throughput.
//! - `tolk-bench auth`: client_credentials token issuance, Bearer verification and
//!   sign-in (bcrypt) per second through the auth service and the API, beside bare
//!   jsonwebtoken RS256 sign/verify and bcrypt loops with the same key and cost.
//! - `tolk-bench tmx`: TMX import through the platform (units/s, peak RSS) against a
//!   raw COPY of the same rows, and memory lookups over a million units against a
//!   plain exact-match query.
//! - `tolk-bench quality`: quality evaluation jobs of 500 segments through the platform
//!   against `/v2/translate` throughput on the same text.
//! - `tolk-bench glossary`: `/v2/translate` latency with a glossary of 100 to 100,000
//!   entries, with and without the API's glossary cache, against no glossary.
//! - `tolk-bench dashboard`: the operator dashboard's pages (`/admin/ui`) over a
//!   queue of a million jobs, against the same pages over the empty queue.
//! - `tolk-bench detect`: language detection of 1–5-word texts and sentences of every
//!   detectable language (the UDHR), per text as `/v2/translate` does it, against
//!   lingua alone on the same texts.

mod analytics;
mod app;
mod auth;
mod dashboard;
mod detect;
mod documents;
mod glossary;
mod quality;
mod queue;
mod spoken_terms;
mod tmx;
mod translate;
mod voice;

use clap::{Parser, Subcommand};

/// Counts heap bytes, for the documents benchmark's peak-memory figure.
#[global_allocator]
static ALLOCATOR: documents::memory::Counting = documents::memory::Counting;

#[derive(Debug, Parser)]
#[command(name = "tolk-bench", about = "Tolk's benchmarks")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Queue throughput (burn-down) and enqueue-to-start latency: Tolk's queue vs
    /// Graphile Worker vs a raw SKIP LOCKED loop.
    Queue(queue::QueueArgs),
    /// Documents through the platform vs raw apertium.
    Documents(documents::DocumentsArgs),
    /// Usage analytics over a 10-million-entry ledger, and the cost of metering
    /// on /v2/translate (with vs without the ledger write).
    Analytics(analytics::AnalyticsArgs),
    /// Text translation under concurrent clients: Tolk vs Apertium-APY vs raw apertium.
    Translate(translate::TranslateArgs),
    /// Quality evaluation jobs (500 segments each) vs /v2/translate on the same text.
    Quality(quality::QualityArgs),
    /// Auth: client_credentials tokens/s, Bearer verifications/s and sign-ins/s vs
    /// bare jsonwebtoken RS256 sign/verify and bcrypt loops.
    Auth(auth::AuthArgs),
    /// TMX import (units/s, worker peak memory) vs raw COPY, and translation
    /// memory lookup latency over a million units vs a plain exact-match query.
    Tmx(tmx::TmxArgs),
    /// Voice: TTS, voice conversion and voice-job real-time factors and the simplex
    /// stream's first-frame latency, beside the bare espeak-ng command.
    Voice(voice::VoiceArgs),
    /// Spoken terms: hits and false alarms of keyword spotting per threshold
    /// on espeak-ng speech of several voices and rates, beside recognition
    /// without spotting.
    SpokenTerms(spoken_terms::SpokenTermsArgs),
    /// Glossaries on /v2/translate: latency with the glossary cache vs without it vs
    /// no glossary, for several glossary sizes.
    Glossary(glossary::GlossaryArgs),
    /// The operator dashboard's pages over a million queue rows vs the empty queue.
    Dashboard(dashboard::DashboardArgs),
    /// Language detection of short texts and sentences (UDHR, every detectable
    /// language): per text with dictionaries vs lingua alone.
    Detect(detect::DetectArgs),
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Queue(args) => queue::run(args).await,
        Command::Documents(args) => documents::run(args).await,
        Command::Analytics(args) => analytics::run(args).await,
        Command::Translate(args) => translate::run(args).await,
        Command::Quality(args) => quality::run(args).await,
        Command::Voice(args) => voice::run(args).await,
        Command::SpokenTerms(args) => spoken_terms::run(args).await,
        Command::Glossary(args) => glossary::run(args).await,
        Command::Auth(args) => auth::run(args).await,
        Command::Tmx(args) => tmx::run(args).await,
        Command::Detect(args) => detect::run(args).await,
        Command::Dashboard(args) => dashboard::run(args).await,
    }
}
