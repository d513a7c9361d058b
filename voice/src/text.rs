//! Splitting text into sentences, so speech can start before the whole text is spoken.

/// Longest piece handed to the synthesiser at once, in characters; longer
/// sentences are cut at a space.
pub const MAX_PIECE_CHARS: usize = 300;

/// Splits `text` into non-empty sentences (at `.`, `!`, `?`, `;`, `…`, CJK stops
/// and line breaks), each at most [`MAX_PIECE_CHARS`] long.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\n' || c == '\r' {
            push(&mut out, &mut current);
            continue;
        }
        current.push(c);
        let stop = matches!(c, '.' | '!' | '?' | ';' | '…' | '。' | '！' | '？');
        let cjk = matches!(c, '。' | '！' | '？');
        let sentence_end = stop && (cjk || chars.peek().is_none_or(|n| n.is_whitespace()));
        let len = current.chars().count();
        let too_long = (len >= MAX_PIECE_CHARS && c.is_whitespace()) || len >= 2 * MAX_PIECE_CHARS;
        if sentence_end || too_long {
            push(&mut out, &mut current);
        }
    }
    push(&mut out, &mut current);
    out
}

fn push(out: &mut Vec<String>, current: &mut String) {
    let s = current.trim();
    if s.chars().any(char::is_alphanumeric) {
        out.push(s.to_owned());
    } else if let Some(last) = out.last_mut()
        && !s.is_empty()
    {
        last.push_str(s);
    }
    current.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_sentences() {
        assert_eq!(
            sentences("Hello there. How are you? Fine!\nNew line"),
            ["Hello there.", "How are you?", "Fine!", "New line"]
        );
        assert_eq!(sentences("Version 1.5 is out."), ["Version 1.5 is out."]);
        assert!(sentences("  ... \n ").is_empty());
    }

    #[test]
    fn cuts_long_sentences() {
        let long = "word ".repeat(200);
        let parts = sentences(&long);
        assert!(parts.len() >= 3);
        assert!(
            parts
                .iter()
                .all(|p| p.chars().count() <= MAX_PIECE_CHARS + 5)
        );
        assert_eq!(parts.join(" "), long.trim());
    }
}
