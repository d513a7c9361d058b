//! Words made whole for the engine: the letters of a word cut by a tracked
//! change's boundary, or by a zero-width marker (bookmark, comment range),
//! are brought together.

use super::*;

impl PartExtractor<'_, '_> {
    /// Makes whole each word cut by the boundary of a tracked change ("her"
    /// then an inserted "e"): the letters inside the change move out, beside
    /// the rest of their word (keeping their run's formatting), so the engine
    /// sees one word.
    pub(super) fn revisions_out_of_words<'t>(&self, atoms: Vec<Atom<'t>>) -> Vec<Atom<'t>> {
        let mut out: Vec<Atom<'t>> = Vec::with_capacity(atoms.len());
        let mut iter = atoms.into_iter().peekable();
        while let Some(atom) = iter.next() {
            let Atom::Container {
                open,
                close,
                children,
            } = atom
            else {
                out.push(atom);
                continue;
            };
            let mut children = self.revisions_out_of_words(children);
            let revision = matches!(open.first(),
                Some(Part::Start(e)) if self.dialect.revisions.contains(&e.name));
            let mut after = None;
            if revision {
                let word_before = matches!(out.last(), Some(Atom::Text { text, .. })
                    if text.chars().next_back().is_some_and(char::is_alphanumeric));
                if word_before && let Some(Atom::Text { run, key, text }) = children.first_mut() {
                    let end = text
                        .char_indices()
                        .find(|(_, c)| !c.is_alphanumeric())
                        .map_or(text.len(), |(i, _)| i);
                    if end > 0 {
                        let rest = text.split_off(end);
                        out.push(Atom::Text {
                            run: *run,
                            key: *key,
                            text: std::mem::replace(text, rest),
                        });
                        if text.is_empty() {
                            children.remove(0);
                        }
                    }
                }
                let word_after = matches!(iter.peek(), Some(Atom::Text { text, .. })
                    if text.chars().next().is_some_and(char::is_alphanumeric));
                if word_after && let Some(Atom::Text { run, key, text }) = children.last_mut() {
                    let start = text
                        .char_indices()
                        .rev()
                        .take_while(|(_, c)| c.is_alphanumeric())
                        .last()
                        .map_or(text.len(), |(i, _)| i);
                    if start < text.len() {
                        after = Some(Atom::Text {
                            run: *run,
                            key: *key,
                            text: text.split_off(start),
                        });
                        if text.is_empty() {
                            children.pop();
                        }
                    }
                }
            }
            out.push(Atom::Container {
                open,
                close,
                children,
            });
            out.extend(after);
        }
        out
    }

    /// Moves each zero-width marker that stands inside a word (a letter or
    /// digit on both sides) to the end of that word.
    pub(super) fn markers_out_of_words<'t>(&self, atoms: Vec<Atom<'t>>) -> Vec<Atom<'t>> {
        let mut out: Vec<Atom<'t>> = Vec::with_capacity(atoms.len());
        let mut iter = atoms.into_iter().peekable();
        while let Some(atom) = iter.next() {
            let atom = match atom {
                Atom::Container {
                    open,
                    close,
                    children,
                } => Atom::Container {
                    open,
                    close,
                    children: self.markers_out_of_words(children),
                },
                other => other,
            };
            let inside_word = self.is_marker(&atom)
                && matches!(out.last(), Some(Atom::Text { text, .. })
                    if text.chars().next_back().is_some_and(char::is_alphanumeric))
                && matches!(iter.peek(), Some(Atom::Text { text, .. })
                    if text.chars().next().is_some_and(char::is_alphanumeric));
            if !inside_word {
                out.push(atom);
                continue;
            }
            let Some(Atom::Text { run, key, text }) = iter.next() else {
                out.push(atom);
                continue;
            };
            let end = text
                .char_indices()
                .find(|(_, c)| !c.is_alphanumeric())
                .map_or(text.len(), |(i, _)| i);
            out.push(Atom::Text {
                run,
                key,
                text: text[..end].to_owned(),
            });
            out.push(atom);
            if end < text.len() {
                out.push(Atom::Text {
                    run,
                    key,
                    text: text[end..].to_owned(),
                });
            }
        }
        out
    }

    /// Whether an atom is only zero-width markers.
    pub(super) fn is_marker(&self, atom: &Atom<'_>) -> bool {
        match atom {
            Atom::Placeholder { parts, .. } => {
                !parts.is_empty()
                    && parts.iter().all(
                        |p| matches!(p, Part::Elem(e) if self.dialect.markers.contains(&e.name)),
                    )
            }
            _ => false,
        }
    }

    /// Drops Word's hidden `_GoBack` bookmark (the last edit position) when
    /// it starts and ends in this paragraph: it would only add tags.
    pub(super) fn drop_go_back(&self, atoms: &mut Vec<Atom<'_>>) {
        let elem_of = |atom: &Atom<'_>, name: &str| match atom {
            Atom::Placeholder { parts, .. } => match parts.as_slice() {
                [Part::Elem(e)] if e.name == name => Some(e.attr(self.src, "w:id")),
                _ => None,
            },
            _ => None,
        };
        let start = atoms.iter().position(|atom| match atom {
            Atom::Placeholder { parts, .. } => matches!(
                parts.as_slice(),
                [Part::Elem(e)] if e.name == "w:bookmarkStart"
                    && e.attr(self.src, "w:name").as_deref() == Some("_GoBack")
            ),
            _ => false,
        });
        let Some(start) = start else { return };
        let id = elem_of(&atoms[start], "w:bookmarkStart").flatten();
        let end = atoms
            .iter()
            .position(|atom| id.is_some() && elem_of(atom, "w:bookmarkEnd") == Some(id.clone()));
        if let Some(end) = end {
            atoms.remove(start.max(end));
            atoms.remove(start.min(end));
        }
    }
}
