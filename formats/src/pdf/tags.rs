//! Tagged PDFs: the translation of a paragraph joins the structure its
//! original belonged to. Each translated paragraph is drawn as marked
//! content with an id of its own (the page's next free `MCID`, under the
//! tag of its original's sequence); the structure element of its
//! original's first id takes that id among its kids, and the page's entry
//! in the structure tree's parent tree maps the id to the element. An
//! original sequence left empty (its text removed, nothing else painted
//! in it) becomes an artifact and its id gives way to the translation's in
//! the element's kids, in its place, so the structure keeps its order; a
//! sequence that still paints something stays, the translation's id added
//! after it. A paragraph whose original was all page furniture
//! (`/Artifact`) is marked an artifact again. A page outside the structure
//! tree, or whose parent tree entry cannot be found, is drawn as in an
//! untagged PDF.

use std::collections::BTreeSet;

use lopdf::content::Operation;
use lopdf::{Document as Pdf, Object, ObjectId, dictionary};

use super::text::Marking;

/// The deepest a parent tree is searched.
const MAX_DEPTH: usize = 32;

/// Where a page's entry of the parent tree (an array of the structure
/// elements of its ids) is held.
enum Slot {
    /// An array object of its own.
    Object(ObjectId),
    /// In place in a number tree node's `Nums`, at an index.
    InNums(ObjectId, usize),
}

/// A page of a tagged PDF as its translation is marked.
pub(super) struct Tagged {
    page: ObjectId,
    slot: Slot,
    /// The next free marked-content id.
    next: i64,
    /// The ids of the page's sequences its translation leaves empty.
    emptied: BTreeSet<i64>,
}

impl Tagged {
    /// The page's place in the structure, when the document is tagged and
    /// the page has an entry in its parent tree; `ops` are its content (for
    /// the ids it uses), `removed` the indices of the show operators whose
    /// text is removed.
    pub fn of(
        pdf: &Pdf,
        page: ObjectId,
        ops: &[Operation],
        removed: &BTreeSet<usize>,
    ) -> Option<Self> {
        let key = pdf
            .get_dictionary(page)
            .ok()?
            .get(b"StructParents")
            .ok()?
            .as_i64()
            .ok()?;
        let root = pdf
            .catalog()
            .ok()?
            .get(b"StructTreeRoot")
            .ok()?
            .as_reference()
            .ok()?;
        let tree = pdf
            .get_dictionary(root)
            .ok()?
            .get(b"ParentTree")
            .ok()?
            .as_reference()
            .ok()?;
        let slot = find(pdf, tree, key, 0)?;
        let used = ops
            .iter()
            .filter(|op| op.operator == "BDC")
            .filter_map(mcid_of)
            .max();
        let entries = entries(pdf, &slot)?.len() as i64;
        Some(Self {
            page,
            slot,
            next: used.map_or(0, |m| m + 1).max(entries),
            emptied: emptied(ops, removed),
        })
    }

    /// What stands for content operator `op`: an emptied sequence's start
    /// becomes an artifact's.
    pub fn content(&self, op: Operation) -> Operation {
        match mcid_of(&op) {
            Some(id) if self.emptied.contains(&id) => artifact(),
            _ => op,
        }
    }

    /// `ops` (a paragraph's translation) marked as its original was
    /// (`mcids`: the ids its original's text lay in, in order).
    pub fn mark(
        &mut self,
        pdf: &mut Pdf,
        marking: &Marking,
        mcids: &[i64],
        ops: Vec<Operation>,
    ) -> Vec<Operation> {
        if marking.artifact {
            return wrapped(artifact(), ops);
        }
        let Some((tag, original)) = &marking.mcid else {
            return ops;
        };
        let Some(element) = self.element(pdf, *original) else {
            return ops;
        };
        let id = self.next;
        let gone: Vec<i64> = mcids
            .iter()
            .copied()
            .filter(|m| self.emptied.contains(m) && self.element(pdf, *m) == Some(element))
            .collect();
        if !attach(pdf, element, self.page, id, &gone) {
            return ops;
        }
        self.next += 1;
        if let Some(entries) = entries_mut(pdf, &self.slot) {
            let at = id as usize;
            if entries.len() <= at {
                entries.resize(at + 1, Object::Null);
            }
            entries[at] = Object::Reference(element);
            for m in gone {
                if let Some(entry) = entries.get_mut(m as usize) {
                    *entry = Object::Null;
                }
            }
        }
        let begin = Operation::new(
            "BDC",
            vec![
                Object::Name(tag.clone()),
                Object::Dictionary(dictionary! { "MCID" => id }),
            ],
        );
        wrapped(begin, ops)
    }

    /// The structure element marked-content id `mcid` of the page belongs
    /// to.
    fn element(&self, pdf: &Pdf, mcid: i64) -> Option<ObjectId> {
        entries(pdf, &self.slot)?
            .get(usize::try_from(mcid).ok()?)?
            .as_reference()
            .ok()
    }
}

/// The start of an artifact sequence.
fn artifact() -> Operation {
    Operation::new("BMC", vec![Object::Name(b"Artifact".to_vec())])
}

/// The marked-content id a `BDC` operator gives in place.
fn mcid_of(op: &Operation) -> Option<i64> {
    if op.operator != "BDC" {
        return None;
    }
    match op.operands.get(1) {
        Some(Object::Dictionary(d)) => d.get(b"MCID").ok()?.as_i64().ok(),
        _ => None,
    }
}

/// The ids of the sequences that showed text, all of it `removed`, and
/// painted nothing else.
fn emptied(ops: &[Operation], removed: &BTreeSet<usize>) -> BTreeSet<i64> {
    // Each open sequence: its id, whether it still paints nothing kept,
    // whether it showed removed text.
    let mut open: Vec<Option<(i64, bool, bool)>> = Vec::new();
    let mut out = BTreeSet::new();
    for (index, op) in ops.iter().enumerate() {
        let name = op.operator.as_str();
        match name {
            "BDC" => open.push(mcid_of(op).map(|id| (id, true, false))),
            "BMC" => open.push(None),
            "EMC" => {
                if let Some(Some((id, true, true))) = open.pop() {
                    out.insert(id);
                }
            }
            "Tj" | "TJ" | "'" | "\"" if removed.contains(&index) => {
                for (_, _, showed) in open.iter_mut().flatten() {
                    *showed = true;
                }
            }
            "Tj" | "TJ" | "'" | "\"" | "Do" | "BI" | "sh" | "f" | "F" | "f*" | "S" | "s" | "B"
            | "B*" | "b" | "b*" => {
                for (_, empty, _) in open.iter_mut().flatten() {
                    *empty = false;
                }
            }
            _ => {}
        }
    }
    out
}

/// `ops` between `begin` and `EMC`.
fn wrapped(begin: Operation, ops: Vec<Operation>) -> Vec<Operation> {
    let mut out = Vec::with_capacity(ops.len() + 2);
    out.push(begin);
    out.extend(ops);
    out.push(Operation::new("EMC", vec![]));
    out
}

/// Adds marked-content id `id` of `page` to the kids of structure element
/// `element`, in the place of the first of `gone` (ids it no longer has;
/// after the others when none is there); `false` when it cannot.
fn attach(pdf: &mut Pdf, element: ObjectId, page: ObjectId, id: i64, gone: &[i64]) -> bool {
    let Ok(dict) = pdf.get_dictionary(element) else {
        return false;
    };
    let same_page = dict.get(b"Pg").and_then(Object::as_reference).ok() == Some(page);
    let held = dict.get(b"K").and_then(Object::as_reference).ok();
    let kid = match same_page {
        true => Object::Integer(id),
        false => Object::Dictionary(dictionary! {
            "Type" => "MCR",
            "Pg" => Object::Reference(page),
            "MCID" => id,
        }),
    };
    // Kids held in an array object of their own.
    if let Some(kids) = held
        && let Ok(Object::Array(kids)) = pdf.get_object_mut(kids)
    {
        replace(kids, kid, page, same_page, gone);
        return true;
    }
    let Ok(dict) = pdf.get_dictionary_mut(element) else {
        return false;
    };
    match dict.get_mut(b"K") {
        Ok(Object::Array(kids)) => replace(kids, kid, page, same_page, gone),
        Ok(other) => {
            let mut kids = vec![other.clone()];
            replace(&mut kids, kid, page, same_page, gone);
            *other = Object::Array(kids);
        }
        Err(_) => dict.set("K", Object::Array(vec![kid])),
    }
    true
}

/// Puts `kid` in the place of the first of the kids that are ids in
/// `gone` (of `page`; bare ids are when the element is on that page,
/// `bare`) and drops the others; at the end when none is.
fn replace(kids: &mut Vec<Object>, kid: Object, page: ObjectId, bare: bool, gone: &[i64]) {
    let is_gone = |k: &Object| {
        let id = match k {
            Object::Integer(id) if bare => Some(*id),
            Object::Dictionary(d)
                if d.get(b"Pg").and_then(Object::as_reference).ok() == Some(page) =>
            {
                d.get(b"MCID").and_then(Object::as_i64).ok()
            }
            _ => None,
        };
        id.is_some_and(|id| gone.contains(&id))
    };
    match kids.iter().position(is_gone) {
        Some(at) => {
            kids[at] = kid;
            let mut index = 0;
            kids.retain(|k| {
                index += 1;
                index - 1 == at || !is_gone(k)
            });
        }
        None => kids.push(kid),
    }
}

/// Where the parent tree under `node` holds key `key`.
fn find(pdf: &Pdf, node: ObjectId, key: i64, depth: usize) -> Option<Slot> {
    if depth > MAX_DEPTH {
        return None;
    }
    let dict = pdf.get_dictionary(node).ok()?;
    if let Ok(Object::Array(nums)) = dict.get(b"Nums") {
        for (i, pair) in nums.chunks(2).enumerate() {
            if pair[0].as_i64().ok() != Some(key) {
                continue;
            }
            return match pair.get(1)? {
                Object::Reference(id) => Some(Slot::Object(*id)),
                Object::Array(_) => Some(Slot::InNums(node, i * 2 + 1)),
                _ => None,
            };
        }
    }
    let kids = dict.get(b"Kids").and_then(Object::as_array).ok()?;
    kids.iter()
        .filter_map(|kid| kid.as_reference().ok())
        .find_map(|kid| find(pdf, kid, key, depth + 1))
}

/// The entries of a page's slot in the parent tree.
fn entries<'a>(pdf: &'a Pdf, slot: &Slot) -> Option<&'a Vec<Object>> {
    match slot {
        Slot::Object(id) => pdf.get_object(*id).ok()?.as_array().ok(),
        Slot::InNums(node, at) => pdf
            .get_dictionary(*node)
            .ok()?
            .get(b"Nums")
            .ok()?
            .as_array()
            .ok()?
            .get(*at)?
            .as_array()
            .ok(),
    }
}

fn entries_mut<'a>(pdf: &'a mut Pdf, slot: &Slot) -> Option<&'a mut Vec<Object>> {
    match slot {
        Slot::Object(id) => pdf.get_object_mut(*id).ok()?.as_array_mut().ok(),
        Slot::InNums(node, at) => pdf
            .get_dictionary_mut(*node)
            .ok()?
            .get_mut(b"Nums")
            .ok()?
            .as_array_mut()
            .ok()?
            .get_mut(*at)?
            .as_array_mut()
            .ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(operator: &str, operands: Vec<Object>) -> Operation {
        Operation::new(operator, operands)
    }

    fn begin(id: i64) -> Operation {
        op(
            "BDC",
            vec![
                Object::Name(b"P".to_vec()),
                Object::Dictionary(dictionary! { "MCID" => id }),
            ],
        )
    }

    #[test]
    fn a_sequence_is_emptied_only_when_all_it_paints_is_removed_text() {
        let ops = vec![
            begin(0),
            op("Tj", vec![]),
            op("EMC", vec![]),
            begin(1),
            op("Tj", vec![]),
            op("Do", vec![Object::Name(b"Im1".to_vec())]),
            op("EMC", vec![]),
            begin(2),
            op("Tj", vec![]),
            op("Tj", vec![]),
            op("EMC", vec![]),
            begin(3),
            op("EMC", vec![]),
        ];
        let removed = BTreeSet::from([1, 4, 8]);
        // 1 paints an image too, 2 keeps a show, 3 showed nothing removed.
        assert_eq!(emptied(&ops, &removed), BTreeSet::from([0]));
    }

    #[test]
    fn the_new_id_takes_the_place_of_the_first_gone_and_the_others_go() {
        let page = (7, 0);
        let other = (9, 0);
        let mcr = |pg: ObjectId, id: i64| {
            Object::Dictionary(dictionary! { "Type" => "MCR", "Pg" => pg, "MCID" => id })
        };
        let mut kids = vec![
            Object::Integer(4),
            mcr(other, 2),
            Object::Integer(2),
            mcr(page, 3),
        ];
        replace(&mut kids, Object::Integer(9), page, true, &[2, 3]);
        assert_eq!(
            kids,
            [Object::Integer(4), mcr(other, 2), Object::Integer(9)]
        );

        // Bare ids of an element on another page are not this page's.
        let mut kids = vec![Object::Integer(2)];
        replace(&mut kids, mcr(page, 9), page, false, &[2]);
        assert_eq!(kids, [Object::Integer(2), mcr(page, 9)]);
    }
}
