//! Tolk's text improvement: spelling correction with Hunspell dictionaries (the
//! Debian `hunspell-*` packages, read with the `spellbook` crate) plus a few
//! simple grammar fixes, changing as little as possible. Correctly spelled words
//! are never touched; a misspelled word is replaced only by a close suggestion
//! (edit distance ≤ 2), else left as is.

#![deny(missing_docs)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use spellbook::Dictionary;

/// Where Debian installs Hunspell dictionaries.
pub const DEFAULT_DIR: &str = "/usr/share/hunspell";

/// Why a dictionary could not be used.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// No dictionary for the language is installed.
    #[error("no spelling dictionary for {0} is installed (Debian package hunspell-{1})")]
    NoDictionary(String, String),
    /// The files could not be read or parsed.
    #[error("dictionary {path}: {reason}")]
    Broken {
        /// The .dic file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}

/// Dictionaries by language, loaded on first use and kept.
pub struct Speller {
    dir: PathBuf,
    loaded: Mutex<HashMap<String, Arc<Dictionary>>>,
}

impl std::fmt::Debug for Speller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Speller").field("dir", &self.dir).finish()
    }
}

/// Hunspell file stems to try for a DeepL code, best first.
fn stems(code: &str) -> Vec<&'static str> {
    match code.to_ascii_uppercase().as_str() {
        "EN-GB" => vec!["en_GB", "en_US"],
        "EN" | "EN-US" => vec!["en_US", "en_GB"],
        "ES" => vec!["es_ES", "es_MX"],
        "PT-BR" => vec!["pt_BR", "pt_PT"],
        "PT" | "PT-PT" => vec!["pt_PT", "pt_BR"],
        "FR" => vec!["fr_FR", "fr"],
        "DE" => vec!["de_DE", "de_DE_frami"],
        "IT" => vec!["it_IT"],
        "CA" => vec!["ca_ES", "ca"],
        _ => vec![],
    }
}

fn read_text(path: &Path) -> Result<String, WriteError> {
    let bytes = std::fs::read(path).map_err(|e| WriteError::Broken {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    Ok(match String::from_utf8(bytes) {
        Ok(s) => s,
        // Older dictionaries are ISO-8859-1.
        Err(e) => e.into_bytes().iter().map(|&b| b as char).collect(),
    })
}

impl Speller {
    /// Dictionaries from `dir` (e.g. [`DEFAULT_DIR`]).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            loaded: Mutex::new(HashMap::new()),
        }
    }

    /// Whether a dictionary for `code` (DeepL code) is installed.
    pub fn supports(&self, code: &str) -> bool {
        stems(code)
            .iter()
            .any(|s| self.dir.join(format!("{s}.dic")).is_file())
    }

    /// The dictionary for `code`, loading it on first use.
    pub fn dictionary(&self, code: &str) -> Result<Arc<Dictionary>, WriteError> {
        let key = code.to_ascii_uppercase();
        if let Ok(map) = self.loaded.lock()
            && let Some(d) = map.get(&key)
        {
            return Ok(d.clone());
        }
        let base = tolk_lang::base(&key);
        let stem = stems(&key)
            .into_iter()
            .find(|s| self.dir.join(format!("{s}.dic")).is_file())
            .ok_or_else(|| WriteError::NoDictionary(key.clone(), base.clone()))?;
        let dic_path = self.dir.join(format!("{stem}.dic"));
        let aff = read_text(&self.dir.join(format!("{stem}.aff")))?;
        let dic = read_text(&dic_path)?;
        let dict = Arc::new(Dictionary::new(&aff, &dic).map_err(|e| WriteError::Broken {
            path: dic_path,
            reason: e.to_string(),
        })?);
        if let Ok(mut map) = self.loaded.lock() {
            map.insert(key, dict.clone());
        }
        Ok(dict)
    }
}

/// Damerau–Levenshtein (optimal string alignment) distance, case-insensitive.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// Whether `b` is `a` with two adjacent letters swapped (the commonest typo).
fn is_swap(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    if a.len() != b.len() {
        return false;
    }
    let diff: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
    diff.len() == 2
        && diff[1] == diff[0] + 1
        && a[diff[0]] == b[diff[1]]
        && a[diff[1]] == b[diff[0]]
}

/// `word` with the case pattern of `like` (Capitalized, UPPER, or as suggested).
fn match_case(word: &str, like: &str) -> String {
    let upper = like.chars().all(|c| !c.is_lowercase()) && like.chars().count() > 1;
    if upper {
        return word.to_uppercase();
    }
    let mut chars = word.chars();
    match (like.chars().next(), chars.next()) {
        (Some(l), Some(first)) if l.is_uppercase() => first.to_uppercase().chain(chars).collect(),
        _ => word.to_owned(),
    }
}

/// A piece of text: a word (letters, inner apostrophes/hyphens) or anything else.
fn pieces(text: &str) -> Vec<(bool, String)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        if chars[i].is_alphabetic() {
            while i < chars.len()
                && (chars[i].is_alphabetic()
                    || (matches!(chars[i], '\'' | '’' | '-')
                        && chars.get(i + 1).is_some_and(|c| c.is_alphabetic())))
            {
                i += 1;
            }
            out.push((true, chars[start..i].iter().collect()));
        } else {
            while i < chars.len() && !chars[i].is_alphabetic() {
                i += 1;
            }
            out.push((false, chars[start..i].iter().collect()));
        }
    }
    out
}

/// Whether the previous non-word piece ends a sentence (or there is none).
fn sentence_start(prev: Option<&(bool, String)>, is_first: bool) -> bool {
    if is_first {
        return true;
    }
    prev.is_some_and(|(w, s)| {
        !w && {
            let t = s.trim_end();
            t.len() < s.len() && t.ends_with(['.', '!', '?', '¿', '¡', '\n']) || s.contains('\n')
        }
    })
}

/// Corrects spelling and simple grammar of `text` in language `code` (DeepL code).
pub fn correct(dict: &Dictionary, code: &str, text: &str) -> String {
    let lang = tolk_lang::base(code);
    let parts = pieces(text);
    let mut out: Vec<(bool, String)> = Vec::with_capacity(parts.len());
    let mut suggestions = Vec::new();
    for (idx, (is_word, s)) in parts.iter().enumerate() {
        if !is_word {
            out.push((false, s.clone()));
            continue;
        }
        let starts = sentence_start(out.last(), out.iter().all(|(w, _)| !w) && idx <= 1);
        let mut word = s.clone();
        let name_like = !starts && s.chars().next().is_some_and(char::is_uppercase);
        let acronym = s.chars().count() > 1 && s.chars().all(|c| !c.is_lowercase());
        if !name_like && !acronym && !dict.check(s) {
            suggestions.clear();
            dict.suggest(s, &mut suggestions);
            if let Some(best) = suggestions
                .iter()
                .filter(|c| !c.contains(' '))
                .enumerate()
                .map(|(rank, c)| {
                    let len_diff = c.chars().count().abs_diff(s.chars().count());
                    let first_differs = c.chars().next().map(|f| f.to_lowercase().to_string())
                        != s.chars().next().map(|f| f.to_lowercase().to_string());
                    (
                        (
                            distance(s, c),
                            !is_swap(s, c),
                            len_diff,
                            first_differs,
                            rank,
                        ),
                        c,
                    )
                })
                .filter(|(k, _)| k.0 <= 2)
                .min_by_key(|(k, _)| *k)
            {
                word = match_case(best.1, s);
            }
        }
        // English "i" → "I".
        if lang == "en" && word == "i" {
            word = "I".to_owned();
        }
        // Capital letter at the start of a sentence.
        if starts && word.chars().next().is_some_and(char::is_lowercase) {
            let mut c = word.chars();
            if let Some(f) = c.next() {
                word = f.to_uppercase().chain(c).collect();
            }
        }
        out.push((true, word));
    }
    grammar(&lang, &mut out);
    out.into_iter().map(|(_, s)| s).collect()
}

/// Simple grammar: repeated words, English a/an, doubled spaces, a space before
/// punctuation.
fn grammar(lang: &str, parts: &mut Vec<(bool, String)>) {
    // Repeated word separated by a single space: "the the" → "the".
    let mut i = 0;
    while i + 2 < parts.len() {
        if parts[i].0
            && !parts[i + 1].0
            && parts[i + 1].1 == " "
            && parts[i + 2].0
            && parts[i].1.to_lowercase() == parts[i + 2].1.to_lowercase()
            && !matches!(
                parts[i].1.to_lowercase().as_str(),
                "had" | "that" | "no" | "very"
            )
        {
            parts.drain(i + 1..i + 3);
            continue;
        }
        i += 1;
    }
    if lang == "en" {
        for i in 0..parts.len().saturating_sub(2) {
            if !(parts[i].0 && parts[i + 1].1 == " " && parts[i + 2].0) {
                continue;
            }
            let art = parts[i].1.clone();
            let next = parts[i + 2].1.to_lowercase();
            let vowel_sound = starts_with_vowel_sound(&next);
            let fixed = match art.as_str() {
                "a" | "A" if vowel_sound => Some(format!("{art}n")),
                "an" | "An" if !vowel_sound => Some(art[..1].to_owned()),
                _ => None,
            };
            if let Some(f) = fixed {
                parts[i].1 = f;
            }
        }
    }
    for p in parts.iter_mut().filter(|p| !p.0) {
        let mut s = p.1.clone();
        while s.contains("  ") {
            s = s.replace("  ", " ");
        }
        for mark in [",", ".", ";", ":", "!", "?"] {
            if lang != "fr" || matches!(mark, "," | ".") {
                s = s.replace(&format!(" {mark}"), mark);
            }
        }
        p.1 = s;
    }
}

fn starts_with_vowel_sound(word: &str) -> bool {
    const VOWEL_SOUND: [&str; 6] = ["hour", "honest", "honor", "honour", "heir", "herb"];
    const CONSONANT_SOUND: [&str; 8] = ["uni", "use", "usu", "eu", "one", "once", "ur", "ut"];
    if VOWEL_SOUND.iter().any(|p| word.starts_with(p)) {
        return true;
    }
    if CONSONANT_SOUND.iter().any(|p| word.starts_with(p)) {
        return false;
    }
    word.starts_with(['a', 'e', 'i', 'o', 'u'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn en() -> Arc<Dictionary> {
        Speller::new(DEFAULT_DIR)
            .dictionary("EN-US")
            .expect("hunspell-en-us is installed (scripts/setup.sh)")
    }

    #[test]
    fn misspellings_are_fixed_and_correct_words_untouched() {
        let d = en();
        let text = "Teh weather is beautifull today and the garden looks wonderful.";
        let fixed = correct(&d, "EN-US", text);
        assert_eq!(
            fixed,
            "The weather is beautiful today and the garden looks wonderful."
        );
        let clean = "The quick brown fox jumps over the lazy dog near Tolk's office.";
        assert_eq!(correct(&d, "EN", clean), clean);
    }

    #[test]
    fn simple_grammar() {
        let d = en();
        assert_eq!(
            correct(&d, "EN", "i have a apple and the the pear ."),
            "I have an apple and the pear."
        );
        assert_eq!(correct(&d, "EN", "an university"), "A university");
    }

    #[test]
    fn spanish_dictionary_works() {
        let d = Speller::new(DEFAULT_DIR)
            .dictionary("ES")
            .expect("hunspell-es");
        assert_eq!(
            correct(&d, "ES", "La casa es muy bonitta."),
            "La casa es muy bonita."
        );
    }

    #[test]
    fn unknown_language_is_an_error() {
        let s = Speller::new(DEFAULT_DIR);
        assert!(!s.supports("JA"));
        assert!(matches!(
            s.dictionary("JA"),
            Err(WriteError::NoDictionary(..))
        ));
    }
}
