//! A paragraph's atoms written as a segment (text, `<g>` spans for runs of
//! another style and containers, `<x/>` placeholders) and as skeleton nodes.

use super::*;

impl PartExtractor<'_, '_> {
    /// Appends a level's atoms to the segment and its tags.
    pub(super) fn emit_level(
        &mut self,
        atoms: &[Atom<'_>],
        base: usize,
        builder: &mut SegmentBuilder,
        tags: &mut Vec<Tag>,
    ) {
        let mut i = 0;
        while let Some(atom) = atoms.get(i) {
            match atom {
                Atom::Text { key, text, .. } if *key == base => {
                    builder.text(text);
                    i += 1;
                }
                Atom::Text { run, key, .. } => {
                    // The span runs to the last text of the same style,
                    // taking placeholders in between along.
                    let mut last = i;
                    for (j, next) in atoms.iter().enumerate().skip(i + 1) {
                        match next {
                            Atom::Text { key: k, .. } if k == key => last = j,
                            Atom::Placeholder { .. } => {}
                            _ => break,
                        }
                    }
                    builder.open();
                    tags.push(Tag::Format(run.style()));
                    for inner in &atoms[i..=last] {
                        match inner {
                            Atom::Text { text, .. } => builder.text(text),
                            other => self.emit_placeholder(other, builder, tags),
                        }
                    }
                    builder.close();
                    i = last + 1;
                }
                Atom::Container {
                    open,
                    close,
                    children,
                } => {
                    builder.open();
                    let index = tags.len();
                    tags.push(Tag::Placeholder {
                        nodes: Vec::new(),
                        keep: false,
                    });
                    let mut open_nodes = NodeList::default();
                    self.render_parts(open, &mut open_nodes);
                    let inner = base_run(children);
                    let inner_key = inner.map_or(base, |(key, _)| key);
                    self.emit_level(children, inner_key, builder, tags);
                    let mut close_nodes = NodeList::default();
                    self.render_parts(close, &mut close_nodes);
                    let base_style = match inner {
                        Some((_, run)) => run.style(),
                        None => RunStyle {
                            start: 0..0,
                            rpr: None,
                        },
                    };
                    tags[index] = Tag::Container {
                        open: open_nodes.0,
                        close: close_nodes.0,
                        base: base_style,
                    };
                    builder.close();
                    i += 1;
                }
                other => {
                    self.emit_placeholder(other, builder, tags);
                    i += 1;
                }
            }
        }
    }

    pub(super) fn emit_placeholder(
        &mut self,
        atom: &Atom<'_>,
        builder: &mut SegmentBuilder,
        tags: &mut Vec<Tag>,
    ) {
        let mut nodes = NodeList::default();
        let keep = match atom {
            Atom::Placeholder { parts, keep } => {
                self.render_parts(parts, &mut nodes);
                *keep
            }
            other => {
                self.render_atom(other, &mut nodes);
                true
            }
        };
        builder.placeholder();
        tags.push(Tag::Placeholder {
            nodes: nodes.0,
            keep,
        });
    }

    pub(super) fn render_parts(&mut self, parts: &[Part<'_>], out: &mut NodeList) {
        for part in parts {
            match part {
                Part::Elem(elem) => self.copy_elem(elem, out),
                Part::InRun(run, child) => {
                    let Some(elem) = run.elem else {
                        self.copy_elem(child, out);
                        continue;
                    };
                    out.raw(elem.start.clone());
                    if let Some(rpr) = run.rpr {
                        out.raw(rpr.span());
                    }
                    self.copy_elem(child, out);
                    match &elem.end {
                        Some(end) => out.raw(end.clone()),
                        None => out.str(self.dialect.run_close),
                    }
                }
                Part::TextRun(run, text) => {
                    let mut rendered = String::new();
                    crate::package::skeleton::write_run(
                        self.dialect,
                        &mut rendered,
                        self.src,
                        &run.style(),
                        text,
                        None,
                    );
                    out.str(&rendered);
                }
                Part::Start(elem) => out.raw(elem.start.clone()),
                Part::End(elem) => {
                    if let Some(end) = &elem.end {
                        out.raw(end.clone());
                    }
                }
                Part::Raw(range) => out.raw(range.clone()),
            }
        }
    }

    /// Writes any atom as markup (used for atoms without text).
    pub(super) fn render_atom(&mut self, atom: &Atom<'_>, out: &mut NodeList) {
        match atom {
            Atom::Text { run, text, .. } => {
                self.render_parts(&[Part::TextRun(*run, text.clone())], out);
            }
            Atom::Placeholder { parts, .. } => self.render_parts(parts, out),
            Atom::Field { part, .. } => self.render_parts(std::slice::from_ref(part), out),
            Atom::Container {
                open,
                close,
                children,
            } => {
                self.render_parts(open, out);
                for child in children {
                    self.render_atom(child, out);
                }
                self.render_parts(close, out);
            }
        }
    }
}
