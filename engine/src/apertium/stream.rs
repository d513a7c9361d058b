//! The Apertium stream format: escaping texts into one null-flush block,
//! and splitting the translated block back into texts.
//!
//! A block holds many texts ("units"). Each unit is followed by a superblank
//! separator `[sN]`; superblanks pass through every stage untouched and in
//! order, so the output splits cleanly. A unit that does not end a sentence
//! gets a period plus `[p]` (as `apertium-destxt` does) so that no transfer
//! rule spans two texts; the period is removed again afterwards. Newlines go
//! into superblanks (also like `apertium-destxt`), and so does `~`, which the
//! post-generator would otherwise eat.
//!
//! Inline markup (see [`crate::markup`]) becomes Apertium 3.8 wordbound
//! blanks: every word inside elements is written `[[t:1;t:3]]word[[/]]` with
//! the indices of its elements, and the blank moves with the word through
//! reordering. Elements without words become superblank markers `[oN]`,
//! `[cN]`, `[eN]`, which keep their position.

use std::collections::BTreeSet;

use crate::TagHandling;
use crate::markup::{self, Atom, Item, Markup};

/// Characters escaped with a backslash in the stream (those of
/// `apertium-destxt` plus `*`, `#`, `+`, which mean something inside
/// lexical units).
const ESCAPED: &[char] = &[
    '\\', '[', ']', '^', '$', '/', '@', '<', '>', '{', '}', '*', '#', '+',
];

/// Sentence-final punctuation: no period is added after it.
const TERMINAL: &[char] = &['.', '!', '?', '…', ';', ':', '。', '！', '？', '؟', '।'];

/// Closing quotes and brackets that may follow sentence-final punctuation.
const CLOSERS: &[char] = &['"', '\'', ')', ']', '}', '»', '”', '’', '›', '」', '』'];

/// A text prepared for translation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unit {
    /// The text without its leading and trailing whitespace, parsed.
    pub markup: Markup,
    /// Leading whitespace of the input, restored on output.
    pub lead: String,
    /// Trailing whitespace of the input, restored on output.
    pub trail: String,
    /// Whether the markup is XML (escape on output).
    pub xml: bool,
}

/// What to do with one input text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Prepared {
    /// Nothing to translate (empty, whitespace, only tags or punctuation):
    /// the output is this text.
    Passthrough(String),
    /// Translate this unit.
    Unit(Unit),
}

/// Prepares one input text. NUL characters (the flush marker) are removed.
pub(crate) fn prepare(text: &str, tags: TagHandling) -> Prepared {
    let clean: String = text.chars().filter(|&c| c != '\0').collect();
    let core = clean.trim();
    if core.is_empty() {
        return Prepared::Passthrough(clean);
    }
    let start = clean.len() - clean.trim_start().len();
    let lead = clean[..start].to_owned();
    let trail = clean[start + core.len()..].to_owned();
    let (markup, xml) = match tags {
        TagHandling::None => (Markup::plain(core), false),
        TagHandling::Xml => (Markup::parse_xml(core), true),
    };
    if !markup.has_words() {
        return Prepared::Passthrough(clean);
    }
    Prepared::Unit(Unit {
        markup,
        lead,
        trail,
        xml,
    })
}

/// A token of a unit before encoding.
enum Tok {
    Word { text: String, ids: BTreeSet<usize> },
    Space(String),
    Open(usize),
    Close(usize),
    Standalone(usize),
}

fn tokenize(markup: &Markup) -> Vec<Tok> {
    let mut toks: Vec<Tok> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    // Index of the word that a following non-space run continues (only
    // Open/Close tokens since).
    let mut open_word: Option<usize> = None;
    // Whether an element closed since that word: a sibling opening after it
    // starts a word of its own (`<b>bold</b><i>italic</i>` are two words,
    // `<b>bi</b>g` and `un<b>believ</b>able` one).
    let mut closed = false;
    for item in &markup.items {
        match item {
            Item::Open(id) => {
                stack.push(*id);
                toks.push(Tok::Open(*id));
                if closed {
                    open_word = None;
                }
            }
            Item::Close(id) => {
                if let Some(p) = stack.iter().rposition(|x| x == id) {
                    stack.remove(p);
                }
                toks.push(Tok::Close(*id));
                closed = true;
            }
            Item::Standalone(id) => {
                toks.push(Tok::Standalone(*id));
                open_word = None;
            }
            Item::Text(text) => {
                let mut rest = text.as_str();
                while let Some(c) = rest.chars().next() {
                    let is_space = c.is_whitespace();
                    let len = rest
                        .find(|c: char| c.is_whitespace() != is_space)
                        .unwrap_or(rest.len());
                    let run = &rest[..len];
                    rest = &rest[len..];
                    if is_space {
                        toks.push(Tok::Space(run.to_owned()));
                        open_word = None;
                        continue;
                    }
                    // Continue a word cut by a tag (`<b>bi</b>g`), but let
                    // punctuation after a tag stand on its own.
                    let word = open_word.and_then(|i| toks.get_mut(i));
                    match word {
                        Some(Tok::Word { text, ids })
                            if text.ends_with(char::is_alphanumeric)
                                && run.starts_with(char::is_alphanumeric) =>
                        {
                            text.push_str(run);
                            ids.extend(stack.iter().copied());
                        }
                        _ => {
                            open_word = Some(toks.len());
                            closed = false;
                            toks.push(Tok::Word {
                                text: run.to_owned(),
                                ids: stack.iter().copied().collect(),
                            });
                        }
                    }
                }
            }
        }
    }
    toks
}

/// Appends `text` escaped for the stream (`~` as a superblank).
fn escape_into(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '\0' => {}
            '~' => out.push_str("[~]"),
            c if ESCAPED.contains(&c) => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
}

/// Whether a word ends a sentence.
fn ends_sentence(word: &str) -> bool {
    let trimmed = word.trim_end_matches(CLOSERS);
    trimmed.ends_with(TERMINAL)
}

/// Appends the stream form of `unit` followed by the separator `[s{index}]`.
pub(crate) fn encode(unit: &Unit, index: usize, out: &mut String) {
    let toks = tokenize(&unit.markup);
    let mut has_words = vec![false; unit.markup.elements.len()];
    for t in &toks {
        if let Tok::Word { ids, .. } = t {
            for &id in ids {
                if let Some(h) = has_words.get_mut(id) {
                    *h = true;
                }
            }
        }
    }
    let mut last_word_ends_sentence = true;
    // The elements of the previous word, and whether a space followed it.
    let mut previous: Option<&BTreeSet<usize>> = None;
    let mut spaced = false;
    for t in &toks {
        match t {
            Tok::Word { text, ids } => {
                last_word_ends_sentence = ends_sentence(text);
                if let Some(before) = previous.filter(|b| spaced && *b != ids) {
                    boundary_into(before, ids, out);
                }
                previous = Some(ids);
                spaced = false;
                if ids.is_empty() {
                    escape_into(text, out);
                } else {
                    let blank: Vec<String> = ids.iter().map(|id| format!("t:{id}")).collect();
                    let blank = blank.join(";");
                    for (i, part) in text.split('~').enumerate() {
                        if i > 0 {
                            out.push_str("[~]");
                        }
                        if !part.is_empty() {
                            out.push_str("[[");
                            out.push_str(&blank);
                            out.push_str("]]");
                            escape_into(part, out);
                            out.push_str("[[/]]");
                        }
                    }
                }
            }
            Tok::Space(s) if s.chars().all(|c| c == ' ') => {
                spaced = true;
                out.push_str(s);
            }
            Tok::Space(s) => {
                spaced = true;
                // A paragraph break ends a sentence (as in apertium-destxt).
                if s.matches('\n').count() >= 2 && !last_word_ends_sentence {
                    out.push_str(".[p]");
                    last_word_ends_sentence = true;
                }
                out.push('[');
                out.push_str(s);
                out.push(']');
            }
            Tok::Open(id) if !has_words[*id] => out.push_str(&format!("[o{id}]")),
            Tok::Close(id) if !has_words[*id] => out.push_str(&format!("[c{id}]")),
            Tok::Open(_) | Tok::Close(_) => {}
            Tok::Standalone(id) => {
                previous = None;
                out.push_str(&format!("[e{id}]"));
            }
        }
    }
    if !last_word_ends_sentence {
        out.push_str(".[p]");
    }
    out.push_str(&format!("[s{index}]"));
}

/// Appends the marker of a boundary between words of different elements,
/// `[b0.2|1]`: the post-generator (`lt-proc -p`) merges a word it rewrites
/// with the next one (`y` + `italic` → `e italic`, `de` + `el` → `del`) under
/// the next one's wordbound blank; a marker it finds inside such a merged
/// word tells [`decode`] which elements the text before it belongs to.
fn boundary_into(before: &BTreeSet<usize>, after: &BTreeSet<usize>, out: &mut String) {
    let join = |ids: &BTreeSet<usize>| {
        ids.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(".")
    };
    out.push_str(&format!("[b{}|{}]", join(before), join(after)));
}

/// A piece of a translated block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Out {
    Atom(Atom),
    /// End of unit N.
    Sep(usize),
    /// A period was inserted before this point.
    Period,
}

/// Reads a stream block: unescapes text, resolves wordbound blanks and
/// recognises our superblank markers.
pub(crate) fn decode(stream: &str) -> Vec<Out> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut ids: Vec<usize> = Vec::new();
    // Where the atoms of the current wordbound blank begin in `out`.
    let mut region = 0;
    // A boundary marker left between spaces: the space after it is the
    // engine's, not the source's.
    let mut skip_space = false;
    let mut chars = stream.chars().peekable();
    let flush = |text: &mut String, ids: &[usize], out: &mut Vec<Out>| {
        if !text.is_empty() {
            out.push(Out::Atom(Atom::Text {
                text: std::mem::take(text),
                ids: ids.to_vec(),
            }));
        }
    };
    while let Some(c) = chars.next() {
        if std::mem::take(&mut skip_space) && c == ' ' {
            continue;
        }
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    text.push(n);
                }
            }
            '[' if chars.peek() == Some(&'[') => {
                chars.next();
                let content = read_until(&mut chars, "]]");
                flush(&mut text, &ids, &mut out);
                ids = if content.trim() == "/" {
                    Vec::new()
                } else {
                    parse_ids(&content)
                };
                region = out.len();
            }
            '[' => {
                let content = read_until(&mut chars, "]");
                flush(&mut text, &ids, &mut out);
                match boundary(&content) {
                    Some((before, after)) if !ids.is_empty() => {
                        // Inside a word the post-generator merged: the text
                        // so far is the word before the boundary.
                        for o in &mut out[region..] {
                            if let Out::Atom(Atom::Text { ids, .. }) = o {
                                ids.clone_from(&before);
                            }
                        }
                        ids = after;
                        region = out.len();
                    }
                    Some(_) => {
                        skip_space = matches!(
                            out.last(),
                            Some(Out::Atom(Atom::Text { text, .. })) if text.ends_with(' ')
                        );
                    }
                    None => out.push(classify(content)),
                }
            }
            c => text.push(c),
        }
    }
    flush(&mut text, &ids, &mut out);
    out
}

/// Reads up to the unescaped `end`, unescaping on the way.
fn read_until(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, end: &str) -> String {
    let mut s = String::new();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                s.push(n);
            }
            continue;
        }
        s.push(c);
        if s.ends_with(end) {
            s.truncate(s.len() - end.len());
            return s;
        }
    }
    s
}

/// A boundary marker's content `b0.2|1` → ([0, 2], [1]).
fn boundary(content: &str) -> Option<(Vec<usize>, Vec<usize>)> {
    let (before, after) = content.strip_prefix('b')?.split_once('|')?;
    let ids = |s: &str| -> Option<Vec<usize>> {
        s.split('.')
            .filter(|p| !p.is_empty())
            .map(|p| p.parse().ok())
            .collect()
    };
    Some((ids(before)?, ids(after)?))
}

/// `t:1; t:3` → [1, 3].
fn parse_ids(content: &str) -> Vec<usize> {
    content
        .split(';')
        .filter_map(|p| {
            p.trim()
                .strip_prefix("t:")
                .and_then(|n| n.trim().parse().ok())
        })
        .collect()
}

fn classify(content: String) -> Out {
    let num = |prefix: char| {
        content
            .strip_prefix(prefix)
            .filter(|n| !n.is_empty())
            .and_then(|n| n.parse::<usize>().ok())
    };
    if content == "p" {
        Out::Period
    } else if let Some(n) = num('s') {
        Out::Sep(n)
    } else if let Some(n) = num('o') {
        Out::Atom(Atom::Open(n))
    } else if let Some(n) = num('c') {
        Out::Atom(Atom::Close(n))
    } else if let Some(n) = num('e') {
        Out::Atom(Atom::Standalone(n))
    } else {
        // Whitespace, `~`, or anything else: text.
        Out::Atom(Atom::Text {
            text: content,
            ids: Vec::new(),
        })
    }
}

/// Removes the period inserted before a `[p]` marker: the last `.` of the
/// last non-blank text before it, if that text ends with one.
fn remove_inserted_period(atoms: &mut [Atom]) {
    for a in atoms.iter_mut().rev() {
        if let Atom::Text { text, .. } = a
            && !text.trim().is_empty()
        {
            let trimmed = text.trim_end();
            if trimmed.ends_with('.') {
                let cut = trimmed.len() - 1;
                text.replace_range(cut..cut + 1, "");
            }
            return;
        }
    }
}

/// Splits a decoded block into the atoms of `count` units, checking that
/// the separators came back complete and in order. `None` if not.
pub(crate) fn split(out: Vec<Out>, count: usize) -> Option<Vec<Vec<Atom>>> {
    let mut units = Vec::with_capacity(count);
    let mut current: Vec<Atom> = Vec::new();
    for o in out {
        match o {
            Out::Atom(a) => current.push(a),
            Out::Period => remove_inserted_period(&mut current),
            Out::Sep(n) => {
                if n != units.len() {
                    return None;
                }
                units.push(std::mem::take(&mut current));
            }
        }
    }
    // What follows the last separator is the block's trailing blank.
    if units.len() != count
        || current
            .iter()
            .any(|a| !matches!(a, Atom::Text { text, .. } if text.trim().is_empty()))
    {
        return None;
    }
    Some(units)
}

/// All atoms of a decoded block, ignoring separators (last resort when the
/// separators of a single unit got lost).
pub(crate) fn all_atoms(out: Vec<Out>) -> Vec<Atom> {
    let mut atoms = Vec::new();
    for o in out {
        match o {
            Out::Atom(a) => atoms.push(a),
            Out::Period => remove_inserted_period(&mut atoms),
            Out::Sep(_) => {}
        }
    }
    atoms
}

/// The output text of a unit from its translated atoms.
pub(crate) fn finish(unit: &Unit, mut atoms: Vec<Atom>) -> String {
    let source: String = unit
        .markup
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    if !source.contains('<') {
        for atom in &mut atoms {
            if let Atom::Text { text, .. } = atom
                && text.contains('<')
            {
                *text = strip_analysis_tags(text);
            }
        }
    }
    markup::trim_atoms(&mut atoms);
    let body = markup::rebuild(atoms, &unit.markup.elements, unit.xml);
    let mut s = String::with_capacity(unit.lead.len() + body.len() + unit.trail.len());
    s.push_str(&unit.lead);
    s.push_str(&body);
    s.push_str(&unit.trail);
    s
}

/// `text` without the grammatical tags (`<prn>`, `<n><sg>`) a generator
/// writes for a word it cannot generate (a transfer rule that lost the
/// lemma). Only for a translation whose source has no `<` (a literal `<now>`
/// comes back as the translated word in brackets, escaped the same way).
fn strip_analysis_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('<') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let name_len = rest[1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len() - 1);
        let tag_len = name_len + 2;
        let is_tag = name_len > 0 && rest[1 + name_len..].starts_with('>');
        if is_tag {
            rest = &rest[tag_len..];
        } else {
            out.push('<');
            rest = &rest[1..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(text: &str, tags: TagHandling) -> Unit {
        match prepare(text, tags) {
            Prepared::Unit(u) => u,
            Prepared::Passthrough(p) => panic!("passthrough {p:?}"),
        }
    }

    fn enc(text: &str, tags: TagHandling) -> String {
        let mut s = String::new();
        encode(&unit(text, tags), 0, &mut s);
        s
    }

    #[test]
    fn analysis_tags_the_source_lacks_are_removed() {
        assert_eq!(strip_analysis_tags("%<prn> y"), "% y");
        assert_eq!(strip_analysis_tags("a<n><sg> b"), "a b");
        assert_eq!(strip_analysis_tags("1 < 2 <> <a-b>"), "1 < 2 <> <a-b>");
    }

    #[test]
    fn escapes_special_characters() {
        assert_eq!(
            enc(r"a[b]c^d$e/f@g<h>i{j}k*l#m+n\o~p.", TagHandling::None),
            r"a\[b\]c\^d\$e\/f\@g\<h\>i\{j\}k\*l\#m\+n\\o[~]p.[s0]"
        );
    }

    #[test]
    fn adds_period_and_superblanks_newlines() {
        assert_eq!(enc("Hello world", TagHandling::None), "Hello world.[p][s0]");
        assert_eq!(enc("Hello world!", TagHandling::None), "Hello world![s0]");
        assert_eq!(
            enc("He said \"hi.\"", TagHandling::None),
            "He said \"hi.\"[s0]"
        );
        assert_eq!(
            enc("Title\n\nBody\nmore", TagHandling::None),
            "Title.[p][\n\n]Body[\n]more.[p][s0]"
        );
        assert_eq!(enc("a\u{0}b", TagHandling::None), "ab.[p][s0]");
    }

    #[test]
    fn passthrough_without_words() {
        assert_eq!(
            prepare("", TagHandling::None),
            Prepared::Passthrough(String::new())
        );
        assert_eq!(
            prepare("  \n", TagHandling::None),
            Prepared::Passthrough("  \n".into())
        );
        assert_eq!(
            prepare("<x id=\"1\"/>", TagHandling::Xml),
            Prepared::Passthrough("<x id=\"1\"/>".into())
        );
        assert_eq!(
            prepare("...", TagHandling::None),
            Prepared::Passthrough("...".into())
        );
        assert_eq!(
            prepare("\0", TagHandling::None),
            Prepared::Passthrough(String::new())
        );
    }

    #[test]
    fn wordbound_blanks_for_tagged_words() {
        assert_eq!(
            enc(
                r#"The <g id="1">big old</g> dog <x id="2"/> runs <b></b>fast"#,
                TagHandling::Xml
            ),
            "The [b|0][[t:0]]big[[/]] [[t:0]]old[[/]] [b0|]dog [e1] runs [o2][c2]fast.[p][s0]"
        );
        // A word partly inside a span carries the span.
        assert_eq!(
            enc("The <b>bi</b>g dog.", TagHandling::Xml),
            "The [b|0][[t:0]]big[[/]] [b0|]dog.[s0]"
        );
        // Nested spans.
        assert_eq!(
            enc("<b>x <i>y</i></b>.", TagHandling::Xml),
            "[[t:0]]x[[/]] [b0|0.1][[t:0;t:1]]y[[/]].[s0]"
        );
        // Adjacent elements are words of their own, each under its blank.
        assert_eq!(
            enc("A <b>bold</b><i>italic</i> text.", TagHandling::Xml),
            "A [b|0][[t:0]]bold[[/]][[t:1]]italic[[/]] [b1|]text.[s0]"
        );
        // But a word cut by an element stays one word.
        assert_eq!(
            enc("An un<b>believ</b>able day.", TagHandling::Xml),
            "An [b|0][[t:0]]unbelievable[[/]] [b0|]day.[s0]"
        );
    }

    #[test]
    fn boundaries_the_post_generator_merged_are_split_again() {
        // `y` + `italic` → `e italic` under italic's blank: `e` is not italic's.
        let out = decode("Es [[t:0]]negrita[[/]] [[t:1]]e [b|1]italic[[/]] texto.");
        let atoms: Vec<(String, Vec<usize>)> = out
            .into_iter()
            .filter_map(|o| match o {
                Out::Atom(Atom::Text { text, ids }) => Some((text, ids)),
                _ => None,
            })
            .collect();
        assert_eq!(
            atoms,
            [
                ("Es ".to_owned(), vec![]),
                ("negrita".to_owned(), vec![0]),
                (" ".to_owned(), vec![]),
                ("e ".to_owned(), vec![]),
                ("italic".to_owned(), vec![1]),
                (" texto.".to_owned(), vec![]),
            ]
        );
        // A marker outside a merged word is dropped with the space it added.
        let out = decode("casa [[t:1]]del[[/]] [b|1] rey");
        let text: String = out
            .into_iter()
            .filter_map(|o| match o {
                Out::Atom(Atom::Text { text, .. }) => Some(text),
                _ => None,
            })
            .collect();
        assert_eq!(text, "casa del rey");
    }

    #[test]
    fn decodes_blanks_markers_and_escapes() {
        let out =
            decode(r"El [[t:0]]perro[[/]] [[t:1; t:0]]grande\/\[x\][[/]] [e1]corre.[p][s0] [~]");
        assert_eq!(
            out,
            vec![
                Out::Atom(Atom::Text {
                    text: "El ".into(),
                    ids: vec![]
                }),
                Out::Atom(Atom::Text {
                    text: "perro".into(),
                    ids: vec![0]
                }),
                Out::Atom(Atom::Text {
                    text: " ".into(),
                    ids: vec![]
                }),
                Out::Atom(Atom::Text {
                    text: "grande/[x]".into(),
                    ids: vec![1, 0]
                }),
                Out::Atom(Atom::Text {
                    text: " ".into(),
                    ids: vec![]
                }),
                Out::Atom(Atom::Standalone(1)),
                Out::Atom(Atom::Text {
                    text: "corre.".into(),
                    ids: vec![]
                }),
                Out::Period,
                Out::Sep(0),
                Out::Atom(Atom::Text {
                    text: " ".into(),
                    ids: vec![]
                }),
                Out::Atom(Atom::Text {
                    text: "~".into(),
                    ids: vec![]
                }),
            ]
        );
    }

    #[test]
    fn split_checks_separators_and_strips_periods() {
        let units = split(decode("Hola mundo.[p][s0]Adiós.[s1]\n"), 2).unwrap();
        assert_eq!(
            units[0],
            vec![Atom::Text {
                text: "Hola mundo".into(),
                ids: vec![]
            }]
        );
        assert_eq!(
            units[1],
            vec![Atom::Text {
                text: "Adiós.".into(),
                ids: vec![]
            }]
        );
        assert!(split(decode("a[s1]b[s0]"), 2).is_none());
        assert!(split(decode("a[s0]"), 2).is_none());
        assert!(split(decode("a[s0]b"), 1).is_none());
        assert!(split(decode(""), 0).is_some());
    }

    #[test]
    fn round_trip_without_translation() {
        for (text, tags) in [
            (
                "  The <g id=\"1\">big &amp; bold</g> dog <x id=\"2\"/>runs\n",
                TagHandling::Xml,
            ),
            (
                r"Symbols [ ] ^ $ / @ * # < > \ { } ~ + & end",
                TagHandling::None,
            ),
            ("Line one\nline two\n\nPara two", TagHandling::None),
        ] {
            let u = unit(text, tags);
            let mut s = String::new();
            encode(&u, 0, &mut s);
            let atoms = split(decode(&s), 1).unwrap().remove(0);
            assert_eq!(finish(&u, atoms), text);
        }
    }
}
