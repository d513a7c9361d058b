//! The skeleton of a WordprocessingML part and how translated paragraphs are
//! written back into it.

use std::ops::Range;

use super::{Breaks, Dialect, LangMark};
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
    /// A segment of a paragraph, written from its translation.
    Segment(Box<Segment>),
    /// A translatable attribute value (alt text): its slot and the value's
    /// source range.
    Attr {
        /// The segment.
        slot: usize,
        /// The value as written, between its quotes (or in its element).
        range: Range<usize>,
        /// How its translation is written there, before XML escaping.
        write: fn(&str) -> String,
        /// The markup of the segment's tags (codes inside the value).
        tags: inline::Tags,
    },
    /// A text body's properties (`<a:bodyPr>`), given a shrink-on-overflow
    /// font scale when the translation of the body's segments (`slots`) is
    /// longer than their source ([`fit`]).
    Fit {
        body_pr: Range<usize>,
        slots: Range<usize>,
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

/// A translatable paragraph: its markup with one segment, or several where
/// hard line breaks cut it (a segment never crosses one).
#[derive(Debug, Clone)]
pub(crate) struct Para {
    /// `<w:p>`, `<w:pPr>`, the segments and the markup around them, `</w:p>`.
    pub body: Vec<Node>,
    /// The whole source paragraph, written as is when every segment in it
    /// (nested ones included) is translated as itself.
    pub original: Range<usize>,
    /// The slots of the paragraph's segments and of those nested in them
    /// (text boxes, alt text).
    pub slots: Range<usize>,
}

/// One segment of a paragraph: how its translation is written.
#[derive(Debug, Clone)]
pub(crate) struct Segment {
    pub slot: usize,
    /// Style of text outside any span.
    pub base: RunStyle,
    /// Tag `id` is `tags[id - 1]`.
    pub tags: Vec<Tag>,
}

/// Writes a part's nodes with the translations.
#[derive(Clone, Copy)]
pub(crate) struct Writer<'a> {
    pub dialect: &'a Dialect,
    /// The part's source.
    pub src: &'a str,
    pub texts: Texts<'a>,
    /// The target language (BCP 47) marked on translated runs, if known.
    pub lang: Option<&'a str>,
}

impl Writer<'_> {
    /// Writes `nodes`.
    pub(crate) fn render(&self, out: &mut String, nodes: &[Node]) {
        let src = self.src;
        for node in nodes {
            match node {
                Node::Raw(range) => out.push_str(src.get(range.clone()).unwrap_or("")),
                Node::Str(text) => out.push_str(text),
                Node::Para(para) => {
                    let unchanged = para.slots.clone().all(|slot| {
                        let (source, translation) = self.texts.get(slot);
                        source == translation
                    });
                    if unchanged {
                        out.push_str(src.get(para.original.clone()).unwrap_or(""));
                    } else {
                        self.render(out, &para.body);
                    }
                }
                Node::Segment(segment) => self.segment(out, segment),
                Node::Fit { body_pr, slots } => {
                    let raw = src.get(body_pr.clone()).unwrap_or("");
                    let (mut before, mut after) = (0usize, 0usize);
                    for slot in slots.clone() {
                        let (source, translation) = self.texts.get(slot);
                        before += inline::plain_text(source).chars().count();
                        after += inline::plain_text(translation).chars().count();
                    }
                    match fit(raw, before, after) {
                        Some(fitted) => out.push_str(&fitted),
                        None => out.push_str(raw),
                    }
                }
                Node::Attr {
                    slot,
                    range,
                    write,
                    tags,
                } => {
                    let (source, translation) = self.texts.get(*slot);
                    if translation == source {
                        out.push_str(src.get(range.clone()).unwrap_or(""));
                    } else {
                        let text = if tags.is_empty() {
                            inline::plain_text(translation)
                        } else {
                            crate::placeholders::restore(translation, tags)
                        };
                        for c in write(&text).chars() {
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

    /// Writes a segment's translation: text as runs of the spans' styles,
    /// containers and placeholders as their markup, each once. A container
    /// opens only inside the container that held it in the source (never a
    /// link in a link); what the translation lost is written at the end when
    /// the document needs it.
    fn segment(&self, out: &mut String, segment: &Segment) {
        let (source, translation) = self.texts.get(segment.slot);
        let parents = inline::parents(source);
        let mut used = vec![false; segment.tags.len()];
        let mut frames: Vec<Frame<'_>> = Vec::new();
        for piece in inline::parse(translation) {
            let style = frames.last().map_or(&segment.base, |f| f.style);
            match piece {
                Piece::Text(text) => {
                    write_run(self.dialect, out, self.src, style, &text, self.lang)
                }
                Piece::Open(id) => {
                    let index = (id as usize).wrapping_sub(1);
                    let container = frames.iter().rev().find_map(|f| f.container);
                    let frame = match segment.tags.get(index) {
                        Some(Tag::Format(format)) => Frame {
                            style: format,
                            close: None,
                            container: None,
                        },
                        Some(Tag::Container { open, close, base })
                            if !used[index] && parents.get(&id) == Some(&container) =>
                        {
                            used[index] = true;
                            self.render(out, open);
                            Frame {
                                style: base,
                                close: Some(close),
                                container: Some(id),
                            }
                        }
                        _ => Frame {
                            style,
                            close: None,
                            container: None,
                        },
                    };
                    frames.push(frame);
                }
                Piece::Close(_) => {
                    if let Some(Frame {
                        close: Some(close), ..
                    }) = frames.pop()
                    {
                        self.render(out, close);
                    }
                }
                Piece::Placeholder(id) => {
                    let index = (id as usize).wrapping_sub(1);
                    if let Some(Tag::Placeholder { nodes, .. }) = segment.tags.get(index)
                        && !used[index]
                    {
                        used[index] = true;
                        self.render(out, nodes);
                    }
                }
            }
        }
        // Markup the translation lost: keep what the document needs.
        for (tag, used) in segment.tags.iter().zip(used) {
            match tag {
                _ if used => {}
                Tag::Placeholder { nodes, keep: true } => self.render(out, nodes),
                Tag::Container { open, close, .. } => {
                    self.render(out, open);
                    self.render(out, close);
                }
                _ => {}
            }
        }
    }
}

/// One open span while writing a paragraph.
struct Frame<'p> {
    style: &'p RunStyle,
    close: Option<&'p [Node]>,
    /// The tag id of the container this span opened.
    container: Option<u32>,
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
    lang: Option<&str>,
) {
    if text.is_empty() {
        return;
    }
    let start = src.get(style.start.clone()).filter(|s| !s.is_empty());
    let bare = start.is_none() && dialect.bare_text;
    if !bare {
        out.push_str(start.unwrap_or(dialect.run_open));
        let rpr = style.rpr.as_ref().and_then(|r| src.get(r.clone()));
        match (dialect.lang, lang) {
            (Some(mark), Some(lang)) => write_props_in(out, dialect.run_props, rpr, mark, lang),
            _ => out.push_str(rpr.unwrap_or("")),
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

/// Writes run properties `rpr` (element `name`; `None` when the run has
/// none) marked with the language `lang`.
fn write_props_in(out: &mut String, name: &str, rpr: Option<&str>, mark: LangMark, lang: &str) {
    match mark {
        LangMark::Element {
            name: elem,
            attr,
            before,
        } => {
            let lang_elem = format!("<{elem} {attr}=\"{lang}\"/>");
            let Some(rpr) = rpr else {
                out.push_str(&format!("<{name}>{lang_elem}</{name}>"));
                return;
            };
            if let Some(at) = find_tag(rpr, elem) {
                let end = rpr[at..].find('>').map_or(rpr.len(), |e| at + e + 1);
                out.push_str(&rpr[..at]);
                out.push_str(&set_attr(&rpr[at..end], attr, lang));
                out.push_str(&rpr[end..]);
            } else if rpr.ends_with("/>") && !rpr[..rpr.len() - 2].contains('>') {
                out.push_str(rpr[..rpr.len() - 2].trim_end());
                out.push_str(&format!(">{lang_elem}</{name}>"));
            } else {
                let at = before
                    .iter()
                    .filter_map(|b| find_tag(rpr, b))
                    .chain(rpr.rfind(&format!("</{name}")))
                    .min()
                    .unwrap_or(rpr.len());
                out.push_str(&rpr[..at]);
                out.push_str(&lang_elem);
                out.push_str(&rpr[at..]);
            }
        }
        LangMark::Attribute(attr) => {
            let Some(rpr) = rpr else {
                out.push_str(&format!("<{name} {attr}=\"{lang}\"/>"));
                return;
            };
            let end = rpr.find('>').map_or(rpr.len(), |e| e + 1);
            out.push_str(&set_attr(&rpr[..end], attr, lang));
            out.push_str(&rpr[end..]);
        }
    }
}

/// Where the start tag of element `name` is in `xml`.
fn find_tag(xml: &str, name: &str) -> Option<usize> {
    let open = format!("<{name}");
    xml.match_indices(&open).map(|(at, _)| at).find(|&at| {
        matches!(
            xml.as_bytes().get(at + open.len()),
            Some(b' ' | b'/' | b'>' | b'\t' | b'\n' | b'\r')
        )
    })
}

/// A start tag with attribute `attr` set to `value` (replaced or added).
fn set_attr(tag: &str, attr: &str, value: &str) -> String {
    let key = format!(" {attr}=\"");
    if let Some(at) = tag.find(&key) {
        let from = at + key.len();
        let to = tag[from..].find('"').map_or(tag.len(), |e| from + e);
        return format!("{}{value}{}", &tag[..from], &tag[to..]);
    }
    let name_end = tag
        .find(|c: char| c.is_whitespace() || c == '/' || c == '>')
        .unwrap_or(tag.len());
    format!("{}{key}{value}\"{}", &tag[..name_end], &tag[name_end..])
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

/// Translations over this much longer than their source (in tenths: 10 %)
/// get a font scale.
const GROWTH_TENTHS: usize = 11;
/// The smallest font scale written (PowerPoint's own shrink goes lower, but
/// text smaller than this is hard to read).
const MIN_SCALE: f64 = 0.55;

/// `body_pr` (a text body's `<a:bodyPr>` as written) for text that grew from
/// `before` to `after` characters: PowerPoint's shrink on overflow
/// (`<a:normAutofit fontScale="…" lnSpcReduction="…"/>`) with the font scaled
/// by the square root of the ratio (the area text takes grows with the
/// square of its size), combined with a scale already there; `None` when the
/// text did not grow enough, or the box resizes to its text (`spAutoFit`) or
/// was set never to fit it (`noAutofit`).
pub(crate) fn fit(body_pr: &str, before: usize, after: usize) -> Option<String> {
    if before == 0 || after * 10 <= before * GROWTH_TENTHS {
        return None;
    }
    if body_pr.contains("<a:noAutofit") || body_pr.contains("<a:spAutoFit") {
        return None;
    }
    let existing = body_pr.find("<a:normAutofit").map(|start| {
        let rest = &body_pr[start..];
        let close = "</a:normAutofit>";
        let end = match rest.find('>') {
            Some(gt) if rest[..gt].ends_with('/') => gt + 1,
            _ => rest.find(close).map_or(rest.len(), |e| e + close.len()),
        };
        start..start + end
    });
    let old_scale = existing
        .as_ref()
        .and_then(|r| {
            let tag = &body_pr[r.clone()];
            let at = tag.find("fontScale=\"")? + "fontScale=\"".len();
            let len = tag[at..].find('"')?;
            tag[at..at + len].parse::<f64>().ok()
        })
        .map_or(1.0, |v| v / 100_000.0);
    let scale = ((before as f64 / after as f64).sqrt() * old_scale).max(MIN_SCALE);
    // PowerPoint writes its scales in steps of 2.5 %.
    let font = (scale * 40.0).floor() as u32 * 2500;
    let spacing = if scale < 0.75 {
        " lnSpcReduction=\"20000\""
    } else if scale < 0.9 {
        " lnSpcReduction=\"10000\""
    } else {
        ""
    };
    let autofit = format!("<a:normAutofit fontScale=\"{font}\"{spacing}/>");
    if let Some(range) = existing {
        return Some(format!(
            "{}{autofit}{}",
            &body_pr[..range.start],
            &body_pr[range.end..]
        ));
    }
    if let Some(open) = body_pr.strip_suffix("/>") {
        return Some(format!("{}>{autofit}</a:bodyPr>", open.trim_end()));
    }
    // The fit follows a text warp, else opens the properties (schema order).
    let at = body_pr
        .find("</a:prstTxWarp>")
        .map(|i| i + "</a:prstTxWarp>".len())
        .or_else(|| {
            let warp = body_pr.find("<a:prstTxWarp")?;
            body_pr[warp..].find("/>").map(|i| warp + i + 2)
        })
        .or_else(|| body_pr.find('>').map(|i| i + 1))?;
    Some(format!("{}{autofit}{}", &body_pr[..at], &body_pr[at..]))
}

#[cfg(test)]
mod fit_tests {
    use super::fit;

    #[test]
    fn grown_text_gets_a_font_scale_in_its_body_properties() {
        assert_eq!(
            fit("<a:bodyPr/>", 10, 20).as_deref(),
            Some(
                r#"<a:bodyPr><a:normAutofit fontScale="70000" lnSpcReduction="20000"/></a:bodyPr>"#
            )
        );
        assert_eq!(
            fit(
                r#"<a:bodyPr wrap="square"><a:normAutofit/></a:bodyPr>"#,
                100,
                120
            )
            .as_deref(),
            Some(r#"<a:bodyPr wrap="square"><a:normAutofit fontScale="90000"/></a:bodyPr>"#)
        );
        assert_eq!(
            fit(
                r#"<a:bodyPr><a:normAutofit fontScale="90000"/></a:bodyPr>"#,
                100,
                120
            )
            .as_deref(),
            Some(
                r#"<a:bodyPr><a:normAutofit fontScale="80000" lnSpcReduction="10000"/></a:bodyPr>"#
            )
        );
        assert_eq!(
            fit(
                r#"<a:bodyPr><a:prstTxWarp prst="textNoShape"/><a:scene3d/></a:bodyPr>"#,
                10,
                13
            )
            .as_deref(),
            Some(
                r#"<a:bodyPr><a:prstTxWarp prst="textNoShape"/><a:normAutofit fontScale="87500" lnSpcReduction="10000"/><a:scene3d/></a:bodyPr>"#
            )
        );
    }

    #[test]
    fn text_that_did_not_grow_or_boxes_that_resize_are_left_alone() {
        assert_eq!(fit("<a:bodyPr/>", 10, 11), None);
        assert_eq!(fit("<a:bodyPr><a:spAutoFit/></a:bodyPr>", 10, 30), None);
        assert_eq!(fit("<a:bodyPr><a:noAutofit/></a:bodyPr>", 10, 30), None);
        assert_eq!(fit("<a:bodyPr/>", 0, 30), None);
    }
}
