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
pub const PATTERN: &str = r"\{\{\s*[A-Za-z_][\w.]*\s*\}\}|\$\{[A-Za-z_][\w.]*\}|\{\d+(?:,\s*-?\d+)?(?::[^{}]+)?\}|\{[A-Za-z_][\w.]*\}|%(?:\d+\$|\([A-Za-z_]\w*\))?[\-+#0]?\d*(?:\.\d+)?(?:l{1,2}|h{1,2}|z|j|L)?[sdifuxXoceEgGr@]|%[\-_0^#]?[aAbBCDFhHIjklmMpPRSTuUVwWyYzZ]";

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
    pub tags: Vec<String>,
}

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
        if reads_as_text(text) {
            let (segment, tags) = segment(text, at);
            self.add(range, segment, tags);
        }
    }

    /// Adds a value already made a segment with `tags`.
    pub fn add(&mut self, range: std::ops::Range<usize>, segment: String, tags: Vec<String>) {
        self.values.push(Value {
            range,
            segment: self.segments.len(),
            tags,
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
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut at = 0;
    for (index, value) in values.iter().enumerate() {
        out.push_str(&text[at..value.range.start]);
        let original = source.get(value.segment).map_or("", String::as_str);
        let translation = translated.get(value.segment).map_or("", String::as_str);
        if translation == original {
            out.push_str(&text[value.range.clone()]);
        } else {
            write(&mut out, &restore(translation, &value.tags), index);
        }
        at = value.range.end;
    }
    out.push_str(&text[at..]);
    out
}

/// A software string as a segment: its placeholders (`at`) as `<x/>` tags,
/// the rest escaped text; the placeholders' markup in tag order.
pub(crate) fn segment(text: &str, at: impl Fn(&str) -> Option<usize>) -> (String, Vec<String>) {
    let mut builder = crate::inline::SegmentBuilder::new();
    let mut tags = Vec::new();
    let mut rest = text;
    let mut pending = String::new();
    while let Some(c) = rest.chars().next() {
        if let Some(len) = at(rest) {
            if !pending.is_empty() {
                builder.text(&pending);
                pending.clear();
            }
            builder.placeholder();
            tags.push(rest[..len].to_owned());
            rest = &rest[len..];
            continue;
        }
        pending.push(c);
        rest = &rest[c.len_utf8()..];
    }
    if !pending.is_empty() {
        builder.text(&pending);
    }
    (builder.finish(), tags)
}

/// A translation's text with its placeholders' markup back (each once; the
/// ones it lost at the end, so none goes missing).
pub(crate) fn restore(translation: &str, tags: &[String]) -> String {
    use crate::inline::Piece;
    let mut out = String::new();
    let mut used = vec![false; tags.len()];
    for piece in crate::inline::parse(translation) {
        match piece {
            Piece::Text(t) => out.push_str(&t),
            Piece::Placeholder(id) => {
                let index = (id as usize).wrapping_sub(1);
                if let Some(markup) = tags.get(index)
                    && !used[index]
                {
                    used[index] = true;
                    out.push_str(markup);
                }
            }
            Piece::Open(_) | Piece::Close(_) => {}
        }
    }
    for (markup, used) in tags.iter().zip(used) {
        if !used {
            out.push_str(markup);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// Markup characters are escaped once in the segment and come back as
    /// themselves (a value `Save & close` is not written `Save &amp; close`).
    #[test]
    fn markup_characters_round_trip_once() {
        let (segment, tags) = super::segment("Save & close <{0}>", super::at_start);
        assert_eq!(segment, r#"Save &amp; close &lt;<x id="1"/>&gt;"#);
        assert_eq!(super::restore(&segment, &tags), "Save & close <{0}>");
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
