//! Inline XML markup of texts translated with [`TagHandling::Xml`]: parsing
//! into text and elements before translation, and rebuilding well-formed
//! markup from translated pieces afterwards.
//!
//! Engines see only the text; each element is remembered in a table and
//! referred to by its index. After translation an engine hands back
//! [`Atom`]s: text pieces that carry the indices of the elements they belong
//! to, plus markers for elements that had no text. [`rebuild`] turns them
//! into XML again: each element spans from its first to its last word,
//! crossing spans are clipped so that the result nests, and elements that
//! were lost are appended at the end. Every element of the input appears
//! exactly once in the output.
//!
//! [`TagHandling::Xml`]: crate::TagHandling::Xml

use std::collections::HashSet;
use tolk_lang::tag::{Kind, tag};

/// One piece of a parsed text, in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Item {
    /// Decoded text (entities resolved).
    Text(String),
    /// Start of the paired element with this index.
    Open(usize),
    /// End of the paired element with this index.
    Close(usize),
    /// An element without content (`<x/>`), a comment, CDATA, a processing
    /// instruction or an unknown entity, kept verbatim.
    Standalone(usize),
}

/// One element (or other verbatim markup) of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Element {
    /// The start tag as written (or the whole markup for standalone items).
    pub open: String,
    /// The end tag as written (synthesised for elements left open); empty for
    /// standalone items.
    pub close: String,
    /// Whether the element has content between `open` and `close`.
    pub paired: bool,
    /// Nesting depth in the input (0 = outermost).
    pub depth: usize,
    /// Where it starts: the share, in thousandths, of the text's characters
    /// before it. An element whose words the engine dropped is put back there.
    pub at: u16,
}

/// A parsed text: items plus the element table they refer to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Markup {
    pub items: Vec<Item>,
    pub elements: Vec<Element>,
}

impl Markup {
    /// Plain text without markup (`TagHandling::None`): `<` and `&` are text.
    pub fn plain(text: &str) -> Self {
        Self {
            items: vec![Item::Text(text.to_owned())],
            elements: Vec::new(),
        }
    }

    /// Parses XML-escaped text with inline tags, leniently: a `<` that does
    /// not start a tag and an `&` that does not start an entity are text; a
    /// stray end tag is dropped; elements left open are closed at the end.
    pub fn parse_xml(text: &str) -> Self {
        let mut m = Self::default();
        let mut stack: Vec<(usize, String)> = Vec::new();
        let mut buf = String::new();
        let mut rest = text;
        while let Some(pos) = rest.find(['<', '&']) {
            buf.push_str(&rest[..pos]);
            rest = &rest[pos..];
            if rest.starts_with('&') {
                match entity(rest) {
                    Some((Entity::Char(c), len)) => {
                        buf.push(c);
                        rest = &rest[len..];
                    }
                    Some((Entity::Unknown, len)) => {
                        m.flush_text(&mut buf);
                        m.standalone(&rest[..len], stack.len());
                        rest = &rest[len..];
                    }
                    None => {
                        buf.push('&');
                        rest = &rest[1..];
                    }
                }
                continue;
            }
            let Some(tag) = tag(rest) else {
                buf.push('<');
                rest = &rest[1..];
                continue;
            };
            m.flush_text(&mut buf);
            let (raw, len, name) = (&rest[..tag.len], tag.len, tag.name.to_owned());
            match tag.kind {
                Kind::Empty | Kind::Other => m.standalone(raw, stack.len()),
                Kind::Start => {
                    let id = m.elements.len();
                    m.elements.push(Element {
                        open: raw.to_owned(),
                        close: String::new(),
                        paired: true,
                        depth: stack.len(),
                        at: 0,
                    });
                    m.items.push(Item::Open(id));
                    stack.push((id, name));
                }
                Kind::End => {
                    if let Some(k) = stack.iter().rposition(|(_, n)| *n == name) {
                        while stack.len() > k + 1 {
                            if let Some((id, n)) = stack.pop() {
                                m.elements[id].close = format!("</{n}>");
                                m.items.push(Item::Close(id));
                            }
                        }
                        if let Some((id, _)) = stack.pop() {
                            m.elements[id].close = raw.to_owned();
                            m.items.push(Item::Close(id));
                        }
                    } else {
                        tracing::debug!(tag = raw, "dropping an end tag without start tag");
                    }
                }
            }
            rest = &rest[len..];
        }
        buf.push_str(rest);
        m.flush_text(&mut buf);
        while let Some((id, n)) = stack.pop() {
            m.elements[id].close = format!("</{n}>");
            m.items.push(Item::Close(id));
        }
        m.place_elements();
        m
    }

    /// Sets each element's [`Element::at`].
    fn place_elements(&mut self) {
        let total: usize = self
            .items
            .iter()
            .map(|i| match i {
                Item::Text(t) => t.chars().count(),
                _ => 0,
            })
            .sum();
        let mut before = 0;
        for item in &self.items {
            match item {
                Item::Text(t) => before += t.chars().count(),
                Item::Open(id) | Item::Standalone(id) => {
                    if let Some(e) = self.elements.get_mut(*id) {
                        e.at = u16::try_from(before * 1000 / total.max(1)).unwrap_or(1000);
                    }
                }
                Item::Close(_) => {}
            }
        }
    }

    fn flush_text(&mut self, buf: &mut String) {
        if !buf.is_empty() {
            self.items.push(Item::Text(std::mem::take(buf)));
        }
    }

    fn standalone(&mut self, raw: &str, depth: usize) {
        let id = self.elements.len();
        self.elements.push(Element {
            open: raw.to_owned(),
            close: String::new(),
            paired: false,
            depth,
            at: 0,
        });
        self.items.push(Item::Standalone(id));
    }

    /// Whether the text has anything to translate (a letter or digit).
    pub fn has_words(&self) -> bool {
        self.items
            .iter()
            .any(|i| matches!(i, Item::Text(t) if t.chars().any(char::is_alphanumeric)))
    }
}

/// The text of XML-escaped `text` without its tags, entities decoded (for
/// language detection).
pub(crate) fn plain_text(text: &str) -> String {
    Markup::parse_xml(text)
        .items
        .into_iter()
        .filter_map(|i| match i {
            Item::Text(t) => Some(t),
            _ => None,
        })
        .collect()
}

/// `text` with every word of `unknown` written `*word`, as Apertium marks
/// the words its dictionary does not know. Words are runs of letters, digits
/// and the `'`/`-` inside them, matched as written; with `xml`, only
/// character data is looked at (tags and entities are copied).
pub(crate) fn mark_words(text: &str, unknown: &[String], xml: bool) -> String {
    if unknown.is_empty() {
        return text.to_owned();
    }
    let inner = |c: char| c.is_alphanumeric() || matches!(c, '\'' | '’' | '-');
    let mut out = String::with_capacity(text.len() + 8 * unknown.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let skip = match c {
            '<' if xml => rest.find('>').map_or(rest.len(), |e| e + 1),
            '&' if xml => rest
                .char_indices()
                .take(40)
                .find(|&(_, c)| c == ';')
                .map_or(1, |(e, _)| e + 1),
            c if c.is_alphanumeric() => {
                let end = rest.find(|c: char| !inner(c)).unwrap_or(rest.len());
                let token = rest[..end].trim_end_matches(['\'', '’', '-']);
                if unknown.iter().any(|u| u == token) {
                    out.push('*');
                    out.push_str(token);
                } else {
                    // Parts of a token the analyser read as several words.
                    mark_parts(token, unknown, &mut out);
                }
                rest = &rest[token.len()..];
                continue;
            }
            c => c.len_utf8(),
        };
        out.push_str(&rest[..skip]);
        rest = &rest[skip..];
    }
    out
}

/// Appends `token`, marking those of its alphanumeric parts that are unknown.
fn mark_parts(token: &str, unknown: &[String], out: &mut String) {
    let mut rest = token;
    while !rest.is_empty() {
        let end = rest
            .find(|c: char| !c.is_alphanumeric())
            .unwrap_or(rest.len());
        if end == 0 {
            let c = rest.chars().next().map_or(1, char::len_utf8);
            out.push_str(&rest[..c]);
            rest = &rest[c..];
            continue;
        }
        let part = &rest[..end];
        if unknown.iter().any(|u| u == part) {
            out.push('*');
        }
        out.push_str(part);
        rest = &rest[end..];
    }
}

enum Entity {
    Char(char),
    /// Syntactically an entity (`&nbsp;`) but not one XML predefines.
    Unknown,
}

/// Decodes the entity at the start of `s` (which starts with `&`).
fn entity(s: &str) -> Option<(Entity, usize)> {
    let end = s.char_indices().take(40).find(|&(_, c)| c == ';')?.0;
    let body = &s[1..end];
    let c = match body {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        _ => {
            if let Some(num) = body.strip_prefix('#') {
                let code = match num.strip_prefix(['x', 'X']) {
                    Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                    None => num.parse().ok()?,
                };
                char::from_u32(code).filter(|&c| c != '\0')?
            } else if body.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && body.chars().all(|c| c.is_ascii_alphanumeric())
            {
                return Some((Entity::Unknown, end + 1));
            } else {
                return None;
            }
        }
    };
    Some((Entity::Char(c), end + 1))
}

/// Escapes text for XML content: `&`, `<`, `>`.
pub(crate) fn escape_into(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
}

/// One piece of translated output, in output order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Atom {
    /// Translated text; `ids` are the elements its words belong to.
    Text { text: String, ids: Vec<usize> },
    /// Where a paired element without words started.
    Open(usize),
    /// Where a paired element without words ended.
    Close(usize),
    /// Where a standalone item was.
    Standalone(usize),
}

/// Trims whitespace at the start of the first and the end of the last text.
pub(crate) fn trim_atoms(atoms: &mut [Atom]) {
    for a in atoms.iter_mut() {
        if let Atom::Text { text, .. } = a {
            let t = text.trim_start();
            let empty = t.is_empty();
            *text = t.to_owned();
            if !empty {
                break;
            }
        }
    }
    for a in atoms.iter_mut().rev() {
        if let Atom::Text { text, .. } = a {
            let t = text.trim_end();
            let empty = t.is_empty();
            *text = t.to_owned();
            if !empty {
                break;
            }
        }
    }
}

/// Puts each element the translation lost entirely (no word, no marker) back
/// where it stood in the source, relative to the text's length, at a word
/// boundary: an element whose words the engine dropped (a subject pronoun a
/// Romance verb absorbs) stays in its place, empty, instead of moving to the
/// end or swallowing its neighbours.
fn place_lost(atoms: &mut Vec<Atom>, elements: &[Element]) {
    let mut present = vec![false; elements.len()];
    for a in atoms.iter() {
        match a {
            Atom::Text { text, ids } if !text.trim().is_empty() => {
                for &id in ids {
                    if let Some(p) = present.get_mut(id) {
                        *p = true;
                    }
                }
            }
            Atom::Open(id) | Atom::Close(id) | Atom::Standalone(id) => {
                if let Some(p) = present.get_mut(*id) {
                    *p = true;
                }
            }
            Atom::Text { .. } => {}
        }
    }
    // Splitting a text and inserting markers keep the characters' count.
    let total: usize = atoms
        .iter()
        .map(|a| match a {
            Atom::Text { text, .. } => text.chars().count(),
            _ => 0,
        })
        .sum();
    for (id, el) in elements.iter().enumerate() {
        if present[id] {
            continue;
        }
        let goal = total * usize::from(el.at) / 1000;
        let marker = if el.paired {
            Atom::Open(id)
        } else {
            Atom::Standalone(id)
        };
        // The first word boundary at or after `goal` characters.
        let mut seen = 0;
        let mut at = atoms.len();
        let mut split: Option<(usize, usize)> = None;
        for (k, a) in atoms.iter().enumerate() {
            let Atom::Text { text, .. } = a else {
                if seen >= goal {
                    at = k;
                    break;
                }
                continue;
            };
            let len = text.chars().count();
            if seen >= goal {
                at = k;
                break;
            }
            if seen + len > goal {
                // Inside this text: after the next space from the goal on.
                let offset: usize = text
                    .char_indices()
                    .skip(goal - seen)
                    .find(|(_, c)| c.is_whitespace())
                    .map_or(text.len(), |(b, c)| b + c.len_utf8());
                split = Some((k, offset));
                break;
            }
            seen += len;
        }
        if let Some((k, offset)) = split {
            let Atom::Text { text, ids } = &mut atoms[k] else {
                continue;
            };
            let tail = text.split_off(offset);
            let ids = ids.clone();
            if !tail.is_empty() {
                atoms.insert(k + 1, Atom::Text { text: tail, ids });
            }
            at = k + 1;
        }
        // Not inside a sibling (or a sibling's child): after its last word.
        let foreign = |a: &Atom| match a {
            Atom::Text { ids, .. } => ids
                .iter()
                .any(|&i| elements.get(i).is_some_and(|e| e.depth >= el.depth)),
            _ => false,
        };
        if at > 0 && atoms.get(at - 1).is_some_and(foreign) {
            while atoms.get(at).is_some_and(foreign) {
                at += 1;
            }
        }
        atoms.insert(at, marker);
    }
}

/// Rebuilds text from translated atoms. With `xml`, text is escaped and the
/// elements of `elements` are placed as described in the module docs;
/// without, the texts are concatenated.
pub(crate) fn rebuild(mut atoms: Vec<Atom>, elements: &[Element], xml: bool) -> String {
    let mut out = String::new();
    if !xml || elements.is_empty() {
        for a in &atoms {
            if let Atom::Text { text, .. } = a {
                if xml {
                    escape_into(text, &mut out);
                } else {
                    out.push_str(text);
                }
            }
        }
        return out;
    }

    place_lost(&mut atoms, elements);
    // Where each element landed.
    let n = elements.len();
    let mut word_range: Vec<Option<(usize, usize)>> = vec![None; n];
    let mut open_at: Vec<Option<usize>> = vec![None; n];
    let mut close_at: Vec<Option<usize>> = vec![None; n];
    let mut standalone_at: Vec<Option<usize>> = vec![None; n];
    for (pos, a) in atoms.iter().enumerate() {
        match a {
            Atom::Text { text, ids } if !text.trim().is_empty() => {
                for &id in ids.iter().filter(|&&id| id < n) {
                    let r = word_range[id].get_or_insert((pos, pos));
                    r.1 = pos;
                }
            }
            Atom::Text { .. } => {}
            Atom::Open(id) if *id < n => {
                open_at[*id].get_or_insert(pos);
            }
            Atom::Close(id) if *id < n => {
                close_at[*id].get_or_insert(pos);
            }
            Atom::Standalone(id) if *id < n => {
                standalone_at[*id].get_or_insert(pos);
            }
            _ => {}
        }
    }

    // Intervals of paired elements; an element still without a place (only
    // markers of another kind carry its id) goes to the end.
    let mut intervals: Vec<(usize, usize, usize, usize)> = Vec::new(); // (start, end, depth, id)
    for (id, el) in elements.iter().enumerate() {
        if el.paired {
            let range = word_range[id].or(match (open_at[id], close_at[id]) {
                (Some(o), Some(c)) => Some((o.min(c), o.max(c))),
                (Some(p), None) | (None, Some(p)) => Some((p, p)),
                (None, None) => None,
            });
            let (s, e) = range.unwrap_or_else(|| {
                tracing::debug!(
                    element = el.open,
                    "element lost in translation, appended at the end"
                );
                atoms.push(Atom::Open(id));
                (atoms.len() - 1, atoms.len() - 1)
            });
            intervals.push((s, e, el.depth, id));
        } else if standalone_at[id].is_none() {
            tracing::debug!(
                element = el.open,
                "markup lost in translation, appended at the end"
            );
            atoms.push(Atom::Standalone(id));
            standalone_at[id] = Some(atoms.len() - 1);
        }
    }

    nest(&mut intervals);
    // The order of `intervals` is now the order of the start tags.
    let mut opens_at: Vec<Vec<(usize, usize)>> = vec![Vec::new(); atoms.len()]; // (end, id)
    for &(s, e, _, id) in &intervals {
        opens_at[s].push((e, id));
    }

    let mut emitted: HashSet<usize> = HashSet::new();
    let mut open: Vec<(usize, usize)> = Vec::new(); // (end, id)
    for (pos, a) in atoms.iter().enumerate() {
        for &(end, id) in &opens_at[pos] {
            out.push_str(&elements[id].open);
            open.push((end, id));
        }
        match a {
            Atom::Text { text, .. } => escape_into(text, &mut out),
            Atom::Standalone(id)
                if *id < n && standalone_at[*id] == Some(pos) && emitted.insert(*id) =>
            {
                out.push_str(&elements[*id].open);
            }
            _ => {}
        }
        while let Some(&(end, id)) = open.last() {
            if end > pos {
                break;
            }
            out.push_str(&elements[id].close);
            open.pop();
        }
    }
    while let Some((_, id)) = open.pop() {
        out.push_str(&elements[id].close);
    }
    out
}

/// Makes the intervals (start, end, depth, id) of paired elements nest:
/// sorted outer first, a span that crosses its parent clipped at the
/// parent's end. Their order is then the order of the start tags.
fn nest(intervals: &mut [(usize, usize, usize, usize)]) {
    intervals.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(b.1.cmp(&a.1))
            .then(a.2.cmp(&b.2))
            .then(a.3.cmp(&b.3))
    });
    let mut stack: Vec<usize> = Vec::new(); // ends of the open intervals
    for iv in intervals.iter_mut() {
        while stack.last().is_some_and(|&end| end < iv.0) {
            stack.pop();
        }
        if let Some(&end) = stack.last() {
            iv.1 = iv.1.min(end);
        }
        stack.push(iv.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str, ids: &[usize]) -> Atom {
        Atom::Text {
            text: t.to_owned(),
            ids: ids.to_vec(),
        }
    }

    #[test]
    fn parses_tags_entities_and_lenient_markup() {
        let m = Markup::parse_xml(
            r#"The <g id="1">big &amp; bold</g> dog<x id="2"/> &lt;3 &nbsp; a < b &foo"#,
        );
        assert_eq!(
            m.items,
            vec![
                Item::Text("The ".into()),
                Item::Open(0),
                Item::Text("big & bold".into()),
                Item::Close(0),
                Item::Text(" dog".into()),
                Item::Standalone(1),
                Item::Text(" <3 ".into()),
                Item::Standalone(2),
                Item::Text(" a < b &foo".into()),
            ]
        );
        assert_eq!(m.elements[0].open, r#"<g id="1">"#);
        assert_eq!(m.elements[0].close, "</g>");
        assert_eq!(m.elements[1].open, r#"<x id="2"/>"#);
        assert_eq!(m.elements[2].open, "&nbsp;");
    }

    #[test]
    fn unclosed_and_stray_tags() {
        let m = Markup::parse_xml("<b>one <i>two</b> three</u> <!-- c --> <![CDATA[x<y]]>");
        assert_eq!(m.elements[0].close, "</b>");
        assert_eq!(m.elements[1].close, "</i>");
        assert_eq!(m.items[4], Item::Close(1));
        assert_eq!(m.items[5], Item::Close(0));
        assert_eq!(m.elements[2].open, "<!-- c -->");
        assert_eq!(m.elements[3].open, "<![CDATA[x<y]]>");
        assert_eq!(plain_text("<b>one</b> &amp; <x/>two"), "one & two");
        let m = Markup::parse_xml("<p>open");
        assert_eq!(m.elements[0].close, "</p>");
        assert_eq!(m.items.last(), Some(&Item::Close(0)));
    }

    #[test]
    fn attributes_with_gt_in_quotes() {
        let m = Markup::parse_xml(r#"<a href="x>y">link</a>"#);
        assert_eq!(m.elements[0].open, r#"<a href="x>y">"#);
        assert_eq!(m.items[1], Item::Text("link".into()));
    }

    #[test]
    fn rebuild_places_spans_on_their_words() {
        let m = Markup::parse_xml(r#"The <g id="1">big</g> dog runs <x id="2"/> fast."#);
        // "El perro [[t:0]]grande[[/]] corre [e1] rápido."
        let atoms = vec![
            text("El perro ", &[]),
            text("grande", &[0]),
            text(" corre ", &[]),
            Atom::Standalone(1),
            text(" rápido.", &[]),
        ];
        assert_eq!(
            rebuild(atoms, &m.elements, true),
            r#"El perro <g id="1">grande</g> corre <x id="2"/> rápido."#
        );
    }

    #[test]
    fn rebuild_merges_split_spans_and_escapes() {
        let m = Markup::parse_xml("I <b>have not</b> seen &lt;it&gt;.");
        let atoms = vec![
            text("No", &[0]),
            text(" lo ", &[]),
            text("he", &[0]),
            text(" visto <eso> & más.", &[]),
        ];
        assert_eq!(
            rebuild(atoms, &m.elements, true),
            "<b>No lo he</b> visto &lt;eso&gt; &amp; más."
        );
    }

    #[test]
    fn rebuild_clips_crossing_spans_and_places_lost_ones_where_they_stood() {
        let m = Markup::parse_xml("<a>one</a> <b>two</b> <c>three</c> <x/>");
        // a on atoms 0 and 4, b on atoms 2..4 → crossing; c and x lost: put
        // back at their share of the text (c after two thirds, x at the end).
        let atoms = vec![
            text("uno", &[0]),
            text(" ", &[]),
            text("dos", &[1]),
            text(" ", &[]),
            text("tres", &[0, 1]),
        ];
        let out = rebuild(atoms, &m.elements, true);
        assert_eq!(out, "<a>uno <b>dos<c></c> tres</b></a><x/>");
        // A lost element between words stays between them, outside its siblings.
        let m = Markup::parse_xml("Read <a>before</a> <i>you</i> install it.");
        let atoms = vec![
            text("Lee ", &[]),
            text("antes de que", &[0]),
            text(" instales.", &[]),
        ];
        let out = rebuild(atoms, &m.elements, true);
        assert_eq!(out, "Lee <a>antes de que</a><i></i> instales.");
    }

    #[test]
    fn rebuild_nests_same_word_by_depth() {
        let m = Markup::parse_xml("<b><i>word</i></b> <e></e>");
        let atoms = vec![
            text("palabra", &[1, 0]),
            text(" ", &[]),
            Atom::Open(2),
            Atom::Close(2),
        ];
        assert_eq!(
            rebuild(atoms, &m.elements, true),
            "<b><i>palabra</i></b> <e></e>"
        );
    }

    #[test]
    fn trim_atoms_trims_the_edges_only() {
        let mut atoms = vec![
            text(" ", &[]),
            Atom::Standalone(0),
            text("  Lo dio ", &[]),
            text(" ", &[]),
        ];
        trim_atoms(&mut atoms);
        assert_eq!(atoms[0], text("", &[]));
        assert_eq!(atoms[2], text("Lo dio", &[]));
        assert_eq!(atoms[3], text("", &[]));
    }
}
