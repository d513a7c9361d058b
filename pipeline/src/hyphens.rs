//! Soft hyphens (U+00AD): hyphenation hints a typesetter or an author put
//! inside words (`Kuber\u{AD}netes`). An engine does not know a word cut by
//! one, so they are taken out before translation; a word the translation
//! keeps as it was (a name, a product, an untranslated term) gets its soft
//! hyphens back.

/// The soft hyphen.
const SOFT_HYPHEN: char = '\u{AD}';

/// `text` without its soft hyphens, and the words that held them (as
/// written, hyphens included).
pub(crate) fn strip(text: String) -> (String, Vec<String>) {
    if !text.contains(SOFT_HYPHEN) {
        return (text, Vec::new());
    }
    let mut words: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric() && c != SOFT_HYPHEN) {
        if word.contains(SOFT_HYPHEN)
            && word.chars().any(char::is_alphanumeric)
            && !words.iter().any(|w| w == word)
        {
            words.push(word.to_owned());
        }
    }
    (text.replace(SOFT_HYPHEN, ""), words)
}

/// `translation` with the soft hyphens of `words` back in each whole word
/// (outside markup) that reads as one of them without its hyphens.
pub(crate) fn restore(translation: String, words: &[String]) -> String {
    if words.is_empty() {
        return translation;
    }
    let plain: Vec<(String, &str)> = words
        .iter()
        .map(|w| (w.replace(SOFT_HYPHEN, ""), w.as_str()))
        .collect();
    let mut out = String::with_capacity(translation.len() + words.len() * 4);
    let mut in_tag = false;
    let mut word_start: Option<usize> = None;
    let flush = |out: &mut String, word: &str| match plain.iter().find(|(p, _)| p == word) {
        Some((_, hyphenated)) => out.push_str(hyphenated),
        None => out.push_str(word),
    };
    for (i, c) in translation.char_indices() {
        if !in_tag && c.is_alphanumeric() {
            word_start.get_or_insert(i);
            continue;
        }
        if let Some(start) = word_start.take() {
            flush(&mut out, &translation[start..i]);
        }
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            _ => {}
        }
        out.push(c);
    }
    if let Some(start) = word_start {
        flush(&mut out, &translation[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_hyphens_leave_for_the_engine_and_come_back_in_kept_words() {
        let (text, words) = strip("Kuber\u{AD}netes runs the con\u{AD}tainers.".to_owned());
        assert_eq!(text, "Kubernetes runs the containers.");
        assert_eq!(words, ["Kuber\u{AD}netes", "con\u{AD}tainers"]);
        assert_eq!(
            restore("Kubernetes ejecuta los contenedores.".to_owned(), &words),
            "Kuber\u{AD}netes ejecuta los contenedores."
        );
        // A word inside markup is not text.
        assert_eq!(
            restore("<g id=\"Kubernetes\">Kubernetes</g>".to_owned(), &words),
            "<g id=\"Kubernetes\">Kuber\u{AD}netes</g>"
        );
        // Only whole words.
        assert_eq!(restore("Kubernetesx".to_owned(), &words), "Kubernetesx");
        let (text, words) = strip("No hyphens here.".to_owned());
        assert_eq!((text.as_str(), words.len()), ("No hyphens here.", 0));
    }
}
