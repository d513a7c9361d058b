//! .NET resource files (`.resx`): the `<value>` of every `<data>` entry
//! that holds text is a segment.
//!
//! Skipped, as resource editors do: entries with a `type` or `mimetype`
//! (typed and binary data: images, sizes, serialized objects), designer
//! metadata (names starting with `>>`), values that look like code or an
//! identifier, and `resheader`, `metadata`, `assembly` and `comment`
//! elements. Composite-format placeholders (`{0}`, `{0:N2}`) and printf ones
//! are tags; an access key (`E&xit`) is taken out for the engine and marked
//! again in the translation (in the same word if kept, else on the same
//! letter, else the first). A translated value replaces the original text between its
//! tags, XML-escaped, so everything else keeps its bytes. A DOCTYPE is
//! refused.

use crate::FormatError;
use crate::encoding::{self, Decoded, Form};
use crate::placeholders::{AccessKeys, Value, Values, splice};
use crate::xml::{self, Elem};

/// The file around its values.
#[derive(Debug)]
pub(crate) struct Skeleton {
    source: String,
    form: Form,
    values: Vec<Value>,
}

pub(crate) fn extract(input: &[u8]) -> Result<(Vec<String>, Skeleton), FormatError> {
    let Decoded { text: source, form } = encoding::decode(input, encoding::xml_declared(input));
    let tree = xml::parse(&source)
        .map_err(|e| FormatError::corrupt(format!("The file is not a valid .resx file: it {e}")))?;
    let root = xml::root(&tree)
        .ok_or_else(|| FormatError::corrupt("The .resx file has no root element"))?;
    if root.name != "root" {
        return Err(FormatError::corrupt(format!(
            "The file is not a .resx file: its root element is <{}>",
            root.name
        )));
    }
    // Windows Forms labels mark their access key with `&` (`E&xit`).
    let mut found = Values {
        access_keys: AccessKeys::Marked,
        ..Values::default()
    };
    for data in root.elems().filter(|e| e.name == "data") {
        if let Some((range, text)) = text_value(&source, data) {
            found.text(range, &text);
        }
    }
    let (segments, values) = found.finish();
    Ok((
        segments,
        Skeleton {
            source,
            form,
            values,
        },
    ))
}

/// The range of a `data` entry's value text and the text, when it is
/// translatable.
fn text_value(src: &str, data: &Elem<'_>) -> Option<(std::ops::Range<usize>, String)> {
    if data.attr(src, "type").is_some() || data.attr(src, "mimetype").is_some() {
        return None;
    }
    if data
        .attr(src, "name")
        .is_some_and(|n| n.starts_with(">>") || n.starts_with("&gt;&gt;"))
    {
        return None;
    }
    let value = data.elems().find(|e| e.name == "value")?;
    let end = value.end.as_ref()?;
    let text = value.text(src);
    // Only plain character data is replaced (no comments or elements inside).
    if value.elems().next().is_some() {
        return None;
    }
    Some((value.start.end..end.start, text))
}

/// Writes text escaped for XML character data.
fn escape(out: &mut String, text: &str) {
    crate::inline::escape_into(out, text);
}

impl crate::filter::Merge for Skeleton {
    fn merge(&self, source: &[String], translated: &[String]) -> Vec<u8> {
        let out = splice(&self.source, &self.values, source, translated, escape);
        self.form.encode(&out, true)
    }
}

#[cfg(test)]
mod tests;
