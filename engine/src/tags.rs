//! Document structure of texts sent with `tag_handling`: which tags split
//! sentences, which content is left untranslated, and HTML specifics.
//!
//! Before translation every text is cut into *segments* at the tags that
//! split sentences; the tags themselves and everything between segments
//! that has no words are kept verbatim. A tag splits when
//!
//! * it is named in `splitting_tags`, or
//! * with `html`, it is a block element (`p`, `div`, `li`, `h1`, …), or
//! * with `outline_detection` (xml), its parent is an *outline* element: one
//!   whose own text is only whitespace with a line break, i.e. it lays out
//!   child elements on lines, like a formatted XML document;
//!
//! and never when it is named in `non_splitting_tags`. Every element that
//! contains a splitting element is kept verbatim as well, so each segment is
//! balanced markup. Elements named in `ignore_tags` (and, with `html`,
//! `script` and `style`), elements marked (`lang`, `xml:lang`) as written in
//! another language than the request's `source_lang`, HTML void elements
//! (`<br>`, `<img …>`) and stray end tags become placeholders
//! `<tolk-keep n="N"/>` inside their segment:
//! engines keep standalone tags where they are, and the original markup is
//! put back afterwards.

use std::collections::HashSet;
use std::ops::Range;

use crate::error::EngineError;
use tolk_lang::tag::{Kind, tag};

/// How a request's markup is structured (DeepL's tag handling options).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct MarkupOptions {
    /// `tag_handling=html`: HTML void elements, block elements split,
    /// `script`/`style` untranslated.
    pub html: bool,
    /// Tags that always split sentences.
    pub splitting_tags: Vec<String>,
    /// Tags that never split sentences.
    pub non_splitting_tags: Vec<String>,
    /// Tags whose content is left untranslated (kept verbatim).
    pub ignore_tags: Vec<String>,
    /// Detect the outline of XML documents (default true in DeepL).
    pub outline_detection: bool,
}

/// HTML elements without end tag.
const HTML_VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

/// HTML block elements: they split sentences.
const HTML_BLOCK: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "caption",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "html",
    "legend",
    "li",
    "main",
    "nav",
    "ol",
    "option",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "ul",
];

/// HTML elements whose content is never translated.
const HTML_IGNORED: &[&str] = &["script", "style"];

/// Name of the placeholder element.
const KEEP: &str = "tolk-keep";

/// Deepest nesting of open elements a text may have. The segmenter walks the
/// element tree recursively, so deeper markup is refused up front (HTML
/// parsers cap nesting near this too) instead of exhausting the stack.
pub const MAX_TAG_DEPTH: usize = 512;

/// A node of the lenient markup tree (ranges index the text).
#[derive(Debug)]
enum Node {
    /// Text, entities included.
    Text(Range<usize>),
    /// Markup kept as written: comments, CDATA, `<x/>`, declarations.
    Verbatim(Range<usize>),
    /// A stray end tag (dropped) or an HTML void element (kept).
    Lone { range: Range<usize>, keep: bool },
    /// An element.
    Elem {
        name: String,
        open: Range<usize>,
        /// `None` when the element is left open: closed at its parent's end.
        close: Option<Range<usize>>,
        children: Vec<Node>,
    },
}

/// Parses `text` into a forest, leniently: a `<` that starts no tag is text.
/// Fails when elements nest deeper than [`MAX_TAG_DEPTH`].
fn parse(text: &str, html: bool) -> Result<Vec<Node>, EngineError> {
    // Stack of (name, open range, children) of open elements; the bottom is the root.
    let mut stack: Vec<(String, Range<usize>, Vec<Node>)> = vec![(String::new(), 0..0, Vec::new())];
    let mut pos = 0;
    let mut text_start = 0;
    let flush = |stack: &mut Vec<(String, Range<usize>, Vec<Node>)>, from: usize, to: usize| {
        if from < to
            && let Some(top) = stack.last_mut()
        {
            top.2.push(Node::Text(from..to));
        }
    };
    while let Some(off) = text[pos..].find('<') {
        let at = pos + off;
        let Some(t) = tag(&text[at..]) else {
            pos = at + 1;
            continue;
        };
        let (len, name) = (t.len, t.name.to_owned());
        flush(&mut stack, text_start, at);
        let range = at..at + len;
        match t.kind {
            Kind::Empty | Kind::Other => {
                if let Some(top) = stack.last_mut() {
                    top.2.push(Node::Verbatim(range));
                }
            }
            Kind::Start => {
                let lower = name.to_ascii_lowercase();
                if html && HTML_VOID.contains(&lower.as_str()) {
                    if let Some(top) = stack.last_mut() {
                        top.2.push(Node::Lone { range, keep: true });
                    }
                } else {
                    // The bottom of the stack is the root, not an element.
                    if stack.len() > MAX_TAG_DEPTH {
                        return Err(EngineError::MarkupTooDeep {
                            limit: MAX_TAG_DEPTH,
                        });
                    }
                    stack.push((if html { lower } else { name }, range, Vec::new()));
                }
            }
            Kind::End => {
                let name = if html {
                    name.to_ascii_lowercase()
                } else {
                    name
                };
                match stack.iter().skip(1).rposition(|(n, _, _)| *n == name) {
                    Some(k) => {
                        let k = k + 1;
                        while stack.len() > k + 1 {
                            close_top(&mut stack, None);
                        }
                        close_top(&mut stack, Some(range));
                    }
                    None => {
                        if let Some(top) = stack.last_mut() {
                            top.2.push(Node::Lone { range, keep: false });
                        }
                    }
                }
            }
        }
        pos = at + len;
        text_start = pos;
    }
    flush(&mut stack, text_start, text.len());
    while stack.len() > 1 {
        close_top(&mut stack, None);
    }
    Ok(stack.pop().map(|(_, _, c)| c).unwrap_or_default())
}

fn close_top(stack: &mut Vec<(String, Range<usize>, Vec<Node>)>, close: Option<Range<usize>>) {
    if let Some((name, open, children)) = stack.pop()
        && let Some(parent) = stack.last_mut()
    {
        parent.2.push(Node::Elem {
            name,
            open,
            close,
            children,
        });
    }
}

/// One piece of a segmented text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    /// Output as it is.
    Keep(String),
    /// The translation of segment `n` of the request (see [`Segmenter`]).
    Segment(usize),
}

/// A text cut into parts, plus the markup its placeholders stand for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    parts: Vec<Part>,
    keeps: Vec<String>,
}

/// Cuts the texts of one request into segments.
pub(crate) struct Segmenter<'a> {
    opts: &'a MarkupOptions,
    splitting: HashSet<String>,
    non_splitting: HashSet<String>,
    ignore: HashSet<String>,
    /// Lower-case base of the source language, when the request gives it:
    /// elements marked with another language are kept as they are.
    source: Option<String>,
    /// Segments of all texts so far, in order.
    pub segments: Vec<String>,
}

struct Builder<'t> {
    text: &'t str,
    parts: Vec<Part>,
    keeps: Vec<String>,
    current: String,
}

impl<'a> Segmenter<'a> {
    /// A segmenter for `opts`.
    pub fn new(opts: &'a MarkupOptions) -> Self {
        let set = |v: &[String]| -> HashSet<String> {
            v.iter()
                .map(|s| {
                    if opts.html {
                        s.to_ascii_lowercase()
                    } else {
                        s.clone()
                    }
                })
                .collect()
        };
        Self {
            splitting: set(&opts.splitting_tags),
            non_splitting: set(&opts.non_splitting_tags),
            ignore: set(&opts.ignore_tags),
            source: None,
            opts,
            segments: Vec::new(),
        }
    }

    /// Keeps elements marked (`lang`, `xml:lang`) with a language other than
    /// `source` (a language code; its base counts) as they are.
    pub fn keep_other_languages(mut self, source: &str) -> Self {
        let base = tolk_lang::base(source);
        self.source = (!base.is_empty()).then_some(base);
        self
    }

    /// Cuts `text`; its segments are appended to [`Segmenter::segments`].
    /// Fails, before any segment is added, on markup nested too deep.
    pub fn add(&mut self, text: &str) -> Result<Layout, EngineError> {
        let nodes = parse(text, self.opts.html)?;
        let mut b = Builder {
            text,
            parts: Vec::new(),
            keeps: Vec::new(),
            current: String::new(),
        };
        let outline = self.is_outline(text, &nodes);
        self.emit(&nodes, outline, &mut b);
        self.flush(&mut b);
        Ok(Layout {
            parts: b.parts,
            keeps: b.keeps,
        })
    }

    fn is_ignored(&self, name: &str) -> bool {
        self.ignore.contains(name) || (self.opts.html && HTML_IGNORED.contains(&name))
    }

    /// Whether the element `name` with start tag `open` keeps its content
    /// untranslated: an ignored name, or marked with another language.
    fn keeps(&self, name: &str, open: &str) -> bool {
        self.is_ignored(name)
            || self.source.as_ref().is_some_and(|source| {
                lang_attribute(open)
                    .map(tolk_lang::base)
                    .is_some_and(|lang| !lang.is_empty() && lang != *source)
            })
    }

    /// Whether an element splits by itself (its parent being `outline`).
    fn splits(&self, name: &str, parent_outline: bool) -> bool {
        if self.non_splitting.contains(name) {
            return false;
        }
        self.splitting.contains(name)
            || (self.opts.html && HTML_BLOCK.contains(&name))
            || (!self.opts.html && self.opts.outline_detection && parent_outline)
    }

    /// Whether the content `nodes` lays out elements on lines.
    fn is_outline(&self, text: &str, nodes: &[Node]) -> bool {
        let mut has_elem = false;
        let mut newline = false;
        for n in nodes {
            match n {
                Node::Text(r) => {
                    let t = &text[r.clone()];
                    if !t.trim().is_empty() {
                        return false;
                    }
                    newline |= t.contains('\n');
                }
                Node::Elem { .. } => has_elem = true,
                _ => {}
            }
        }
        has_elem && newline
    }

    /// Whether `node` is kept verbatim around its content (it or a
    /// descendant splits).
    fn is_boundary(&self, text: &str, node: &Node, parent_outline: bool) -> bool {
        let Node::Elem {
            name,
            open,
            children,
            ..
        } = node
        else {
            return false;
        };
        if self.keeps(name, &text[open.clone()]) {
            return false;
        }
        if self.splits(name, parent_outline) {
            return true;
        }
        let outline = self.is_outline(text, children);
        children.iter().any(|c| self.is_boundary(text, c, outline))
    }

    fn emit(&mut self, nodes: &[Node], outline: bool, b: &mut Builder<'_>) {
        for node in nodes {
            match node {
                Node::Text(r) | Node::Verbatim(r) => b.current.push_str(&b.text[r.clone()]),
                Node::Lone { keep: false, .. } => {}
                Node::Lone { range, keep: true } => {
                    let raw = b.text[range.clone()].to_owned();
                    placeholder(b, raw);
                }
                Node::Elem {
                    name,
                    open,
                    close,
                    children,
                } => {
                    let end = close
                        .as_ref()
                        .map_or_else(|| format!("</{name}>"), |c| b.text[c.clone()].to_owned());
                    if self.keeps(name, &b.text[open.clone()]) {
                        let last = close
                            .as_ref()
                            .map_or_else(|| last_end(children).unwrap_or(open.end), |c| c.end);
                        let mut raw = b.text[open.start..last].to_owned();
                        if close.is_none() {
                            raw.push_str(&end);
                        }
                        placeholder(b, raw);
                    } else if self.is_boundary(b.text, node, outline) {
                        self.flush(b);
                        b.parts.push(Part::Keep(b.text[open.clone()].to_owned()));
                        let inner = self.is_outline(b.text, children);
                        self.emit(children, inner, b);
                        self.flush(b);
                        b.parts.push(Part::Keep(end));
                    } else {
                        b.current.push_str(&b.text[open.clone()]);
                        let inner = self.is_outline(b.text, children);
                        self.emit(children, inner, b);
                        b.current.push_str(&end);
                    }
                }
            }
        }
    }

    /// Ends the current segment: translated if it has words, else kept.
    fn flush(&mut self, b: &mut Builder<'_>) {
        let current = std::mem::take(&mut b.current);
        if current.is_empty() {
            return;
        }
        if crate::markup::Markup::parse_xml(&current).has_words() {
            b.parts.push(Part::Segment(self.segments.len()));
            self.segments.push(current);
        } else {
            // No words: restore placeholders right away.
            let restored = restore(&current, &b.keeps);
            b.parts.push(Part::Keep(restored));
        }
    }
}

/// The value of the `xml:lang` or `lang` attribute of a start tag.
fn lang_attribute(open: &str) -> Option<&str> {
    let mut rest = open;
    while let Some(at) = rest.find("lang") {
        let before = rest[..at].chars().next_back();
        let key_ok = match before {
            Some(':') => rest[..at]
                .strip_suffix("xml:")
                .and_then(|b| b.chars().next_back())
                .is_some_and(char::is_whitespace),
            Some(c) => c.is_whitespace(),
            None => false,
        };
        let after = rest[at + 4..].trim_start();
        if key_ok && let Some(value) = after.strip_prefix('=') {
            let value = value.trim_start();
            let quote = value.chars().next()?;
            if quote == '"' || quote == '\'' {
                let inner = &value[1..];
                return inner.find(quote).map(|end| &inner[..end]);
            }
        }
        rest = &rest[at + 4..];
    }
    None
}

/// Cuts `text` as a request with `opts` is cut, has every segment "translated"
/// by `translate`, and puts the text together again: what the translator does
/// around the engines, without them (for the fuzz targets and tests). Fails
/// like a request would on markup nested too deep.
pub fn round_trip(
    text: &str,
    opts: &MarkupOptions,
    translate: impl Fn(&str) -> String,
) -> Result<String, EngineError> {
    let mut segmenter = Segmenter::new(opts);
    let layout = segmenter.add(text)?;
    let translated: Vec<String> = segmenter.segments.iter().map(|s| translate(s)).collect();
    layout
        .join(&translated)
        .ok_or_else(|| EngineError::Failed("a translated segment is missing".into()))
}

fn placeholder(b: &mut Builder<'_>, raw: String) {
    let n = b.keeps.len();
    b.keeps.push(raw);
    b.current.push_str(&format!("<{KEEP} n=\"{n}\"/>"));
}

/// End of the last node of `nodes`, if any.
fn last_end(nodes: &[Node]) -> Option<usize> {
    nodes.last().map(|n| match n {
        Node::Text(r) | Node::Verbatim(r) | Node::Lone { range: r, .. } => r.end,
        Node::Elem {
            open,
            close,
            children,
            ..
        } => close
            .as_ref()
            .map(|c| c.end)
            .or_else(|| last_end(children))
            .unwrap_or(open.end),
    })
}

/// Replaces placeholders in `text` by the markup they stand for. Engines may
/// write the placeholder slightly differently (spaces, quotes): any
/// `<tolk-keep … n="N" …/>` is recognised.
fn restore(text: &str, keeps: &[String]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let open = format!("<{KEEP}");
    while let Some(at) = rest.find(&open) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let end = tail.find('>').map(|e| e + 1);
        let index = end.and_then(|e| {
            let inner = &tail[open.len()..e];
            let digits: String = inner
                .split_once("n=")
                .map(|(_, v)| v.trim_start_matches(['"', '\'']))
                .unwrap_or_default()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse::<usize>().ok()
        });
        match (end, index.and_then(|i| keeps.get(i))) {
            (Some(e), Some(raw)) => {
                out.push_str(raw);
                rest = &tail[e..];
            }
            _ => {
                out.push_str(&open);
                rest = &tail[open.len()..];
            }
        }
    }
    out.push_str(rest);
    out
}

impl Layout {
    /// The output text from the translated segments of the request.
    pub fn join(&self, translated: &[String]) -> Option<String> {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Keep(s) => out.push_str(s),
                Part::Segment(i) => out.push_str(&restore(translated.get(*i)?, &self.keeps)),
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str, opts: &MarkupOptions) -> (Vec<String>, String) {
        let mut s = Segmenter::new(opts);
        let layout = s.add(text).expect("nesting within the limit");
        let upper: Vec<String> = s.segments.iter().map(|t| shout(t)).collect();
        let joined = layout.join(&upper).unwrap_or_default();
        (s.segments, joined)
    }

    /// Upper-cases text outside tags (a stand-in translation).
    fn shout(t: &str) -> String {
        let mut inside = false;
        t.chars()
            .map(|c| {
                match c {
                    '<' => inside = true,
                    '>' => inside = false,
                    _ => {}
                }
                if inside { c } else { c.to_ascii_uppercase() }
            })
            .collect()
    }

    fn xml() -> MarkupOptions {
        MarkupOptions {
            outline_detection: true,
            ..Default::default()
        }
    }

    #[test]
    fn inline_markup_is_one_segment() {
        let (segs, out) = cut("The <b>red</b> car.", &xml());
        assert_eq!(segs, ["The <b>red</b> car."]);
        assert_eq!(out, "THE <b>RED</b> CAR.");
    }

    #[test]
    fn splitting_tags_cut_and_keep_their_ancestors() {
        let opts = MarkupOptions {
            splitting_tags: vec!["par".into()],
            ..Default::default()
        };
        let (segs, out) = cut(
            "<doc><par>One two</par><par>three <i>four</i></par></doc>",
            &opts,
        );
        assert_eq!(segs, ["One two", "three <i>four</i>"]);
        assert_eq!(
            out,
            "<doc><par>ONE TWO</par><par>THREE <i>FOUR</i></par></doc>"
        );
    }

    #[test]
    fn outline_detection_and_non_splitting_tags() {
        let text = "<doc>\n  <p>Hello</p>\n  <p>World</p>\n</doc>";
        let (segs, out) = cut(text, &xml());
        assert_eq!(segs, ["Hello", "World"]);
        assert_eq!(out, "<doc>\n  <p>HELLO</p>\n  <p>WORLD</p>\n</doc>");
        let off = MarkupOptions::default();
        let (segs, _) = cut(text, &off);
        assert_eq!(segs.len(), 1);
        let opts = MarkupOptions {
            non_splitting_tags: vec!["p".into()],
            ..xml()
        };
        let (segs, _) = cut(text, &opts);
        assert_eq!(segs.len(), 1, "{segs:?}");
    }

    #[test]
    fn text_marked_with_another_language_stays_as_it_is() {
        let text = "<p>The <q lang=\"fr\">joie de vivre</q> and <i xml:lang='en-GB'>colour</i> \
                    of <span lang=\"\">life</span>, <b title=\"slang='x'\">bold</b>.</p>";
        let opts = xml();
        let mut s = Segmenter::new(&opts).keep_other_languages("EN");
        let layout = s.add(text).expect("nesting within the limit");
        let upper: Vec<String> = s.segments.iter().map(|t| shout(t)).collect();
        let out = layout.join(&upper).unwrap_or_default();
        assert_eq!(
            out,
            "<p>THE <q lang=\"fr\">joie de vivre</q> AND <i xml:lang='en-GB'>COLOUR</i> \
             OF <span lang=\"\">LIFE</span>, <b title=\"slang='x'\">BOLD</b>.</p>"
        );
        // Without a given source language, everything is translated.
        let (_, out) = cut(text, &opts);
        assert!(out.contains("JOIE DE VIVRE"), "{out}");
        assert_eq!(lang_attribute("<x a='1' xml:lang = \"de\">"), Some("de"));
        assert_eq!(lang_attribute("<x slang=\"de\">"), None);
    }

    #[test]
    fn ignored_content_and_html_voids_stay_verbatim() {
        let opts = MarkupOptions {
            ignore_tags: vec!["code".into()],
            ..xml()
        };
        let (segs, out) = cut("Run <code>make all</code> now.", &opts);
        assert_eq!(segs, ["Run <tolk-keep n=\"0\"/> now."]);
        assert_eq!(out, "RUN <code>make all</code> NOW.");

        let html = MarkupOptions {
            html: true,
            ..Default::default()
        };
        let (segs, out) = cut(
            "<div><p>Line one<br>line <b>two</b></p><script>var a = 1;</script><p>End</p></div>",
            &html,
        );
        assert_eq!(segs, ["Line one<tolk-keep n=\"0\"/>line <b>two</b>", "End"]);
        assert_eq!(
            out,
            "<div><p>LINE ONE<br>LINE <b>TWO</b></p><script>var a = 1;</script><p>END</p></div>"
        );
    }

    #[test]
    fn lenient_on_broken_markup() {
        let (segs, out) = cut("a </x> <b>open", &xml());
        assert_eq!(segs, ["a  <b>open</b>"]);
        assert_eq!(out, "A  <b>OPEN</b>");
        assert_eq!(
            restore("x <tolk-keep n='0' /> y", &["<br>".into()]),
            "x <br> y"
        );
        assert_eq!(restore("<tolk-keep n=\"9\"/>", &[]), "<tolk-keep n=\"9\"/>");
    }

    #[test]
    fn nesting_beyond_the_limit_is_refused_and_within_it_is_cut() {
        for html in [false, true] {
            let opts = MarkupOptions {
                html,
                ..MarkupOptions::default()
            };
            let deep = |n: usize| "<b>".repeat(n) + "The dog." + &"</b>".repeat(n);
            let (segments, joined) = cut(&deep(MAX_TAG_DEPTH), &opts);
            assert_eq!(segments.len(), 1);
            assert_eq!(joined, deep(MAX_TAG_DEPTH).replace("The dog.", "THE DOG."));
            let mut s = Segmenter::new(&opts);
            let err = s.add(&deep(MAX_TAG_DEPTH + 1)).expect_err("too deep");
            assert!(matches!(err, EngineError::MarkupTooDeep { limit } if limit == MAX_TAG_DEPTH));
            assert!(s.segments.is_empty());
            // Unclosed tags count as open too.
            assert!(s.add(&"<i>".repeat(7_000)).is_err());
        }
    }
}
