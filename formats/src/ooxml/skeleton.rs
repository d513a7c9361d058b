//! The skeleton of a WordprocessingML part and how translated paragraphs are
//! written back into it.

use std::ops::Range;

use super::{Breaks, Dialect};
use crate::inline::{self, Piece};
use crate::slots::Texts;

/// A piece of a part's output.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    /// Source bytes.
    Raw(Range<usize>),
    /// Generated markup.
    Str(String),
    /// A translatable paragraph.
    Para(Box<Para>),
    /// A translatable attribute value (alt text): its slot and the value's
    /// source range.
    Attr {
        /// The segment.
        slot: usize,
        /// The value as written, between its quotes.
        range: Range<usize>,
    },
}

/// A list of nodes that merges adjacent source ranges.
#[derive(Debug, Default)]
pub(crate) struct NodeList(pub Vec<Node>);

impl NodeList {
    pub(crate) fn raw(&mut self, range: Range<usize>) {
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

    pub(crate) fn str(&mut self, text: &str) {
        if let Some(Node::Str(last)) = self.0.last_mut() {
            last.push_str(text);
        } else {
            self.0.push(Node::Str(text.to_owned()));
        }
    }
}

/// How a run of text is written: the run's start tag and its properties.
#[derive(Debug, Clone)]
pub(crate) struct RunStyle {
    /// `<w:r …>` of the run the style was taken from.
    pub start: Range<usize>,
    /// Its `<w:rPr>…</w:rPr>`, if any.
    pub rpr: Option<Range<usize>>,
}

/// What an inline tag id of a paragraph's segment stands for.
#[derive(Debug, Clone)]
pub(crate) enum Tag {
    /// A formatting span: text inside is written with this style.
    Format(RunStyle),
    /// A wrapper (hyperlink, field, content control, tracked insertion…):
    /// `open` and `close` are written around the content, whose text takes
    /// `base` unless a nested span says otherwise.
    Container {
        open: Vec<Node>,
        close: Vec<Node>,
        base: RunStyle,
    },
    /// Opaque markup (tab, break, drawing, bookmark, field code…). `keep`:
    /// written at the end of the paragraph if the translation lost it.
    Placeholder { nodes: Vec<Node>, keep: bool },
}

/// A translatable paragraph.
#[derive(Debug, Clone)]
pub(crate) struct Para {
    pub slot: usize,
    /// `<w:p>`, `<w:pPr>` and markup before the first text.
    pub prefix: Vec<Node>,
    /// Markup after the last text and `</w:p>`.
    pub suffix: Vec<Node>,
    /// Style of text outside any span.
    pub base: RunStyle,
    /// Tag `id` is `tags[id - 1]`.
    pub tags: Vec<Tag>,
    /// The whole source paragraph, written as is when the translation equals
    /// the source and so do those of the segments nested in it.
    pub original: Option<Range<usize>>,
    /// The slots of segments nested in the paragraph (text boxes, alt text).
    pub nested: Range<usize>,
}

/// Writes nodes of the part `src`.
pub(crate) fn render(
    dialect: &Dialect,
    out: &mut String,
    src: &str,
    nodes: &[Node],
    texts: Texts<'_>,
) {
    for node in nodes {
        match node {
            Node::Raw(range) => out.push_str(src.get(range.clone()).unwrap_or("")),
            Node::Str(text) => out.push_str(text),
            Node::Para(para) => render_para(dialect, out, src, para, texts),
            Node::Attr { slot, range } => {
                let (source, translation) = texts.get(*slot);
                if translation == source {
                    out.push_str(src.get(range.clone()).unwrap_or(""));
                } else {
                    for c in inline::plain_text(translation).chars() {
                        match c {
                            '&' => out.push_str("&amp;"),
                            '<' => out.push_str("&lt;"),
                            '"' => out.push_str("&quot;"),
                            '\u{0}'..='\u{1f}' => out.push(' '),
                            c => out.push(c),
                        }
                    }
                }
            }
        }
    }
}

/// One open span while writing a paragraph.
struct Frame<'p> {
    style: &'p RunStyle,
    close: Option<&'p [Node]>,
}

fn render_para(dialect: &Dialect, out: &mut String, src: &str, para: &Para, texts: Texts<'_>) {
    let (source, translation) = texts.get(para.slot);
    let unchanged = |slot: usize| {
        let (s, t) = texts.get(slot);
        s == t
    };
    if translation == source
        && para.nested.clone().all(unchanged)
        && let Some(original) = &para.original
    {
        out.push_str(src.get(original.clone()).unwrap_or(""));
        return;
    }
    render(dialect, out, src, &para.prefix, texts);
    let mut used = vec![false; para.tags.len()];
    let mut frames: Vec<Frame<'_>> = Vec::new();
    for piece in inline::parse(translation) {
        let style = frames.last().map_or(&para.base, |f| f.style);
        match piece {
            Piece::Text(text) => write_run(dialect, out, src, style, &text),
            Piece::Open(id) => {
                let index = (id as usize).wrapping_sub(1);
                let frame = match para.tags.get(index) {
                    Some(Tag::Format(format)) => Frame {
                        style: format,
                        close: None,
                    },
                    Some(Tag::Container { open, close, base }) if !used[index] => {
                        used[index] = true;
                        render(dialect, out, src, open, texts);
                        Frame {
                            style: base,
                            close: Some(close),
                        }
                    }
                    _ => Frame { style, close: None },
                };
                frames.push(frame);
            }
            Piece::Close(_) => {
                if let Some(Frame {
                    close: Some(close), ..
                }) = frames.pop()
                {
                    render(dialect, out, src, close, texts);
                }
            }
            Piece::Placeholder(id) => {
                let index = (id as usize).wrapping_sub(1);
                if let Some(Tag::Placeholder { nodes, .. }) = para.tags.get(index)
                    && !used[index]
                {
                    used[index] = true;
                    render(dialect, out, src, nodes, texts);
                }
            }
        }
    }
    // Markup the translation lost: keep what the document needs.
    for (tag, used) in para.tags.iter().zip(used) {
        match tag {
            _ if used => {}
            Tag::Placeholder { nodes, keep: true } => render(dialect, out, src, nodes, texts),
            Tag::Container { open, close, .. } => {
                render(dialect, out, src, open, texts);
                render(dialect, out, src, close, texts);
            }
            _ => {}
        }
    }
    render(dialect, out, src, &para.suffix, texts);
}

/// Writes text as one run of `style` (as a bare text element where the
/// dialect allows it and the style has no run), with the dialect's
/// [`Breaks`].
pub(crate) fn write_run(
    dialect: &Dialect,
    out: &mut String,
    src: &str,
    style: &RunStyle,
    text: &str,
) {
    if text.is_empty() {
        return;
    }
    let start = src.get(style.start.clone()).filter(|s| !s.is_empty());
    let bare = start.is_none() && dialect.bare_text;
    if !bare {
        out.push_str(start.unwrap_or(dialect.run_open));
        if let Some(rpr) = &style.rpr {
            out.push_str(src.get(rpr.clone()).unwrap_or(""));
        }
    }
    match dialect.breaks {
        Breaks::InRun { line: br, tab } => {
            for (i, line) in text.split('\n').enumerate() {
                if i > 0 {
                    out.push_str(br);
                }
                for (j, chunk) in line.split('\t').enumerate() {
                    if j > 0 {
                        out.push_str(tab);
                    }
                    if !chunk.is_empty() {
                        out.push_str(dialect.text_open);
                        match dialect.spaces.first() {
                            Some(space) => escape_spaces(out, chunk, space),
                            None => escape_xml(out, chunk, ""),
                        }
                        out.push_str(dialect.text_close);
                    }
                }
            }
        }
        Breaks::Between => {
            out.push_str(dialect.text_open);
            escape_xml(out, &text.replace('\n', " "), "\t");
            out.push_str(dialect.text_close);
        }
        Breaks::InText => {
            out.push_str(dialect.text_open);
            escape_xml(out, text, "\t\n");
            out.push_str(dialect.text_close);
        }
    }
    if !bare {
        out.push_str(dialect.run_close);
    }
}

/// [`escape_xml`], writing each run of spaces after the first as the
/// dialect's space element (`<text:s text:c="2"/>`), since a reader collapses
/// the spaces of character data.
fn escape_spaces(out: &mut String, text: &str, space: &str) {
    let mut rest = text;
    while let Some(at) = rest.find("  ") {
        let run = rest[at..].len() - rest[at..].trim_start_matches(' ').len();
        escape_xml(out, &rest[..=at], "");
        out.push_str(&format!("<{space} text:c=\"{}\"/>", run - 1));
        rest = &rest[at + run..];
    }
    escape_xml(out, rest, "");
}

/// Escapes text for XML character data, dropping control characters other
/// than those in `kept` (tabs and newlines, where the dialect writes them as
/// characters).
fn escape_xml(out: &mut String, text: &str, kept: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if kept.contains(c) => out.push(c),
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => {}
            c => out.push(c),
        }
    }
}
