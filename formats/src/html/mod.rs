//! HTML: one segment per block of text, inline elements as tags.
//!
//! The document is tokenized (not parsed into a tree), so every byte that is
//! not translated is written back exactly as it was. Rules:
//!
//! * **Blocks.** Any tag that is not an inline element (`p`, `div`, `li`,
//!   `td`, `h1`, `title`, `option`, unknown elements…) ends the current text
//!   run. The text between two such boundaries is one segment; its inline
//!   elements (`a b i em strong span sub sup small u s q mark abbr cite label
//!   font ruby button picture`…) become `<g>` spans, `br`, `wbr`, `img`,
//!   `input`, comments and unknown entities become `<x/>` placeholders.
//!   Inline start/end tags that do not pair up within the run become
//!   placeholders too. Placeholders and spans that wrap the whole run, and
//!   surrounding whitespace, stay in the skeleton. Runs of whitespace are
//!   collapsed to one space in the segment.
//! * **Never translated:** the content of `script`, `style`, `pre`, `code`,
//!   `kbd`, `samp`, `var`, `textarea`, `template`, `noscript`, `svg`, `math`,
//!   `iframe`, `object`, `video`, `audio`, `canvas`, `map`, and of any element
//!   with `translate="no"` or class `notranslate`, or (when the source
//!   language is given) with a `lang` of another language — except `<html>`
//!   itself, whose `lang` is often a template's default. Inside a text run such an
//!   element is one placeholder (so `Run <code>ls</code> now` keeps the
//!   code in place); at block level it is skipped.
//! * **Attributes** `alt`, `title`, `placeholder`, `aria-label`,
//!   `aria-description`, `label` (option, track), `value` of button-like
//!   inputs and `content` of `<meta name=description|keywords|og:…|twitter:…>`
//!   are segments of their own (plain text, written back double-quoted).
//! * **Text** is decoded (HTML 4 named entities and numeric references) into
//!   the segment; translated text is written with `&amp; &lt; &gt;` (and
//!   `&nbsp;` for U+00A0) escaped. The page may be UTF-8, UTF-16 with a
//!   byte-order mark, or in the charset its `meta` element declares (else
//!   windows-1252 when it is not UTF-8); the output is written in the same
//!   encoding, characters it lacks as numeric references
//!   ([`crate::encoding`]).
//! * Not done: updating `<html lang>` / `dir` (merge does not know the
//!   target language).

mod entities;
mod tokenizer;

use std::ops::Range;

use crate::FormatError;
use crate::encoding::{self, Decoded, Form};
use crate::inline::{self, Piece, SegmentBuilder};
use crate::slots::{SlotMap, Slots, Texts};
use tokenizer::{StartTag, Token};

/// Inline elements: their tags become `<g>` spans.
const INLINE: &[&str] = &[
    "a", "abbr", "acronym", "b", "bdi", "bdo", "big", "blink", "button", "cite", "data", "del",
    "dfn", "em", "font", "i", "ins", "label", "mark", "nobr", "output", "picture", "q", "rb", "rp",
    "rt", "rtc", "ruby", "s", "small", "span", "strike", "strong", "sub", "sup", "time", "tt", "u",
];

/// Void inline elements: `<x/>` placeholders.
const INLINE_VOID: &[&str] = &["br", "wbr", "img", "input", "source", "track", "embed"];

/// Elements kept whole and untranslated; a placeholder when inside text.
const OPAQUE: &[&str] = &[
    "code", "kbd", "samp", "var", "script", "style", "noscript", "template", "textarea", "svg",
    "math", "iframe", "object", "video", "audio", "canvas", "map", "xmp", "noembed", "noframes",
];

/// Block elements whose content is never translated.
const OPAQUE_BLOCK: &[&str] = &["pre", "listing", "plaintext"];

/// The translatable parts of an HTML document.
#[derive(Debug)]
pub(crate) struct Skeleton {
    source: String,
    form: Form,
    nodes: Vec<Node>,
    map: SlotMap,
}

/// A piece of output: source bytes or a translatable unit.
#[derive(Debug, Clone)]
enum Node {
    Raw(Range<usize>),
    Unit(Box<Unit>),
}

/// A segment's place in the skeleton.
#[derive(Debug, Clone)]
struct Unit {
    slot: usize,
    kind: UnitKind,
    /// The source markup of the unit (written when the translation is unchanged).
    original: Vec<Node>,
    /// Tag `id` is `tags[id - 1]`.
    tags: Vec<Tag>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UnitKind {
    /// Element content.
    Content,
    /// An attribute value (written with double quotes).
    Attribute,
}

#[derive(Debug, Clone)]
enum Tag {
    Pair { open: Vec<Node>, close: Vec<Node> },
    Placeholder { nodes: Vec<Node>, keep: bool },
}

/// Pending content of the current text run.
#[derive(Debug)]
enum Item {
    Text(Range<usize>),
    Open {
        name: String,
        nodes: Vec<Node>,
    },
    Close {
        name: String,
        range: Range<usize>,
    },
    /// Always a placeholder; `keep`: re-added at the end if the translation drops it.
    Atom {
        nodes: Vec<Node>,
        keep: bool,
    },
}

pub(crate) fn extract(
    input: &[u8],
    source_language: Option<&str>,
) -> Result<(Vec<String>, Skeleton), FormatError> {
    let Decoded { text: source, form } = encoding::decode(input, encoding::html_declared(input));
    let from = 0;
    let tokens = tokenizer::tokenize(&source, from);
    let mut extractor = Extractor {
        src: &source,
        matching: match_elements(&tokens),
        tokens: &tokens,
        slots: Slots::default(),
        out: NodeList::default(),
        pending: Vec::new(),
        source: source_language
            .map(tolk_lang::base)
            .filter(|b| !b.is_empty()),
    };
    extractor.out.raw(0..from);
    extractor.run();
    let nodes = extractor.out.0;
    let (segments, map) = extractor.slots.finish();
    Ok((
        segments,
        Skeleton {
            source,
            form,
            nodes,
            map,
        },
    ))
}

/// Where a large page can be cut into documents of their own that the filter
/// reads as it reads the whole: before a block element's start tag inside
/// `<body>`, with no inline element open and outside every element the
/// filter keeps whole (`translate="no"`, a `lang`, code, scripts,
/// preformatted text). Read token by token: no token list is held.
pub(crate) fn cut_points(src: &str) -> Vec<usize> {
    let mut points = Vec::new();
    let mut in_body = false;
    let mut inline_open = 0usize;
    // The names of the elements kept whole that are open, innermost last.
    let mut kept: Vec<String> = Vec::new();
    tokenizer::each(src, 0, |token| match token {
        Token::Start(tag) => {
            let name = tag.name.as_str();
            let void = tag.self_closing || INLINE_VOID.contains(&name);
            if let Some(top) = kept.last() {
                if top == name && !void {
                    kept.push(tag.name.clone());
                }
                return;
            }
            let keep = no_translate(src, &tag)
                || (tag.attr("lang").is_some() && name != "html")
                || OPAQUE.contains(&name)
                || OPAQUE_BLOCK.contains(&name);
            if INLINE.contains(&name) || INLINE_VOID.contains(&name) {
                if keep && !void {
                    kept.push(tag.name.clone());
                } else if !void {
                    inline_open += 1;
                }
                return;
            }
            if in_body && inline_open == 0 && !matches!(name, "html" | "head" | "body") {
                points.push(tag.range.start);
            }
            if name == "body" {
                in_body = true;
            }
            if keep && !void {
                kept.push(tag.name.clone());
            }
        }
        Token::End { name, .. } => {
            if kept.last() == Some(&name) {
                kept.pop();
            } else if kept.is_empty() && INLINE.contains(&name.as_str()) {
                inline_open = inline_open.saturating_sub(1);
            }
        }
        _ => {}
    });
    points
}

/// For each start tag token, the index of its end tag (same-name nesting).
fn match_elements(tokens: &[Token]) -> Vec<Option<usize>> {
    let mut matching = vec![None; tokens.len()];
    let mut open: std::collections::HashMap<&str, Vec<usize>> = Default::default();
    for (index, token) in tokens.iter().enumerate() {
        match token {
            Token::Start(tag) if !tag.self_closing && !INLINE_VOID.contains(&tag.name.as_str()) => {
                open.entry(tag.name.as_str()).or_default().push(index);
            }
            Token::End { name, .. } => {
                if let Some(start) = open.get_mut(name.as_str()).and_then(Vec::pop) {
                    matching[start] = Some(index);
                }
            }
            _ => {}
        }
    }
    matching
}

/// A list of nodes that merges adjacent source ranges.
#[derive(Debug, Default)]
struct NodeList(Vec<Node>);

impl NodeList {
    fn raw(&mut self, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        if let Some(Node::Raw(last)) = self.0.last_mut()
            && last.end == range.start
        {
            last.end = range.end;
            return;
        }
        self.0.push(Node::Raw(range));
    }

    fn extend(&mut self, nodes: &[Node]) {
        for node in nodes {
            match node {
                Node::Raw(range) => self.raw(range.clone()),
                Node::Unit(_) => self.0.push(node.clone()),
            }
        }
    }
}

struct Extractor<'a> {
    src: &'a str,
    tokens: &'a [Token],
    matching: Vec<Option<usize>>,
    slots: Slots,
    out: NodeList,
    pending: Vec<Item>,
    /// Lower-case base of the source language, when given.
    source: Option<String>,
}

impl Extractor<'_> {
    /// Whether `tag` (not `<html>`) marks its content with a `lang` other
    /// than the source language.
    fn in_other_language(&self, tag: &StartTag) -> bool {
        let Some(source) = &self.source else {
            return false;
        };
        tag.name != "html"
            && tag
                .attr("lang")
                .and_then(|a| a.value.as_ref())
                .map(|v| tolk_lang::base(&self.src[v.inner.clone()]))
                .is_some_and(|l| !l.is_empty() && l != *source)
    }

    fn run(&mut self) {
        let mut index = 0;
        let mut in_title = false;
        while let Some(token) = self.tokens.get(index) {
            index += 1;
            match token {
                Token::Text(range) => self.pending.push(Item::Text(range.clone())),
                Token::RawText(range) if in_title => self.pending.push(Item::Text(range.clone())),
                Token::RawText(range) | Token::Other(range) => self.pending.push(Item::Atom {
                    nodes: vec![Node::Raw(range.clone())],
                    keep: true,
                }),
                Token::End { name, range } => {
                    in_title = false;
                    let name = name.as_str();
                    if INLINE.contains(&name) {
                        self.pending.push(Item::Close {
                            name: name.to_owned(),
                            range: range.clone(),
                        });
                    } else if INLINE_VOID.contains(&name) || OPAQUE.contains(&name) {
                        self.pending.push(Item::Atom {
                            nodes: vec![Node::Raw(range.clone())],
                            keep: true,
                        });
                    } else {
                        self.flush();
                        self.out.raw(range.clone());
                    }
                }
                Token::Start(tag) => {
                    in_title = false;
                    let name = tag.name.as_str();
                    let inline = INLINE.contains(&name) || INLINE_VOID.contains(&name);
                    let skip = no_translate(self.src, tag)
                        || self.in_other_language(tag)
                        || OPAQUE.contains(&name)
                        || OPAQUE_BLOCK.contains(&name);
                    if skip {
                        let end = self.matching.get(index - 1).copied().flatten();
                        let range = match end.and_then(|end| self.tokens.get(end)) {
                            Some(end_token) => tag.range.start..end_token.range().end,
                            None => tag.range.clone(),
                        };
                        if let Some(end) = end {
                            index = end + 1;
                        }
                        let nodes = vec![Node::Raw(range.clone())];
                        if inline || OPAQUE.contains(&name) {
                            self.pending.push(Item::Atom { nodes, keep: true });
                        } else {
                            self.flush();
                            self.out.raw(range);
                        }
                        continue;
                    }
                    let nodes = self.tag_nodes(tag);
                    if INLINE_VOID.contains(&name) || (inline && tag.self_closing) {
                        let keep = name != "br" && name != "wbr";
                        self.pending.push(Item::Atom { nodes, keep });
                    } else if inline {
                        self.pending.push(Item::Open {
                            name: name.to_owned(),
                            nodes,
                        });
                    } else {
                        self.flush();
                        self.out.extend(&nodes);
                        in_title = name == "title";
                    }
                }
            }
        }
        self.flush();
    }

    /// The nodes of a start tag, with its translatable attributes as units.
    fn tag_nodes(&mut self, tag: &StartTag) -> Vec<Node> {
        let mut nodes = NodeList::default();
        let mut pos = tag.range.start;
        for attr in &tag.attrs {
            let Some(value) = &attr.value else { continue };
            if !translatable_attr(self.src, tag, &attr.name) {
                continue;
            }
            let slot = self.slots.reserve();
            let mut builder = SegmentBuilder::new();
            let mut tags = Vec::new();
            add_text(&mut builder, &mut tags, self.src, value.inner.clone());
            if !builder.has_text() {
                continue;
            }
            self.slots.fill(slot, builder.finish());
            nodes.raw(pos..value.range.start);
            nodes.0.push(Node::Unit(Box::new(Unit {
                slot,
                kind: UnitKind::Attribute,
                original: vec![Node::Raw(value.range.clone())],
                tags,
            })));
            pos = value.range.end;
        }
        nodes.raw(pos..tag.range.end);
        nodes.0
    }

    /// Turns the pending text run into a unit (or raw output if it has no text).
    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let items = std::mem::take(&mut self.pending);
        let src = self.src;
        let partner = pair_items(&items);
        let is_text = |item: &Item| match item {
            Item::Text(range) => has_visible_text(src, range.clone()),
            _ => false,
        };
        if !items.iter().any(is_text) {
            for item in &items {
                self.emit_item(item);
            }
            return;
        }
        // Trim placeholders, whitespace and wrapping spans off both ends.
        let edge = |index: usize| match &items[index] {
            Item::Text(_) => !is_text(&items[index]),
            Item::Open { .. } | Item::Close { .. } => partner[index].is_none(),
            Item::Atom { .. } => true,
        };
        let (mut lo, mut hi) = (0, items.len());
        loop {
            let before = (lo, hi);
            while lo < hi && edge(lo) {
                lo += 1;
            }
            while hi > lo && edge(hi - 1) {
                hi -= 1;
            }
            if lo + 1 < hi && matches!(items[lo], Item::Open { .. }) && partner[lo] == Some(hi - 1)
            {
                lo += 1;
                hi -= 1;
            }
            if (lo, hi) == before {
                break;
            }
        }
        for item in &items[..lo] {
            self.emit_item(item);
        }
        let slot = self.slots.reserve();
        let mut builder = SegmentBuilder::new();
        let mut tags = Vec::new();
        let mut original = NodeList::default();
        let mut suffix = None;
        for index in lo..hi {
            match &items[index] {
                Item::Text(range) => {
                    let mut range = range.clone();
                    if index == lo {
                        let text = &src[range.clone()];
                        let lead = text.len() - text.trim_start_matches(is_ascii_space).len();
                        self.out.raw(range.start..range.start + lead);
                        range.start += lead;
                    }
                    if index + 1 == hi {
                        let text = &src[range.clone()];
                        let trail = text.len() - text.trim_end_matches(is_ascii_space).len();
                        suffix = Some(range.end - trail..range.end);
                        range.end -= trail;
                    }
                    original.raw(range.clone());
                    add_text(&mut builder, &mut tags, src, range);
                }
                Item::Open { nodes, .. } if partner[index].is_some() => {
                    let close = match partner[index].map(|p| &items[p]) {
                        Some(Item::Close { range, .. }) => vec![Node::Raw(range.clone())],
                        _ => Vec::new(),
                    };
                    builder.open();
                    tags.push(Tag::Pair {
                        open: nodes.clone(),
                        close,
                    });
                    original.extend(nodes);
                }
                Item::Close { range, .. } if partner[index].is_some() => {
                    builder.close();
                    original.raw(range.clone());
                }
                item => {
                    let (nodes, keep) = item_nodes(item);
                    builder.placeholder();
                    tags.push(Tag::Placeholder {
                        nodes: nodes.clone(),
                        keep,
                    });
                    original.extend(&nodes);
                }
            }
        }
        self.slots.fill(slot, builder.finish());
        self.out.0.push(Node::Unit(Box::new(Unit {
            slot,
            kind: UnitKind::Content,
            original: original.0,
            tags,
        })));
        if let Some(range) = suffix {
            self.out.raw(range);
        }
        for item in &items[hi..] {
            self.emit_item(item);
        }
    }

    fn emit_item(&mut self, item: &Item) {
        let (nodes, _) = item_nodes(item);
        self.out.extend(&nodes);
    }
}

fn item_nodes(item: &Item) -> (Vec<Node>, bool) {
    match item {
        Item::Text(range) | Item::Close { range, .. } => (vec![Node::Raw(range.clone())], true),
        Item::Open { nodes, .. } => (nodes.clone(), true),
        Item::Atom { nodes, keep } => (nodes.clone(), *keep),
    }
}

/// Pairs inline start and end tags of a text run (innermost same name).
fn pair_items(items: &[Item]) -> Vec<Option<usize>> {
    let mut partner = vec![None; items.len()];
    let mut stack: Vec<(usize, &str)> = Vec::new();
    for (index, item) in items.iter().enumerate() {
        match item {
            Item::Open { name, .. } => stack.push((index, name)),
            Item::Close { name, .. } => {
                if let Some(pos) = stack.iter().rposition(|(_, n)| n == name) {
                    let open = stack[pos].0;
                    stack.truncate(pos);
                    partner[open] = Some(index);
                    partner[index] = Some(open);
                }
            }
            _ => {}
        }
    }
    partner
}

fn is_ascii_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0c')
}

/// Whether raw HTML text has something to translate (entities decoded).
fn has_visible_text(src: &str, range: Range<usize>) -> bool {
    let mut builder = SegmentBuilder::new();
    add_text(&mut builder, &mut Vec::new(), src, range);
    builder.has_text()
}

/// Whether an element opts out of translation (`translate="no"`, class `notranslate`).
fn no_translate(src: &str, tag: &StartTag) -> bool {
    let value = |name: &str| {
        tag.attr(name)
            .and_then(|a| a.value.as_ref())
            .map(|v| &src[v.inner.clone()])
    };
    value("translate").is_some_and(|v| v.trim().eq_ignore_ascii_case("no"))
        || value("class").is_some_and(|v| v.split_ascii_whitespace().any(|c| c == "notranslate"))
}

/// Whether attribute `name` of `tag` holds translatable text.
fn translatable_attr(src: &str, tag: &StartTag, name: &str) -> bool {
    let value = |attr: &str| {
        tag.attr(attr)
            .and_then(|a| a.value.as_ref())
            .map(|v| src[v.inner.clone()].trim().to_ascii_lowercase())
    };
    match name {
        "alt" | "title" | "placeholder" | "aria-label" | "aria-description" => true,
        "label" => matches!(tag.name.as_str(), "option" | "optgroup" | "track"),
        "value" => {
            tag.name == "input"
                && value("type")
                    .is_some_and(|t| matches!(t.as_str(), "button" | "submit" | "reset"))
        }
        "content" if tag.name == "meta" => {
            let key = value("name")
                .or_else(|| value("property"))
                .unwrap_or_default();
            matches!(
                key.as_str(),
                "description"
                    | "keywords"
                    | "og:title"
                    | "og:description"
                    | "og:site_name"
                    | "og:image:alt"
                    | "twitter:title"
                    | "twitter:description"
                    | "twitter:image:alt"
            )
        }
        _ => false,
    }
}

/// Appends the raw HTML text `src[range]` to a segment: entities decoded,
/// whitespace runs collapsed; an unknown named entity becomes a placeholder.
fn add_text(builder: &mut SegmentBuilder, tags: &mut Vec<Tag>, src: &str, range: Range<usize>) {
    let raw = &src[range.clone()];
    let mut text = String::with_capacity(raw.len());
    let mut last_space = false;
    let push = |text: &mut String, last_space: &mut bool, c: char| {
        let space = is_ascii_space(c);
        if !space {
            text.push(c);
        } else if !*last_space {
            text.push(' ');
        }
        *last_space = space;
    };
    let mut pos = 0;
    while let Some(c) = raw[pos..].chars().next() {
        if c != '&' {
            push(&mut text, &mut last_space, c);
            pos += c.len_utf8();
            continue;
        }
        let rest = &raw[pos..];
        let entity = rest
            .bytes()
            .take(40)
            .position(|b| b == b';')
            .and_then(|end| {
                let name = &rest[1..end];
                let valid_name = !name.is_empty()
                    && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'#');
                let known = match name.strip_prefix('#') {
                    Some(_) => inline::decode_char_ref(name),
                    None => entities::lookup(name),
                };
                valid_name.then_some((known, end + 1))
            });
        match entity {
            Some((Some(ch), len)) => {
                push(&mut text, &mut last_space, ch);
                pos += len;
            }
            Some((None, len)) => {
                builder.text(&std::mem::take(&mut text));
                builder.placeholder();
                last_space = false;
                let start = range.start + pos;
                tags.push(Tag::Placeholder {
                    nodes: vec![Node::Raw(start..start + len)],
                    keep: true,
                });
                pos += len;
            }
            None => {
                push(&mut text, &mut last_space, '&');
                pos += 1;
            }
        }
    }
    builder.text(&text);
}

impl crate::filter::Merge for Skeleton {
    fn merge(&self, source: &[String], translated: &[String]) -> Vec<u8> {
        let texts = Texts::new(&self.map, source, translated);
        let mut out = String::with_capacity(self.source.len() + self.source.len() / 4);
        self.render(&mut out, &self.nodes, texts);
        self.form.encode(&out, true)
    }
}

impl Skeleton {
    fn render(&self, out: &mut String, nodes: &[Node], texts: Texts<'_>) {
        for node in nodes {
            match node {
                Node::Raw(range) => out.push_str(self.source.get(range.clone()).unwrap_or("")),
                Node::Unit(unit) => self.render_unit(out, unit, texts),
            }
        }
    }

    fn render_unit(&self, out: &mut String, unit: &Unit, texts: Texts<'_>) {
        let (source, translation) = texts.get(unit.slot);
        if translation == source {
            self.render(out, &unit.original, texts);
            return;
        }
        let attribute = unit.kind == UnitKind::Attribute;
        if attribute {
            out.push('"');
        }
        let mut used = vec![false; unit.tags.len()];
        let mut open: Vec<Option<&Tag>> = Vec::new();
        for piece in inline::parse(translation) {
            match piece {
                Piece::Text(text) => escape_html(out, &text, attribute),
                Piece::Open(id) => {
                    let tag = tag_of(&unit.tags, id).filter(|t| matches!(t, Tag::Pair { .. }));
                    if let Some(Tag::Pair { open: nodes, .. }) = tag {
                        self.render(out, nodes, texts);
                    }
                    open.push(tag);
                }
                Piece::Close(_) => {
                    if let Some(Some(Tag::Pair { close, .. })) = open.pop() {
                        self.render(out, close, texts);
                    }
                }
                Piece::Placeholder(id) => {
                    let index = (id as usize).wrapping_sub(1);
                    if let Some(Tag::Placeholder { nodes, .. }) = unit.tags.get(index)
                        && !used[index]
                    {
                        used[index] = true;
                        self.render(out, nodes, texts);
                    }
                }
            }
        }
        for (tag, used) in unit.tags.iter().zip(used) {
            if let Tag::Placeholder { nodes, keep: true } = tag
                && !used
            {
                self.render(out, nodes, texts);
            }
        }
        if attribute {
            out.push('"');
        }
    }
}

fn tag_of(tags: &[Tag], id: u32) -> Option<&Tag> {
    tags.get((id as usize).wrapping_sub(1))
}

/// Escapes translated text for HTML content or a double-quoted attribute.
fn escape_html(out: &mut String, text: &str, attribute: bool) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\u{a0}' => out.push_str("&nbsp;"),
            '\0' => {}
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests;
