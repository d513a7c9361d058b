//! Markdown (`.md`, `.markdown`, CommonMark with tables and strikethrough):
//! one segment per block of text — paragraph, heading, table cell, the text
//! of a tight list item — found with pulldown-cmark's source offsets.
//!
//! Inline markup becomes tags of the segment: emphasis, strong emphasis,
//! strikethrough and links are spans (their delimiters, URL and title kept as
//! written), code spans, inline HTML, images and hard line breaks
//! placeholders. A leading `---` front matter is YAML: the values of its
//! human-text keys ([`FRONT_MATTER_KEYS`]) are segments too, written back by
//! the YAML filter; its other keys and values stay as they are. Code blocks,
//! HTML blocks and everything between blocks stay byte for byte; a translated
//! block is spliced in where its text was (soft line breaks become spaces),
//! characters Markdown would read as markup escaped.

use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use crate::FormatError;
use crate::encoding::{self, Decoded, Form};
use crate::inline::{self, SegmentBuilder};

/// Front-matter keys whose values are text for readers (site generators'
/// `title`, `description`…); `layout`, `date`, `tags`, `permalink` and the
/// rest are left alone.
pub(crate) const FRONT_MATTER_KEYS: &[&str] = &[
    "title",
    "subtitle",
    "description",
    "summary",
    "excerpt",
    "abstract",
    "caption",
];

/// The text around the blocks.
#[derive(Debug)]
pub(crate) struct Skeleton {
    source: String,
    form: Form,
    /// The front matter's YAML body, its skeleton and how many segments it has
    /// (the first ones).
    front: Option<(Range<usize>, crate::yaml::Skeleton, usize)>,
    blocks: Vec<Block>,
}

/// One translated block: where its inline content is, its segment, its tags
/// (tag `id` is `tags[id - 1]`: open markup, and close markup for a span)
/// and whether it sits in a table cell (`|` escaped).
#[derive(Debug)]
struct Block {
    range: Range<usize>,
    segment: usize,
    tags: Vec<(String, Option<String>)>,
    in_table: bool,
}

/// Where a block's inline content starts and the events in it.
struct Open {
    start: Option<usize>,
    events: Vec<(Event<'static>, Range<usize>)>,
    in_table: bool,
}

pub(crate) fn extract(input: &[u8]) -> Result<(Vec<String>, Skeleton), FormatError> {
    let Decoded { text: source, form } = encoding::decode(input, None);
    let (skip_to, body) = front_matter(&source);
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let mut segments = Vec::new();
    let mut blocks = Vec::new();
    // Front matter that is not YAML stays as it is.
    let front = body.and_then(|body| {
        let (texts, skeleton) =
            crate::yaml::extract_keys(source[body.clone()].as_bytes(), Some(FRONT_MATTER_KEYS))
                .ok()?;
        let count = texts.len();
        segments.extend(texts);
        Some((body, skeleton, count))
    });
    let mut open: Option<Open> = None;
    let mut depth_code = 0usize;
    for (event, range) in Parser::new_ext(&source[skip_to..], options).into_offset_iter() {
        let range = range.start + skip_to..range.end + skip_to;
        match &event {
            Event::Start(Tag::CodeBlock(_) | Tag::HtmlBlock | Tag::MetadataBlock(_)) => {
                depth_code += 1;
            }
            Event::End(TagEnd::CodeBlock | TagEnd::HtmlBlock | TagEnd::MetadataBlock(_)) => {
                depth_code = depth_code.saturating_sub(1);
            }
            Event::Start(Tag::Item) => {
                // A tight item's text is inline content of the item itself.
                open = Some(Open {
                    start: None,
                    events: Vec::new(),
                    in_table: false,
                });
            }
            Event::Start(Tag::Paragraph | Tag::Heading { .. } | Tag::TableCell)
                if depth_code == 0 =>
            {
                finish(&source, open.take(), &mut segments, &mut blocks);
                open = Some(Open {
                    start: None,
                    events: Vec::new(),
                    in_table: matches!(event, Event::Start(Tag::TableCell)),
                });
            }
            Event::End(TagEnd::Paragraph | TagEnd::Heading(_) | TagEnd::TableCell) => {
                finish(&source, open.take(), &mut segments, &mut blocks);
            }
            Event::End(TagEnd::Item) => {
                finish(&source, open.take(), &mut segments, &mut blocks);
            }
            Event::Start(Tag::List(_) | Tag::BlockQuote(_) | Tag::Table(_)) => {
                // Text of an item before a nested block ends there.
                finish(&source, open.take(), &mut segments, &mut blocks);
            }
            _ => {
                if let Some(o) = open.as_mut()
                    && depth_code == 0
                {
                    if o.start.is_none() {
                        o.start = Some(range.start);
                    }
                    o.events.push((event.into_static(), range));
                }
            }
        }
    }
    finish(&source, open.take(), &mut segments, &mut blocks);
    Ok((
        segments,
        Skeleton {
            source,
            form,
            front,
            blocks,
        },
    ))
}

/// The end of a front matter block (`---` … `---` or `...` at the very
/// start) and the range of its body, or 0.
fn front_matter(text: &str) -> (usize, Option<Range<usize>>) {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let offset = text.len() - body.len();
    if !(body.starts_with("---\n") || body.starts_with("---\r\n")) {
        return (0, None);
    }
    let start = body.find('\n').map_or(body.len(), |i| i + 1);
    let mut at = start;
    for line in body[start..].split_inclusive('\n') {
        if matches!(line.trim_end(), "---" | "...") {
            return (offset + at + line.len(), Some(offset + start..offset + at));
        }
        at += line.len();
    }
    (0, None)
}

/// Turns a finished block into a segment.
fn finish(source: &str, open: Option<Open>, segments: &mut Vec<String>, blocks: &mut Vec<Block>) {
    let Some(Open {
        start: Some(start),
        events,
        in_table,
    }) = open
    else {
        return;
    };
    let mut builder = SegmentBuilder::new();
    let mut tags: Vec<(String, Option<String>)> = Vec::new();
    // Open spans: their range, where their content starts, their tag index.
    let mut spans: Vec<(Range<usize>, Option<usize>, usize)> = Vec::new();
    // Inside an image (its alt text is part of the placeholder).
    let mut in_image = 0usize;
    // End of what was read so far.
    let mut at = start;
    for (event, range) in &events {
        if in_image > 0 {
            match event {
                Event::Start(_) => in_image += 1,
                Event::End(_) => in_image -= 1,
                _ => {}
            }
            at = at.max(range.end);
            continue;
        }
        if let Some((_, first @ None, _)) = spans.last_mut()
            && !matches!(event, Event::End(_))
        {
            *first = Some(range.start);
        }
        match event {
            Event::Text(text) => builder.text(&inline::escape(text)),
            Event::SoftBreak => builder.text(" "),
            Event::Start(Tag::Image { .. }) => {
                builder.placeholder();
                tags.push((source[range.clone()].to_owned(), None));
                in_image = 1;
            }
            Event::Start(_) => {
                builder.open();
                tags.push((String::new(), None));
                spans.push((range.clone(), None, tags.len() - 1));
                // What is read so far ends where the span's content starts.
                continue;
            }
            Event::End(_) => {
                if let Some((span, first, index)) = spans.pop() {
                    let content_start = first.unwrap_or(span.end).min(span.end);
                    let content_end = at.clamp(content_start, span.end);
                    tags[index] = (
                        source[span.start..content_start].to_owned(),
                        Some(source[content_end..span.end].to_owned()),
                    );
                    builder.close();
                    at = at.max(span.end);
                }
                continue;
            }
            _ => {
                // Code spans, inline HTML, hard breaks, footnote references,
                // task markers: kept as written.
                builder.placeholder();
                tags.push((source[range.clone()].to_owned(), None));
            }
        }
        at = at.max(range.end);
    }
    let segment = builder.finish();
    if !inline::plain_text(&segment)
        .chars()
        .any(char::is_alphanumeric)
    {
        return;
    }
    blocks.push(Block {
        range: start..at,
        segment: segments.len(),
        tags,
        in_table,
    });
    segments.push(segment);
}

impl crate::filter::Merge for Skeleton {
    fn merge(&self, source: &[String], translated: &[String]) -> Vec<u8> {
        let mut out = String::with_capacity(self.source.len() + self.source.len() / 4);
        let mut at = 0;
        if let Some((body, skeleton, count)) = &self.front {
            let n = (*count).min(source.len()).min(translated.len());
            out.push_str(&self.source[..body.start]);
            let yaml = skeleton.merge(&source[..n], &translated[..n], None);
            out.push_str(&String::from_utf8_lossy(&yaml));
            at = body.end;
        }
        inline::splice_blocks(
            &mut out,
            &self.source,
            at,
            &self.blocks,
            |b| (b.range.clone(), b.segment),
            (source, translated),
            render,
        );
        self.form.encode(&out, false)
    }
}

/// Writes a translated block: text escaped, spans and placeholders as
/// written in the source ([`inline::write_tags`]).
fn render(out: &mut String, translation: &str, block: &Block) {
    inline::write_tags(out, translation, &block.tags, |out, text| {
        escape(out, text, block.in_table);
    });
}

/// Text escaped where Markdown would read it as markup. An underscore
/// inside a word (`max_retries`, `statue_by_nicu.png`) cannot open or close
/// emphasis and stays as it is.
fn escape(out: &mut String, text: &str, in_table: bool) {
    let mut prev: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let intraword = c == '_'
            && prev.is_some_and(char::is_alphanumeric)
            && chars.peek().is_some_and(|n| n.is_alphanumeric());
        prev = Some(c);
        match c {
            '\n' | '\r' => out.push(' '),
            '_' if intraword => out.push(c),
            '\\' | '*' | '_' | '`' | '[' | ']' | '<' => {
                out.push('\\');
                out.push(c);
            }
            '|' if in_table => out.push_str("\\|"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests;
