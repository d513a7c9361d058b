//! Subtitles: SubRip (`.srt`) and WebVTT (`.vtt`).
//!
//! A file is read as blocks separated by blank lines. A block with a timing
//! line (`00:00:01,000 --> 00:00:02,500`, WebVTT cue settings after it) is a
//! cue: the lines after the timing line are its text, one segment for the
//! whole cue (a sentence often runs over its two lines). Everything else —
//! indexes, cue identifiers, timing lines and settings, the `WEBVTT` header,
//! `NOTE`, `STYLE` and `REGION` blocks — stays as it is.
//!
//! Inline markup (`<i>`, `<b>`, `<u>`, `<font …>` in SubRip; `<c.class>`,
//! `<v Speaker>`, `<lang …>`, `<ruby>`/`<rt>` and inline timestamps
//! `<00:00:01.500>` in WebVTT) becomes tags of the segment: paired tags
//! spans, the others placeholders. A translated cue is written on one line,
//! or on two lines of roughly equal length when it is longer than
//! [`LINE_CHARS`] characters; a cue translated as itself keeps its bytes.
//! The file's encoding (UTF-8, UTF-16 with a byte-order mark, Latin-1) and
//! line endings are kept ([`crate::encoding`]).

use std::ops::Range;

use crate::FormatError;
use crate::encoding::{self, Decoded, Form};
use crate::inline::{self, SegmentBuilder};

/// Longest cue line before a translation is split into two lines.
pub(crate) const LINE_CHARS: usize = 42;

/// Which subtitle format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// SubRip: text is literal.
    Srt,
    /// WebVTT: `&`, `<` and `>` are written as character references.
    Vtt,
}

/// The text around the cues.
#[derive(Debug)]
pub(crate) struct Skeleton {
    kind: Kind,
    source: String,
    form: Form,
    parts: Vec<Part>,
}

#[derive(Debug)]
enum Part {
    Raw(Range<usize>),
    Cue(Box<Cue>),
}

/// A cue's text: its segment, its source bytes, its tags and line ending.
#[derive(Debug)]
struct Cue {
    segment: usize,
    original: Range<usize>,
    /// Tag `id` is `tags[id - 1]`: (open markup, close markup); a
    /// placeholder has no close markup.
    tags: Vec<(String, Option<String>)>,
    newline: &'static str,
}

pub(crate) fn extract(kind: Kind, input: &[u8]) -> Result<(Vec<String>, Skeleton), FormatError> {
    let Decoded { text: source, form } = encoding::decode(input, None);
    if kind == Kind::Vtt && !source.trim_start_matches('\u{feff}').starts_with("WEBVTT") {
        return Err(FormatError::corrupt(
            "The file is not a valid WebVTT file: it does not start with WEBVTT",
        ));
    }
    let mut segments = Vec::new();
    let mut parts = Vec::new();
    let mut raw_start = 0;
    let lines = line_ranges(&source);
    let mut i = 0;
    while i < lines.len() {
        // A block: lines up to the next blank one.
        let start = i;
        while i < lines.len() && !is_blank(&source, &lines[i]) {
            i += 1;
        }
        let block = &lines[start..i];
        while i < lines.len() && is_blank(&source, &lines[i]) {
            i += 1;
        }
        let Some(timing) = block
            .iter()
            .position(|l| source[l.content.clone()].contains("-->"))
        else {
            continue;
        };
        let text_lines = &block[timing + 1..];
        let (Some(first), Some(last)) = (text_lines.first(), text_lines.last()) else {
            continue;
        };
        let text_range = first.content.start..last.content.end;
        let joined: Vec<&str> = text_lines
            .iter()
            .map(|l| source[l.content.clone()].trim())
            .collect();
        let (segment, tags) = segment_of(kind, &joined.join(" "));
        if inline::plain_text(&segment).trim().is_empty() {
            continue;
        }
        parts.push(Part::Raw(raw_start..text_range.start));
        parts.push(Part::Cue(Box::new(Cue {
            segment: segments.len(),
            original: text_range.clone(),
            tags,
            newline: if source[first.line.clone()].ends_with("\r\n") {
                "\r\n"
            } else {
                "\n"
            },
        })));
        segments.push(segment);
        raw_start = text_range.end;
    }
    parts.push(Part::Raw(raw_start..source.len()));
    Ok((
        segments,
        Skeleton {
            kind,
            source,
            form,
            parts,
        },
    ))
}

/// A line: with its ending, and its content without it.
struct Line {
    line: Range<usize>,
    content: Range<usize>,
}

fn line_ranges(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        out.push(Line {
            line: at..at + line.len(),
            content: at..at + content.len(),
        });
        at += line.len();
    }
    out
}

fn is_blank(text: &str, line: &Line) -> bool {
    text[line.content.clone()]
        .trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
        .is_empty()
}

/// A piece of cue text.
enum Token<'t> {
    Text(&'t str),
    /// A tag: its markup, its name (`i`, `c`, `v`; empty for a timestamp),
    /// and whether it closes.
    Tag(&'t str, String, bool),
}

fn tokens(text: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        let Some(len) = rest[open..].find('>') else {
            break;
        };
        if open > 0 {
            out.push(Token::Text(&rest[..open]));
        }
        let markup = &rest[open..=open + len];
        let inner = &markup[1..markup.len() - 1];
        let closing = inner.starts_with('/');
        let name: String = inner
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect::<String>()
            .to_ascii_lowercase();
        out.push(Token::Tag(markup, name, closing));
        rest = &rest[open + len + 1..];
    }
    if !rest.is_empty() {
        out.push(Token::Text(rest));
    }
    out
}

/// The segment of a cue's text and its tags.
fn segment_of(kind: Kind, text: &str) -> (String, Vec<(String, Option<String>)>) {
    let tokens = tokens(text);
    // Pair each opening tag with the closing one of its name.
    let mut partner: Vec<Option<usize>> = vec![None; tokens.len()];
    let mut open: Vec<(usize, &str)> = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        if let Token::Tag(_, name, closing) = token {
            if name.is_empty() {
                continue;
            }
            if *closing {
                if let Some(pos) = open.iter().rposition(|(_, n)| n == name) {
                    let (start, _) = open[pos];
                    open.truncate(pos);
                    partner[start] = Some(i);
                    partner[i] = Some(start);
                }
            } else {
                open.push((i, name));
            }
        }
    }
    let mut builder = SegmentBuilder::new();
    let mut tags: Vec<(String, Option<String>)> = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        match token {
            Token::Text(t) => builder.text(&decode(kind, t)),
            Token::Tag(markup, _, closing) => match (partner[i], closing) {
                (Some(close), false) => {
                    builder.open();
                    let Token::Tag(close_markup, _, _) = &tokens[close] else {
                        continue;
                    };
                    tags.push(((*markup).to_owned(), Some((*close_markup).to_owned())));
                }
                (Some(_), true) => builder.close(),
                (None, _) => {
                    builder.placeholder();
                    tags.push(((*markup).to_owned(), None));
                }
            },
        }
    }
    (builder.finish(), tags)
}

/// Cue text as plain characters: WebVTT's character references resolved.
fn decode(kind: Kind, text: &str) -> String {
    if kind == Kind::Srt {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match inline::decode_entity(rest) {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A SubRip file as WebVTT, or a WebVTT file as SubRip (the requested
/// `output_format` of a translated subtitle file). Cues keep their timings
/// and text; SubRip indexes become cue identifiers; `<font>` (which WebVTT
/// lacks) is dropped, a bare `&` escaped. Going to SubRip, the header and
/// `NOTE`, `STYLE` and `REGION` blocks are dropped, cues numbered from 1,
/// cue settings removed, short timestamps (`01:02.500`) completed, tags other
/// than `i`, `b`, `u` removed and character references resolved. The output
/// is UTF-8 with the input's line endings.
pub(crate) fn convert(from: Kind, to: Kind, input: &[u8]) -> Result<Vec<u8>, FormatError> {
    let Decoded { text, .. } = encoding::decode(input, None);
    if from == to {
        return Ok(input.to_vec());
    }
    let lines = line_ranges(&text);
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut out = String::with_capacity(text.len() + 16);
    if to == Kind::Vtt {
        out.push_str("WEBVTT");
        out.push_str(newline);
    }
    let mut number = 0;
    let mut i = 0;
    while i < lines.len() {
        while i < lines.len() && is_blank(&text, &lines[i]) {
            i += 1;
        }
        let start = i;
        while i < lines.len() && !is_blank(&text, &lines[i]) {
            i += 1;
        }
        let block: Vec<&str> = lines[start..i]
            .iter()
            .map(|l| text[l.content.clone()].trim_start_matches('\u{feff}'))
            .collect();
        let Some(timing) = block.iter().position(|l| l.contains("-->")) else {
            continue;
        };
        number += 1;
        if !out.is_empty() {
            out.push_str(newline);
        }
        match to {
            Kind::Vtt => {
                for id in &block[..timing] {
                    out.push_str(id.trim());
                    out.push_str(newline);
                }
                out.push_str(&block[timing].replace(',', "."));
                out.push_str(newline);
                for line in &block[timing + 1..] {
                    out.push_str(&srt_line_as_vtt(line));
                    out.push_str(newline);
                }
            }
            Kind::Srt => {
                out.push_str(&number.to_string());
                out.push_str(newline);
                out.push_str(&srt_timing(block[timing]));
                out.push_str(newline);
                for line in &block[timing + 1..] {
                    out.push_str(&vtt_line_as_srt(line));
                    out.push_str(newline);
                }
            }
        }
    }
    if number == 0 {
        return Err(FormatError::corrupt(
            "The subtitle file has no cues to convert",
        ));
    }
    Ok(out.into_bytes())
}

/// A SubRip text line in WebVTT: `<font>` dropped, a bare `&` escaped.
fn srt_line_as_vtt(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for token in tokens(line) {
        match token {
            Token::Tag(_, name, _) if name == "font" => {}
            Token::Tag(markup, ..) => out.push_str(markup),
            Token::Text(t) => {
                let mut rest = t;
                while let Some(at) = rest.find('&') {
                    out.push_str(&rest[..at]);
                    rest = &rest[at..];
                    match inline::decode_entity(rest) {
                        Some((_, len)) => {
                            out.push_str(&rest[..len]);
                            rest = &rest[len..];
                        }
                        None => {
                            out.push_str("&amp;");
                            rest = &rest[1..];
                        }
                    }
                }
                out.push_str(rest);
            }
        }
    }
    out
}

/// A WebVTT text line in SubRip: only `i`, `b`, `u` kept, references resolved.
fn vtt_line_as_srt(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for token in tokens(line) {
        match token {
            Token::Tag(markup, name, _) if matches!(name.as_str(), "i" | "b" | "u") => {
                // Class annotations (`<i.loud>`) are WebVTT's.
                let bare = markup.split(['.', ' ']).next().unwrap_or(markup);
                out.push_str(bare);
                if !bare.ends_with('>') {
                    out.push('>');
                }
            }
            Token::Tag(..) => {}
            Token::Text(t) => out.push_str(&decode(Kind::Vtt, t)),
        }
    }
    out
}

/// A WebVTT timing line as SubRip's: `HH:MM:SS,mmm --> HH:MM:SS,mmm`.
fn srt_timing(line: &str) -> String {
    let mut parts = line.split_whitespace();
    let start = parts.next().unwrap_or("");
    let _arrow = parts.next();
    let end = parts.next().unwrap_or("");
    let full = |t: &str| {
        let t = t.replace('.', ",");
        if t.matches(':').count() == 1 {
            format!("00:{t}")
        } else {
            t
        }
    };
    format!("{} --> {}", full(start), full(end))
}

impl crate::filter::Merge for Skeleton {
    fn merge(&self, source: &[String], translated: &[String]) -> Vec<u8> {
        let mut out = String::with_capacity(self.source.len() + self.source.len() / 4);
        for part in &self.parts {
            match part {
                Part::Raw(range) => out.push_str(self.source.get(range.clone()).unwrap_or("")),
                Part::Cue(cue) => {
                    let original = source.get(cue.segment).map_or("", String::as_str);
                    let translation = translated.get(cue.segment).map_or("", String::as_str);
                    if translation == original {
                        out.push_str(self.source.get(cue.original.clone()).unwrap_or(""));
                    } else {
                        out.push_str(&self.cue_text(cue, translation));
                    }
                }
            }
        }
        self.form.encode(&out, false)
    }
}

impl Skeleton {
    /// A translated cue's text, its tags written back, wrapped.
    fn cue_text(&self, cue: &Cue, translation: &str) -> String {
        let mut out = String::new();
        // Where a line may break: byte offsets of spaces outside tags, with
        // the visible characters before them.
        let mut breaks: Vec<(usize, usize)> = Vec::new();
        let mut visible = 0;
        // Placeholders the translation lost (timestamps, voices) go at the end.
        inline::write_tags(&mut out, translation, &cue.tags, |out, text| {
            for c in text.chars() {
                let c = if c == '\n' || c == '\r' { ' ' } else { c };
                if c == ' ' {
                    breaks.push((out.len(), visible));
                }
                match (self.kind, c) {
                    (Kind::Vtt, '&') => out.push_str("&amp;"),
                    (Kind::Vtt, '<') => out.push_str("&lt;"),
                    (Kind::Vtt, '>') => out.push_str("&gt;"),
                    (_, c) => out.push(c),
                }
                visible += 1;
            }
        });
        let trimmed_end = out.trim_end().len();
        out.truncate(trimmed_end);
        if visible > LINE_CHARS
            && let Some(&(at, _)) = breaks
                .iter()
                .filter(|(at, before)| *at > 0 && *at < out.len() && *before > 0)
                .min_by_key(|(_, before)| (2 * before).abs_diff(visible))
        {
            out.replace_range(at..at + 1, cue.newline);
        }
        out.trim_start().to_owned()
    }
}

#[cfg(test)]
mod tests;
