//! A small HTML tokenizer that keeps byte positions.
//!
//! It only distinguishes what the filter needs: text, start and end tags (with
//! attribute positions), raw-text element content (`script`, `style`,
//! `title`…) and everything else (comments, doctype, CDATA, processing
//! instructions). It never fails: a `<` that does not start markup is text,
//! markup cut by the end of input runs to the end. Every byte of the input
//! belongs to exactly one token, in order.

use std::ops::Range;

/// One token, with its byte range in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    /// Character data (entities not decoded).
    Text(Range<usize>),
    /// The content of a raw-text or RCDATA element (`script`, `title`…).
    RawText(Range<usize>),
    /// A start tag.
    Start(StartTag),
    /// An end tag; `name` is lowercase.
    End { name: String, range: Range<usize> },
    /// A comment, doctype, CDATA section, processing instruction or cut markup.
    Other(Range<usize>),
}

impl Token {
    /// The byte range of the token.
    pub(crate) fn range(&self) -> Range<usize> {
        match self {
            Token::Text(r) | Token::RawText(r) | Token::Other(r) => r.clone(),
            Token::Start(tag) => tag.range.clone(),
            Token::End { range, .. } => range.clone(),
        }
    }
}

/// A start tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StartTag {
    /// Lowercase tag name.
    pub name: String,
    /// From `<` to `>` inclusive.
    pub range: Range<usize>,
    /// Attributes in source order.
    pub attrs: Vec<Attr>,
    /// Ends with `/>`.
    pub self_closing: bool,
}

impl StartTag {
    /// The attribute with this (lowercase) name.
    pub(crate) fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|a| a.name == name)
    }
}

/// An attribute of a start tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attr {
    /// Lowercase name.
    pub name: String,
    /// The value, if there is a `=`.
    pub value: Option<AttrValue>,
}

/// Where an attribute value is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AttrValue {
    /// The value including its quotes, if any.
    pub range: Range<usize>,
    /// The value without quotes (entities not decoded).
    pub inner: Range<usize>,
}

/// Elements whose content is not markup.
const RAW_TEXT: &[&str] = &[
    "script", "style", "xmp", "iframe", "noembed", "noframes", "noscript", "title", "textarea",
];

/// Splits `src[from..]` into tokens (`from` must be a char boundary, e.g. after a BOM).
pub(crate) fn tokenize(src: &str, from: usize) -> Vec<Token> {
    let mut tokens = Vec::new();
    each(src, from, |token| tokens.push(token));
    tokens
}

/// [`tokenize`] one token at a time, holding none of them.
pub(crate) fn each(src: &str, from: usize, mut push: impl FnMut(Token)) {
    let bytes = src.as_bytes();
    let tokens = &mut push;
    let mut pos = from.min(bytes.len());
    let mut text_start = pos;
    while let Some(offset) = bytes[pos..].iter().position(|&b| b == b'<') {
        let lt = pos + offset;
        let Some((token, end)) = markup_at(src, lt) else {
            pos = lt + 1;
            continue;
        };
        if text_start < lt {
            tokens(Token::Text(text_start..lt));
        }
        let raw_text_of = match &token {
            Token::Start(tag) if tag.name == "plaintext" => Some(None),
            Token::Start(tag) if RAW_TEXT.contains(&tag.name.as_str()) => {
                Some(Some(tag.name.clone()))
            }
            _ => None,
        };
        tokens(token);
        pos = end;
        if let Some(name) = raw_text_of {
            let content_end = match name {
                Some(name) => find_end_tag(bytes, pos, &name).unwrap_or(bytes.len()),
                None => bytes.len(),
            };
            if content_end > pos {
                tokens(Token::RawText(pos..content_end));
            }
            pos = content_end;
        }
        text_start = pos;
        if pos >= bytes.len() {
            break;
        }
    }
    if text_start < bytes.len() {
        tokens(Token::Text(text_start..bytes.len()));
    }
}

/// The position of `</name` (case-insensitive, followed by a delimiter) at or after `from`.
fn find_end_tag(bytes: &[u8], from: usize, name: &str) -> Option<usize> {
    let name = name.as_bytes();
    let mut pos = from;
    while let Some(offset) = bytes.get(pos..)?.windows(2).position(|w| w == b"</") {
        let start = pos + offset;
        let name_start = start + 2;
        let matches = bytes
            .get(name_start..name_start + name.len())
            .is_some_and(|n| n.eq_ignore_ascii_case(name));
        let delimited = matches!(
            bytes.get(name_start + name.len()),
            None | Some(b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
        );
        if matches && delimited {
            return Some(start);
        }
        pos = start + 2;
    }
    None
}

/// The markup token starting at `lt` (a `<`) and its end, or `None` if this `<` is text.
fn markup_at(src: &str, lt: usize) -> Option<(Token, usize)> {
    let bytes = src.as_bytes();
    let rest = &bytes[lt..];
    let until = |from: usize, pattern: &[u8]| -> usize {
        bytes
            .get(from..)
            .and_then(|tail| tail.windows(pattern.len()).position(|w| w == pattern))
            .map_or(bytes.len(), |i| from + i + pattern.len())
    };
    if rest.starts_with(b"<!--") {
        let end = until(lt + 4, b"-->");
        return Some((Token::Other(lt..end), end));
    }
    if rest.starts_with(b"<![CDATA[") {
        let end = until(lt + 9, b"]]>");
        return Some((Token::Other(lt..end), end));
    }
    if rest.starts_with(b"<!") || rest.starts_with(b"<?") {
        let end = until(lt + 2, b">");
        return Some((Token::Other(lt..end), end));
    }
    if rest.starts_with(b"</") {
        if !rest.get(2).is_some_and(u8::is_ascii_alphabetic) {
            return None;
        }
        let name_end = scan(bytes, lt + 2, |b| !is_space(b) && b != b'/' && b != b'>');
        let end = until(name_end, b">");
        let name = src[lt + 2..name_end].to_ascii_lowercase();
        return Some((
            Token::End {
                name,
                range: lt..end,
            },
            end,
        ));
    }
    if !rest.get(1).is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    let name_end = scan(bytes, lt + 1, |b| !is_space(b) && b != b'/' && b != b'>');
    let name = src[lt + 1..name_end].to_ascii_lowercase();
    let mut attrs = Vec::new();
    let mut pos = name_end;
    loop {
        pos = scan(bytes, pos, is_space);
        match bytes.get(pos) {
            None => return Some((Token::Other(lt..bytes.len()), bytes.len())),
            Some(b'>') => {
                let tag = StartTag {
                    name,
                    range: lt..pos + 1,
                    attrs,
                    self_closing: false,
                };
                return Some((Token::Start(tag), pos + 1));
            }
            Some(b'/') => {
                if bytes.get(pos + 1) == Some(&b'>') {
                    let tag = StartTag {
                        name,
                        range: lt..pos + 2,
                        attrs,
                        self_closing: true,
                    };
                    return Some((Token::Start(tag), pos + 2));
                }
                pos += 1;
                continue;
            }
            Some(_) => {}
        }
        let attr_name_start = pos;
        pos = scan(bytes, pos + 1, |b| {
            !is_space(b) && b != b'/' && b != b'>' && b != b'='
        });
        let attr_name = src[attr_name_start..pos].to_ascii_lowercase();
        let after_name = scan(bytes, pos, is_space);
        if bytes.get(after_name) != Some(&b'=') {
            attrs.push(Attr {
                name: attr_name,
                value: None,
            });
            continue;
        }
        let value_start = scan(bytes, after_name + 1, is_space);
        let value = match bytes.get(value_start) {
            None => return Some((Token::Other(lt..bytes.len()), bytes.len())),
            Some(&quote @ (b'"' | b'\'')) => {
                let close = bytes[value_start + 1..].iter().position(|&b| b == quote);
                let Some(close) = close else {
                    return Some((Token::Other(lt..bytes.len()), bytes.len()));
                };
                let inner_end = value_start + 1 + close;
                AttrValue {
                    range: value_start..inner_end + 1,
                    inner: value_start + 1..inner_end,
                }
            }
            Some(_) => {
                let end = scan(bytes, value_start, |b| !is_space(b) && b != b'>');
                AttrValue {
                    range: value_start..end,
                    inner: value_start..end,
                }
            }
        };
        pos = value.range.end;
        attrs.push(Attr {
            name: attr_name,
            value: Some(value),
        });
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// The first position at or after `from` whose byte does not satisfy `keep`.
fn scan(bytes: &[u8], from: usize, keep: impl Fn(u8) -> bool) -> usize {
    let from = from.min(bytes.len());
    bytes[from..]
        .iter()
        .position(|&b| !keep(b))
        .map_or(bytes.len(), |i| from + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covers_input(src: &str) {
        let mut pos = 0;
        for token in tokenize(src, 0) {
            let range = token.range();
            assert_eq!(range.start, pos, "gap before {token:?} in {src:?}");
            assert!(range.end > range.start);
            pos = range.end;
        }
        assert_eq!(pos, src.len());
    }

    #[test]
    fn tokens_cover_the_input() {
        for src in [
            "",
            "plain",
            "<p class=a title='x > y' data-x=\"1\" hidden>Hi<br/>there</p>",
            "a < b <3 <!-- c --> <!DOCTYPE html><?pi?><![CDATA[x]]>",
            "<script>if (a<b) { x = '</p>'; }</script><style>p{}</STYLE >",
            "<title>A &amp; B</title><textarea>x</textarea>",
            "<p unterminated=\"abc",
            "<p><!-- cut",
            "</",
            "<",
            "<a href=x",
            "<plaintext><b>x",
            "<ü>é</ü>",
        ] {
            covers_input(src);
        }
    }

    #[test]
    fn start_tag_attributes() {
        let src = "<IMG SRC=a.png alt='A cat' title=\"T\" ismap/>";
        let tokens = tokenize(src, 0);
        let Token::Start(tag) = &tokens[0] else {
            panic!("expected a start tag: {tokens:?}");
        };
        assert_eq!(tag.name, "img");
        assert!(tag.self_closing);
        let names: Vec<_> = tag.attrs.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["src", "alt", "title", "ismap"]);
        let alt = tag.attr("alt").and_then(|a| a.value.clone()).unwrap();
        assert_eq!(&src[alt.inner], "A cat");
        assert_eq!(&src[alt.range], "'A cat'");
        let src_value = tag.attr("src").and_then(|a| a.value.clone()).unwrap();
        assert_eq!(&src[src_value.inner], "a.png");
    }

    #[test]
    fn script_content_is_raw() {
        let src = "<script>a = '<b>';</script>x";
        let tokens = tokenize(src, 0);
        assert_eq!(tokens[1], Token::RawText(8..18));
        assert!(matches!(&tokens[2], Token::End { name, .. } if name == "script"));
        assert_eq!(tokens[3], Token::Text(27..28));
    }
}
