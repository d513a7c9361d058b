//! Sentence alignment by length: omitted or added sentences, and sentences whose
//! translation is far shorter or longer than expected.

use super::{Pair, issue};
use crate::lexicon;
use crate::text::{self, Kind, Sentence, Token};
use crate::{Issue, IssueType, Severity, Span, SubType};

/// Characters that carry content (no tags).
fn content_len(sentence: &Sentence, tokens: &[Token]) -> f64 {
    let tags: usize = tokens
        .iter()
        .filter(|t| t.kind == Kind::Tag && t.start >= sentence.start && t.end <= sentence.end)
        .map(|t| t.end - t.start)
        .sum();
    sentence.len().saturating_sub(tags) as f64
}

const SKIP_COST: f64 = 0.9;
const MERGE_PENALTY: f64 = 0.8;

fn match_cost(ls: f64, lt: f64, ratio: f64) -> f64 {
    ((lt + 8.0) / (ls * ratio + 8.0)).ln().abs()
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Step {
    Match(usize, usize),
}

/// One step of the alignment: source sentences from `i`, target sentences from
/// `j`, `di` and `dj` of them.
struct Aligned {
    i: usize,
    j: usize,
    di: usize,
    dj: usize,
}

/// The sentences of both sides with their content lengths.
struct Sentences {
    ss: Vec<Sentence>,
    ts: Vec<Sentence>,
    sl: Vec<f64>,
    tl: Vec<f64>,
    /// Expected target length over source length for the language pair.
    ratio: f64,
}

/// Aligns sentences by length (Gale–Church style, steps 1-1, 1-0, 0-1, 2-1, 1-2)
/// and reports the source sentences with no counterpart (omissions), the target
/// sentences with none (additions), and 1-1 pairs with a far-off length ratio.
pub(super) fn alignment(p: &Pair, out: &mut Vec<Issue>) {
    let ss = text::sentences(p.source);
    let ts = text::sentences(p.target);
    if ss.is_empty() || ts.is_empty() {
        return;
    }
    let sl = ss.iter().map(|s| content_len(s, &p.src)).collect();
    let tl = ts.iter().map(|s| content_len(s, &p.tgt)).collect();
    let sentences = Sentences {
        ss,
        ts,
        sl,
        tl,
        ratio: lexicon::length_ratio(&p.options.source_lang, &p.options.target_lang),
    };
    let back = sentences.cheapest_steps();
    for step in backtrace(&back, sentences.ss.len(), sentences.ts.len()) {
        sentences.report(p, &step, out);
    }
}

impl Sentences {
    /// Dynamic programming over (source, target) prefixes: for each cell, the
    /// step that reached it most cheaply.
    fn cheapest_steps(&self) -> Vec<Vec<Step>> {
        let (sl, tl, ratio) = (&self.sl, &self.tl, self.ratio);
        let (n, m) = (self.ss.len(), self.ts.len());
        let inf = f64::INFINITY;
        let mut cost = vec![vec![inf; m + 1]; n + 1];
        let mut back = vec![vec![Step::Match(0, 0); m + 1]; n + 1];
        cost[0][0] = 0.0;
        for i in 0..=n {
            for j in 0..=m {
                let here = cost[i][j];
                if here == inf {
                    continue;
                }
                let mut relax = |di: usize, dj: usize, c: f64| {
                    let (a, b) = (i + di, j + dj);
                    if a <= n && b <= m && here + c < cost[a][b] {
                        cost[a][b] = here + c;
                        back[a][b] = Step::Match(di, dj);
                    }
                };
                if i < n && j < m {
                    relax(1, 1, match_cost(sl[i], tl[j], ratio));
                }
                if i < n {
                    relax(1, 0, SKIP_COST);
                }
                if j < m {
                    relax(0, 1, SKIP_COST);
                }
                if i + 1 < n && j < m {
                    relax(
                        2,
                        1,
                        match_cost(sl[i] + sl[i + 1], tl[j], ratio) + MERGE_PENALTY,
                    );
                }
                if i < n && j + 1 < m {
                    relax(
                        1,
                        2,
                        match_cost(sl[i], tl[j] + tl[j + 1], ratio) + MERGE_PENALTY,
                    );
                }
            }
        }
        back
    }

    /// The issue of one alignment step, if any.
    fn report(&self, p: &Pair, step: &Aligned, out: &mut Vec<Issue>) {
        let Aligned { i, j, di, dj } = *step;
        let (sub_type, explanation, source_spans, target_spans) = match (di, dj) {
            (1, 0) => {
                let s = self.ss[i];
                let text = text::substring(p.source, s.start, s.end);
                (
                    SubType::Omission,
                    format!("The sentence '{text}' of the source is missing from the translation."),
                    vec![Span::new(s.start, s.end)],
                    Vec::new(),
                )
            }
            (0, 1) => {
                let t = self.ts[j];
                let text = text::substring(p.target, t.start, t.end);
                (
                    SubType::Addition,
                    format!(
                        "The sentence '{text}' of the translation has no counterpart in the source."
                    ),
                    Vec::new(),
                    vec![Span::new(t.start, t.end)],
                )
            }
            (1, 1) => return self.length_ratio(i, j, out),
            _ => return,
        };
        out.push(issue(
            IssueType::Accuracy,
            sub_type,
            Severity::Major,
            explanation,
            source_spans,
            target_spans,
        ));
    }

    /// A 1-1 pair whose translation is far shorter or longer than expected.
    fn length_ratio(&self, i: usize, j: usize, out: &mut Vec<Issue>) {
        let (s, t) = (self.ss[i], self.ts[j]);
        let (sl, tl) = (self.sl[i], self.tl[j]);
        let r = (tl + 1.0) / (sl * self.ratio + 1.0);
        let (sub_type, severity, explanation) = if sl >= 40.0 && r < 0.45 {
            (
                SubType::Omission,
                Severity::Major,
                format!(
                    "The translation of this sentence is less than half as long as the source ({tl} vs {sl} characters): part of it seems to be missing."
                ),
            )
        } else if tl >= 40.0 && r > 2.2 {
            (
                SubType::Addition,
                Severity::Minor,
                format!(
                    "The translation of this sentence is more than twice as long as the source ({tl} vs {sl} characters): it may add content."
                ),
            )
        } else {
            return;
        };
        out.push(issue(
            IssueType::Accuracy,
            sub_type,
            severity,
            explanation,
            vec![Span::new(s.start, s.end)],
            vec![Span::new(t.start, t.end)],
        ));
    }
}

/// The steps from (0, 0) to (`n`, `m`), in order.
fn backtrace(back: &[Vec<Step>], n: usize, m: usize) -> Vec<Aligned> {
    let (mut i, mut j) = (n, m);
    let mut steps = Vec::new();
    while i > 0 || j > 0 {
        let Step::Match(di, dj) = back[i][j];
        if di == 0 && dj == 0 {
            break;
        }
        steps.push(Aligned {
            i: i - di,
            j: j - dj,
            di,
            dj,
        });
        i -= di;
        j -= dj;
    }
    steps.reverse();
    steps
}
