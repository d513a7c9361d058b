//! Words of a segment, as the fuzzy-match candidate index sees them: the
//! distinct lower-cased runs of letters and digits, each hashed to 32 bits
//! (FNV-1a). Units are found by the rarest words they share with a query.

/// The distinct word hashes of `text`, sorted.
pub fn hashes(text: &str) -> Vec<i32> {
    let mut out = Vec::new();
    let mut h: u32 = OFFSET;
    let mut in_word = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            for l in c.to_lowercase() {
                let mut buf = [0u8; 4];
                for b in l.encode_utf8(&mut buf).bytes() {
                    h ^= u32::from(b);
                    h = h.wrapping_mul(PRIME);
                }
            }
            in_word = true;
        } else if in_word {
            out.push(h as i32);
            h = OFFSET;
            in_word = false;
        }
    }
    if in_word {
        out.push(h as i32);
    }
    out.sort_unstable();
    out.dedup();
    out
}

const OFFSET: u32 = 0x811C_9DC5;
const PRIME: u32 = 0x0100_0193;

/// Writes `words` as a PostgreSQL array literal (`{1,-2,3}`).
pub fn array_literal(out: &mut Vec<u8>, words: &[i32]) {
    out.push(b'{');
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(w.to_string().as_bytes());
    }
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_case_and_punctuation_blind() {
        assert_eq!(hashes("The cat, the CAT!"), hashes("cat the"));
        assert_eq!(hashes("Straße über"), hashes("STRAßE ÜBER"));
        assert_eq!(hashes("a b c").len(), 3);
        assert!(hashes("  ...  ").is_empty());
        let mut out = Vec::new();
        array_literal(&mut out, &[1, -2]);
        assert_eq!(out, b"{1,-2}");
    }
}
