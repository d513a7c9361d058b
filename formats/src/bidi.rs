//! The order words are seen in, for text set line by line (a PDF's
//! translation, a picture's): Unicode's bidirectional algorithm
//! (unicode-bidi) run over the words with a space between each, then rule
//! L2 applied to a line's words and the spaces between them, so that
//! right-to-left text (Arabic, Hebrew) reads from the right and numbers and
//! Latin words within it from the left. Each word is shaped on its own, in
//! its own direction.

/// Whether the text of `words` runs right to left (its first strong
/// character says), and the levels (odd: right to left) of each word and
/// of the space after it.
pub(crate) fn levels<S: AsRef<str>>(words: &[S]) -> (bool, Vec<(u8, u8)>) {
    let joined = words
        .iter()
        .map(AsRef::as_ref)
        .collect::<Vec<_>>()
        .join(" ");
    let bidi = unicode_bidi::BidiInfo::new(&joined, None);
    let rtl = bidi.paragraphs.first().is_some_and(|p| p.level.is_rtl());
    let mut at = 0;
    let levels = words
        .iter()
        .map(|word| {
            let level = |at: usize| bidi.levels.get(at).map_or(0, |l| l.number());
            let levels = (level(at), level(at + word.as_ref().len()));
            at += word.as_ref().len() + 1;
            levels
        })
        .collect();
    (rtl, levels)
}

/// The order a line's words (their `levels`, as [`levels`] gives them) are
/// seen in, left to right, as indices: rule L2 over the words and the
/// spaces between them (from the highest level down to the lowest odd one,
/// every run at that level or higher reversed).
pub(crate) fn visual(levels: &[(u8, u8)]) -> Vec<usize> {
    // Each word, and the space after each but the last.
    let mut items: Vec<(u8, Option<usize>)> = Vec::with_capacity(levels.len() * 2);
    for (i, (word, space)) in levels.iter().enumerate() {
        items.push((*word, Some(i)));
        if i + 1 < levels.len() {
            items.push((*space, None));
        }
    }
    let all = items.iter().map(|(level, _)| *level);
    if let Some(lowest_odd) = all.clone().filter(|l| l % 2 == 1).min() {
        let highest = all.max().unwrap_or(lowest_odd);
        for level in (lowest_odd..=highest).rev() {
            let mut i = 0;
            while i < items.len() {
                let start = i;
                while i < items.len() && items[i].0 >= level {
                    i += 1;
                }
                items[start..i].reverse();
                i = i.max(start + 1);
            }
        }
    }
    items.into_iter().filter_map(|(_, word)| word).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn right_to_left_words_are_seen_right_to_left_and_numbers_left_to_right() {
        let (rtl, levels) = levels(&["البيت", "كبير", "2026", "2027", "Tolk", "x"]);
        assert!(rtl);
        // Right to left; each number, and the Latin words, left to right.
        assert_eq!(visual(&levels), [4, 5, 3, 2, 1, 0]);
        let (rtl, english) = super::levels(&["The", "house", "2026"]);
        assert!(!rtl);
        assert_eq!(visual(&english), [0, 1, 2]);
    }
}
