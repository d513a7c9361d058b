//! `/admin/ui/engines`: the translation engines this API process routes
//! over, each checked when the page is asked for (a short sentence along one
//! of its pairs, within [`PROBE_WITHIN`]: answered, how fast, or why not),
//! and every language pair they offer.

use std::time::{Duration, Instant};

use axum::extract::State;
use axum::response::Html;
use maud::html;
use tolk_engine::{Engine, Pair, TagHandling, TranslateOptions};

use super::{Operator, Refused, Tab, page};
use crate::AppState;

/// Longest a check of one engine may take before it is reported as not
/// answering.
const PROBE_WITHIN: Duration = Duration::from_secs(3);

/// What the check of an engine found.
enum Health {
    /// It translated the probe, in this long, along this pair.
    Answered(Duration, String),
    /// It failed, with this error.
    Failed(String),
    /// It did not answer within [`PROBE_WITHIN`].
    Silent,
    /// It offers no pair to check.
    NoPair,
}

/// The pair to check an engine along: English to Spanish when it has it,
/// else its first pair from English, else its first pair.
fn probe_pair(pairs: &[Pair]) -> Option<&Pair> {
    pairs
        .iter()
        .find(|p| p.source.base == "eng" && p.target.base == "spa")
        .or_else(|| pairs.iter().find(|p| p.source.base == "eng"))
        .or_else(|| pairs.first())
}

async fn check(engine: &dyn Engine, pairs: &[Pair]) -> Health {
    let Some(pair) = probe_pair(pairs) else {
        return Health::NoPair;
    };
    let options = TranslateOptions::default();
    let started = Instant::now();
    let probe = engine.translate(
        pair,
        vec!["The house is big.".to_owned()],
        TagHandling::None,
        &options,
    );
    match tokio::time::timeout(PROBE_WITHIN, probe).await {
        Ok(Ok(_)) => Health::Answered(started.elapsed(), pair.id.clone()),
        Ok(Err(e)) => Health::Failed(e.to_string()),
        Err(_) => Health::Silent,
    }
}

pub(super) async fn show(
    State(state): State<AppState>,
    operator: Operator,
) -> Result<Html<String>, Refused> {
    let engines = state.translator.engines();
    let pairs: Vec<Vec<Pair>> = engines.iter().map(|e| e.pairs()).collect();
    let health = futures::future::join_all(
        engines
            .iter()
            .zip(&pairs)
            .map(|(e, p)| check(e.as_ref(), p)),
    )
    .await;
    let content = html! {
        table {
            caption { "Engines, in the order they are preferred (checked now)" }
            thead {
                tr {
                    th scope="col" { "Engine" }
                    th scope="col" { "Pairs" }
                    th scope="col" { "Processes" }
                    th scope="col" { "Health" }
                }
            }
            tbody {
                @for ((engine, pairs), health) in engines.iter().zip(&pairs).zip(&health) {
                    tr {
                        th scope="row" { (engine.name()) }
                        td.n { (pairs.len()) }
                        td.n { (engine.process_ids().len()) }
                        @match health {
                            Health::Answered(took, pair) => td {
                                "answers: " (format!("{:.0} ms", took.as_secs_f64() * 1000.0))
                                " along " code { (pair) }
                            },
                            Health::Failed(e) => td.bad { "fails: " (e) },
                            Health::Silent => td.bad {
                                "no answer within " (PROBE_WITHIN.as_secs()) " s"
                            },
                            Health::NoPair => td { "no pair to check" },
                        }
                    }
                }
            }
        }
        table {
            caption { "Language pairs" }
            thead {
                tr {
                    th scope="col" { "From" }
                    th scope="col" { "To" }
                    th scope="col" { "Engine" }
                    th scope="col" { "Its name for the pair" }
                }
            }
            tbody {
                @for (engine, pairs) in engines.iter().zip(&pairs) {
                    @for p in pairs {
                        tr {
                            td { (p.source) }
                            td { (p.target) }
                            td { (engine.name()) }
                            td { code { (p.id) } }
                        }
                    }
                }
            }
        }
    };
    Ok(page(&operator, Tab::Engines, "Engines", content))
}
