//! Segment slots: how a skeleton refers to its segments.
//!
//! A filter reserves a slot when a translatable unit starts (so segments come
//! out in document order even when units nest, e.g. a text box inside a
//! paragraph) and fills it once the unit turned out to hold text. Unfilled
//! slots are dropped when the segments are numbered.

/// Reserved and filled slots of one document.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    filled: Vec<Option<String>>,
}

impl Slots {
    /// Reserves the next slot.
    pub(crate) fn reserve(&mut self) -> usize {
        self.filled.push(None);
        self.filled.len() - 1
    }

    /// How many slots were reserved so far.
    pub(crate) fn reserved(&self) -> usize {
        self.filled.len()
    }

    /// Sets the segment of a reserved slot.
    pub(crate) fn fill(&mut self, slot: usize, segment: String) {
        if let Some(entry) = self.filled.get_mut(slot) {
            *entry = Some(segment);
        }
    }

    /// The segments in slot order and the slot → segment index map.
    pub(crate) fn finish(self) -> (Vec<String>, SlotMap) {
        let mut segments = Vec::new();
        let mut map = Vec::with_capacity(self.filled.len());
        for entry in self.filled {
            match entry {
                Some(segment) => {
                    map.push(Some(segments.len()));
                    segments.push(segment);
                }
                None => map.push(None),
            }
        }
        (segments, SlotMap(map))
    }
}

/// Maps slots to segment indexes.
#[derive(Debug, Default)]
pub(crate) struct SlotMap(Vec<Option<usize>>);

/// The source and translated text of every segment, looked up by slot.
#[derive(Clone, Copy)]
pub(crate) struct Texts<'a> {
    map: &'a SlotMap,
    source: &'a [String],
    translated: &'a [String],
}

impl<'a> Texts<'a> {
    pub(crate) fn new(map: &'a SlotMap, source: &'a [String], translated: &'a [String]) -> Self {
        Texts {
            map,
            source,
            translated,
        }
    }

    /// `(source, translation)` of a slot; empty strings for an unknown slot.
    pub(crate) fn get(&self, slot: usize) -> (&'a str, &'a str) {
        let index = self.map.0.get(slot).copied().flatten();
        let pick = |list: &'a [String]| index.and_then(|i| list.get(i)).map_or("", String::as_str);
        (pick(self.source), pick(self.translated))
    }
}
