//! Recognising one markup tag at the start of a text: what the engine's
//! tag handling and the document filters' inline markup share. Lenient as
//! HTML is: an element name starts with a letter, `_` or `:`; a `>` inside a
//! quoted attribute value does not end the tag; a `<` outside quotes means
//! the text is not a tag.

/// What a tag is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `<b>`, `<a href="…">`.
    Start,
    /// `</b>`.
    End,
    /// `<br/>`, `<img src="…" />`.
    Empty,
    /// A comment, CDATA section, processing instruction or declaration
    /// (`<!-- … -->`, `<![CDATA[…]]>`, `<?…?>`, `<!DOCTYPE …>`).
    Other,
}

/// A tag at the start of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tag<'a> {
    /// What it is.
    pub kind: Kind,
    /// The element's name (empty for [`Kind::Other`]).
    pub name: &'a str,
    /// Its length in bytes, `<` to `>` included.
    pub len: usize,
}

/// The tag at the start of `s`, if `s` starts with one.
pub fn tag(s: &str) -> Option<Tag<'_>> {
    let delimited = |start: &str, end: &str| {
        let body = s.strip_prefix(start)?;
        body.find(end).map(|p| Tag {
            kind: Kind::Other,
            name: "",
            len: start.len() + p + end.len(),
        })
    };
    let rest = s.strip_prefix('<')?;
    if rest.starts_with("!--") {
        return delimited("<!--", "-->");
    }
    if rest.starts_with("![CDATA[") {
        return delimited("<![CDATA[", "]]>");
    }
    if rest.starts_with('?') {
        return delimited("<?", "?>");
    }
    if rest.starts_with('!') {
        return delimited("<!", ">");
    }
    let (closing, body) = match rest.strip_prefix('/') {
        Some(b) => (true, b),
        None => (false, rest),
    };
    let first = body.chars().next()?;
    if !(first.is_alphabetic() || first == '_' || first == ':') {
        return None;
    }
    let name_len = body
        .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | ':' | '-' | '.')))
        .unwrap_or(body.len());
    let mut quote: Option<char> = None;
    let mut end = None;
    for (i, c) in body[name_len..].char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '<') => return None,
            (None, '>') => {
                end = Some(name_len + i);
                break;
            }
            (None, _) => {}
        }
    }
    let end = end?;
    let name = &body[..name_len];
    let attrs = &body[name_len..end];
    let len = s.len() - body.len() + end + 1;
    let kind = if closing {
        if !attrs.trim().is_empty() {
            return None;
        }
        Kind::End
    } else if attrs.trim_end().ends_with('/') {
        Kind::Empty
    } else if !attrs.is_empty() && !attrs.starts_with(char::is_whitespace) {
        return None;
    } else {
        Kind::Start
    };
    Some(Tag { kind, name, len })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(s: &str) -> Option<(Kind, &str, usize)> {
        tag(s).map(|t| (t.kind, t.name, t.len))
    }

    #[test]
    fn elements() {
        assert_eq!(read("<b>x"), Some((Kind::Start, "b", 3)));
        assert_eq!(read("</b> x"), Some((Kind::End, "b", 4)));
        assert_eq!(read("<br/>"), Some((Kind::Empty, "br", 5)));
        assert_eq!(read("<img src='a.png' />"), Some((Kind::Empty, "img", 19)));
        assert_eq!(
            read(r#"<a href="x>y" title='z'>link"#),
            Some((Kind::Start, "a", 24))
        );
        assert_eq!(read("<x:g id=\"1\">"), Some((Kind::Start, "x:g", 12)));
        assert_eq!(read("<ph.x>"), Some((Kind::Start, "ph.x", 6)));
    }

    #[test]
    fn other_markup() {
        assert_eq!(read("<!-- a > b -->c"), Some((Kind::Other, "", 14)));
        assert_eq!(read("<![CDATA[<b>]]>"), Some((Kind::Other, "", 15)));
        assert_eq!(read("<?pi x?>"), Some((Kind::Other, "", 8)));
        assert_eq!(read("<!DOCTYPE html>"), Some((Kind::Other, "", 15)));
    }

    #[test]
    fn text_that_is_not_a_tag() {
        for s in [
            "< b>",
            "<3",
            "a<b",
            "<b",
            "<a <b>",
            "</b x>",
            "<b\"x\">",
            "<b/x>",
            "<!-- open",
            "<>",
            "",
        ] {
            assert_eq!(read(s), None, "{s:?}");
        }
    }
}
