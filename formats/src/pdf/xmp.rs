//! The document's XMP metadata (the catalog's `Metadata` stream) kept in
//! step with its translated information dictionary: the text of every
//! `rdf:li` of `dc:title` set to the translated Title, of `dc:description`
//! to the translated Subject, the rest of the packet byte for byte. Readers
//! that prefer XMP (Acrobat, most document managers) then show the
//! translation too.

use lopdf::{Document as Pdf, Object};

use crate::xml::{self, Elem, local, prefix};

/// Sets the XMP title and description, where the packet has them.
pub(super) fn update(pdf: &mut Pdf, title: Option<&str>, description: Option<&str>) {
    if title.is_none() && description.is_none() {
        return;
    }
    let Some(id) = pdf
        .catalog()
        .ok()
        .and_then(|c| c.get(b"Metadata").ok())
        .and_then(|m| m.as_reference().ok())
    else {
        return;
    };
    let Some(packet) = pdf
        .get_object(id)
        .ok()
        .and_then(|o| o.as_stream().ok())
        .and_then(|s| match s.dict.has(b"Filter") {
            true => s.decompressed_content().ok(),
            false => Some(s.content.clone()),
        })
        .and_then(|bytes| String::from_utf8(bytes).ok())
    else {
        return;
    };
    let Some(changed) = rewrite(&packet, title, description) else {
        return;
    };
    if let Ok(Object::Stream(stream)) = pdf.get_object_mut(id) {
        stream.set_plain_content(changed.into_bytes());
    }
}

/// The packet with the texts set; `None` when it cannot be read or has
/// neither property.
fn rewrite(packet: &str, title: Option<&str>, description: Option<&str>) -> Option<String> {
    let tree = xml::parse(packet).ok()?;
    let mut edits: Vec<(std::ops::Range<usize>, &str)> = Vec::new();
    let root = xml::root(&tree)?;
    collect(root, title, description, &mut edits);
    if edits.is_empty() {
        return None;
    }
    edits.sort_by_key(|(range, _)| range.start);
    let mut out = String::with_capacity(packet.len());
    let mut at = 0;
    for (range, text) in edits {
        out.push_str(&packet[at..range.start]);
        xml::escape_attribute_into(&mut out, text, '"');
        at = range.end;
    }
    out.push_str(&packet[at..]);
    Some(out)
}

/// The contents of the `rdf:li` items of `dc:title` and `dc:description`
/// below `elem`, with what each becomes.
fn collect<'t>(
    elem: &Elem<'_>,
    title: Option<&'t str>,
    description: Option<&'t str>,
    edits: &mut Vec<(std::ops::Range<usize>, &'t str)>,
) {
    for child in elem.elems() {
        let text = match (prefix(child.name), local(child.name)) {
            ("dc", "title") => title,
            ("dc", "description") => description,
            _ => {
                collect(child, title, description, edits);
                continue;
            }
        };
        let Some(text) = text else {
            continue;
        };
        for alternative in child.elems() {
            for item in alternative.elems().filter(|e| local(e.name) == "li") {
                if let Some(end) = &item.end {
                    edits.push((item.start.end..end.start, text));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_and_description_items_take_the_translation() {
        let packet = r#"<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:format>application/pdf</dc:format><dc:title><rdf:Alt><rdf:li xml:lang="x-default">The report</rdf:li></rdf:Alt></dc:title><dc:description><rdf:Alt><rdf:li xml:lang="x-default">The house</rdf:li></rdf:Alt></dc:description></rdf:Description></rdf:RDF></x:xmpmeta>
<?xpacket end="w"?>"#;
        let out = rewrite(packet, Some("El informe & más"), Some("La casa")).unwrap();
        assert!(
            out.contains(
                r#"<rdf:li xml:lang="x-default">El informe &amp; más</rdf:li></rdf:Alt></dc:title>"#
            ),
            "{out}"
        );
        assert!(
            out.contains(
                r#"<rdf:li xml:lang="x-default">La casa</rdf:li></rdf:Alt></dc:description>"#
            ),
            "{out}"
        );
        assert!(
            out.ends_with("<?xpacket end=\"w\"?>")
                && out.contains("<dc:format>application/pdf</dc:format>")
        );
        assert_eq!(rewrite(packet, None, None), None);
    }
}
