//! The individual checks. Each returns issues with code-point spans.

use std::collections::{HashMap, HashSet};

use crate::lexicon;
use crate::text::{self, Kind, Sentence, Token};
use crate::{Issue, IssueType, Options, Severity, Span, SubType};

/// Both texts, tokenized once.
struct Pair<'a> {
    source: &'a str,
    target: &'a str,
    src: Vec<Token>,
    tgt: Vec<Token>,
    options: &'a Options,
}

fn issue(
    kind: IssueType,
    sub_type: SubType,
    severity: Severity,
    explanation: String,
    source_spans: Vec<Span>,
    target_spans: Vec<Span>,
) -> Issue {
    Issue {
        kind,
        sub_type,
        severity,
        explanation,
        source_spans,
        target_spans,
    }
}

fn span(t: &Token) -> Span {
    Span::new(t.start, t.end)
}

/// Runs every check.
pub fn run(source: &str, target: &str, options: &Options) -> Vec<Issue> {
    let p = Pair {
        source,
        target,
        src: text::tokenize(source),
        tgt: text::tokenize(target),
        options,
    };
    if target.trim().is_empty() {
        if source.trim().is_empty() {
            return Vec::new();
        }
        return vec![issue(
            IssueType::Accuracy,
            SubType::Omission,
            Severity::Critical,
            "The translation is empty: nothing of the source was translated.".to_owned(),
            vec![Span::new(0, source.chars().count())],
            Vec::new(),
        )];
    }
    let mut out = Vec::new();
    let untranslated = untranslated(&p, &mut out);
    numbers(&p, &mut out);
    months(&p, &mut out);
    directions(&p, &mut out);
    negation(&p, &mut out);
    if !untranslated {
        alignment(&p, &mut out);
    }
    markup(&p, &mut out);
    glossary(&p, &mut out);
    conventions(&p, &mut out);
    out
}

// ---------------------------------------------------------------- numbers

/// Digits of a number token without separators: `1,000.50` and `1.000,50` → `100050`.
fn digits(t: &Token) -> String {
    t.text.chars().filter(char::is_ascii_digit).collect()
}

fn numbers(p: &Pair, out: &mut Vec<Issue>) {
    let src: Vec<&Token> = p.src.iter().filter(|t| t.kind == Kind::Number).collect();
    let tgt: Vec<&Token> = p.tgt.iter().filter(|t| t.kind == Kind::Number).collect();
    let mut used = vec![false; tgt.len()];
    let mut missing = Vec::new();
    // Target positions by digits, consumed in order.
    let mut by_key: HashMap<String, std::collections::VecDeque<usize>> = HashMap::new();
    for (i, t) in tgt.iter().enumerate() {
        by_key.entry(digits(t)).or_default().push_back(i);
    }
    for s in &src {
        match by_key.get_mut(&digits(s)).and_then(|q| q.pop_front()) {
            Some(i) => used[i] = true,
            None => missing.push(*s),
        }
    }
    let mut extra: Vec<&Token> = tgt
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(t, _)| *t)
        .collect();
    let pairs = missing.len().min(extra.len());
    for (s, t) in missing.iter().zip(extra.iter()).take(pairs) {
        out.push(issue(
            IssueType::Accuracy,
            SubType::Mistranslation,
            Severity::Critical,
            format!(
                "The source has the number '{}' but the translation has '{}' instead. Numbers must be carried over exactly.",
                with_unit(p.source, &p.src, s),
                with_unit(p.target, &p.tgt, t)
            ),
            vec![unit_span(&p.src, s)],
            vec![unit_span(&p.tgt, t)],
        ));
    }
    for s in missing.iter().skip(pairs) {
        out.push(issue(
            IssueType::Accuracy,
            SubType::Omission,
            Severity::Major,
            format!(
                "The number '{}' of the source does not appear in the translation.",
                with_unit(p.source, &p.src, s)
            ),
            vec![unit_span(&p.src, s)],
            Vec::new(),
        ));
    }
    extra.drain(..pairs);
    for t in extra {
        out.push(issue(
            IssueType::Accuracy,
            SubType::Addition,
            Severity::Major,
            format!(
                "The translation has the number '{}', which is not in the source.",
                with_unit(p.target, &p.tgt, t)
            ),
            Vec::new(),
            vec![unit_span(&p.tgt, t)],
        ));
    }
    currencies(p, out);
}

/// The number token extended by a directly attached `%`, currency sign or unit sign.
fn unit_span(tokens: &[Token], t: &Token) -> Span {
    let mut sp = span(t);
    if let Ok(i) = tokens.binary_search_by_key(&t.start, |x| x.start) {
        if let Some(next) = tokens.get(i + 1)
            && next.kind == Kind::Punct
            && is_unit(&next.text)
            && next.start <= sp.end + 1
        {
            sp.end = next.end;
        }
        if i > 0 {
            let prev = &tokens[i - 1];
            if prev.kind == Kind::Punct && is_unit(&prev.text) && prev.end + 1 >= sp.start {
                sp.start = prev.start;
            }
        }
    }
    sp
}

fn is_unit(s: &str) -> bool {
    matches!(s, "%" | "€" | "$" | "£" | "¥" | "‰")
}

fn with_unit(text: &str, tokens: &[Token], t: &Token) -> String {
    let sp = unit_span(tokens, t);
    text::substring(text, sp.start, sp.end)
}

fn currencies(p: &Pair, out: &mut Vec<Issue>) {
    const SIGNS: [(&str, &str); 6] = [
        ("€", "EUR"),
        ("$", "USD"),
        ("£", "GBP"),
        ("¥", "JPY"),
        ("EUR", "EUR"),
        ("USD", "USD"),
    ];
    let find = |tokens: &[Token]| -> Vec<(String, Span)> {
        tokens
            .iter()
            .filter_map(|t| {
                SIGNS
                    .iter()
                    .find(|(s, _)| t.text == *s)
                    .map(|(_, code)| ((*code).to_owned(), span(t)))
            })
            .collect()
    };
    let s = find(&p.src);
    let t = find(&p.tgt);
    let s_codes: HashSet<&str> = s.iter().map(|(c, _)| c.as_str()).collect();
    let t_codes: HashSet<&str> = t.iter().map(|(c, _)| c.as_str()).collect();
    if s_codes.is_empty() || t_codes.is_empty() || s_codes == t_codes {
        return;
    }
    let gone: Vec<&(String, Span)> = s
        .iter()
        .filter(|(c, _)| !t_codes.contains(c.as_str()))
        .collect();
    let new: Vec<&(String, Span)> = t
        .iter()
        .filter(|(c, _)| !s_codes.contains(c.as_str()))
        .collect();
    if !gone.is_empty() && !new.is_empty() {
        out.push(issue(
            IssueType::Accuracy,
            SubType::Mistranslation,
            Severity::Critical,
            format!(
                "The currency changes: the source is in {} but the translation is in {}.",
                gone[0].0, new[0].0
            ),
            gone.iter().map(|(_, s)| *s).collect(),
            new.iter().map(|(_, s)| *s).collect(),
        ));
    }
}

fn month_of(lang: &str, word: &str) -> Option<usize> {
    lexicon::months(lang)
        .iter()
        .position(|names| names.contains(&word))
}

fn months(p: &Pair, out: &mut Vec<Issue>) {
    let (sl, tl) = (&p.options.source_lang, &p.options.target_lang);
    if lexicon::months(sl).is_empty() || lexicon::months(tl).is_empty() {
        return;
    }
    // English "may"/"mar" are ordinary words too: only count a month name next to a number.
    let near_number = |tokens: &[Token], i: usize| {
        tokens[i.saturating_sub(3)..(i + 4).min(tokens.len())]
            .iter()
            .any(|t| t.kind == Kind::Number)
    };
    let collect = |tokens: &[Token], lang: &str| -> Vec<(usize, Span, String)> {
        tokens
            .iter()
            .enumerate()
            .filter(|(_, t)| t.kind == Kind::Word)
            .filter_map(|(i, t)| {
                let m = month_of(lang, &t.lower())?;
                let ambiguous = t.text.chars().count() <= 3 || t.lower() == "may";
                if ambiguous && !near_number(tokens, i) {
                    return None;
                }
                Some((m, span(t), t.text.clone()))
            })
            .collect()
    };
    let s = collect(&p.src, sl);
    let t = collect(&p.tgt, tl);
    let mut used = vec![false; t.len()];
    for (m, sp, word) in &s {
        if let Some(i) = (0..t.len()).find(|&i| !used[i] && t[i].0 == *m) {
            used[i] = true;
            continue;
        }
        if let Some(i) = (0..t.len()).find(|&i| !used[i]) {
            used[i] = true;
            out.push(issue(
                IssueType::Accuracy,
                SubType::Mistranslation,
                Severity::Critical,
                format!(
                    "The date changes: the source says '{word}' but the translation says '{}', another month.",
                    t[i].2
                ),
                vec![*sp],
                vec![t[i].1],
            ));
        }
    }
}

// ---------------------------------------------------------------- phrases

/// Occurrences of `phrase` (space-separated words, lower case) among the word
/// tokens of `tokens`, as spans over the matched words.
fn find_phrase(tokens: &[Token], phrase: &str) -> Vec<Span> {
    let words: Vec<&str> = phrase.split(' ').collect();
    let toks: Vec<&Token> = tokens.iter().filter(|t| t.kind == Kind::Word).collect();
    let lower: Vec<String> = toks.iter().map(|t| t.lower()).collect();
    let mut out = Vec::new();
    if words.is_empty() || toks.len() < words.len() {
        return out;
    }
    for i in 0..=toks.len() - words.len() {
        if words.iter().enumerate().all(|(k, w)| lower[i + k] == *w) {
            out.push(Span::new(toks[i].start, toks[i + words.len() - 1].end));
        }
    }
    out
}

fn find_any(tokens: &[Token], phrases: &[&str]) -> Vec<Span> {
    let mut spans: Vec<Span> = phrases
        .iter()
        .flat_map(|ph| find_phrase(tokens, ph))
        .collect();
    spans.sort();
    // Drop spans inside longer ones ("debajo" inside "por debajo").
    let mut kept: Vec<Span> = Vec::new();
    for s in spans {
        if let Some(last) = kept.last_mut()
            && s.start < last.end
        {
            if s.end > last.end {
                last.end = s.end;
            }
            continue;
        }
        kept.push(s);
    }
    kept
}

/// Extends a span to a number (and its unit) right before it: "5% above".
fn with_preceding_number(tokens: &[Token], sp: Span) -> Span {
    let Ok(i) = tokens.binary_search_by_key(&sp.start, |t| t.start) else {
        return sp;
    };
    let mut start = sp.start;
    let mut j = i;
    while j > 0 && i - j < 2 {
        let prev = &tokens[j - 1];
        if prev.kind == Kind::Number || (prev.kind == Kind::Punct && is_unit(&prev.text)) {
            start = prev.start;
            j -= 1;
        } else {
            break;
        }
    }
    Span::new(start, sp.end)
}

fn quote(text: &str, spans: &[Span]) -> String {
    spans
        .iter()
        .map(|s| format!("'{}'", text::substring(text, s.start, s.end)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn directions(p: &Pair, out: &mut Vec<Issue>) {
    let (s_up, s_down) = lexicon::directions(&p.options.source_lang);
    let (t_up, t_down) = lexicon::directions(&p.options.target_lang);
    if s_up.is_empty() || t_up.is_empty() {
        return;
    }
    let su = find_any(&p.src, s_up);
    let sd = find_any(&p.src, s_down);
    let tu = find_any(&p.tgt, t_up);
    let td = find_any(&p.tgt, t_down);
    let flipped = |s_has: &[Span], s_not: &[Span], t_has: &[Span], t_not: &[Span]| {
        !s_has.is_empty() && s_not.is_empty() && !t_has.is_empty() && t_not.is_empty()
    };
    let (src_spans, tgt_spans, from, to) = if flipped(&su, &sd, &td, &tu) {
        (su, td, "up/above/more", "down/below/less")
    } else if flipped(&sd, &su, &tu, &td) {
        (sd, tu, "down/below/less", "up/above/more")
    } else {
        return;
    };
    let has_number = p.src.iter().any(|t| t.kind == Kind::Number);
    let src_spans: Vec<Span> = src_spans
        .into_iter()
        .map(|s| with_preceding_number(&p.src, s))
        .collect();
    let tgt_spans: Vec<Span> = tgt_spans
        .into_iter()
        .map(|s| with_preceding_number(&p.tgt, s))
        .collect();
    out.push(issue(
        IssueType::Accuracy,
        SubType::Mistranslation,
        if has_number {
            Severity::Critical
        } else {
            Severity::Major
        },
        format!(
            "The direction is reversed: the source says {} ({from}) but the translation says {} ({to}). This inverts the meaning{}.",
            quote(p.source, &src_spans),
            quote(p.target, &tgt_spans),
            if has_number { " of the figures" } else { "" }
        ),
        src_spans,
        tgt_spans,
    ));
}

fn negation(p: &Pair, out: &mut Vec<Issue>) {
    let sn = lexicon::negations(&p.options.source_lang);
    let tn = lexicon::negations(&p.options.target_lang);
    if sn.is_empty() || tn.is_empty() {
        return;
    }
    let s = find_any(&p.src, sn);
    let t = find_any(&p.tgt, tn);
    if !s.is_empty() && t.is_empty() {
        out.push(issue(
            IssueType::Accuracy,
            SubType::Mistranslation,
            Severity::Major,
            format!(
                "The source is negative ({}) but the translation has no negation: it may say the opposite.",
                quote(p.source, &s)
            ),
            s,
            Vec::new(),
        ));
    } else if s.is_empty() && !t.is_empty() {
        out.push(issue(
            IssueType::Accuracy,
            SubType::Mistranslation,
            Severity::Minor,
            format!(
                "The translation has a negation ({}) that the source does not have; check that the meaning is not reversed.",
                quote(p.target, &t)
            ),
            Vec::new(),
            t,
        ));
    }
}

// ---------------------------------------------------------------- untranslated

/// Reports untranslated segments and source words left in the target. Returns
/// whether the whole segment is untranslated (alignment checks are then moot).
fn untranslated(p: &Pair, out: &mut Vec<Issue>) -> bool {
    if p.options.source_lang == p.options.target_lang {
        return false;
    }
    let src_words: HashSet<String> = p
        .src
        .iter()
        .filter(|t| t.kind == Kind::Word)
        .map(Token::lower)
        .collect();
    let tgt_words: Vec<&Token> = p.tgt.iter().filter(|t| t.kind == Kind::Word).collect();
    if tgt_words.is_empty() || src_words.is_empty() {
        return false;
    }
    let copied = tgt_words
        .iter()
        .filter(|t| src_words.contains(&t.lower()))
        .count();
    let s_func = lexicon::function_words(&p.options.source_lang);
    let t_func = lexicon::function_words(&p.options.target_lang);
    let source_only = |w: &str| s_func.contains(&w) && !t_func.contains(&w);
    let has_source_function_word = tgt_words.iter().any(|t| source_only(&t.lower()));
    let same = normalize(p.source) == normalize(p.target);
    let mostly = tgt_words.len() >= 3 && copied * 10 >= tgt_words.len() * 7;
    if (same && tgt_words.len() >= 2) || (mostly && has_source_function_word) {
        out.push(issue(
            IssueType::Accuracy,
            SubType::UntranslatedText,
            Severity::Major,
            format!(
                "The segment was left untranslated: the target is still in the source language ({}).",
                p.options.source_lang.to_uppercase()
            ),
            vec![Span::new(0, p.source.chars().count())],
            vec![Span::new(0, p.target.chars().count())],
        ));
        return true;
    }
    if s_func.is_empty() {
        return false;
    }
    // Runs of consecutive copied words holding a function word of the source language.
    let tchars: Vec<char> = p.target.chars().collect();
    let mut run: Vec<&Token> = Vec::new();
    let flush = |run: &mut Vec<&Token>, out: &mut Vec<Issue>| {
        if run.iter().any(|t| source_only(&t.lower())) {
            let first = run[0];
            let last = run[run.len() - 1];
            let words = run.len();
            let text = text::substring(p.target, first.start, last.end);
            let src_spans: Vec<Span> = find_phrase(
                &p.src,
                &run.iter().map(|t| t.lower()).collect::<Vec<_>>().join(" "),
            );
            out.push(issue(
                IssueType::Accuracy,
                SubType::UntranslatedText,
                if words >= 3 {
                    Severity::Major
                } else {
                    Severity::Minor
                },
                format!("'{text}' was left in the source language in the translation."),
                src_spans.into_iter().take(1).collect(),
                vec![Span::new(first.start, last.end)],
            ));
        }
        run.clear();
    };
    let mut prev_end: Option<usize> = None;
    for t in &p.tgt {
        let copied = t.kind == Kind::Word && src_words.contains(&t.lower());
        let adjacent =
            prev_end.is_none_or(|e| tchars[e..t.start].iter().all(|c| c.is_whitespace()));
        if copied && (run.is_empty() || adjacent) {
            run.push(t);
            prev_end = Some(t.end);
        } else {
            flush(&mut run, out);
            if copied {
                run.push(t);
                prev_end = Some(t.end);
            } else {
                prev_end = None;
            }
        }
    }
    flush(&mut run, out);
    false
}

fn normalize(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

// ---------------------------------------------------------------- alignment

/// Characters that carry content (no tags).
fn content_len(text: &str, sentence: &Sentence, tokens: &[Token]) -> f64 {
    let tags: usize = tokens
        .iter()
        .filter(|t| t.kind == Kind::Tag && t.start >= sentence.start && t.end <= sentence.end)
        .map(|t| t.end - t.start)
        .sum();
    let _ = text;
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

/// Aligns sentences by length (Gale–Church style, steps 1-1, 1-0, 0-1, 2-1, 1-2)
/// and reports the source sentences with no counterpart (omissions), the target
/// sentences with none (additions), and 1-1 pairs with a far-off length ratio.
fn alignment(p: &Pair, out: &mut Vec<Issue>) {
    let ss = text::sentences(p.source);
    let ts = text::sentences(p.target);
    if ss.is_empty() || ts.is_empty() {
        return;
    }
    let ratio = lexicon::length_ratio(&p.options.source_lang, &p.options.target_lang);
    let sl: Vec<f64> = ss
        .iter()
        .map(|s| content_len(p.source, s, &p.src))
        .collect();
    let tl: Vec<f64> = ts
        .iter()
        .map(|s| content_len(p.target, s, &p.tgt))
        .collect();
    let (n, m) = (ss.len(), ts.len());
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
    let (mut i, mut j) = (n, m);
    let mut steps = Vec::new();
    while i > 0 || j > 0 {
        let Step::Match(di, dj) = back[i][j];
        if di == 0 && dj == 0 {
            break;
        }
        steps.push((i - di, j - dj, di, dj));
        i -= di;
        j -= dj;
    }
    steps.reverse();
    for (i, j, di, dj) in steps {
        match (di, dj) {
            (1, 0) => {
                let s = ss[i];
                out.push(issue(
                    IssueType::Accuracy,
                    SubType::Omission,
                    Severity::Major,
                    format!(
                        "The sentence '{}' of the source is missing from the translation.",
                        text::substring(p.source, s.start, s.end)
                    ),
                    vec![Span::new(s.start, s.end)],
                    Vec::new(),
                ));
            }
            (0, 1) => {
                let t = ts[j];
                out.push(issue(
                    IssueType::Accuracy,
                    SubType::Addition,
                    Severity::Major,
                    format!(
                        "The sentence '{}' of the translation has no counterpart in the source.",
                        text::substring(p.target, t.start, t.end)
                    ),
                    Vec::new(),
                    vec![Span::new(t.start, t.end)],
                ));
            }
            (1, 1) => {
                let (s, t) = (ss[i], ts[j]);
                let r = (tl[j] + 1.0) / (sl[i] * ratio + 1.0);
                if sl[i] >= 40.0 && r < 0.45 {
                    out.push(issue(
                        IssueType::Accuracy,
                        SubType::Omission,
                        Severity::Major,
                        format!(
                            "The translation of this sentence is less than half as long as the source ({} vs {} characters): part of it seems to be missing.",
                            tl[j], sl[i]
                        ),
                        vec![Span::new(s.start, s.end)],
                        vec![Span::new(t.start, t.end)],
                    ));
                } else if tl[j] >= 40.0 && r > 2.2 {
                    out.push(issue(
                        IssueType::Accuracy,
                        SubType::Addition,
                        Severity::Minor,
                        format!(
                            "The translation of this sentence is more than twice as long as the source ({} vs {} characters): it may add content.",
                            tl[j], sl[i]
                        ),
                        vec![Span::new(s.start, s.end)],
                        vec![Span::new(t.start, t.end)],
                    ));
                }
            }
            _ => {}
        }
    }
}

// ---------------------------------------------------------------- markup

/// Identity of a tag or placeholder: `<b>`, `</b>`, `<br/>` (attributes dropped), `{name}`.
fn markup_key(t: &Token) -> String {
    if t.kind != Kind::Tag {
        return t.text.clone();
    }
    let inner = t.text.trim_start_matches('<').trim_end_matches('>');
    let closing = inner.starts_with('/');
    let self_closing = inner.ends_with('/');
    let name: String = inner
        .trim_start_matches('/')
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '/')
        .collect::<String>()
        .to_lowercase();
    format!(
        "<{}{}{}>",
        if closing { "/" } else { "" },
        name,
        if self_closing { "/" } else { "" }
    )
}

fn well_formed(keys: &[String]) -> bool {
    let mut stack: Vec<&str> = Vec::new();
    for k in keys {
        if !k.starts_with('<') || k.ends_with("/>") || k.starts_with("<!") {
            continue;
        }
        if let Some(name) = k.strip_prefix("</") {
            let name = name.trim_end_matches('>');
            if stack.pop() != Some(name) {
                return false;
            }
        } else {
            stack.push(k.trim_start_matches('<').trim_end_matches('>'));
        }
    }
    stack.is_empty()
}

fn markup(p: &Pair, out: &mut Vec<Issue>) {
    let is_markup = |t: &&Token| matches!(t.kind, Kind::Tag | Kind::Placeholder);
    let src: Vec<&Token> = p.src.iter().filter(is_markup).collect();
    let tgt: Vec<&Token> = p.tgt.iter().filter(is_markup).collect();
    if src.is_empty() && tgt.is_empty() {
        return;
    }
    let describe = |t: &Token| {
        if t.kind == Kind::Tag {
            format!("inline tag '{}'", t.text)
        } else {
            format!("placeholder '{}'", t.text)
        }
    };
    let mut used = vec![false; tgt.len()];
    let mut lost = Vec::new();
    let mut by_key: HashMap<String, std::collections::VecDeque<usize>> = HashMap::new();
    for (i, t) in tgt.iter().enumerate() {
        by_key.entry(markup_key(t)).or_default().push_back(i);
    }
    for s in &src {
        match by_key.get_mut(&markup_key(s)).and_then(|q| q.pop_front()) {
            Some(i) => used[i] = true,
            None => lost.push(*s),
        }
    }
    for s in &lost {
        out.push(issue(
            IssueType::Accuracy,
            SubType::Omission,
            Severity::Major,
            format!(
                "The {} of the source is missing from the translation; formatting or variable content will be lost.",
                describe(s)
            ),
            vec![span(s)],
            Vec::new(),
        ));
    }
    for (t, _) in tgt.iter().zip(&used).filter(|(_, u)| !**u) {
        out.push(issue(
            IssueType::Accuracy,
            SubType::Addition,
            Severity::Major,
            format!(
                "The translation has an {} that the source does not have.",
                describe(t)
            ),
            Vec::new(),
            vec![span(t)],
        ));
    }
    if !lost.is_empty() || used.iter().any(|u| !u) {
        return;
    }
    let sk: Vec<String> = src.iter().map(|t| markup_key(t)).collect();
    let tk: Vec<String> = tgt.iter().map(|t| markup_key(t)).collect();
    if well_formed(&sk) && !well_formed(&tk) {
        out.push(issue(
            IssueType::Fluency,
            SubType::Inconsistency,
            Severity::Major,
            "The inline tags of the translation are not properly nested (a tag closes before the one opened inside it); the formatting will break.".to_owned(),
            src.iter().filter(|t| t.kind == Kind::Tag).map(|t| span(t)).collect(),
            tgt.iter().filter(|t| t.kind == Kind::Tag).map(|t| span(t)).collect(),
        ));
    } else if sk != tk {
        // Placeholders whose order changed (tags may legitimately move with word order).
        let sp: Vec<&String> = sk.iter().filter(|k| !k.starts_with('<')).collect();
        let tp: Vec<&String> = tk.iter().filter(|k| !k.starts_with('<')).collect();
        if sp != tp {
            out.push(issue(
                IssueType::Fluency,
                SubType::Inconsistency,
                Severity::Minor,
                "The placeholders appear in a different order in the translation; check that each one still stands where its value belongs.".to_owned(),
                src.iter().filter(|t| t.kind == Kind::Placeholder).map(|t| span(t)).collect(),
                tgt.iter().filter(|t| t.kind == Kind::Placeholder).map(|t| span(t)).collect(),
            ));
        }
    }
}

// ---------------------------------------------------------------- glossary

/// Whether `term` occurs in `tokens` as words, allowing inflected endings on the
/// last word (`factura` matches `facturas`).
fn find_term(tokens: &[Token], term: &str, inflect: bool) -> Vec<Span> {
    let term_tokens = text::tokenize(term);
    let words: Vec<String> = term_tokens
        .iter()
        .filter(|t| t.kind != Kind::Punct)
        .map(Token::lower)
        .collect();
    let toks: Vec<&Token> = tokens.iter().filter(|t| t.kind != Kind::Punct).collect();
    let mut out = Vec::new();
    if words.is_empty() || toks.len() < words.len() {
        return out;
    }
    for i in 0..=toks.len() - words.len() {
        let ok = words.iter().enumerate().all(|(k, w)| {
            let got = toks[i + k].lower();
            got == *w
                || (inflect
                    && k == words.len() - 1
                    && got.starts_with(w.as_str())
                    && got.chars().count() <= w.chars().count() + 2)
        });
        if ok {
            out.push(Span::new(toks[i].start, toks[i + words.len() - 1].end));
        }
    }
    out
}

fn glossary(p: &Pair, out: &mut Vec<Issue>) {
    for (s_term, t_term) in &p.options.glossary {
        if s_term.trim().is_empty() || t_term.trim().is_empty() {
            continue;
        }
        let found = find_term(&p.src, s_term, true);
        if found.is_empty() {
            continue;
        }
        let in_target = find_term(&p.tgt, t_term, true);
        if in_target.len() >= found.len() {
            continue;
        }
        out.push(issue(
            IssueType::Accuracy,
            SubType::Mistranslation,
            Severity::Major,
            format!(
                "The glossary requires '{s_term}' to be translated as '{t_term}', but the translation does not use '{t_term}'{}.",
                if in_target.is_empty() { "" } else { " every time" }
            ),
            found,
            in_target,
        ));
    }
}

// ---------------------------------------------------------------- conventions

fn conventions(p: &Pair, out: &mut Vec<Issue>) {
    let tc: Vec<char> = p.target.chars().collect();
    let sc: Vec<char> = p.source.chars().collect();
    let tl = p.options.target_lang.as_str();
    let minor = |sub: SubType, why: String, spans: Vec<Span>| {
        issue(
            IssueType::Fluency,
            sub,
            Severity::Minor,
            why,
            Vec::new(),
            spans,
        )
    };

    // Broken characters.
    let mut bad = Vec::new();
    for (i, w) in tc.windows(2).enumerate() {
        if (w[0] == 'Ã' && !sc.contains(&'Ã')) || (w[0] == 'â' && w[1] == '€') {
            bad.push(Span::new(i, i + 2));
        }
    }
    for (i, c) in tc.iter().enumerate() {
        if *c == '\u{FFFD}' && !sc.contains(c) {
            bad.push(Span::new(i, i + 1));
        }
    }
    if !bad.is_empty() {
        out.push(issue(
            IssueType::Fluency,
            SubType::CharacterEncoding,
            Severity::Major,
            "The translation has broken characters (wrong character encoding, e.g. 'Ã©' for 'é' or '�').".to_owned(),
            Vec::new(),
            bad,
        ));
    }

    // Doubled spaces not in the source.
    if !p.source.contains("  ") {
        let spans: Vec<Span> = runs_of(&tc, |c| c == ' ')
            .into_iter()
            .filter(|s| s.end - s.start >= 2)
            .collect();
        if !spans.is_empty() {
            out.push(minor(
                SubType::Punctuation,
                "The translation has double spaces.".to_owned(),
                spans,
            ));
        }
    }
    // Leading/trailing white space that differs.
    let lead = |c: &[char]| c.iter().take_while(|c| c.is_whitespace()).count();
    let trail = |c: &[char]| c.iter().rev().take_while(|c| c.is_whitespace()).count();
    if (lead(&sc) > 0) != (lead(&tc) > 0) || (trail(&sc) > 0) != (trail(&tc) > 0) {
        let mut spans = Vec::new();
        if lead(&tc) > 0 {
            spans.push(Span::new(0, lead(&tc)));
        }
        if trail(&tc) > 0 {
            spans.push(Span::new(tc.len() - trail(&tc), tc.len()));
        }
        out.push(minor(
            SubType::Punctuation,
            "Leading or trailing white space differs from the source.".to_owned(),
            spans,
        ));
    }
    // Space before punctuation (French puts one before ; : ! ?).
    let spaced_in_source: HashSet<char> = sc
        .windows(2)
        .filter(|w| w[0] == ' ')
        .map(|w| w[1])
        .collect();
    let mut spans = Vec::new();
    for i in 1..tc.len() {
        let c = tc[i];
        let needs_space_fr = matches!(c, ';' | ':' | '!' | '?' | '»');
        let mark = matches!(c, ',' | '.' | ';' | ':' | '!' | '?');
        if mark && tc[i - 1] == ' ' && !(tl == "fr" && needs_space_fr) {
            let before_in_source = spaced_in_source.contains(&c);
            if !before_in_source {
                spans.push(Span::new(i - 1, i + 1));
            }
        }
    }
    if !spans.is_empty() {
        out.push(minor(
            SubType::Punctuation,
            "There is a space before a punctuation mark, which the target language does not use."
                .to_owned(),
            spans,
        ));
    }
    if tl == "fr" {
        let mut spans = Vec::new();
        for i in 1..tc.len() {
            if matches!(tc[i], ';' | '!' | '?')
                && !matches!(tc[i - 1], ' ' | '\u{00A0}' | '\u{202F}' | '!' | '?')
            {
                spans.push(Span::new(i - 1, i + 1));
            }
        }
        if !spans.is_empty() {
            out.push(minor(
                SubType::Punctuation,
                "French puts a (narrow no-break) space before ';', '!' and '?'.".to_owned(),
                spans,
            ));
        }
    }
    // Spanish opening marks.
    if tl == "es" {
        for s in text::sentences(p.target) {
            let chars = &tc[s.start..s.end];
            for (open, close) in [('¿', '?'), ('¡', '!')] {
                if let Some(pos) = chars.iter().rposition(|&c| c == close)
                    && !chars[..pos].contains(&open)
                {
                    out.push(minor(
                        SubType::Punctuation,
                        format!(
                            "Spanish opens this sentence with '{open}' when it ends with '{close}'."
                        ),
                        vec![Span::new(s.start, s.end)],
                    ));
                }
            }
        }
    }
    // Final punctuation.
    let last = |c: &[char]| {
        c.iter()
            .rev()
            .find(|c| !c.is_whitespace() && !matches!(c, '"' | '\'' | '”' | '’' | ')' | '»' | '>'))
            .copied()
    };
    let strip_tags = |s: &str| {
        let toks = text::tokenize(s);
        toks.iter()
            .filter(|t| t.kind != Kind::Tag)
            .map(|t| t.text.clone())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let s_last = last(&strip_tags(p.source).chars().collect::<Vec<_>>());
    let t_last = last(&strip_tags(p.target).chars().collect::<Vec<_>>());
    if let (Some(s), Some(t)) = (s_last, t_last) {
        let terminal = |c: char| matches!(c, '.' | '!' | '?' | ':' | ';' | '…' | '。');
        let end = tc.len();
        let tail = Span::new(end.saturating_sub(1), end);
        if terminal(s) && !terminal(t) {
            out.push(minor(
                SubType::Punctuation,
                format!("The source ends with '{s}' but the translation has no final punctuation."),
                vec![tail],
            ));
        } else if terminal(s) && terminal(t) && s != t && (s == '?' || t == '?') {
            out.push(minor(
                SubType::Punctuation,
                format!("The source ends with '{s}' but the translation ends with '{t}'."),
                vec![tail],
            ));
        }
    }
    // Casing of the first letter.
    let first_tag_free = |tokens: &[Token]| {
        tokens
            .iter()
            .find(|t| t.kind == Kind::Word)
            .and_then(|t| t.text.chars().next().map(|c| (t.start, c)))
    };
    if let (Some((_, s)), Some((ti, t))) = (first_tag_free(&p.src), first_tag_free(&p.tgt))
        && s.is_uppercase()
        && t.is_lowercase()
    {
        out.push(minor(
            SubType::Spelling,
            "The source starts with a capital letter but the translation does not.".to_owned(),
            vec![Span::new(ti, ti + 1)],
        ));
    }
    // Repeated words ("el el").
    let words: Vec<&Token> = p.tgt.iter().filter(|t| t.kind == Kind::Word).collect();
    let src_repeats: HashSet<String> = p
        .src
        .windows(2)
        .filter(|w| w[0].kind == Kind::Word && w[0].lower() == w[1].lower())
        .map(|w| w[0].lower())
        .collect();
    for w in words.windows(2) {
        if w[0].lower() == w[1].lower()
            && tc[w[0].end..w[1].start].iter().all(|c| c.is_whitespace())
            && !src_repeats.contains(&w[0].lower())
        {
            out.push(minor(
                SubType::Grammar,
                format!("The word '{}' is repeated.", w[1].text),
                vec![Span::new(w[0].start, w[1].end)],
            ));
        }
    }
    // Unbalanced brackets and quotes.
    let mut bal: HashMap<(char, char), ()> = HashMap::new();
    for (open, close) in [('(', ')'), ('[', ']'), ('«', '»'), ('“', '”')] {
        let count = |c: &[char], x: char| c.iter().filter(|&&y| y == x).count();
        let s_ok = count(&sc, open) == count(&sc, close);
        let t_ok = count(&tc, open) == count(&tc, close);
        if s_ok && !t_ok && bal.insert((open, close), ()).is_none() {
            let spans = tc
                .iter()
                .enumerate()
                .filter(|(_, c)| **c == open || **c == close)
                .map(|(i, _)| Span::new(i, i + 1))
                .collect();
            out.push(minor(
                SubType::Punctuation,
                format!("'{open}' and '{close}' are not balanced in the translation."),
                spans,
            ));
        }
    }
}

fn runs_of(chars: &[char], f: impl Fn(char) -> bool) -> Vec<Span> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if f(chars[i]) {
            let s = i;
            while i < chars.len() && f(chars[i]) {
                i += 1;
            }
            out.push(Span::new(s, i));
        } else {
            i += 1;
        }
    }
    out
}
