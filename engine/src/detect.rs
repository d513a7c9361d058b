//! Language identification with `lingua`, restricted to the languages the
//! router can translate from.

use lingua::{Language, LanguageDetector, LanguageDetectorBuilder};

/// Characters of input looked at; more does not improve the guess much.
const MAX_CHARS: usize = 4096;

/// Detects the language of a text among a fixed set of candidates.
pub(crate) struct Detector {
    /// The lingua detector and the base code of each of its languages.
    inner: Option<(LanguageDetector, Vec<(Language, String)>)>,
}

impl Detector {
    /// A detector choosing among `bases` (ISO 639-3 codes); those lingua was
    /// not built with are never detected.
    pub fn new(bases: &[String]) -> Self {
        let mut known: Vec<(Language, String)> = Language::all()
            .into_iter()
            .map(|l| (l, l.iso_code_639_3().to_string()))
            .filter(|(_, code)| bases.contains(code))
            .collect();
        known.sort_by(|a, b| a.1.cmp(&b.1));
        if known.is_empty() {
            return Self { inner: None };
        }
        let langs: Vec<Language> = known.iter().map(|(l, _)| *l).collect();
        let detector = LanguageDetectorBuilder::from_languages(&langs).build();
        Self {
            inner: Some((detector, known)),
        }
    }

    /// The base code of the language of `text`, if it has letters and one of
    /// the candidates fits.
    pub fn detect(&self, text: &str) -> Option<String> {
        let (detector, known) = self.inner.as_ref()?;
        let sample: String = text.chars().take(MAX_CHARS).collect();
        if !sample.chars().any(char::is_alphabetic) {
            return None;
        }
        let lang = detector.detect_language_of(sample)?;
        known
            .iter()
            .find(|(l, _)| *l == lang)
            .map(|(_, code)| code.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_among_candidates() {
        let d = Detector::new(&[
            "eng".into(),
            "spa".into(),
            "por".into(),
            "fra".into(),
            "cat".into(),
        ]);
        assert_eq!(
            d.detect("The quick brown fox jumps over the lazy dog.")
                .as_deref(),
            Some("eng")
        );
        assert_eq!(
            d.detect("El perro grande corre por el parque todos los días.")
                .as_deref(),
            Some("spa")
        );
        assert_eq!(
            d.detect("Je voudrais un café, s'il vous plaît.").as_deref(),
            Some("fra")
        );
        assert_eq!(
            d.detect("O cão grande corre no parque todos os dias, não é?")
                .as_deref(),
            Some("por")
        );
        assert_eq!(d.detect("1234 !!"), None);
        assert_eq!(d.detect(""), None);
    }

    #[test]
    fn no_candidates_detects_nothing() {
        let d = Detector::new(&["xyz".into()]);
        assert_eq!(d.detect("The quick brown fox."), None);
    }
}
