//! Language identification with `lingua`, restricted to the languages the
//! router can translate from.

use lingua::{Language, LanguageDetector, LanguageDetectorBuilder};

/// Characters of input looked at; more does not improve the guess much.
const MAX_CHARS: usize = 4096;

/// The router's base code of a lingua language: its ISO 639-3 code, except
/// Serbian, Croatian and Bosnian, which Apertium serves as one language,
/// Serbo-Croatian (`hbs`).
fn base_code(language: Language) -> String {
    match language.iso_code_639_3().to_string().as_str() {
        "srp" | "hrv" | "bos" => "hbs".to_owned(),
        other => other.to_owned(),
    }
}

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
            .map(|l| (l, base_code(l)))
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

    /// Whether the language `base` can be detected.
    pub fn covers(&self, base: &str) -> bool {
        self.inner
            .as_ref()
            .is_some_and(|(_, known)| known.iter().any(|(_, code)| code == base))
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

    /// Every source language of the installed pairs lingua has a model for,
    /// each told apart from all the others by one ordinary sentence.
    #[test]
    fn every_source_language_of_the_pairs_is_detected() {
        let cases = [
            (
                "eng",
                "The children are playing in the garden behind the old house.",
            ),
            (
                "spa",
                "Los niños juegan en el jardín detrás de la casa vieja.",
            ),
            (
                "por",
                "As crianças estão a brincar no jardim atrás da casa velha.",
            ),
            (
                "fra",
                "Les enfants jouent dans le jardin derrière la vieille maison.",
            ),
            ("cat", "Els nens juguen al jardí darrere de la casa vella."),
            (
                "ita",
                "I bambini giocano nel giardino dietro la vecchia casa.",
            ),
            ("ron", "Copiii se joacă în grădina din spatele casei vechi."),
            ("nld", "De kinderen spelen in de tuin achter het oude huis."),
            ("afr", "Die kinders speel in die tuin agter die ou huis."),
            ("dan", "Børnene leger i haven bag det gamle hus."),
            ("swe", "Barnen leker i trädgården bakom det gamla huset."),
            (
                "nob",
                "Barna leker i hagen bak det gamle huset, og de er glade.",
            ),
            (
                "isl",
                "Börnin eru að leika sér í garðinum fyrir aftan gamla húsið.",
            ),
            (
                "eus",
                "Haurrak etxe zaharraren atzeko lorategian jolasten ari dira.",
            ),
            (
                "epo",
                "La infanoj ludas en la ĝardeno malantaŭ la malnova domo.",
            ),
            ("bul", "Децата играят в градината зад старата къща."),
            ("mkd", "Децата си играат во градината зад старата куќа."),
            ("rus", "Дети играют в саду за старым домом."),
            ("ukr", "Діти граються в саду за старим будинком."),
            ("slv", "Otroci se igrajo na vrtu za staro hišo."),
            ("hbs", "Djeca se igraju u vrtu iza stare kuće."),
        ];
        let mut bases: Vec<String> = cases.iter().map(|(c, _)| (*c).to_owned()).collect();
        bases.extend(["nno".to_owned(), "glg".to_owned(), "oci".to_owned()]);
        let d = Detector::new(&bases);
        assert!(d.covers("hbs") && d.covers("nno") && !d.covers("glg") && !d.covers("oci"));
        for (code, sentence) in cases {
            assert_eq!(d.detect(sentence).as_deref(), Some(code), "{sentence}");
        }
    }

    #[test]
    fn no_candidates_detects_nothing() {
        let d = Detector::new(&["xyz".into()]);
        assert_eq!(d.detect("The quick brown fox."), None);
    }
}
