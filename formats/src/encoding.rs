//! Character encodings of text formats (txt, html): bytes are decoded to
//! text for the filters and the translated text is encoded back the same way,
//! so a Latin-1 page stays a Latin-1 page.
//!
//! The encoding is, in order: a byte-order mark (UTF-8, UTF-16LE, UTF-16BE);
//! the one the document declares (an HTML `meta` charset); UTF-8 when the
//! bytes are valid UTF-8; else windows-1252, the superset of ISO-8859-1 that
//! browsers use for it.

use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252};

/// UTF-8's byte-order mark.
pub(crate) const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// Text decoded from a document's bytes.
#[derive(Debug)]
pub(crate) struct Decoded {
    /// The text, without a byte-order mark.
    pub text: String,
    /// How to write text back like the input.
    pub form: Form,
}

/// How a document's bytes were encoded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Form {
    /// The encoding.
    pub encoding: &'static Encoding,
    /// Whether the bytes started with a byte-order mark.
    pub bom: bool,
}

/// Decodes `input` (see the module documentation).
pub(crate) fn decode(input: &[u8], declared: Option<&'static Encoding>) -> Decoded {
    if let Some((encoding, bom_len)) = Encoding::for_bom(input) {
        let (text, _) = encoding.decode_without_bom_handling(&input[bom_len..]);
        return Decoded {
            text: text.into_owned(),
            form: Form {
                encoding,
                bom: true,
            },
        };
    }
    let encoding = match declared {
        // A page cannot declare UTF-16 in ASCII; its bytes would say so.
        Some(e) if e != UTF_16LE && e != UTF_16BE => e,
        _ if std::str::from_utf8(input).is_ok() => UTF_8,
        _ => WINDOWS_1252,
    };
    let (text, _) = encoding.decode_without_bom_handling(input);
    Decoded {
        text: text.into_owned(),
        form: Form {
            encoding,
            bom: false,
        },
    }
}

impl Form {
    /// `text` encoded like the input, the byte-order mark too. Characters the
    /// encoding lacks become numeric character references when `markup`
    /// (valid in HTML); in plain text the whole output is UTF-8 then, with a
    /// byte-order mark, rather than lose them.
    pub(crate) fn encode(&self, text: &str, markup: bool) -> Vec<u8> {
        let utf8 = |bom: bool| {
            let mut out = Vec::with_capacity(text.len() + 3);
            if bom {
                out.extend_from_slice(UTF8_BOM);
            }
            out.extend_from_slice(text.as_bytes());
            out
        };
        if self.encoding == UTF_8 {
            return utf8(self.bom);
        }
        if self.encoding == UTF_16LE || self.encoding == UTF_16BE {
            let le = self.encoding == UTF_16LE;
            let mut out = Vec::with_capacity(text.len() * 2 + 2);
            for unit in std::iter::once(0xFEFF).chain(text.encode_utf16()) {
                out.extend_from_slice(&if le {
                    unit.to_le_bytes()
                } else {
                    unit.to_be_bytes()
                });
            }
            return out;
        }
        let (bytes, _, unmappable) = self.encoding.encode(text);
        if unmappable && !markup {
            return utf8(true);
        }
        bytes.into_owned()
    }
}

/// The charset an HTML document declares in a `meta` element within its
/// first 1,024 bytes, as the HTML standard's prescan looks for it.
pub(crate) fn html_declared(input: &[u8]) -> Option<&'static Encoding> {
    let head = &input[..input.len().min(1024)];
    let lower: Vec<u8> = head.iter().map(u8::to_ascii_lowercase).collect();
    let mut from = 0;
    while let Some(at) = find(&lower[from..], b"<meta") {
        let start = from + at;
        let end = find(&lower[start..], b">").map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        if let Some(c) = find(tag, b"charset=") {
            let value = &tag[c + b"charset=".len()..];
            let value: Vec<u8> = value
                .iter()
                .copied()
                .skip_while(|b| *b == b'"' || *b == b'\'' || b.is_ascii_whitespace())
                .take_while(|b| {
                    !matches!(b, b'"' | b'\'' | b';' | b'/' | b'>') && !b.is_ascii_whitespace()
                })
                .collect();
            if let Some(e) = Encoding::for_label(&value) {
                return Some(e);
            }
        }
        from = end;
    }
    None
}

/// The legacy encoding an XML document declares (`<?xml version="1.0"
/// encoding="windows-1252"?>`), so that it is read and written back in it;
/// `None` for UTF-8 and UTF-16, which the bytes themselves tell.
pub(crate) fn xml_declared(input: &[u8]) -> Option<&'static Encoding> {
    let head = &input[..input.len().min(256)];
    let head = head.strip_prefix(UTF8_BOM).unwrap_or(head);
    if !head.starts_with(b"<?xml") {
        return None;
    }
    let decl = &head[..find(head, b"?>")?];
    let at = find(decl, b"encoding")?;
    let rest = decl[at + b"encoding".len()..].trim_ascii_start();
    let rest = rest.strip_prefix(b"=")?.trim_ascii_start();
    let (&quote, rest) = rest.split_first()?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    let value = &rest[..rest.iter().position(|&b| b == quote)?];
    Encoding::for_label(value).filter(|e| *e != UTF_8 && *e != UTF_16LE && *e != UTF_16BE)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_declarations_name_legacy_encodings() {
        let decl = |s: &str| xml_declared(s.as_bytes()).map(Encoding::name);
        assert_eq!(
            decl(r#"<?xml version="1.0" encoding="windows-1252"?><a/>"#),
            Some("windows-1252")
        );
        assert_eq!(
            decl("<?xml version='1.0' encoding = 'ISO-8859-1' ?><a/>"),
            Some("windows-1252")
        );
        assert_eq!(decl(r#"<?xml version="1.0" encoding="UTF-8"?><a/>"#), None);
        assert_eq!(decl(r#"<?xml version="1.0"?><a encoding="latin1"/>"#), None);
        assert_eq!(decl("<a/>"), None);
        // Read as declared even when the bytes are ASCII, written back so.
        let d = decode(
            br#"<?xml version="1.0" encoding="windows-1252"?><a>Paragraph</a>"#,
            xml_declared(br#"<?xml version="1.0" encoding="windows-1252"?>"#),
        );
        assert_eq!(
            d.form.encode("<a>P\u{e1}rrafo \u{65e5}</a>", true),
            b"<a>P\xe1rrafo &#26085;</a>"
        );
    }

    #[test]
    fn latin1_text_is_read_and_written_back_as_latin1() {
        let d = decode(b"caf\xe9 cr\xe8me\n", None);
        assert_eq!(d.text, "café crème\n");
        assert_eq!(d.form.encode("thé brûlé\n", false), b"th\xe9 br\xfbl\xe9\n");
        assert_eq!(d.form.encode("日本\n", false), "\u{feff}日本\n".as_bytes());
        assert_eq!(d.form.encode("日", true), b"&#26085;");
    }

    #[test]
    fn a_bom_decides_and_is_kept() {
        let le = [0xFF, 0xFE, b'h', 0, b'i', 0];
        let d = decode(&le, None);
        assert_eq!((d.text.as_str(), d.form.encoding), ("hi", UTF_16LE));
        assert_eq!(d.form.encode("hi", false), le);
        let d = decode(b"\xef\xbb\xbfhi", None);
        assert_eq!((d.text.as_str(), d.form.bom), ("hi", true));
        assert_eq!(d.form.encode("ho", false), b"\xef\xbb\xbfho");
    }

    #[test]
    fn html_declares_its_charset_in_meta() {
        assert_eq!(
            html_declared(b"<html><head><meta charset=\"ISO-8859-1\"></head>"),
            Some(WINDOWS_1252)
        );
        assert_eq!(
            html_declared(
                b"<META HTTP-EQUIV=\"Content-Type\" CONTENT=\"text/html; charset=iso-8859-15\">"
            ),
            Encoding::for_label(b"iso-8859-15")
        );
        assert_eq!(html_declared(b"<p>no meta</p>"), None);
    }
}
