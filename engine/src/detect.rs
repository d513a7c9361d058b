//! Language identification with `lingua`, restricted to the languages the
//! router can translate from.

use lingua::{Language, LanguageDetector, LanguageDetectorBuilder};

use crate::Vocabulary;

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
        let lang = detector.detect_language_of(sample(text)?)?;
        code_of(known, lang)
    }

    /// Confidence of each candidate for `text` (summing to 1, best first);
    /// empty when the text has no letters.
    pub fn confidences(&self, text: &str) -> Vec<(String, f64)> {
        let (Some((detector, known)), Some(sample)) = (self.inner.as_ref(), sample(text)) else {
            return Vec::new();
        };
        detector
            .compute_language_confidence_values(sample)
            .into_iter()
            .filter_map(|(lang, p)| code_of(known, lang).map(|code| (code, p)))
            .collect()
    }

    /// What the detector sees in each text of one request: its words and
    /// the candidates' confidences.
    pub fn observe(&self, texts: &[String]) -> Vec<Observed> {
        texts
            .iter()
            .map(|t| Observed {
                words: words(t),
                confidences: self.confidences(t),
            })
            .collect()
    }

    /// The language of each text of one request, told apart text by text.
    ///
    /// A text of [`SURE_WORDS`] words or more is what the detector says it
    /// is, when it is sure. A shorter one (a word or a title, which n-gram
    /// statistics cannot tell apart alone) or one the detector is unsure of is
    /// weighed with what else speaks: the share of its
    /// words each candidate's dictionary knows (`known`, from the engines),
    /// the other texts of the request (by their words), whether a language can
    /// be translated into the target at all (`serves`), and English, the most
    /// common source, when nothing else does. A short text is taken to be in
    /// the target language (and so returned untranslated) only when that
    /// language's dictionary knows all its words or the detector is sure.
    pub fn decide(
        &self,
        seen: &[Observed],
        known: impl Fn(usize, &str) -> Option<Vocabulary>,
        target: &str,
        serves: impl Fn(&str) -> bool,
    ) -> Vec<Option<Guess>> {
        let total: usize = seen.iter().map(|o| o.words).sum();
        seen.iter()
            .enumerate()
            .map(|(i, o)| {
                let (best, p) = o.confidences.first()?.clone();
                if !o.is_unsure() {
                    return Some(Guess {
                        base: best,
                        confidence: p,
                    });
                }
                // What the other texts of the request speak, by their words.
                let others = |code: &str| -> f64 {
                    let rest = total - o.words;
                    if rest == 0 {
                        return 0.0;
                    }
                    seen.iter()
                        .enumerate()
                        .filter(|(j, _)| *j != i)
                        .map(|(_, x)| {
                            x.confidences
                                .iter()
                                .find(|(c, _)| c == code)
                                .map_or(0.0, |(_, q)| q * x.words as f64)
                        })
                        .sum::<f64>()
                        / rest as f64
                };
                let mut scored: Vec<(String, f64)> = o
                    .confidences
                    .iter()
                    .map(|(code, p)| {
                        let prior = PRIOR_FLOOR
                            + PRIOR_REQUEST * others(code)
                            + if serves(code) { PRIOR_SERVES } else { 0.0 }
                            + if code == "eng" { PRIOR_ENGLISH } else { 0.0 };
                        let vocabulary = known(i, code);
                        let share = vocabulary.as_ref().map_or(0.5, Vocabulary::share_known);
                        let grammar = vocabulary.as_ref().map_or(0, |v| v.grammar);
                        let lexicon = (LEXICON_FLOOR + share).powi(LEXICON_POWER)
                            * GRAMMAR_WEIGHT.powi(i32::try_from(grammar).unwrap_or(i32::MAX));
                        (code.clone(), (CONFIDENCE_FLOOR + p) * prior * lexicon)
                    })
                    .collect();
                let sum: f64 = scored.iter().map(|(_, s)| s).sum();
                if sum > 0.0 {
                    for (_, s) in &mut scored {
                        *s /= sum;
                    }
                }
                scored.sort_by(|a, b| b.1.total_cmp(&a.1));
                let sure_of_target = known(i, target).is_some_and(|v| v.share_known() >= 1.0)
                    || o.confidences
                        .iter()
                        .any(|(c, p)| c == target && *p >= SURE_OF_TARGET);
                scored
                    .into_iter()
                    .find(|(code, _)| code != target || sure_of_target)
                    .map(|(base, confidence)| Guess { base, confidence })
            })
            .collect()
    }
}

/// What the detector saw in one text.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    /// Words (runs of letters).
    pub words: usize,
    /// Confidence of each candidate (base code), best first.
    pub confidences: Vec<(String, f64)>,
}

impl Observed {
    /// Whether the detector alone cannot be trusted with this text, which is
    /// then weighed with dictionaries and the request's evidence: it is
    /// short, or the detector's best guess is not clearly ahead (close
    /// languages: Bokmål, Nynorsk, Danish).
    pub fn is_unsure(&self) -> bool {
        self.words > 0
            && (self.words < SURE_WORDS
                || self
                    .confidences
                    .first()
                    .is_some_and(|(_, p)| *p < SURE_CONFIDENCE))
    }

    /// The candidates worth a dictionary look-up: the detector's first few.
    pub fn leading(&self) -> impl Iterator<Item = &str> {
        self.confidences
            .iter()
            .take(LOOKED_UP)
            .map(|(c, _)| c.as_str())
    }
}

/// A language told for one text, with the detector's confidence (0–1).
#[derive(Debug, Clone, PartialEq)]
pub struct Guess {
    /// Base code (ISO 639-3, `hbs` for Serbo-Croatian).
    pub base: String,
    /// How sure the detector is, after weighing the request's evidence.
    pub confidence: f64,
}

/// Texts of at least this many words are detected on their own…
pub const SURE_WORDS: usize = 6;
/// …when the detector gives its best guess at least this confidence.
const SURE_CONFIDENCE: f64 = 0.9;
/// A short text is taken to be in the target language only when the detector
/// gives the target at least this confidence on its own.
const SURE_OF_TARGET: f64 = 0.9;
/// Candidates of a short text whose dictionaries are asked (besides English
/// and the target).
pub const LOOKED_UP: usize = 5;
/// Weights of the evidence a short text is weighed with.
const CONFIDENCE_FLOOR: f64 = 0.05;
const LEXICON_FLOOR: f64 = 0.05;
/// How strongly the share of known words counts (a candidate without a
/// dictionary counts as knowing half).
const LEXICON_POWER: i32 = 4;
/// How much more likely a text is in a language for each of its words that
/// language knows as a grammar word (the most frequent words).
const GRAMMAR_WEIGHT: f64 = 3.0;
const PRIOR_FLOOR: f64 = 0.05;
const PRIOR_REQUEST: f64 = 1.0;
const PRIOR_SERVES: f64 = 0.3;
const PRIOR_ENGLISH: f64 = 0.3;

/// The first [`MAX_CHARS`] characters of `text`, if they hold a letter.
fn sample(text: &str) -> Option<String> {
    let sample: String = text.chars().take(MAX_CHARS).collect();
    sample.chars().any(char::is_alphabetic).then_some(sample)
}

/// The base code of a lingua language among the candidates.
fn code_of(known: &[(Language, String)], lang: Language) -> Option<String> {
    known
        .iter()
        .find(|(l, _)| *l == lang)
        .map(|(_, code)| code.clone())
}

/// Words (runs of letters) in a text.
fn words(text: &str) -> usize {
    text.split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .count()
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

    fn observed(words: usize, confidences: &[(&str, f64)]) -> Observed {
        Observed {
            words,
            confidences: confidences
                .iter()
                .map(|(c, p)| ((*c).to_owned(), *p))
                .collect(),
        }
    }

    /// A dictionary that knows `known` of `words` words, `grammar` of them as
    /// grammar words.
    fn vocabulary(words: usize, known: usize, grammar: usize) -> Option<Vocabulary> {
        Some(Vocabulary {
            words,
            known,
            grammar,
            unknown: Vec::new(),
        })
    }

    #[test]
    fn short_texts_are_weighed_with_dictionaries_and_the_request() {
        let d = Detector::new(&["eng".into(), "ita".into(), "spa".into()]);
        let all = |_: &str| true;
        // "Hello": lingua says Italian, only the English dictionary knows it.
        let hello = [observed(1, &[("ita", 0.8), ("eng", 0.15), ("spa", 0.05)])];
        let known = |_: usize, code: &str| vocabulary(1, usize::from(code == "eng"), 0);
        let g = d.decide(&hello, known, "spa", all);
        assert_eq!(g[0].as_ref().map(|g| g.base.as_str()), Some("eng"));
        // Without dictionaries lingua's guess stands…
        let g = d.decide(&hello, |_, _| None, "spa", all);
        assert_eq!(g[0].as_ref().map(|g| g.base.as_str()), Some("ita"));
        // …unless the other texts of the request speak another language.
        let request = [
            hello[0].clone(),
            observed(12, &[("eng", 0.99), ("ita", 0.01)]),
        ];
        let g = d.decide(&request, |_, _| None, "spa", all);
        assert_eq!(g[0].as_ref().map(|g| g.base.as_str()), Some("eng"));
        // A long text the detector is sure of is what it says.
        let long = [observed(12, &[("ita", 0.95), ("eng", 0.05)])];
        let g = d.decide(&long, known, "spa", all);
        assert_eq!(g[0].as_ref().map(|g| g.base.as_str()), Some("ita"));
    }

    #[test]
    fn a_short_text_is_in_the_target_only_when_that_is_sure() {
        let d = Detector::new(&["eng".into(), "spa".into()]);
        let short = [observed(2, &[("spa", 0.7), ("eng", 0.3)])];
        // Lingua leans to the target, no dictionary knows it all: translated.
        let g = d.decide(&short, |_, _| vocabulary(2, 1, 0), "spa", |_| true);
        assert_eq!(g[0].as_ref().map(|g| g.base.as_str()), Some("eng"));
        // The target's dictionary knows every word: it is in the target.
        let g = d.decide(
            &short,
            |_, code| vocabulary(2, if code == "spa" { 2 } else { 1 }, 0),
            "spa",
            |_| true,
        );
        assert_eq!(g[0].as_ref().map(|g| g.base.as_str()), Some("spa"));
    }

    #[test]
    fn grammar_words_tell_languages_that_know_a_word_apart() {
        let d = Detector::new(&["isl".into(), "spa".into()]);
        // "y": lingua leans to Icelandic, whose dictionary knows it (a
        // letter's name); Spanish knows it as a conjunction.
        let y = [observed(1, &[("isl", 0.6), ("spa", 0.4)])];
        let known = |_: usize, code: &str| vocabulary(1, 1, usize::from(code == "spa"));
        let g = d.decide(&y, known, "eng", |_| true);
        assert_eq!(g[0].as_ref().map(|g| g.base.as_str()), Some("spa"));
        let g = d.decide(&y, |_, _| vocabulary(1, 1, 0), "eng", |_| true);
        assert_eq!(g[0].as_ref().map(|g| g.base.as_str()), Some("isl"));
    }

    #[test]
    fn no_candidates_detects_nothing() {
        let d = Detector::new(&["xyz".into()]);
        assert_eq!(d.detect("The quick brown fox."), None);
    }
}
