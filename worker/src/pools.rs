//! Worker pools by job kind: which queues a worker process runs
//! (`--queues documents,tmx`) and how many jobs of each it runs at once
//! (`--concurrency documents=4,voice=1`), so that each kind is scaled on its
//! own (a CPU-heavy voice job no longer competes with documents on every
//! worker).

use std::collections::BTreeMap;
use std::fmt;

use tolk_storage::queue;

/// A kind of job, as operators name its pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Document translation (`translate-document`).
    Documents,
    /// Quality evaluations (`evaluate-quality`).
    Quality,
    /// Voice translation jobs (`voice-translate`).
    Voice,
    /// Translation memory imports and exports (`import-tmx`, `export-tmx`).
    Tmx,
}

impl Kind {
    /// Every kind, in the order `--help` lists them.
    pub const ALL: [Kind; 4] = [Kind::Documents, Kind::Quality, Kind::Voice, Kind::Tmx];

    /// The pool's name (`--queues`, `--concurrency`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Documents => "documents",
            Kind::Quality => "quality",
            Kind::Voice => "voice",
            Kind::Tmx => "tmx",
        }
    }

    /// The queues of this kind.
    pub fn queues(self) -> &'static [&'static str] {
        match self {
            Kind::Documents => &[queue::TRANSLATE_DOCUMENT],
            Kind::Quality => &[queue::EVALUATE_QUALITY],
            Kind::Voice => &[queue::VOICE_TRANSLATE],
            Kind::Tmx => &[queue::IMPORT_TMX, queue::EXPORT_TMX],
        }
    }

    /// The kind named `name`: a pool name or one of its queue names, any case.
    pub fn parse(name: &str) -> Option<Kind> {
        let name = name.trim().to_ascii_lowercase();
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == name || k.queues().contains(&name.as_str()))
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A setting that names no kind, or a concurrency that is not a number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PoolsError(String);

/// The kinds a worker process runs, each with its concurrency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pools {
    kinds: BTreeMap<Kind, usize>,
}

impl Default for Pools {
    /// Every kind, two jobs of each at once.
    fn default() -> Self {
        Self::all(2)
    }
}

impl Pools {
    /// Every kind with `concurrency` each.
    pub fn all(concurrency: usize) -> Self {
        Self {
            kinds: Kind::ALL
                .into_iter()
                .map(|k| (k, concurrency.max(1)))
                .collect(),
        }
    }

    /// The pools of `queues` (comma-separated kinds or queue names; empty or
    /// `all`: every kind) with `concurrency`: comma-separated entries, a
    /// plain number for every kind and `kind=number` for one
    /// (`2,voice=1`). A concurrency for a kind not run is an error, as a typo
    /// would otherwise go unnoticed.
    pub fn parse(queues: &str, concurrency: &str) -> Result<Self, PoolsError> {
        let mut chosen = Vec::new();
        for name in queues.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if name.eq_ignore_ascii_case("all") {
                chosen.extend(Kind::ALL);
                continue;
            }
            let kind = Kind::parse(name).ok_or_else(|| {
                PoolsError(format!(
                    "unknown queue {name:?} (known: {}, or all)",
                    names()
                ))
            })?;
            chosen.push(kind);
        }
        if chosen.is_empty() {
            chosen.extend(Kind::ALL);
        }
        let mut default = 2;
        let mut each = BTreeMap::new();
        for entry in concurrency
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
        {
            let number = |raw: &str| {
                raw.trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| {
                        PoolsError(format!("concurrency {raw:?} is not a positive number"))
                    })
            };
            match entry.split_once('=') {
                None => default = number(entry)?,
                Some((name, n)) => {
                    let kind = Kind::parse(name).ok_or_else(|| {
                        PoolsError(format!(
                            "unknown queue {name:?} in the concurrency (known: {})",
                            names()
                        ))
                    })?;
                    if !chosen.contains(&kind) {
                        return Err(PoolsError(format!(
                            "a concurrency is set for {kind}, which this worker does not run"
                        )));
                    }
                    each.insert(kind, number(n)?);
                }
            }
        }
        Ok(Self {
            kinds: chosen
                .into_iter()
                .map(|k| (k, each.get(&k).copied().unwrap_or(default)))
                .collect(),
        })
    }

    /// Whether this worker runs jobs of `kind`.
    pub fn runs(&self, kind: Kind) -> bool {
        self.kinds.contains_key(&kind)
    }

    /// Jobs of `kind` run at once by each lane (0 when not run).
    pub fn concurrency(&self, kind: Kind) -> usize {
        self.kinds.get(&kind).copied().unwrap_or(0)
    }

    /// The kinds run, with their concurrency, for logs (`documents=4 voice=1`).
    pub fn describe(&self) -> String {
        self.kinds
            .iter()
            .map(|(k, n)| format!("{k}={n}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The pool names, comma-separated.
fn names() -> String {
    Kind::ALL.map(Kind::name).join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pools by name or queue name, one concurrency for all or per kind; a
    /// typo, a zero or a concurrency for a kind not run is refused.
    #[test]
    fn pools_are_read_from_queues_and_concurrency() {
        let p = Pools::parse("", "2").unwrap();
        assert_eq!(p, Pools::all(2));
        let p = Pools::parse("documents, TMX", "documents=4").unwrap();
        assert!(p.runs(Kind::Documents) && p.runs(Kind::Tmx) && !p.runs(Kind::Voice));
        assert_eq!(
            (p.concurrency(Kind::Documents), p.concurrency(Kind::Tmx)),
            (4, 2)
        );
        assert_eq!(p.concurrency(Kind::Voice), 0);
        let p = Pools::parse("all", "3,voice=1").unwrap();
        assert_eq!(p.describe(), "documents=3 quality=3 voice=1 tmx=3");
        let p = Pools::parse("voice-translate", "1").unwrap();
        assert_eq!(p.describe(), "voice=1");
        assert!(Pools::parse("documnets", "2").is_err());
        assert!(Pools::parse("documents", "0").is_err());
        assert!(Pools::parse("documents", "voice=2").is_err());
        assert!(Pools::parse("documents", "documents=x").is_err());
    }
}
