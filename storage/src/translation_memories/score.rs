//! The fuzzy-match score of a translation memory lookup.
//!
//! `score(a, b) = ⌊100 × (L − d) / L⌋`, where `d` is the Levenshtein distance
//! between `a` and `b` counted in Unicode scalar values (insertions, deletions
//! and substitutions of one character each cost 1), and `L` the length of the
//! longer of the two, in characters. Comparison is exact: case, punctuation and
//! whitespace count. 100 means identical; two empty texts score 100.
//!
//! The floor makes thresholds exact: a 100-character source with 25 edits
//! scores 75 and is applied at threshold 75, with 26 edits it scores 74 and is
//! not.

/// Longest text (in characters) scored fuzzily; longer texts only match exactly.
pub const MAX_FUZZY_CHARS: usize = 4000;

/// The score of `a` against `b`, 0–100.
pub fn score(a: &str, b: &str) -> u8 {
    if a == b {
        return 100;
    }
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let longest = a.len().max(b.len());
    if longest == 0 {
        return 100;
    }
    if longest > MAX_FUZZY_CHARS {
        return 0;
    }
    let d = levenshtein(&a, &b);
    ((100 * (longest - d.min(longest))) / longest) as u8
}

/// Whether a text of this length could reach `threshold` against anything
/// (a non-empty text not longer than [`MAX_FUZZY_CHARS`]).
pub fn can_reach(text: &str, threshold: u8) -> bool {
    let n = text.chars().count();
    n > 0 && n <= MAX_FUZZY_CHARS && threshold <= 100
}

/// Levenshtein distance (two rows).
fn levenshtein(a: &[char], b: &[char]) -> usize {
    let (a, b) = if a.len() < b.len() { (b, a) } else { (a, b) };
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0usize; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_and_empty() {
        assert_eq!(score("Hello", "Hello"), 100);
        assert_eq!(score("", ""), 100);
        assert_eq!(score("a", ""), 0);
        assert_eq!(score("Hello", "hello"), 80);
    }

    #[test]
    fn thresholds_are_exact() {
        let base: String = "abcdefghij".repeat(10);
        let edit = |n: usize| -> String {
            base.chars()
                .enumerate()
                .map(|(i, c)| if i < n { 'Z' } else { c })
                .collect()
        };
        assert_eq!(score(&base, &edit(25)), 75);
        assert_eq!(score(&base, &edit(26)), 74);
        assert_eq!(score(&base, &edit(0)), 100);
        assert_eq!(score(&base, &edit(1)), 99);
        // Insertions count against the longer text.
        assert_eq!(score("kitten", "sitting"), 57);
        // Characters, not bytes.
        assert_eq!(score("äöü", "aöü"), 66);
    }

    #[test]
    fn reachability() {
        assert!(can_reach("x", 75));
        assert!(!can_reach("", 75));
        assert!(!can_reach(&"x".repeat(MAX_FUZZY_CHARS + 1), 50));
    }
}
