//! The atoms a paragraph is read into (see [`super::paragraph`]): text of a
//! run, placeholders, field characters and containers, and the passes over
//! them that do not depend on the part's dialect — fields resolved into
//! containers, containers normalised, leading and trailing markup trimmed,
//! the base style found.

use super::skeleton::RunStyle;
use crate::xml::Elem;

#[derive(Clone, Copy)]
pub(super) struct Run<'t> {
    /// The run; `None` for a bare text element (SpreadsheetML's plain strings).
    pub elem: Option<&'t Elem<'t>>,
    pub rpr: Option<&'t Elem<'t>>,
}

impl Run<'_> {
    pub fn style(&self) -> RunStyle {
        RunStyle {
            start: self.elem.map_or(0..0, |e| e.start.clone()),
            rpr: self.rpr.map(Elem::span),
        }
    }
}

/// Markup making up a placeholder or a container's open/close markup.
pub(super) enum Part<'t> {
    /// A whole element (copied, nested paragraphs translated).
    Elem(&'t Elem<'t>),
    /// A run child, wrapped in a copy of its run.
    InRun(Run<'t>, &'t Elem<'t>),
    /// Text written as a run (whitespace inside a container without text).
    TextRun(Run<'t>, String),
    /// An element's start tag.
    Start(&'t Elem<'t>),
    /// An element's end tag.
    End(&'t Elem<'t>),
    /// Other source text.
    Raw(std::ops::Range<usize>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum FieldChar {
    Begin,
    Separate,
    End,
}

pub(super) enum Atom<'t> {
    Text {
        run: Run<'t>,
        key: usize,
        text: String,
    },
    Placeholder {
        parts: Vec<Part<'t>>,
        keep: bool,
    },
    Field {
        kind: FieldChar,
        part: Part<'t>,
    },
    Container {
        open: Vec<Part<'t>>,
        close: Vec<Part<'t>>,
        children: Vec<Atom<'t>>,
    },
}

impl Atom<'_> {
    pub fn is_placeholder(&self) -> bool {
        matches!(self, Atom::Placeholder { .. })
    }
}

/// Turns complex fields (`fldChar` begin/separate/end) into containers or
/// placeholders. Field characters without a partner in this level (fields
/// spanning paragraphs) become placeholders.
pub(super) fn resolve_fields(atoms: Vec<Atom<'_>>) -> Vec<Atom<'_>> {
    let mut items: Vec<Option<Atom<'_>>> = atoms
        .into_iter()
        .map(|atom| {
            Some(match atom {
                Atom::Container {
                    open,
                    close,
                    children,
                } => Atom::Container {
                    open,
                    close,
                    children: resolve_fields(children),
                },
                other => other,
            })
        })
        .collect();
    let mut out = Vec::with_capacity(items.len());
    let mut i = 0;
    while i < items.len() {
        if let Some(Atom::Field {
            kind: FieldChar::Begin,
            ..
        }) = &items[i]
            && let Some((separate, end)) = field_bounds(&items, i)
        {
            let code_end = separate.unwrap_or(end);
            let code_is_markup = items[i..code_end]
                .iter()
                .all(|a| matches!(a, Some(Atom::Field { .. } | Atom::Placeholder { .. })));
            if code_is_markup {
                let mut take = |range: std::ops::Range<usize>| -> Vec<Atom<'_>> {
                    items[range].iter_mut().filter_map(Option::take).collect()
                };
                match separate {
                    Some(separate) => {
                        let open = into_parts(take(i..separate + 1));
                        let children = take(separate + 1..end);
                        let close = into_parts(take(end..end + 1));
                        out.push(Atom::Container {
                            open,
                            close,
                            children: resolve_fields(children),
                        });
                    }
                    None => out.push(Atom::Placeholder {
                        parts: into_parts(take(i..end + 1)),
                        keep: true,
                    }),
                }
                i = end + 1;
                continue;
            }
        }
        if let Some(atom) = items[i].take() {
            out.push(match atom {
                Atom::Field { part, .. } => Atom::Placeholder {
                    parts: vec![part],
                    keep: true,
                },
                other => other,
            });
        }
        i += 1;
    }
    out
}

/// The `separate` (if any) and `end` field characters matching the `begin` at `begin`.
fn field_bounds(items: &[Option<Atom<'_>>], begin: usize) -> Option<(Option<usize>, usize)> {
    let mut depth = 0usize;
    let mut separate = None;
    for (j, item) in items.iter().enumerate().skip(begin + 1) {
        let Some(Atom::Field { kind, .. }) = item else {
            continue;
        };
        match kind {
            FieldChar::Begin => depth += 1,
            FieldChar::Separate if depth == 0 && separate.is_none() => separate = Some(j),
            FieldChar::Separate => {}
            FieldChar::End if depth == 0 => return Some((separate, j)),
            FieldChar::End => depth -= 1,
        }
    }
    None
}

/// The markup of atoms without text (text atoms are written as runs).
fn into_parts(atoms: Vec<Atom<'_>>) -> Vec<Part<'_>> {
    let mut parts = Vec::new();
    for atom in atoms {
        match atom {
            Atom::Text { run, text, .. } => parts.push(Part::TextRun(run, text)),
            Atom::Placeholder { parts: p, .. } => parts.extend(p),
            Atom::Field { part, .. } => parts.push(part),
            Atom::Container {
                open,
                close,
                children,
            } => {
                parts.extend(open);
                parts.extend(into_parts(children));
                parts.extend(close);
            }
        }
    }
    parts
}

pub(super) fn has_text(atoms: &[Atom<'_>]) -> bool {
    atoms.iter().any(|atom| match atom {
        Atom::Text { text, .. } => !text.trim().is_empty(),
        Atom::Container { children, .. } => has_text(children),
        _ => false,
    })
}

/// Containers without text become placeholders; a container's leading and
/// trailing placeholders join its open/close markup; a container holding
/// only another container merges with it; adjacent placeholders merge.
pub(super) fn normalize(atoms: Vec<Atom<'_>>) -> Vec<Atom<'_>> {
    let mut out: Vec<Atom<'_>> = Vec::with_capacity(atoms.len());
    for atom in atoms {
        let atom = match atom {
            Atom::Container {
                mut open,
                mut close,
                children,
            } => {
                let children = normalize(children);
                if has_text(&children) {
                    let (lead, mut inner, trail) = trim(children);
                    open.extend(lead);
                    close.splice(0..0, trail);
                    if let [Atom::Container { .. }] = inner.as_slice()
                        && let Some(Atom::Container {
                            open: o,
                            close: c,
                            children: ch,
                        }) = inner.pop()
                    {
                        open.extend(o);
                        close.splice(0..0, c);
                        inner = ch;
                    }
                    Atom::Container {
                        open,
                        close,
                        children: inner,
                    }
                } else {
                    let mut parts = open;
                    parts.extend(into_parts(children));
                    parts.extend(close);
                    Atom::Placeholder { parts, keep: true }
                }
            }
            Atom::Field { part, .. } => Atom::Placeholder {
                parts: vec![part],
                keep: true,
            },
            other => other,
        };
        if let Atom::Placeholder { parts, keep } = atom {
            if let Some(Atom::Placeholder {
                parts: prev,
                keep: prev_keep,
            }) = out.last_mut()
            {
                prev.extend(parts);
                *prev_keep |= keep;
            } else {
                out.push(Atom::Placeholder { parts, keep });
            }
            continue;
        }
        out.push(atom);
    }
    out
}

/// Splits leading and trailing placeholders off a level, as markup.
pub(super) fn trim(mut atoms: Vec<Atom<'_>>) -> (Vec<Part<'_>>, Vec<Atom<'_>>, Vec<Part<'_>>) {
    let lead_len = atoms.iter().take_while(|a| a.is_placeholder()).count();
    let trail_len = atoms[lead_len..]
        .iter()
        .rev()
        .take_while(|a| a.is_placeholder())
        .count();
    let trail = atoms.split_off(atoms.len() - trail_len);
    let rest = atoms.split_off(lead_len);
    (into_parts(atoms), rest, into_parts(trail))
}

/// The style used by most characters of a level (direct text first, else
/// the first text found in containers).
pub(super) fn base_run<'t>(atoms: &[Atom<'t>]) -> Option<(usize, Run<'t>)> {
    let mut counts: Vec<(usize, usize, Run<'t>)> = Vec::new();
    for atom in atoms {
        if let Atom::Text { run, key, text } = atom {
            let chars = text.chars().count();
            match counts.iter_mut().find(|(k, _, _)| k == key) {
                Some(entry) => entry.1 += chars,
                None => counts.push((*key, chars, *run)),
            }
        }
    }
    let best = counts
        .iter()
        .enumerate()
        .max_by_key(|(index, (_, chars, _))| (*chars, std::cmp::Reverse(*index)))
        .map(|(_, (key, _, run))| (*key, *run));
    best.or_else(|| {
        atoms.iter().find_map(|atom| match atom {
            Atom::Container { children, .. } => base_run(children),
            _ => None,
        })
    })
}
