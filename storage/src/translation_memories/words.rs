//! Keys of a segment for the fuzzy-match candidate index: the distinct
//! 32-bit hashes (FNV-1a) of its **word bigrams** (two adjacent lower-cased
//! runs of letters and digits; a one-word segment has its word as its only
//! key). Bigrams are far rarer than words, so the rarest few keys a query
//! shares with a stored unit select a handful of candidates.

/// The lower-cased words of `text`, in order.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() {
            cur.extend(c.to_lowercase());
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The distinct keys of `text`, sorted (empty when it has no word).
pub fn keys(text: &str) -> Vec<i32> {
    keys_of(&tokens(text))
}

/// The distinct keys of a token list, sorted.
pub fn keys_of(tokens: &[String]) -> Vec<i32> {
    let mut out: Vec<i32> = match tokens {
        [] => Vec::new(),
        [one] => vec![fnv(&[one.as_bytes()])],
        _ => tokens
            .windows(2)
            .map(|w| fnv(&[w[0].as_bytes(), b"\x01", w[1].as_bytes()]))
            .collect(),
    };
    out.sort_unstable();
    out.dedup();
    out
}

fn fnv(parts: &[&[u8]]) -> i32 {
    let mut h: u32 = 0x811C_9DC5;
    for p in parts {
        for b in *p {
            h ^= u32::from(*b);
            h = h.wrapping_mul(0x0100_0193);
        }
    }
    h as i32
}

/// Writes `keys` as a PostgreSQL array literal (`{1,-2,3}`).
pub fn array_literal(out: &mut Vec<u8>, keys: &[i32]) {
    out.push(b'{');
    for (i, w) in keys.iter().enumerate() {
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
    fn keys_are_case_and_punctuation_blind_bigrams() {
        assert_eq!(tokens("The cat, the CAT!"), ["the", "cat", "the", "cat"]);
        // the·cat, cat·the (the repeated bigram counts once).
        assert_eq!(keys("The cat, the CAT!").len(), 2);
        assert_eq!(keys("the cat"), keys("THE. Cat?"));
        assert_ne!(keys("cat the"), keys("the cat"));
        assert_eq!(keys("Straße"), keys("STRAßE"));
        assert_eq!(keys("one").len(), 1);
        assert!(keys("  ...  ").is_empty());
        let mut out = Vec::new();
        array_literal(&mut out, &[1, -2]);
        assert_eq!(out, b"{1,-2}");
    }
}
