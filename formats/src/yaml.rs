//! YAML localization files (`.yml`, `.yaml`), read with saphyr-parser: the
//! scalar values of mappings and sequences are segments, never the keys.
//!
//! Each translated value is written back in its place, in its own style:
//! plain (or double-quoted when the translation would not read back as the
//! same plain scalar), single-quoted, double-quoted, literal (`|`) or folded
//! (`>`) with the block's header and indentation. Comments, anchors, aliases,
//! tags, keys and everything between the values keep their bytes; values
//! that do not read as text (numbers, booleans, identifiers, URLs) and
//! multi-line plain scalars stay as they are. Placeholders (`%{count}`,
//! `{name}`, `%s`) are tags. A Rails-style file, whose top-level mapping has
//! one key that is a language code (`en:`), gets the target language as that
//! key ([`crate::Extracted::with_target_language`]).

use std::ops::Range;

use saphyr_parser::{Event, Parser, ScalarStyle};

use crate::FormatError;
use crate::encoding::{self, Decoded, Form};
use crate::placeholders::{self, Values};

/// The file around its values.
#[derive(Debug)]
pub(crate) struct Skeleton {
    source: String,
    form: Form,
    values: Vec<placeholders::Value>,
    styles: Vec<Style>,
    /// The top-level language key of a Rails-style file.
    locale_key: Option<Range<usize>>,
}

/// How a value is written back.
#[derive(Debug, Clone)]
enum Style {
    Plain,
    Single,
    Double,
    /// A block scalar's content: its indentation and the line breaks that
    /// end it (its header stays as it is).
    Block {
        indent: String,
        trailing: String,
    },
}

/// What the parser is inside.
enum Container {
    /// A mapping, whether the next node is a key, and the last key read.
    Mapping {
        key_next: bool,
        key: Option<String>,
    },
    Sequence,
}

/// Rails' `%{name}` interpolations, then the shared placeholders.
fn placeholder_at(text: &str) -> Option<usize> {
    if let Some(rest) = text.strip_prefix("%{")
        && let Some(end) = rest.find('}')
        && rest[..end].chars().all(|c| c.is_alphanumeric() || c == '_')
        && end > 0
    {
        return Some(end + 3);
    }
    placeholders::at_start(text)
}

pub(crate) fn extract(input: &[u8]) -> Result<(Vec<String>, Skeleton), FormatError> {
    extract_keys(input, None)
}

/// [`extract`], translating only the values of the top-level keys `keys`
/// when given (a Markdown page's front matter: `title`, `description`…).
pub(crate) fn extract_keys(
    input: &[u8],
    keys: Option<&[&str]>,
) -> Result<(Vec<String>, Skeleton), FormatError> {
    let Decoded { text: source, form } = encoding::decode(input, None);
    let (mut starts, mut ends) = (CharOffsets::new(&source), CharOffsets::new(&source));
    let mut found = Values::default();
    let mut styles = Vec::new();
    let mut stack: Vec<Container> = Vec::new();
    let mut top_keys: Vec<(String, Range<usize>)> = Vec::new();
    let mut top_values = 0usize;
    for event in Parser::new_from_str(&source) {
        let (event, span) =
            event.map_err(|e| FormatError::corrupt(format!("The file is not valid YAML: {e}")))?;
        let range = starts.byte(span.start.index())..ends.byte(span.end.index());
        // Whether this node is a key, and whether it sits in the top mapping.
        let depth = stack.len();
        let (is_key, top, key) = match stack.last_mut() {
            Some(Container::Mapping { key_next, key }) => {
                let k = *key_next;
                *key_next = !k;
                (k, depth == 1, if k { None } else { key.clone() })
            }
            _ => (false, false, None),
        };
        // With `keys`, only the values of those top-level keys.
        let wanted =
            keys.is_none_or(|keys| top && key.as_deref().is_some_and(|k| keys.contains(&k)));
        match event {
            Event::MappingStart(..) => {
                if top && !is_key {
                    top_values += 1;
                }
                stack.push(Container::Mapping {
                    key_next: true,
                    key: None,
                });
            }
            Event::SequenceStart(..) => {
                if top && !is_key {
                    top_values += 1;
                }
                stack.push(Container::Sequence);
            }
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
            }
            Event::Scalar(value, style, _, _) if is_key => {
                if let Some(Container::Mapping { key, .. }) = stack.last_mut() {
                    *key = Some(value.to_string());
                }
                if top && style == ScalarStyle::Plain {
                    top_keys.push((value.into_owned(), range));
                }
            }
            Event::Scalar(value, style, _, tag) => {
                if top {
                    top_values += 1;
                }
                if tag.is_some() || stack.is_empty() || !wanted {
                    continue;
                }
                if let Some(style) = style_of(&source, &range, style, &value) {
                    let before = found.segments.len();
                    found.text_with(range, &value, placeholder_at);
                    if found.segments.len() > before {
                        styles.push(style);
                    }
                }
            }
            _ => {}
        }
    }
    let locale_key = match top_keys.as_slice() {
        [(key, range)] if keys.is_none() && top_values == 1 && is_language_code(key) => {
            Some(range.clone())
        }
        _ => None,
    };
    let (segments, values) = found.finish();
    Ok((
        segments,
        Skeleton {
            source,
            form,
            values,
            styles,
            locale_key,
        },
    ))
}

/// Byte offsets of a text's character indexes (saphyr's markers count
/// characters), found by walking on from the last one asked for, so that no
/// table of every character's offset is held (8 bytes a character); an ASCII
/// text's are its indexes.
pub(crate) struct CharOffsets<'s> {
    text: &'s str,
    ascii: bool,
    chars: usize,
    byte: usize,
}

impl<'s> CharOffsets<'s> {
    pub(crate) fn new(text: &'s str) -> Self {
        Self {
            text,
            ascii: text.is_ascii(),
            chars: 0,
            byte: 0,
        }
    }

    /// The byte offset of character `chars` (the text's length past its end).
    pub(crate) fn byte(&mut self, chars: usize) -> usize {
        if self.ascii {
            return chars.min(self.text.len());
        }
        if chars < self.chars {
            (self.chars, self.byte) = (0, 0);
        }
        for c in self.text[self.byte..].chars() {
            if self.chars >= chars {
                break;
            }
            self.byte += c.len_utf8();
            self.chars += 1;
        }
        self.byte
    }
}

/// `en`, `pt-BR`, `zh_Hans`: a language code as Rails locale files name them.
fn is_language_code(key: &str) -> bool {
    let mut parts = key.split(['-', '_']);
    let first = parts.next().unwrap_or("");
    (2..=3).contains(&first.len())
        && first.chars().all(|c| c.is_ascii_lowercase())
        && parts.all(|p| (2..=4).contains(&p.len()) && p.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// How the scalar at `range` is written, when it can be replaced safely.
fn style_of(source: &str, range: &Range<usize>, style: ScalarStyle, value: &str) -> Option<Style> {
    let text = source.get(range.clone())?;
    match style {
        // A one-line plain scalar only (a multi-line one is folded by YAML).
        ScalarStyle::Plain => {
            (text == value && !text.contains('\n') && !resolves_to_non_string(value))
                .then_some(Style::Plain)
        }
        ScalarStyle::SingleQuoted => {
            (text.len() >= 2 && text.starts_with('\'') && text.ends_with('\''))
                .then_some(Style::Single)
        }
        ScalarStyle::DoubleQuoted => {
            (text.len() >= 2 && text.starts_with('"') && text.ends_with('"'))
                .then_some(Style::Double)
        }
        // The span holds the content from its first character (the header
        // and the first line's indentation come before it).
        ScalarStyle::Literal | ScalarStyle::Folded => {
            let line_start = source[..range.start].rfind('\n').map_or(0, |i| i + 1);
            let indent = &source[line_start..range.start];
            if indent.is_empty() || !indent.chars().all(|c| c == ' ') || text.is_empty() {
                return None;
            }
            let content = text.trim_end_matches(['\n', '\r', ' ']);
            Some(Style::Block {
                indent: indent.to_owned(),
                trailing: text[content.len()..].to_owned(),
            })
        }
    }
}

/// Whether a plain scalar is a boolean, a null or a number in YAML.
fn resolves_to_non_string(text: &str) -> bool {
    matches!(
        text.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "~" | ""
    ) || text.parse::<f64>().is_ok()
}

/// Whether `text` reads back as the same plain scalar in a block mapping.
fn plain_safe(text: &str) -> bool {
    let first = text.chars().next();
    !text.is_empty()
        && text.trim() == text
        && !text.contains(": ")
        && !text.contains(" #")
        && !text.contains('\n')
        && !text.ends_with(':')
        && !first.is_some_and(|c| "-?:,[]{}#&*!|>'\"%@`".contains(c))
        && !resolves_to_non_string(text)
}

fn double_quoted(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write(out: &mut String, text: &str, style: &Style) {
    match style {
        Style::Plain if plain_safe(text) => out.push_str(text),
        Style::Plain | Style::Double => double_quoted(out, text),
        Style::Single if text.contains('\n') => double_quoted(out, text),
        Style::Single => {
            out.push('\'');
            out.push_str(&text.replace('\'', "''"));
            out.push('\'');
        }
        Style::Block { indent, trailing } => {
            for (i, line) in text.trim_end_matches('\n').split('\n').enumerate() {
                if i > 0 {
                    out.push('\n');
                    if !line.is_empty() {
                        out.push_str(indent);
                    }
                }
                out.push_str(line);
            }
            out.push_str(trailing);
        }
    }
}

impl crate::filter::Skeleton for Skeleton {
    fn merge(
        &self,
        source: &[String],
        translated: &[String],
        lang: Option<&str>,
    ) -> Result<Vec<u8>, FormatError> {
        Ok(Self::merge(self, source, translated, lang))
    }
}

impl Skeleton {
    pub(crate) fn merge(
        &self,
        source: &[String],
        translated: &[String],
        language: Option<&str>,
    ) -> Vec<u8> {
        let mut out = placeholders::splice_each(
            &self.source,
            &self.values,
            source,
            translated,
            |out, text, index| {
                if let Some(style) = self.styles.get(index) {
                    write(out, text, style);
                }
            },
        );
        // The language key comes before every value: its offsets still hold.
        if let (Some(range), Some(language)) = (&self.locale_key, language)
            && out.get(range.clone()).is_some()
        {
            out.replace_range(range.clone(), language);
        }
        self.form.encode(&out, false)
    }
}

#[cfg(test)]
mod tests;
