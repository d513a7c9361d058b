//! Language codes as Tolk meets them: DeepL codes (`EN`, `EN-US`,
//! `ZH-HANT`, any case), BCP 47 tags (`pt-BR`, `zh-Hant`), POSIX and
//! Apertium forms (`pt_BR`, `cat_valencia`) and ISO 639 codes of two or
//! three letters (`fr`, `fra`, `fre`).
//!
//! The **base** of a code is its first subtag, before `-` or `_`, trimmed:
//! lower-case for BCP 47 and ISO 639 ([`base`]), upper-case for DeepL
//! ([`deepl_base`]). Two codes name the **same language** ([`same_language`])
//! when their bases are equal or are codes of one entry of [`LANGUAGES`]
//! (`fr`, `fra` and `fre`; `nb`, `nob` and the macrolanguage `no`).

/// One language Tolk knows by name: its DeepL code and ISO 639 codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Language {
    /// DeepL's code (`EN`); for languages DeepL lacks, the ISO 639-1 code
    /// upper-cased, or the ISO 639-3 code where there is none (`AST`).
    pub deepl: &'static str,
    /// ISO 639-1 (`en`), empty when there is none.
    pub iso1: &'static str,
    /// ISO 639-3, also ISO 639-2/T (`eng`).
    pub iso3: &'static str,
    /// Bibliographic ISO 639-2 where it differs from `iso3` (`fre`, `ger`).
    pub iso2b: &'static str,
    /// Other codes files use for it (`no` and `nor` for Norwegian Bokmål).
    pub aliases: &'static [&'static str],
    /// English name.
    pub name: &'static str,
}

const fn li(
    deepl: &'static str,
    iso1: &'static str,
    iso3: &'static str,
    iso2b: &'static str,
    name: &'static str,
) -> Language {
    Language {
        deepl,
        iso1,
        iso3,
        iso2b,
        aliases: &[],
        name,
    }
}

/// Languages with a DeepL code: DeepL's list, plus languages Apertium
/// translates that DeepL lacks.
pub const LANGUAGES: &[Language] = &[
    li("AF", "af", "afr", "", "Afrikaans"),
    li("AST", "", "ast", "", "Asturian"),
    li("EO", "eo", "epo", "", "Esperanto"),
    li("EU", "eu", "eus", "baq", "Basque"),
    li("GL", "gl", "glg", "", "Galician"),
    li("IS", "is", "isl", "ice", "Icelandic"),
    li("MK", "mk", "mkd", "mac", "Macedonian"),
    li("NN", "nn", "nno", "", "Norwegian Nynorsk"),
    li("OC", "oc", "oci", "", "Occitan"),
    li("SH", "sh", "hbs", "", "Serbo-Croatian"),
    li("AR", "ar", "ara", "", "Arabic"),
    li("BG", "bg", "bul", "", "Bulgarian"),
    li("CA", "ca", "cat", "", "Catalan"),
    li("CS", "cs", "ces", "cze", "Czech"),
    li("DA", "da", "dan", "", "Danish"),
    li("DE", "de", "deu", "ger", "German"),
    li("EL", "el", "ell", "gre", "Greek"),
    li("EN", "en", "eng", "", "English"),
    li("ES", "es", "spa", "", "Spanish"),
    li("ET", "et", "est", "", "Estonian"),
    li("FI", "fi", "fin", "", "Finnish"),
    li("FR", "fr", "fra", "fre", "French"),
    li("HE", "he", "heb", "", "Hebrew"),
    li("HU", "hu", "hun", "", "Hungarian"),
    li("ID", "id", "ind", "", "Indonesian"),
    li("IT", "it", "ita", "", "Italian"),
    li("JA", "ja", "jpn", "", "Japanese"),
    li("KO", "ko", "kor", "", "Korean"),
    li("LT", "lt", "lit", "", "Lithuanian"),
    li("LV", "lv", "lav", "", "Latvian"),
    Language {
        aliases: &["no", "nor"],
        ..li("NB", "nb", "nob", "", "Norwegian Bokmål")
    },
    li("NL", "nl", "nld", "dut", "Dutch"),
    li("PL", "pl", "pol", "", "Polish"),
    li("PT", "pt", "por", "", "Portuguese"),
    li("RO", "ro", "ron", "rum", "Romanian"),
    li("RU", "ru", "rus", "", "Russian"),
    li("SK", "sk", "slk", "slo", "Slovak"),
    li("SL", "sl", "slv", "", "Slovenian"),
    li("SV", "sv", "swe", "", "Swedish"),
    li("TH", "th", "tha", "", "Thai"),
    li("TR", "tr", "tur", "", "Turkish"),
    li("UK", "uk", "ukr", "", "Ukrainian"),
    li("VI", "vi", "vie", "", "Vietnamese"),
    li("ZH", "zh", "zho", "chi", "Chinese"),
];

/// One of DeepL's target variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    /// The DeepL base (`EN`).
    pub base: &'static str,
    /// The variant subtag as DeepL writes it (`GB`, `HANS`, `419`).
    pub variant: &'static str,
    /// English name.
    pub name: &'static str,
}

/// DeepL's target variants.
pub const TARGET_VARIANTS: &[Variant] = &[
    Variant {
        base: "EN",
        variant: "GB",
        name: "English (British)",
    },
    Variant {
        base: "EN",
        variant: "US",
        name: "English (American)",
    },
    Variant {
        base: "PT",
        variant: "BR",
        name: "Portuguese (Brazilian)",
    },
    Variant {
        base: "PT",
        variant: "PT",
        name: "Portuguese (European)",
    },
    Variant {
        base: "ZH",
        variant: "HANS",
        name: "Chinese (simplified)",
    },
    Variant {
        base: "ZH",
        variant: "HANT",
        name: "Chinese (traditional)",
    },
    Variant {
        base: "ES",
        variant: "419",
        name: "Spanish (Latin American)",
    },
];

/// The first subtag of a code as written, trimmed: `pt_BR` → `pt`,
/// ` EN-us ` → `EN`.
pub fn primary(code: &str) -> &str {
    code.trim().split(['-', '_']).next().unwrap_or_default()
}

/// The lower-case base of a code (BCP 47, ISO 639): `PT-br` → `pt`,
/// `zh_Hant` → `zh`.
pub fn base(code: &str) -> String {
    primary(code).to_ascii_lowercase()
}

/// The upper-case base of a code (DeepL's): `pt_BR` → `PT`, `zh-hant` →
/// `ZH`.
pub fn deepl_base(code: &str) -> String {
    primary(code).to_ascii_uppercase()
}

/// A code as a BCP 47 tag: the language lower-case, a script title-case,
/// a region upper-case (`EN-US` → `en-US`, `ZH-HANS` → `zh-Hans`,
/// `pt_br` → `pt-BR`).
pub fn bcp47(code: &str) -> String {
    let mut parts = code.trim().split(['-', '_']);
    let mut tag = parts.next().unwrap_or_default().to_ascii_lowercase();
    for part in parts {
        tag.push('-');
        if part.len() == 4 && part.bytes().all(|b| b.is_ascii_alphabetic()) {
            let (first, rest) = part.split_at(1);
            tag.push_str(&first.to_ascii_uppercase());
            tag.push_str(&rest.to_ascii_lowercase());
        } else {
            tag.push_str(&part.to_ascii_uppercase());
        }
    }
    tag
}

/// The language of an ISO 639 code (`fr`, `fra`, `fre`) or one of its
/// aliases, lower-case.
pub fn by_iso(code: &str) -> Option<&'static Language> {
    LANGUAGES
        .iter()
        .find(|l| l.iso1 == code || l.iso3 == code || (!l.iso2b.is_empty() && l.iso2b == code))
}

/// The language of a DeepL base code, any case (`fr`, `FR`).
pub fn by_deepl(code: &str) -> Option<&'static Language> {
    LANGUAGES
        .iter()
        .find(|l| l.deepl.eq_ignore_ascii_case(code))
}

/// ISO 639-1 and 639-3 codes of languages outside [`LANGUAGES`] that
/// files name either way (memoQ writes `hrv` for `hr`).
const OTHER_ISO: &[(&str, &str)] = &[("bs", "bos"), ("hr", "hrv"), ("sr", "srp")];

/// One name for the language of any code's base: the DeepL code of its
/// [`Language`] (found by DeepL code, ISO 639 code or alias), else its
/// ISO 639-1 code for [`OTHER_ISO`], else the base itself.
fn key(code: &str) -> String {
    let base = base(code);
    let language = by_iso(&base).or_else(|| by_deepl(&base)).or_else(|| {
        LANGUAGES
            .iter()
            .find(|l| l.aliases.contains(&base.as_str()))
    });
    if let Some(l) = language {
        return l.deepl.to_owned();
    }
    match OTHER_ISO.iter().find(|(_, three)| *three == base) {
        Some((two, _)) => (*two).to_owned(),
        None => base,
    }
}

/// Whether two codes name the same language, whatever their variants:
/// equal bases, or codes of one language (`fre` and `FR-CA`, `no` and
/// `NB`, `hrv` and `hr`).
pub fn same_language(a: &str, b: &str) -> bool {
    !primary(a).is_empty() && key(a) == key(b)
}

/// The DeepL target variant `variant` (`gb`, `HANS`) of the DeepL base
/// `base` (`en`, `ZH`), any case, when DeepL offers it.
pub fn target_variant(base: &str, variant: &str) -> Option<&'static Variant> {
    TARGET_VARIANTS
        .iter()
        .find(|v| v.base.eq_ignore_ascii_case(base) && v.variant.eq_ignore_ascii_case(variant))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The forms the old copies read differently: `_` as a separator, any
    /// case, scripts.
    #[test]
    fn bases_ignore_separator_and_case() {
        for code in ["pt_BR", "PT-br", "pt-BR", " pt ", "PT"] {
            assert_eq!(base(code), "pt", "{code}");
            assert_eq!(deepl_base(code), "PT", "{code}");
        }
        assert_eq!(base("zh-Hant"), "zh");
        assert_eq!(deepl_base("zh_hant"), "ZH");
        assert_eq!(primary("EN-us"), "EN");
        assert_eq!(base(""), "");
    }

    #[test]
    fn bcp47_tags() {
        assert_eq!(bcp47("ES"), "es");
        assert_eq!(bcp47("EN-US"), "en-US");
        assert_eq!(bcp47("pt_br"), "pt-BR");
        assert_eq!(bcp47("ZH-HANS"), "zh-Hans");
        assert_eq!(bcp47("zh-hant"), "zh-Hant");
        assert_eq!(bcp47("ES-419"), "es-419");
        assert_eq!(bcp47("sh"), "sh");
    }

    #[test]
    fn same_language_across_code_sets() {
        assert!(same_language("fre", "FR"));
        assert!(same_language("fr-CA", "fra"));
        assert!(same_language("PT-br", "pt_PT"));
        assert!(same_language("no", "NB"));
        assert!(same_language("nob", "nb-NO"));
        assert!(!same_language("nb", "nn"));
        assert!(same_language("sh", "hbs"));
        assert!(!same_language("sh", "sr"));
        assert!(same_language("zh-Hant", "ZH-HANS"));
        assert!(!same_language("de", "nl"));
        assert!(!same_language("", ""));
        assert!(same_language("xx-YY", "XX"));
        assert!(same_language("hrv", "hr-HR"));
        assert!(!same_language("hrv", "srp"));
    }

    #[test]
    fn target_variants() {
        assert_eq!(target_variant("en", "gb").map(|v| v.variant), Some("GB"));
        assert_eq!(target_variant("ZH", "hant").map(|v| v.base), Some("ZH"));
        assert_eq!(target_variant("DE", "AT"), None);
        assert_eq!(target_variant("EN", ""), None);
    }

    #[test]
    fn every_language_is_found_by_each_of_its_codes() {
        for l in LANGUAGES {
            assert_eq!(by_deepl(l.deepl), Some(l));
            assert_eq!(by_iso(l.iso3), Some(l));
            if !l.iso1.is_empty() {
                assert_eq!(by_iso(l.iso1), Some(l));
            }
            if !l.iso2b.is_empty() {
                assert_eq!(by_iso(l.iso2b), Some(l));
            }
        }
    }
}
