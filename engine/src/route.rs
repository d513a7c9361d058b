//! Routing: the graph of translation pairs of all engines, shortest routes
//! (breadth-first) through pivot languages, and the choice among parallel
//! pairs by target variant.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::{Lang, Pair};

/// A pair of one engine (by index in the router's engine list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub engine: usize,
    pub pair: Pair,
}

/// One step of a route: the candidates able to do it, best first.
pub(crate) type Hop = Vec<Candidate>;

/// Directed graph between base languages.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    /// from base → to base → candidates in engine order.
    edges: BTreeMap<String, BTreeMap<String, Vec<Candidate>>>,
}

impl Graph {
    /// Builds the graph from the pairs of each engine (engine index, pairs).
    pub fn new(engines: impl IntoIterator<Item = (usize, Vec<Pair>)>) -> Self {
        let mut g = Self::default();
        for (engine, pairs) in engines {
            for pair in pairs {
                if pair.source.base == pair.target.base {
                    continue;
                }
                g.edges
                    .entry(pair.source.base.clone())
                    .or_default()
                    .entry(pair.target.base.clone())
                    .or_default()
                    .push(Candidate { engine, pair });
            }
        }
        g
    }

    /// All base languages that appear in a pair.
    pub fn languages(&self) -> BTreeSet<String> {
        self.edges
            .iter()
            .flat_map(|(from, tos)| std::iter::once(from.clone()).chain(tos.keys().cloned()))
            .collect()
    }

    /// How many languages a base translates into and from.
    fn degree(&self, base: &str) -> usize {
        let out = self.edges.get(base).map_or(0, BTreeMap::len);
        let into = self.edges.values().filter(|m| m.contains_key(base)).count();
        out + into
    }

    /// Shortest path of bases from `from` to `to`, both included; among
    /// paths of one length, the one through the best connected pivots.
    pub fn path(&self, from: &str, to: &str) -> Option<Vec<String>> {
        if from == to {
            return None;
        }
        let mut previous: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = VecDeque::from([from]);
        while let Some(node) = queue.pop_front() {
            // Hubs first: among routes of one length, the one through the
            // best connected pivots (Spanish, English: the most worked-on
            // pairs) is found first.
            let mut nexts: Vec<&str> = self
                .edges
                .get(node)
                .into_iter()
                .flat_map(|m| m.keys())
                .map(String::as_str)
                .collect();
            nexts.sort_by_key(|n| std::cmp::Reverse(self.degree(n)));
            for next in nexts {
                if next == from || previous.contains_key(next) {
                    continue;
                }
                previous.insert(next, node);
                if next == to {
                    let mut path = vec![to.to_owned()];
                    let mut at = to;
                    while let Some(&p) = previous.get(at) {
                        path.push(p.to_owned());
                        at = p;
                    }
                    path.reverse();
                    return Some(path);
                }
                queue.push_back(next);
            }
        }
        None
    }

    /// The hops of the shortest route from `source` to `target`, each with
    /// its candidates ordered by preference: on the last hop the pair whose
    /// target variant is the requested one, then the plain language, then
    /// other variants; on pivot hops plain before variants.
    pub fn route(&self, source: &Lang, target: &Lang) -> Option<Vec<Hop>> {
        let path = self.path(&source.base, &target.base)?;
        let last = path.len() - 2;
        let hops = path
            .windows(2)
            .enumerate()
            .map(|(i, w)| {
                let mut candidates = self
                    .edges
                    .get(&w[0])
                    .and_then(|m| m.get(&w[1]))
                    .cloned()
                    .unwrap_or_default();
                let wanted = if i == last {
                    target.variant.as_deref()
                } else {
                    None
                };
                candidates.sort_by_key(|c| {
                    (
                        variant_rank(&c.pair.target, wanted),
                        c.pair.source.variant.is_some(),
                        c.engine,
                    )
                });
                candidates
            })
            .collect();
        Some(hops)
    }
}

/// 0 = the wanted variant, 1 = plain, 2 = another variant.
fn variant_rank(lang: &Lang, wanted: Option<&str>) -> u8 {
    match (&lang.variant, wanted) {
        (Some(_), Some(w)) if lang.variant_is(w) => 0,
        (None, _) => 1,
        (Some(_), _) => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(id: &str) -> Pair {
        let (s, t) = id.split_once('-').unwrap_or((id, id));
        Pair {
            id: id.to_owned(),
            source: Lang::from_apertium(s).unwrap(),
            target: Lang::from_apertium(t).unwrap(),
        }
    }

    fn graph() -> Graph {
        let ids = [
            "eng-spa",
            "spa-eng",
            "spa-eng_US",
            "es-pt",
            "es-pt_BR",
            "pt-es",
            "fr-es",
            "es-fr",
            "eng-cat",
            "cat-eng",
            "eng-cat_valencia",
        ];
        Graph::new([(0, ids.iter().map(|i| pair(i)).collect())])
    }

    fn ids(hops: Vec<Hop>) -> Vec<String> {
        hops.into_iter().map(|h| h[0].pair.id.clone()).collect()
    }

    #[test]
    fn direct_and_pivot_routes() {
        let g = graph();
        assert_eq!(
            ids(g.route(&Lang::new("eng"), &Lang::new("spa")).unwrap()),
            ["eng-spa"]
        );
        assert_eq!(
            ids(g.route(&Lang::new("eng"), &Lang::new("por")).unwrap()),
            ["eng-spa", "es-pt"]
        );
        assert_eq!(
            ids(g
                .route(&Lang::new("eng"), &Lang::with_variant("por", "BR"))
                .unwrap()),
            ["eng-spa", "es-pt_BR"]
        );
        assert_eq!(
            ids(g
                .route(&Lang::new("eng"), &Lang::with_variant("por", "PT"))
                .unwrap()),
            ["eng-spa", "es-pt"]
        );
        assert_eq!(
            ids(g.route(&Lang::new("por"), &Lang::new("eng")).unwrap()),
            ["pt-es", "spa-eng"]
        );
        assert_eq!(
            ids(g
                .route(&Lang::new("fra"), &Lang::with_variant("eng", "US"))
                .unwrap()),
            ["fr-es", "spa-eng_US"]
        );
        assert_eq!(
            ids(g
                .route(&Lang::new("fra"), &Lang::with_variant("eng", "GB"))
                .unwrap()),
            ["fr-es", "spa-eng"]
        );
        assert_eq!(
            ids(g.route(&Lang::new("eng"), &Lang::new("cat")).unwrap()),
            ["eng-cat"]
        );
        assert_eq!(
            ids(g.route(&Lang::new("fra"), &Lang::new("cat")).unwrap()),
            ["fr-es", "spa-eng", "eng-cat"]
        );
        assert_eq!(
            ids(g.route(&Lang::new("cat"), &Lang::new("por")).unwrap()),
            ["cat-eng", "eng-spa", "es-pt"]
        );
    }

    #[test]
    fn no_route() {
        let g = graph();
        assert!(g.route(&Lang::new("eng"), &Lang::new("jpn")).is_none());
        assert!(g.route(&Lang::new("jpn"), &Lang::new("eng")).is_none());
        assert!(g.route(&Lang::new("eng"), &Lang::new("eng")).is_none());
    }
}
