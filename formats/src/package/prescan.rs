//! What a part says as a whole, read before it is cut into chunks: whether
//! its runs' language marks can be trusted, and which of its styles mark
//! code. Each reads the part as a stream, so the part is not held.

use std::io::Read;

use super::Dialect;

/// Whether a run of the part read from `reader` is marked with the language
/// `source` (its base). A part's language marks are trusted only then:
/// Office writes the editing language on runs (PowerPoint on every run), so
/// a Spanish deck made in an English PowerPoint is marked `en-US`
/// throughout; such marks say nothing, and the part is translated whole.
/// Read as a stream, so the part is not held; unreadable XML says no (its
/// translation reports it).
pub(crate) fn marks_language(reader: impl Read, dialect: &Dialect, source: &str) -> bool {
    use quick_xml::events::Event;
    let source = tolk_lang::base(source);
    if dialect.run.is_empty() || source.is_empty() {
        return false;
    }
    let mut xml = quick_xml::Reader::from_reader(std::io::BufReader::new(reader));
    let mut buf = Vec::new();
    let mut open: Vec<String> = Vec::new();
    loop {
        let (tag, empty) = match xml.read_event_into(&mut buf) {
            Ok(Event::Start(tag)) => (tag, false),
            Ok(Event::Empty(tag)) => (tag, true),
            Ok(Event::End(_)) => {
                open.pop();
                buf.clear();
                continue;
            }
            Ok(Event::Eof) | Err(_) => return false,
            Ok(_) => {
                buf.clear();
                continue;
            }
        };
        let parent = |up: usize| {
            open.len()
                .checked_sub(up)
                .and_then(|i| open.get(i))
                .map(String::as_str)
        };
        let name = tag.name().0;
        let (run, props) = (Some(dialect.run), Some(dialect.run_props));
        let mark = if name == dialect.run_props && parent(1) == run {
            tag.try_get_attribute("lang").ok().flatten()
        } else if name == "w:lang" && parent(1) == props && parent(2) == run {
            tag.try_get_attribute("w:val").ok().flatten()
        } else {
            None
        };
        if mark.is_some_and(|m| tolk_lang::base(&m.value) == source) {
            return true;
        }
        if !empty {
            if open.len() >= crate::xml::MAX_DEPTH {
                return false;
            }
            open.push(name.to_owned());
        }
        buf.clear();
    }
}

/// The automatic styles (OpenDocument's `style:style` before `office:body`)
/// of the part read from `reader` whose parent is one of `parents`, as
/// LibreOffice writes a code paragraph or span with direct formatting.
pub(crate) fn derived_styles(reader: impl Read, parents: &[&str]) -> Vec<String> {
    use quick_xml::events::Event;
    let mut styles = Vec::new();
    let mut xml = quick_xml::Reader::from_reader(std::io::BufReader::new(reader));
    let mut buf = Vec::new();
    loop {
        match xml.read_event_into(&mut buf) {
            Ok(Event::Start(tag) | Event::Empty(tag)) => {
                if tag.name().0 == "office:body" {
                    break;
                }
                if tag.name().0 == "style:style" {
                    let attr = |key: &str| {
                        tag.try_get_attribute(key)
                            .ok()
                            .flatten()
                            .map(|a| a.value.into_owned())
                    };
                    if let (Some(name), Some(parent)) =
                        (attr("style:name"), attr("style:parent-style-name"))
                        && parents.contains(&parent.as_str())
                    {
                        styles.push(name);
                    }
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            Ok(_) => {}
        }
        buf.clear();
    }
    styles
}
