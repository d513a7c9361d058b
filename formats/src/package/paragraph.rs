//! Turns an Office Open XML part into a skeleton with one segment per
//! paragraph (`w:p` in WordprocessingML, `a:p` in DrawingML: the names come
//! from the part's [`Dialect`]). Described here with Word's names.
//!
//! A paragraph's content is first read into *atoms*:
//!
//! * text of a run (`w:t`), with the run's properties (`w:rPr`);
//! * placeholders: anything that is not text — a run's `w:tab`, `w:br`,
//!   `w:drawing`, `w:footnoteReference`…, bookmarks, comment ranges, math,
//!   deleted text, field codes. A run's child is kept inside a copy of its
//!   run, so a placeholder is self-contained markup;
//! * containers holding atoms: `w:hyperlink`, `w:ins`, `w:moveTo`,
//!   `w:smartTag`, `w:customXml`, `w:fldSimple`, `w:sdt`, `w:dir`, `w:bdo`
//!   and complex fields (`fldChar begin … separate` + result + `end`, when
//!   they stay inside the paragraph).
//!
//! Then the segment is built: text in the paragraph's most used run style is
//! bare; runs of another style become `<g>` spans (consecutive runs with the
//! same properties are merged; `w:lang` and `w:noProof` are ignored when
//! comparing); containers become `<g>` spans; placeholders become `<x/>`.
//! Placeholders and wrapping containers at either end of the paragraph stay
//! in the skeleton, so most paragraphs have few or no tags. Spell-check marks
//! (`w:proofErr`) and `w:lastRenderedPageBreak` are dropped from translated
//! paragraphs. Paragraphs nested in placeholders (text boxes) are segments
//! of their own.

use std::collections::HashMap;

use super::Dialect;
use super::atoms::{
    Atom, FieldChar, Part, Run, base_run, has_text, normalize, resolve_fields, trim,
};
use super::pieces::Pieces;
use super::skeleton::{Node, NodeList, Para, RunStyle, Segment, Tag};
use crate::inline::SegmentBuilder;
use crate::slots::Slots;
use crate::xml::{Elem, TextKind, XNode, decode_into, is_blank};

mod emit;
mod words;

/// Extraction state for one part.
pub(crate) struct PartExtractor<'s, 'x> {
    dialect: &'static Dialect,
    src: &'s str,
    slots: &'x mut Slots,
    /// Canonical run properties → style key (0 = no properties).
    keys: HashMap<String, usize>,
    /// Lower-case base of the document's source language, when given and the
    /// part's marks are trusted ([`super::prescan::marks_language`]): runs marked with
    /// another language are kept as placeholders.
    source: Option<String>,
    /// Styles marking code: the dialect's and the part's automatic styles
    /// derived from one ([`super::prescan::derived_styles`]).
    code_styles: &'x [String],
}

impl<'s, 'x> PartExtractor<'s, 'x> {
    pub(crate) fn new(
        dialect: &'static Dialect,
        src: &'s str,
        slots: &'x mut Slots,
        source: Option<&str>,
        code_styles: &'x [String],
    ) -> Self {
        PartExtractor {
            dialect,
            src,
            slots,
            keys: HashMap::new(),
            source: source.map(tolk_lang::base).filter(|b| !b.is_empty()),
            code_styles,
        }
    }

    /// The base language a run is marked with (Word's `w:lang w:val`,
    /// DrawingML's `lang` on its properties), if any.
    fn run_language(&self, run: &Elem<'_>) -> Option<String> {
        let props = run.elems().find(|e| e.name == self.dialect.run_props)?;
        props
            .elems()
            .find(|e| e.name == "w:lang")
            .and_then(|l| l.attr(self.src, "w:val"))
            .or_else(|| props.attr(self.src, "lang"))
            .map(|l| tolk_lang::base(&l))
            .filter(|l| !l.is_empty())
    }

    /// Whether the run `elem` is marked with another language than the
    /// source (when the part's marks are trusted).
    fn in_other_language(&self, run: &Elem<'_>) -> bool {
        self.source
            .as_ref()
            .is_some_and(|source| self.run_language(run).is_some_and(|l| l != *source))
    }

    /// Copies nodes to `out`, turning translatable paragraphs into units.
    pub(crate) fn copy_nodes<'t>(&mut self, nodes: &'t [XNode<'t>], out: &mut NodeList) {
        for node in nodes {
            match node {
                XNode::Text(range, _) => out.raw(range.clone()),
                XNode::Elem(elem) => self.copy_elem(elem, out),
            }
        }
    }

    /// Whether `elem` (a paragraph, run or span) is in a style marking code:
    /// its `text:style-name`, or the `w:pStyle`/`w:rStyle` of its properties.
    fn is_code(&self, elem: &Elem<'_>) -> bool {
        if self.code_styles.is_empty() {
            return false;
        }
        let named = elem.attr(self.src, "text:style-name").or_else(|| {
            elem.elems()
                .find(|e| {
                    e.name == self.dialect.paragraph_props || e.name == self.dialect.run_props
                })
                .and_then(|props| {
                    props
                        .elems()
                        .find(|e| e.name == "w:pStyle" || e.name == "w:rStyle")
                })
                .and_then(|style| style.attr(self.src, "w:val"))
        });
        named.is_some_and(|n| self.code_styles.contains(&n))
    }

    fn copy_elem<'t>(&mut self, elem: &'t Elem<'t>, out: &mut NodeList) {
        if self.dialect.paragraphs.contains(&elem.name) && elem.end.is_some() {
            if self.is_code(elem) {
                out.raw(elem.span());
            } else {
                self.paragraph(elem, out);
            }
            return;
        }
        if self.dialect.text_bodies.contains(&elem.name) {
            self.text_body(elem, out);
            return;
        }
        self.start_tag(elem, out);
        if let Some((_, pieces)) = self.dialect.pieces.iter().find(|(n, _)| *n == elem.name)
            && let Some(text) = text_content(elem)
        {
            self.pieces(text, pieces, out);
        } else {
            self.copy_nodes(&elem.children, out);
        }
        if let Some(end) = &elem.end {
            out.raw(end.clone());
        }
    }

    /// Copies a text body, its properties as a [`Node::Fit`] over the
    /// segments the body holds.
    fn text_body<'t>(&mut self, body: &'t Elem<'t>, out: &mut NodeList) {
        self.start_tag(body, out);
        let first = self.slots.reserved();
        let mut fit = None;
        for child in &body.children {
            match child {
                XNode::Elem(e) if e.name == "a:bodyPr" && fit.is_none() => {
                    fit = Some(out.0.len());
                    out.0.push(Node::Fit {
                        body_pr: e.span(),
                        slots: 0..0,
                    });
                }
                XNode::Elem(e) => self.copy_elem(e, out),
                XNode::Text(range, _) => out.raw(range.clone()),
            }
        }
        let reserved = self.slots.reserved();
        if let Some(Node::Fit { slots, .. }) = fit.and_then(|i| out.0.get_mut(i)) {
            *slots = first..reserved;
        }
        if let Some(end) = &body.end {
            out.raw(end.clone());
        }
    }

    /// Copies an element's text (`text`, its range), the pieces `pieces`
    /// finds in it as segments of their own.
    fn pieces(
        &mut self,
        text: std::ops::Range<usize>,
        pieces: &'static Pieces,
        out: &mut NodeList,
    ) {
        let raw = self.src.get(text.clone()).unwrap_or("");
        let mut at = text.start;
        for piece in (pieces.find)(raw) {
            let range = text.start + piece.start..text.start + piece.end;
            if self.value(at, range.clone(), pieces.write, pieces.codes, out) {
                at = range.end;
            }
        }
        out.raw(at..text.end);
    }

    /// Makes the XML-escaped text at `range` (an attribute's value, a piece
    /// of an element's text) a segment of its own, written back by `write`,
    /// after the source from `at`, the `codes` in it as tags; whether it held
    /// text.
    fn value(
        &mut self,
        at: usize,
        range: std::ops::Range<usize>,
        write: fn(&str) -> String,
        codes: Option<fn(&str) -> Option<usize>>,
        out: &mut NodeList,
    ) -> bool {
        let raw = self.src.get(range.clone()).unwrap_or("");
        let value =
            quick_xml::escape::unescape(raw).map_or_else(|_| raw.to_owned(), |v| v.into_owned());
        if value.trim().is_empty() {
            return false;
        }
        out.raw(at..range.start);
        let slot = self.slots.reserve();
        let (segment, tags) = match codes {
            Some(codes) => crate::placeholders::with_codes(&value, codes),
            None => (crate::inline::escape(&value), Vec::new()),
        };
        self.slots.fill(slot, segment);
        out.0.push(Node::Attr {
            slot,
            range,
            write,
            tags,
        });
        true
    }

    /// Copies a start tag, its translatable attribute values (alt text) as
    /// segments of their own.
    fn start_tag(&mut self, elem: &Elem<'_>, out: &mut NodeList) {
        let tag = elem.start.clone();
        let mut at = tag.start;
        let mut values: Vec<std::ops::Range<usize>> = self
            .dialect
            .attributes
            .iter()
            .filter(|(name, _)| *name == elem.name)
            .filter_map(|(_, attr)| {
                let text = self.src.get(tag.clone())?;
                let key = format!(" {attr}=\"");
                let start = text.find(&key)? + key.len();
                let len = text[start..].find('"')?;
                Some(tag.start + start..tag.start + start + len)
            })
            .collect();
        values.sort_by_key(|r| r.start);
        for range in values {
            if self.value(at, range.clone(), str::to_owned, None, out) {
                at = range.end;
            }
        }
        out.raw(at..tag.end);
    }

    fn paragraph<'t>(&mut self, p: &'t Elem<'t>, out: &mut NodeList) {
        let ppr = p
            .elems()
            .next()
            .filter(|e| e.name == self.dialect.paragraph_props);
        let mut atoms = Vec::new();
        self.collect(&p.children, &mut atoms);
        self.drop_go_back(&mut atoms);
        let atoms = self.revisions_out_of_words(resolve_fields(atoms));
        let atoms = self.markers_out_of_words(normalize(atoms));
        if !has_text(&atoms) {
            out.raw(p.start.clone());
            self.copy_nodes(&p.children, out);
            if let Some(end) = &p.end {
                out.raw(end.clone());
            }
            return;
        }
        let first = self.slots.reserved();
        let mut body = NodeList::default();
        body.raw(p.start.clone());
        if let Some(ppr) = ppr {
            body.raw(ppr.span());
        }
        for (piece, separator) in self.split_at_breaks(atoms) {
            self.segment(piece, &mut body);
            if let Some(separator) = separator {
                self.render_atom(&separator, &mut body);
            }
        }
        if let Some(end) = &p.end {
            body.raw(end.clone());
        }
        out.0.push(Node::Para(Box::new(Para {
            body: body.0,
            original: p.span(),
            slots: first..self.slots.reserved(),
        })));
    }

    /// Cuts a paragraph's atoms at its hard breaks (line breaks, positional
    /// tabs): each piece is followed by the break that ends it.
    fn split_at_breaks<'t>(&self, atoms: Vec<Atom<'t>>) -> Vec<(Vec<Atom<'t>>, Option<Atom<'t>>)> {
        let mut pieces = Vec::new();
        let mut piece = Vec::new();
        for atom in atoms {
            if self.is_hard_break(&atom) {
                pieces.push((std::mem::take(&mut piece), Some(atom)));
            } else {
                piece.push(atom);
            }
        }
        pieces.push((piece, None));
        pieces
    }

    /// Whether a placeholder holds a hard break.
    fn is_hard_break(&self, atom: &Atom<'_>) -> bool {
        let Atom::Placeholder { parts, .. } = atom else {
            return false;
        };
        parts.iter().any(|part| match part {
            Part::Elem(e) | Part::InRun(_, e) => self.dialect.hard_breaks.contains(&e.name),
            _ => false,
        })
    }

    /// Writes a piece of a paragraph: a segment when it holds text, with its
    /// leading and trailing markup (and containers wrapping all its text) in
    /// the skeleton.
    fn segment(&mut self, atoms: Vec<Atom<'_>>, out: &mut NodeList) {
        if !has_text(&atoms) {
            for atom in &atoms {
                self.render_atom(atom, out);
            }
            return;
        }
        let slot = self.slots.reserve();
        let (mut lead, mut atoms, mut trail) = trim(atoms);
        while let [Atom::Container { .. }] = atoms.as_slice() {
            let Some(Atom::Container {
                open,
                close,
                children,
            }) = atoms.pop()
            else {
                break;
            };
            lead.extend(open);
            let (inner_lead, inner, inner_trail) = trim(children);
            lead.extend(inner_lead);
            trail.splice(0..0, inner_trail.into_iter().chain(close));
            atoms = inner;
        }
        self.render_parts(&lead, out);
        let base = base_run(&atoms).map(|(key, run)| (key, run.style()));
        let (base_key, base) = base.unwrap_or((
            usize::MAX,
            RunStyle {
                start: 0..0,
                rpr: None,
            },
        ));
        let mut builder = SegmentBuilder::new();
        let mut tags = Vec::new();
        self.emit_level(&atoms, base_key, &mut builder, &mut tags);
        self.slots.fill(slot, builder.finish());
        out.0
            .push(Node::Segment(Box::new(Segment { slot, base, tags })));
        self.render_parts(&trail, out);
    }

    /// Reads the atoms of a paragraph or container's children.
    fn collect<'t>(&mut self, nodes: &'t [XNode<'t>], out: &mut Vec<Atom<'t>>) {
        const BARE: Run<'static> = Run {
            elem: None,
            rpr: None,
        };
        for node in nodes {
            match node {
                XNode::Text(range, kind) if self.dialect.mixed && *kind != TextKind::Other => {
                    let mut text = String::new();
                    decode_into(self.src, range, *kind, &mut text);
                    out.push(Atom::Text {
                        run: BARE,
                        key: 0,
                        text,
                    });
                }
                XNode::Elem(elem) if self.dialect.spaces.contains(&elem.name) => {
                    let count = elem
                        .attr(self.src, "text:c")
                        .and_then(|c| c.parse::<usize>().ok())
                        .unwrap_or(1)
                        .clamp(1, 1000);
                    out.push(Atom::Text {
                        run: BARE,
                        key: 0,
                        text: " ".repeat(count),
                    });
                }
                XNode::Text(range, kind) => {
                    if !is_blank(self.src, range, *kind) {
                        out.push(Atom::Placeholder {
                            parts: vec![Part::Raw(range.clone())],
                            keep: true,
                        });
                    }
                }
                XNode::Elem(elem) => match elem.name {
                    name if (!name.is_empty() && name == self.dialect.paragraph_props)
                        || self.dialect.dropped.contains(&name) => {}
                    name if !name.is_empty() && name == self.dialect.run => {
                        if self.in_other_language(elem) || self.is_code(elem) {
                            out.push(Atom::Placeholder {
                                parts: vec![Part::Elem(elem)],
                                keep: true,
                            });
                        } else {
                            self.collect_run(elem, out)
                        }
                    }
                    name if self.dialect.bare_text
                        && !name.is_empty()
                        && name == self.dialect.text =>
                    {
                        let text = elem.text(self.src);
                        if !text.is_empty() {
                            out.push(Atom::Text {
                                run: Run {
                                    elem: None,
                                    rpr: None,
                                },
                                key: 0,
                                text,
                            });
                        }
                    }
                    _ if self.is_container(elem) => {
                        let mut children = Vec::new();
                        self.collect(&elem.children, &mut children);
                        out.push(Atom::Container {
                            open: vec![Part::Start(elem)],
                            close: vec![Part::End(elem)],
                            children,
                        });
                    }
                    _ => out.push(Atom::Placeholder {
                        parts: vec![Part::Elem(elem)],
                        keep: true,
                    }),
                },
            }
        }
    }

    /// Whether `elem` is a container whose content is read as atoms (not
    /// code, not deleted text: IDML's `Change` of type `DeletedText`).
    fn is_container(&self, elem: &Elem<'_>) -> bool {
        self.dialect.containers.contains(&elem.name)
            && elem.end.is_some()
            && !self.is_code(elem)
            && elem.attr(self.src, "ChangeType").as_deref() != Some("DeletedText")
    }

    fn collect_run<'t>(&mut self, r: &'t Elem<'t>, out: &mut Vec<Atom<'t>>) {
        let rpr = r.elems().find(|e| e.name == self.dialect.run_props);
        let run = Run { elem: Some(r), rpr };
        let key = self.key(self.dialect.run_attributes.then_some(r), rpr);
        self.collect_in_run(run, key, &r.children, out);
    }

    /// Reads the children of a run (or of a container inside a run) into
    /// atoms of that run. A container inside the run (IDML's
    /// `HyperlinkTextSource` in a `CharacterStyleRange`) becomes a container
    /// atom whose text keeps the run's style: translated, it is written
    /// around runs of its own (the link holding the run, as when a link
    /// spans several runs); its own properties stay after its start tag.
    fn collect_in_run<'t>(
        &mut self,
        run: Run<'t>,
        key: usize,
        children: &'t [XNode<'t>],
        out: &mut Vec<Atom<'t>>,
    ) {
        for child in children {
            let elem = match child {
                XNode::Elem(elem) => elem,
                XNode::Text(range, kind) => {
                    if !is_blank(self.src, range, *kind) {
                        out.push(Atom::Placeholder {
                            parts: vec![Part::Raw(range.clone())],
                            keep: true,
                        });
                    }
                    continue;
                }
            };
            let atom = match elem.name {
                name if name == self.dialect.run_props || self.dialect.dropped.contains(&name) => {
                    continue;
                }
                // Text holding markup (IDML's `<?ACE 7?>` special
                // characters) is kept whole.
                name if name == self.dialect.text && has_markup(elem) => Atom::Placeholder {
                    parts: vec![Part::InRun(run, elem)],
                    keep: true,
                },
                name if name == self.dialect.text => {
                    let text = elem.text(self.src);
                    if text.is_empty() {
                        continue;
                    }
                    Atom::Text { run, key, text }
                }
                _ if self.is_container(elem) => {
                    let mut open = vec![Part::Start(elem)];
                    open.extend(
                        elem.elems()
                            .take(1)
                            .filter(|e| e.name == self.dialect.run_props)
                            .map(Part::Elem),
                    );
                    let mut inner = Vec::new();
                    self.collect_in_run(run, key, &elem.children, &mut inner);
                    Atom::Container {
                        open,
                        close: vec![Part::End(elem)],
                        children: inner,
                    }
                }
                "w:fldChar" => {
                    let kind = match elem.attr(self.src, "w:fldCharType").as_deref() {
                        Some("begin") => FieldChar::Begin,
                        Some("separate") => FieldChar::Separate,
                        _ => FieldChar::End,
                    };
                    Atom::Field {
                        kind,
                        part: Part::InRun(run, elem),
                    }
                }
                name => Atom::Placeholder {
                    parts: vec![Part::InRun(run, elem)],
                    keep: !self.dialect.droppable.contains(&name),
                },
            };
            out.push(atom);
        }
    }

    /// The style key of a run: its properties, and its own attributes
    /// when `run` is given.
    fn key(&mut self, run: Option<&Elem<'_>>, rpr: Option<&Elem<'_>>) -> usize {
        let mut canonical = String::new();
        for (name, value) in run.map(|r| r.attrs(self.src)).unwrap_or_default() {
            if !self.dialect.ignored_props.contains(&name.as_str()) {
                canonical.push_str(&format!(" {name}={value:?}"));
            }
        }
        let Some(rpr) = rpr else {
            return self.key_of(canonical);
        };
        for (name, value) in rpr.attrs(self.src) {
            if !self.dialect.ignored_props.contains(&name.as_str()) {
                canonical.push_str(&format!(" {name}={value:?}"));
            }
        }
        for child in &rpr.children {
            match child {
                XNode::Elem(e) if self.dialect.ignored_props.contains(&e.name) => {}
                XNode::Elem(e) => canonical_into(self.src, e, &mut canonical),
                XNode::Text(range, kind) if !is_blank(self.src, range, *kind) => {
                    canonical.push_str(self.src.get(range.clone()).unwrap_or(""));
                }
                XNode::Text(..) => {}
            }
        }
        self.key_of(canonical)
    }

    /// The key of a canonical style (0 for none).
    fn key_of(&mut self, canonical: String) -> usize {
        if canonical.is_empty() {
            return 0;
        }
        let next = self.keys.len() + 1;
        *self.keys.entry(canonical).or_insert(next)
    }
}

/// Canonical markup of an element: source markup without blank text.
/// The range of an element's content when it is only text (character data
/// and references, no elements, CDATA or comments) and not empty.
fn text_content(elem: &Elem<'_>) -> Option<std::ops::Range<usize>> {
    let mut range: Option<std::ops::Range<usize>> = None;
    for child in &elem.children {
        match child {
            XNode::Text(r, TextKind::Chars | TextKind::Ref) => {
                range = Some(range.map_or(r.clone(), |a| a.start..r.end));
            }
            _ => return None,
        }
    }
    range
}

fn canonical_into(src: &str, elem: &Elem<'_>, out: &mut String) {
    out.push_str(src.get(elem.start.clone()).unwrap_or(""));
    for child in &elem.children {
        match child {
            XNode::Elem(e) => canonical_into(src, e, out),
            XNode::Text(range, kind) => {
                if !is_blank(src, range, *kind) && *kind != TextKind::Other {
                    out.push_str(src.get(range.clone()).unwrap_or(""));
                }
            }
        }
    }
    if let Some(end) = &elem.end {
        out.push_str(src.get(end.clone()).unwrap_or(""));
    }
}

/// Whether a text element holds markup (elements, comments, processing
/// instructions) besides its characters.
fn has_markup(elem: &Elem<'_>) -> bool {
    elem.children
        .iter()
        .any(|c| matches!(c, XNode::Elem(_) | XNode::Text(_, TextKind::Other)))
}
