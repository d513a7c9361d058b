//! Placeholders of software strings — `{0}`, .NET's `{0:N2}` and `{1,-8}`,
//! `{name}`, `{user.name}`,
//! `{{ name }}`, `${name}`, printf's `%s`, `%1$d`, `%.2f`, Python's
//! `%(name)s`, Apple's `%@` and strftime's `%e %B %Y`, `%-d`, `%H:%M` —
//! recognised the same way wherever Tolk protects them: the translation
//! pipeline's protected spans and the software-string filters (JSON,
//! properties, .strings, .resx).

use std::sync::LazyLock;

use regex::Regex;

/// The pattern of one placeholder.
pub const PATTERN: &str = concat!(
    // i18next / Angular / Handlebars `{{ name }}`, Liquid and Jinja `{% raw %}`
    r"\{\{\s*[A-Za-z_][\w.]*\s*\}\}|\{%-?[^%{}]*-?%\}",
    // `${name}`, i18next nesting `$t(key)`
    r"|\$\{[A-Za-z_][\w.]*\}|\$t\([^()]*\)",
    // Java MessageFormat with a type (`{0,number,integer}`, `{2,time,short}`)
    // or a choice (`{0,choice,0#none|1#one|1<{0} many}`)
    r"|\{\d+,\s*(?:number|date|time)(?:,\s*[^{}]+)?\}|\{\d+,\s*choice,(?:[^{}]|\{[^{}]*\})*\}",
    // .NET `{0}`, `{0:N2}`, `{1,-8}`; named `{name}`; Python's `{}`
    r"|\{\d+(?:,\s*-?\d+)?(?::[^{}]+)?\}|\{[A-Za-z_][\w.]*\}|\{\}",
    // printf and Python `%(name)s`
    r"|%(?:\d+\$|\([A-Za-z_]\w*\))?[\-+#0]?\d*(?:\.\d+)?(?:l{1,2}|h{1,2}|z|j|L)?[sdifuxXoceEgGr@]",
    // strftime
    r"|%[\-_0^#]?[aAbBCDFhHIjklmMpPRSTuUVwWyYzZ]",
);

static AT_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!("^(?:{PATTERN})"))
        .unwrap_or_else(|e| unreachable!("the placeholder pattern is valid: {e}"))
});

/// The length of the placeholder `text` starts with, if it does.
pub fn at_start(text: &str) -> Option<usize> {
    AT_START.find(text).map(|m| m.end())
}

/// Whether a software string is an identifier, a key or a URL rather than
/// text: one token with digits or `_ . / : @ #` among its letters (`a1b2`,
/// `btn_ok`, `app.title`, `https://…`). Such values are left alone.
pub(crate) fn looks_like_code(text: &str) -> bool {
    !text.contains(char::is_whitespace)
        && text
            .chars()
            .any(|c| c.is_ascii_digit() || matches!(c, '_' | '.' | '/' | ':' | '@' | '#'))
}

/// A value of a software-string file (JSON, properties, .strings): where its
/// text sits in the source, its segment, its placeholders' markup.
#[derive(Debug)]
pub(crate) struct Value {
    pub range: std::ops::Range<usize>,
    pub segment: usize,
    pub tags: Tags,
    /// The access key marked in the value (`E&xit`), taken out of its
    /// segment and put back in the translation.
    pub accelerator: Option<Accelerator>,
}

/// A menu or button label's access key: `&` before a letter (`E&xit`,
/// `&Save`), as Windows resources mark it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Accelerator {
    /// The letter marked.
    letter: char,
    /// The word holding it, without the `&`, and the letter's place in it.
    word: String,
    at: usize,
}

impl Accelerator {
    /// The access key of `text` and the text without it: one `&` before a
    /// letter (not `&&`, a literal ampersand, nor an entity such as `&nbsp;`).
    pub(crate) fn find(text: &str) -> Option<(String, Self)> {
        if text.contains("&&") || text.matches('&').count() != 1 {
            return None;
        }
        let amp = text.find('&')?;
        let after = &text[amp + 1..];
        let letter = after.chars().next().filter(|c| c.is_alphanumeric())?;
        let name_len = after
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(after.len());
        if after[name_len..].starts_with(';') {
            return None;
        }
        let stripped = format!("{}{after}", &text[..amp]);
        let start = text[..amp]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_alphanumeric())
            .last()
            .map_or(amp, |(i, _)| i);
        let word: String = stripped[start..]
            .chars()
            .take_while(|c| c.is_alphanumeric())
            .collect();
        let at = text[start..amp].chars().count();
        Some((stripped, Self { letter, word, at }))
    }

    /// `translation` with the access key marked again: in the same word when
    /// the translation kept it, else before the first same letter, else
    /// before the first letter.
    pub(crate) fn place(&self, translation: &str) -> String {
        let chars: Vec<(usize, char)> = translation.char_indices().collect();
        let starts_word = |i: usize| i == 0 || !chars[i - 1].1.is_alphanumeric();
        let lower = |c: char| c.to_lowercase().collect::<String>();
        let word: Vec<char> = self.word.chars().collect();
        // The same word, in any case ("As" kept as "AS").
        let kept = (0..chars.len()).find(|&i| {
            starts_word(i)
                && chars.len() >= i + word.len()
                && chars[i..i + word.len()]
                    .iter()
                    .zip(&word)
                    .all(|((_, a), b)| lower(*a) == lower(*b))
                && chars
                    .get(i + word.len())
                    .is_none_or(|(_, c)| !c.is_alphanumeric())
        });
        let index = kept
            .map(|i| i + self.at)
            .or_else(|| {
                chars
                    .iter()
                    .position(|(_, c)| lower(*c) == lower(self.letter))
            })
            .or_else(|| chars.iter().position(|(_, c)| c.is_alphanumeric()));
        match index.and_then(|i| chars.get(i)) {
            Some((byte, _)) => format!("{}&{}", &translation[..*byte], &translation[*byte..]),
            None => translation.to_owned(),
        }
    }
}

use crate::inline::SegmentBuilder;
pub(crate) use crate::inline::Tags;

/// Whether a software string reads as text to translate: it has letters and
/// does not look like code ([`looks_like_code`]).
pub(crate) fn reads_as_text(text: &str) -> bool {
    text.chars().any(char::is_alphabetic) && !looks_like_code(text)
}

/// The translatable values of a software-string file, collected in order:
/// the segments and the [`Value`]s that say where they go back.
#[derive(Debug, Default)]
pub(crate) struct Values {
    pub segments: Vec<String>,
    pub values: Vec<Value>,
    /// How `&` before a letter reads in this format's values.
    pub access_keys: AccessKeys,
}

/// How a format reads `&` before a letter in its values.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AccessKeys {
    /// As text (`R&D`).
    #[default]
    Text,
    /// As an access key wherever it stands (Windows resources: `E&xit`,
    /// `&OK`).
    Marked,
    /// As an access key inside a word with a lower-case letter and outside
    /// anything URL-like (Eclipse message bundles: `E&xit`, `&File`), so
    /// that `R&D`, `AT&T`, `Q&A` and `?a=1&b=2` stay text.
    InWords,
}

impl AccessKeys {
    /// The access key of `text` and `text` without it, as this format
    /// reads `&`.
    fn find(self, text: &str) -> Option<(String, Accelerator)> {
        match self {
            Self::Text => None,
            Self::Marked => Accelerator::find(text),
            Self::InWords => {
                let token = text
                    .split_whitespace()
                    .find(|t| t.contains('&'))
                    .unwrap_or_default();
                if token.contains(['=', '/', '?', '@']) {
                    return None;
                }
                Accelerator::find(text).filter(|(_, a)| a.word.chars().any(char::is_lowercase))
            }
        }
    }
}

impl Values {
    /// Adds `text`, found at `range`, when it [`reads_as_text`]; its
    /// placeholders become tags.
    pub fn text(&mut self, range: std::ops::Range<usize>, text: &str) {
        self.text_with(range, text, at_start);
    }

    /// [`Values::text`] with the format's own placeholder matcher `at`.
    pub fn text_with(
        &mut self,
        range: std::ops::Range<usize>,
        text: &str,
        at: impl Fn(&str) -> Option<usize>,
    ) {
        if !reads_as_text(text) {
            return;
        }
        let key = self.access_keys.find(text);
        let (segment, tags) = match &key {
            Some((stripped, _)) => segment(stripped, at),
            None => segment(text, at),
        };
        self.add(range, segment, tags);
        if let Some(value) = self.values.last_mut() {
            value.accelerator = key.map(|(_, a)| a);
        }
    }

    /// The segments and the values that say where they go back.
    pub fn finish(self) -> (Vec<String>, Vec<Value>) {
        (self.segments, self.values)
    }

    /// Adds a value already made a segment with `tags`.
    pub fn add(&mut self, range: std::ops::Range<usize>, segment: String, tags: Tags) {
        self.values.push(Value {
            range,
            segment: self.segments.len(),
            tags,
            accelerator: None,
        });
        self.segments.push(segment);
    }
}

/// The source text with each value's translation spliced in: its
/// placeholders restored, then written by `write` (the format's escaping); a
/// value translated as itself keeps its bytes.
pub(crate) fn splice(
    text: &str,
    values: &[Value],
    source: &[String],
    translated: &[String],
    mut write: impl FnMut(&mut String, &str),
) -> String {
    splice_each(text, values, source, translated, |out, text, _| {
        write(out, text)
    })
}

/// [`splice`] whose writer also gets the index of the value it writes.
pub(crate) fn splice_each(
    text: &str,
    values: &[Value],
    source: &[String],
    translated: &[String],
    mut write: impl FnMut(&mut String, &str, usize),
) -> String {
    splice_with(
        text,
        values,
        source,
        translated,
        |out, index, translation| {
            let value = &values[index];
            let restored = restore(translation, &value.tags);
            match &value.accelerator {
                Some(key) => write(out, &key.place(&restored), index),
                None => write(out, &restored, index),
            }
        },
    )
}

/// The source text with each value whose translation differs from its
/// segment written by `render` (given the value's index in `values` and its
/// translation); the rest, and values translated as themselves, keep their
/// bytes.
pub(crate) fn splice_with(
    text: &str,
    values: &[Value],
    source: &[String],
    translated: &[String],
    mut render: impl FnMut(&mut String, usize, &str),
) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut at = 0;
    for (index, value) in values.iter().enumerate() {
        out.push_str(&text[at..value.range.start]);
        let original = source.get(value.segment).map_or("", String::as_str);
        let translation = translated.get(value.segment).map_or("", String::as_str);
        if translation == original {
            out.push_str(&text[value.range.clone()]);
        } else {
            render(&mut out, index, translation);
        }
        at = value.range.end;
    }
    out.push_str(&text[at..]);
    out
}

/// A software string as a segment ([`message`]): HTML markup, ICU plural
/// and select skeletons and its placeholders (`at`; `#` inside a plural
/// branch) as tags, the rest escaped text.
pub(crate) fn segment(text: &str, at: impl Fn(&str) -> Option<usize>) -> (String, Tags) {
    let mut builder = SegmentBuilder::new();
    let mut tags = Vec::new();
    message(text, &mut builder, &mut tags, false, &|rest, plural| {
        if plural && rest.starts_with('#') {
            Some(1)
        } else {
            at(rest)
        }
    });
    (builder.finish(), tags)
}

/// Appends a software string's message to a segment: its HTML markup as
/// spans and placeholders ([`HtmlTags`]), ICU plural and select messages
/// (`{count, plural, one {# file} other {# files}}`) with their skeleton —
/// argument, keyword, selectors, braces — as tags so only each branch's text
/// is translated, and the placeholders `at` finds as tags. `at` is told
/// whether it looks inside a plural branch, where `#` stands for the number.
pub(crate) fn message(
    text: &str,
    builder: &mut SegmentBuilder,
    tags: &mut Tags,
    plural: bool,
    at: &dyn Fn(&str, bool) -> Option<usize>,
) {
    let html = HtmlTags::scan(text);
    let mut rest = text;
    let mut pending = String::new();
    let flush = |pending: &mut String, builder: &mut SegmentBuilder| {
        if !pending.is_empty() {
            builder.text(pending);
            pending.clear();
        }
    };
    while let Some(c) = rest.chars().next() {
        let offset = text.len() - rest.len();
        if let Some(len) = html.at(offset) {
            flush(&mut pending, builder);
            html.push(offset, &rest[..len], builder, tags);
            rest = &rest[len..];
            continue;
        }
        if let Some((len, icu)) = icu_message(rest) {
            flush(&mut pending, builder);
            let (head, branches, kind_plural, tail) = icu;
            placeholder(builder, tags, head);
            for (selector, body) in branches {
                placeholder(builder, tags, selector);
                message(body, builder, tags, kind_plural, at);
                placeholder(builder, tags, "}");
            }
            placeholder(builder, tags, tail);
            rest = &rest[len..];
            continue;
        }
        if let Some(len) = at(rest, plural) {
            flush(&mut pending, builder);
            placeholder(builder, tags, &rest[..len]);
            rest = &rest[len..];
            continue;
        }
        pending.push(c);
        rest = &rest[c.len_utf8()..];
    }
    flush(&mut pending, builder);
}

/// A text as a segment whose codes (`at` finds the one a text starts with)
/// are placeholders and the rest escaped text: no markup or messages are
/// looked for (a sheet's header codes).
pub(crate) fn with_codes(text: &str, at: impl Fn(&str) -> Option<usize>) -> (String, Tags) {
    let mut builder = SegmentBuilder::new();
    let mut tags = Vec::new();
    let mut plain = 0;
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        match at(&text[i..]).filter(|&len| len > 0 && text.is_char_boundary(i + len)) {
            Some(len) => {
                builder.text(&text[plain..i]);
                placeholder(&mut builder, &mut tags, &text[i..i + len]);
                i += len;
                plain = i;
            }
            None => i += c.len_utf8(),
        }
    }
    builder.text(&text[plain..]);
    (builder.finish(), tags)
}

fn placeholder(builder: &mut SegmentBuilder, tags: &mut Tags, markup: &str) {
    builder.placeholder();
    tags.push((markup.to_owned(), None));
}

/// An ICU plural/select message at the start of `text`: its length, its
/// head (`{count, plural,` with any `offset:`), its branches (selector with
/// its opening brace, body), whether it is a plural and its end (the closing
/// brace with the spaces before it).
#[allow(clippy::type_complexity)]
fn icu_message(text: &str) -> Option<(usize, (&str, Vec<(&str, &str)>, bool, &str))> {
    let inner = text.strip_prefix('{')?;
    let mut parts = inner.splitn(3, ',');
    let (arg_raw, kind_raw) = (parts.next()?, parts.next()?);
    // The branches follow a comma after the kind.
    parts.next()?;
    let (arg, kind) = (arg_raw.trim(), kind_raw.trim());
    if arg.is_empty() || !arg.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    if !matches!(kind, "plural" | "select" | "selectordinal") {
        return None;
    }
    let head_len = 1 + arg_raw.len() + 1 + kind_raw.len() + 1;
    let mut at = head_len;
    // `offset:n` belongs to the head.
    let after = text.get(at..)?;
    let skip = after.len() - after.trim_start().len();
    if after.trim_start().starts_with("offset:") {
        let off = after.trim_start();
        let end = off.find(char::is_whitespace).unwrap_or(off.len());
        at += skip + end;
    }
    let head = text.get(..at)?;
    let mut branches = Vec::new();
    loop {
        let rest = text.get(at..)?;
        let trimmed = rest.trim_start();
        let ws = rest.len() - trimmed.len();
        if let Some(after_close) = trimmed.strip_prefix('}') {
            let _ = after_close;
            let total = at + ws + 1;
            if branches.is_empty() {
                return None;
            }
            return Some((total, (head, branches, kind != "select", &text[at..total])));
        }
        let open = trimmed.find('{')?;
        let selector_end = at + ws + open + 1;
        // The selector with the whitespace before it and its brace.
        let selector = text.get(at..selector_end)?;
        let key = selector.trim().trim_end_matches('{').trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            return None;
        }
        let body_start = selector_end;
        let body_len = matching_brace(text.get(body_start..)?)?;
        branches.push((selector, text.get(body_start..body_start + body_len)?));
        at = body_start + body_len + 1;
    }
}

/// The length of text up to the `}` closing a group already open.
fn matching_brace(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return Some(i),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// HTML elements without an end tag.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];

/// The HTML tags of a software string: where each starts, its length, and
/// for a start tag whose end tag follows (properly nested), where that is.
#[derive(Debug, Default)]
pub(crate) struct HtmlTags {
    /// Offset → (length, offset of the matching end tag).
    tags: std::collections::HashMap<usize, (usize, Option<usize>)>,
    /// Offsets of end tags that close a span.
    closes: std::collections::HashSet<usize>,
}

impl HtmlTags {
    /// Finds the tags of `text` ([`tolk_lang::tag`]): `<name …>`,
    /// `</name>`, `<name …/>`, comments (`<{0}>` and `a < b` are text).
    pub(crate) fn scan(text: &str) -> Self {
        use tolk_lang::tag::{Kind, tag};
        let mut found = Self::default();
        let mut open: Vec<(String, usize)> = Vec::new();
        let mut i = 0;
        while let Some(at) = text[i..].find('<') {
            let start = i + at;
            let Some(tag) = tag(&text[start..]) else {
                i = start + 1;
                continue;
            };
            let (len, name) = (tag.len, tag.name);
            match tag.kind {
                Kind::Start if !VOID.contains(&name.to_ascii_lowercase().as_str()) => {
                    open.push((name.to_owned(), start));
                }
                Kind::End => {
                    if let Some(pos) = open.iter().rposition(|(n, _)| n == name) {
                        let (_, opened) = open.remove(pos);
                        // Elements opened inside and left open stay placeholders.
                        open.truncate(pos);
                        if let Some(entry) = found.tags.get_mut(&opened) {
                            entry.1 = Some(start);
                        }
                        found.closes.insert(start);
                    }
                }
                _ => {}
            }
            found.tags.entry(start).or_insert((len, None));
            i = start + len;
        }
        found
    }

    /// The length of the tag starting at `offset`, if one does.
    pub(crate) fn at(&self, offset: usize) -> Option<usize> {
        self.tags.get(&offset).map(|(len, _)| *len)
    }

    /// Adds the tag at `offset` (its markup `markup`) to a segment: a span's
    /// start (with its end tag's markup), a span's end, or a placeholder.
    pub(crate) fn push(
        &self,
        offset: usize,
        markup: &str,
        builder: &mut SegmentBuilder,
        tags: &mut Tags,
    ) {
        match self.tags.get(&offset) {
            Some((_, Some(_))) => {
                builder.open();
                // The end tag's markup is filled in when it is reached.
                tags.push((markup.to_owned(), Some(String::new())));
            }
            _ if self.closes.contains(&offset) => {
                builder.close();
                // The innermost span still waiting for its end tag.
                if let Some(slot) = tags
                    .iter_mut()
                    .rev()
                    .find(|(_, close)| close.as_deref() == Some(""))
                {
                    slot.1 = Some(markup.to_owned());
                }
            }
            _ => {
                builder.placeholder();
                tags.push((markup.to_owned(), None));
            }
        }
    }
}

/// The first code point standing for one of a segment's own tags in
/// [`with_messages`] (Supplementary Private Use Area-A).
const TAG_MARK: u32 = 0xF0000;

/// A segment built from markup (XLIFF) whose text holds an ICU plural or
/// select message (Angular's `{VAR_PLURAL, plural, =0 {…} other {…}}`),
/// with the message's skeleton as tags as in software strings ([`message`]):
/// keywords, variable and selectors kept, each branch translated. The
/// segment's own tags stay where they stand (a span's two ends become
/// placeholders); the new tags' markup is XML-escaped, as a segment's tags
/// are written as markup. `None` when the text holds no such message.
pub(crate) fn with_messages(segment: &str, tags: &Tags) -> Option<(String, Tags)> {
    use crate::inline::Piece;
    let mut flat = String::with_capacity(segment.len());
    let mut marks: Vec<String> = Vec::new();
    for piece in crate::inline::parse(segment) {
        let tag = |id: u32| tags.get((id as usize).checked_sub(1)?);
        let markup = match piece {
            Piece::Text(text) => {
                if text.chars().any(|c| c as u32 >= TAG_MARK) {
                    return None;
                }
                flat.push_str(&text);
                continue;
            }
            Piece::Open(id) | Piece::Placeholder(id) => tag(id)?.0.clone(),
            Piece::Close(id) => tag(id)?.1.clone()?,
        };
        flat.push(char::from_u32(TAG_MARK + u32::try_from(marks.len()).ok()?)?);
        marks.push(markup);
    }
    let has_message = flat
        .char_indices()
        .any(|(i, c)| c == '{' && icu_message(&flat[i..]).is_some());
    if !has_message {
        return None;
    }
    let mark = |c: char| {
        let index = (c as u32).checked_sub(TAG_MARK)? as usize;
        marks.get(index)
    };
    let mut builder = SegmentBuilder::new();
    let mut found = Vec::new();
    message(&flat, &mut builder, &mut found, false, &|rest, plural| {
        let c = rest.chars().next()?;
        if mark(c).is_some() {
            Some(c.len_utf8())
        } else {
            (plural && c == '#').then_some(1)
        }
    });
    let tags = found
        .into_iter()
        .map(|(open, close)| {
            let mut chars = open.chars();
            match (chars.next().and_then(mark), chars.next()) {
                (Some(markup), None) => (markup.clone(), None),
                _ => (
                    crate::inline::escape(&open),
                    close.map(|c| crate::inline::escape(&c)),
                ),
            }
        })
        .collect();
    Some((builder.finish(), tags))
}

/// A translation's text with its tags' markup back: spans around the words
/// they hold, placeholders where they stand (each once; the placeholders it
/// lost at the end, so none goes missing).
pub(crate) fn restore(translation: &str, tags: &Tags) -> String {
    let mut out = String::with_capacity(translation.len());
    crate::inline::write_tags(&mut out, translation, tags, |out, text| out.push_str(text));
    out
}

#[cfg(test)]
mod tests {
    use super::Accelerator;

    fn marked(text: &str, translation: &str) -> String {
        let (stripped, key) = Accelerator::find(text).unwrap();
        assert!(!stripped.contains('&'), "{stripped}");
        key.place(translation)
    }

    /// An access key is taken out for the engine and put back: in the word
    /// the translation kept, else on the same letter, else the first.
    #[test]
    fn access_keys_come_back_in_the_translation() {
        assert_eq!(marked("E&xit", "Salir"), "&Salir");
        assert_eq!(marked("&Save", "Guardar"), "&Guardar");
        assert_eq!(marked("&Open file", "Abrir archivo"), "Abrir archiv&o");
        assert_eq!(marked("Save &all", "Guardar todo"), "Gu&ardar todo");
        assert_eq!(
            marked("Tolk &Cloud settings", "Ajustes de Tolk Cloud"),
            "Ajustes de Tolk &Cloud"
        );
        assert_eq!(marked("&Help", "?"), "?");
        for text in [
            "Tom && Jerry",
            "a&nbsp;b",
            "A & B",
            "R&D & more",
            "&#169; 2026",
        ] {
            assert!(Accelerator::find(text).is_none(), "{text}");
        }
    }

    /// Angular's XLIFF plural: the skeleton and the unit's own placeholder
    /// are tags, each branch's words text; markup written back escaped.
    #[test]
    fn icu_messages_in_markup_segments_keep_their_skeleton() {
        let segment =
            r#"{VAR_PLURAL, plural, =0 {just now} other {<x id="1"/> minutes &amp; more} }"#;
        let tags = vec![(
            r#"<x id="INTERPOLATION" equiv-text="{{minutes}}"/>"#.to_owned(),
            None,
        )];
        let (segment, tags) = super::with_messages(segment, &tags).unwrap();
        assert_eq!(
            segment,
            r#"<x id="1"/><x id="2"/>just now<x id="3"/><x id="4"/><x id="5"/> minutes &amp; more<x id="6"/><x id="7"/>"#
        );
        assert_eq!(
            super::restore(&segment, &tags),
            r#"{VAR_PLURAL, plural, =0 {just now} other {<x id="INTERPOLATION" equiv-text="{{minutes}}"/> minutes & more} }"#
        );
        let translated = r#"<x id="1"/><x id="2"/>ahora mismo<x id="3"/><x id="4"/><x id="5"/> minutos y más<x id="6"/><x id="7"/>"#;
        assert_eq!(
            super::restore(translated, &tags),
            r#"{VAR_PLURAL, plural, =0 {ahora mismo} other {<x id="INTERPOLATION" equiv-text="{{minutes}}"/> minutos y más} }"#
        );
        assert!(super::with_messages("No message {here}", &Vec::new()).is_none());
    }

    /// Markup characters are escaped once in the segment and come back as
    /// themselves (a value `Save & close` is not written `Save &amp; close`).
    #[test]
    fn markup_characters_round_trip_once() {
        let (segment, tags) = super::segment("Save & close <{0}>", super::at_start);
        assert_eq!(segment, r#"Save &amp; close &lt;<x id="1"/>&gt;"#);
        assert_eq!(super::restore(&segment, &tags), "Save & close <{0}>");
    }

    /// HTML in a software string: elements with their end tag are spans
    /// around their words, other tags placeholders, `<` alone text; the
    /// markup comes back byte for byte around the translated words.
    #[test]
    fn markup_in_values_becomes_spans_and_placeholders() {
        let text = r#"Copy to <em>{{ location }}</em> & <a href="/x?a=1&b=2">see <b>more</b></a><br/> if a < b <i>open"#;
        let (segment, tags) = super::segment(text, super::at_start);
        assert_eq!(
            segment,
            r#"Copy to <g id="1"><x id="2"/></g> &amp; <g id="3">see <g id="4">more</g></g><x id="5"/> if a &lt; b <x id="6"/>open"#
        );
        assert_eq!(super::restore(&segment, &tags), text);
        let translated = r#"Copiar a <g id="1"><x id="2"/></g> y <g id="3">ver <g id="4">más</g></g><x id="5"/> si a &lt; b <x id="6"/>abierto"#;
        assert_eq!(
            super::restore(translated, &tags),
            r#"Copiar a <em>{{ location }}</em> y <a href="/x?a=1&b=2">ver <b>más</b></a><br/> si a < b <i>abierto"#
        );
        // Crossing elements: the outer pair is a span, the rest placeholders.
        let (segment, _) = super::segment("<b>x <i>y</b> z</i>", super::at_start);
        assert_eq!(segment, r#"<g id="1">x <x id="2"/>y</g> z<x id="3"/>"#);
    }

    /// ICU messages in any software string (YAML, properties…): skeleton as
    /// tags, `#` a tag inside plural branches only, branch text translated.
    #[test]
    fn icu_messages_keep_their_skeleton() {
        let text = "{count, plural, one {# house} other {# houses}} #1";
        let (segment, tags) = super::segment(text, super::at_start);
        assert_eq!(
            segment,
            r#"<x id="1"/><x id="2"/><x id="3"/> house<x id="4"/><x id="5"/><x id="6"/> houses<x id="7"/><x id="8"/> #1"#
        );
        let translated = segment
            .replace(" houses", " casas")
            .replace(" house", " casa");
        assert_eq!(
            super::restore(&translated, &tags),
            "{count, plural, one {# casa} other {# casas}} #1"
        );
    }

    #[test]
    fn placeholders_are_recognised_at_the_start() {
        for (text, len) in [
            ("{0} files", 3),
            ("{0:N2} total", 6),
            ("{1,-8}|", 6),
            ("{2,5:0.0}", 9),
            ("{name}!", 6),
            ("{user.name}", 11),
            ("{{ user.name }} x", 15),
            ("${site}.", 7),
            ("%s", 2),
            ("%1$d items", 4),
            ("%.2f", 4),
            ("%@", 2),
            ("%(count)d files", 9),
            ("%(name)s!", 8),
            ("%ld", 3),
            ("%e %B %Y", 2),
            ("%B %Y", 2),
            ("%-d.", 3),
            ("%H:%M", 2),
            ("{0,number,integer} items", 18),
            ("{2,time,short}", 14),
            ("{0,choice,0#no files|1#one file|1<{0} files}.", 44),
            ("{% raw %}x", 9),
            ("$t(common.ok)", 13),
            ("{} and", 2),
        ] {
            assert_eq!(super::at_start(text), Some(len), "{text}");
        }
        for text in [
            "{two words}",
            "{ }",
            "% of",
            "name {x}",
            "%",
            "%%",
            "%(two words)s",
        ] {
            assert_eq!(super::at_start(text), None, "{text}");
        }
    }
}
