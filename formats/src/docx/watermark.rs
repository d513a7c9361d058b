//! The machine-translation mark of a Word document: a line in the page
//! header of every page (each header a section shows gets it; a section
//! that shows none is given one) and a custom document property.
//!
//! A section without a header reference of a kind shows the previous
//! section's header of that kind, so a header is made only where no
//! earlier section has one: the first page's (`titlePg`) and even pages'
//! (`evenAndOddHeaders`) headers when the document uses them, and the
//! default one.

use std::collections::{BTreeSet, HashSet};

use super::PACKAGE;
use crate::FormatError;
use crate::package::{Edit, append_child};
use crate::xml::{self, Elem, local, prefix as prefix_of};

const MAIN: &str = "word/document.xml";
const SETTINGS: &str = "word/settings.xml";
const HEADER_REL: &str =
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships/header";
const HEADER_TYPE: &str =
    "application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml";
const WORD_NS: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
const RELS_NS: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

/// The document with `mark` in the header of every page and as the custom
/// property `property`.
pub(crate) fn mark(input: &[u8], mark: &str, property: &str) -> Result<Vec<u8>, FormatError> {
    let mut edit = Edit::open(&PACKAGE, input)?;
    let document = edit
        .read(MAIN)?
        .ok_or_else(|| FormatError::corrupt(format!("The DOCX document has no {MAIN}")))?;
    let even_pages = match edit.read(SETTINGS)? {
        Some(settings) => switched_on(&settings, "evenAndOddHeaders"),
        None => false,
    };
    let headers = edit.relationships(MAIN, HEADER_REL)?;
    let tree = xml::parse(&document).map_err(|e| edit.unreadable(MAIN, &e))?;
    let body = xml::root(&tree)
        .and_then(|root| root.elems().find(|e| local(e.name) == "body"))
        .ok_or_else(|| edit.unreadable(MAIN, "it has no body"))?;
    let mut sections = Vec::new();
    section_properties(body, &mut sections);

    // Insertions into the main part, by offset, and the header parts to mark.
    let mut insertions: Vec<(usize, usize, String)> = Vec::new();
    let mut marked: BTreeSet<String> = BTreeSet::new();
    let mut shown: HashSet<String> = HashSet::new();
    let prefix = prefix_of(body.name);
    if sections.is_empty() {
        let refs = new_headers(&mut edit, &["default"], prefix, &mut marked)?;
        let end = body.end.as_ref().map_or(body.start.end, |e| e.start);
        let (w, declared) = word_prefix(prefix);
        let properties = format!("<{w}:sectPr{declared}>{refs}</{w}:sectPr>");
        insertions.push((end, end, properties));
    }
    for section in &sections {
        let mut kinds = vec!["default"];
        if section
            .elems()
            .any(|e| local(e.name) == "titlePg" && on(&document, e))
        {
            kinds.push("first");
        }
        if even_pages {
            kinds.push("even");
        }
        let mut own = HashSet::new();
        for reference in section
            .elems()
            .filter(|e| local(e.name) == "headerReference")
        {
            let kind = reference
                .attr_local(&document, "type")
                .unwrap_or_else(|| "default".into());
            if let Some(part) = reference
                .attr_local(&document, "id")
                .and_then(|id| headers.get(&id))
            {
                marked.insert(part.clone());
            }
            own.insert(kind);
        }
        let missing: Vec<&str> = kinds
            .into_iter()
            .filter(|k| !own.contains(*k) && !shown.contains(*k))
            .collect();
        shown.extend(own);
        if missing.is_empty() {
            continue;
        }
        shown.extend(missing.iter().map(|k| (*k).to_owned()));
        let prefix = prefix_of(section.name);
        let refs = new_headers(&mut edit, &missing, prefix, &mut marked)?;
        match &section.end {
            Some(_) => insertions.push((section.start.end, section.start.end, refs)),
            None => {
                // `<w:sectPr/>`: opened, given the references, closed.
                let open = document[section.start.clone()]
                    .trim_end_matches('>')
                    .trim_end_matches('/')
                    .trim_end();
                let whole = format!("{open}>{refs}</{}>", section.name);
                insertions.push((section.start.start, section.start.end, whole));
            }
        }
    }
    insertions.sort_by_key(|(start, ..)| *start);
    let mut changed = String::with_capacity(document.len() + 512);
    let mut at = 0;
    for (start, end, text) in insertions {
        changed.push_str(&document[at..start]);
        changed.push_str(&text);
        at = end;
    }
    changed.push_str(&document[at..]);
    edit.put(MAIN, changed);

    for part in marked {
        let Some(header) = edit.read(&part)? else {
            continue;
        };
        let tree = xml::parse(&header).map_err(|e| edit.unreadable(&part, &e))?;
        let Some(root) = xml::root(&tree) else {
            continue;
        };
        let prefix = prefix_of(root.name);
        let line = mark_paragraph(prefix, mark);
        edit.put(&part, append_child(&header, root, &line));
    }
    edit.set_custom_property(property, mark)?;
    edit.finish()
}

/// Makes a header part (marked later with the others) for each kind, and
/// returns the references the section gives them.
fn new_headers(
    edit: &mut Edit<'_>,
    kinds: &[&str],
    prefix: &str,
    marked: &mut BTreeSet<String>,
) -> Result<String, FormatError> {
    let mut refs = String::new();
    for kind in kinds {
        let part = edit.free_name("word/header-tolk-mark", "xml");
        edit.put(
            &part,
            format!(
                r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:hdr xmlns:w="{WORD_NS}"></w:hdr>"#
            ),
        );
        edit.add_content_type(&part, HEADER_TYPE)?;
        let id = edit.add_relationship(MAIN, HEADER_REL, &part)?;
        marked.insert(part);
        let (w, declared) = word_prefix(prefix);
        refs.push_str(&format!(
            r#"<{w}:headerReference{declared} xmlns:r="{RELS_NS}" {w}:type="{kind}" r:id="{id}"/>"#
        ));
    }
    Ok(refs)
}

/// A right-aligned, small grey paragraph holding `mark`.
fn mark_paragraph(prefix: &str, mark: &str) -> String {
    let (w, declared) = word_prefix(prefix);
    let mut text = String::new();
    xml::escape_attribute_into(&mut text, mark, '"');
    format!(
        r#"<{w}:p{declared}><{w}:pPr><{w}:jc {w}:val="right"/></{w}:pPr><{w}:r><{w}:rPr><{w}:color {w}:val="808080"/><{w}:sz {w}:val="16"/></{w}:rPr><{w}:t>{text}</{w}:t></{w}:r></{w}:p>"#
    )
}

/// The prefix WordprocessingML is written with beside a part's `prefix`,
/// and its declaration when the part binds it to no prefix (attributes
/// need one).
fn word_prefix(prefix: &str) -> (&str, String) {
    if prefix.is_empty() {
        ("w", format!(r#" xmlns:w="{WORD_NS}""#))
    } else {
        (prefix, String::new())
    }
}

/// The sections' properties in document order: each paragraph's that ends
/// a section, then the body's last (a tracked change's old properties left
/// out).
fn section_properties<'e, 'a>(elem: &'e Elem<'a>, out: &mut Vec<&'e Elem<'a>>) {
    for child in elem.elems() {
        match local(child.name) {
            "sectPr" => out.push(child),
            "sectPrChange" | "pPrChange" => {}
            _ => section_properties(child, out),
        }
    }
}

/// Whether the first element named `name` of a part is switched on (present,
/// and not `val="false"`/`"0"`/`"off"`).
fn switched_on(src: &str, name: &str) -> bool {
    let Ok(tree) = xml::parse(src) else {
        return false;
    };
    xml::root(&tree).is_some_and(|root| {
        root.elems()
            .find(|e| local(e.name) == name)
            .is_some_and(|e| on(src, e))
    })
}

/// Whether an on/off element is on.
fn on(src: &str, elem: &Elem<'_>) -> bool {
    !matches!(
        elem.attr_local(src, "val").as_deref(),
        Some("false" | "0" | "off")
    )
}
