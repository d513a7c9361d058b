//! Languages: DeepL codes (`EN`, `EN-US`, `PT-BR`) ↔ engine codes (`eng`,
//! `spa_US`, `pt_BR`), names, and the variant rules of DeepL.
//!
//! Internally a language is a [`Lang`]: an ISO 639-3 base code plus an
//! optional regional variant. Routing happens between bases; variants only
//! choose among parallel pairs (e.g. `es-pt` vs `es-pt_BR`).

use std::fmt;

use tolk_lang::code::{self, TARGET_VARIANTS};

use crate::EngineError;

/// A language as engines and the router see it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Lang {
    /// ISO 639-3 code for languages DeepL knows (`eng`, `spa`, `por`), else the
    /// engine's own lower-case code.
    pub base: String,
    /// Regional or orthographic variant as written by the engine or DeepL
    /// (`US`, `BR`, `valencia`); `None` for the plain language.
    pub variant: Option<String>,
}

impl Lang {
    /// The plain language `base`.
    pub fn new(base: impl Into<String>) -> Self {
        Self {
            base: base.into(),
            variant: None,
        }
    }

    /// `base` with a variant.
    pub fn with_variant(base: impl Into<String>, variant: impl Into<String>) -> Self {
        Self {
            base: base.into(),
            variant: Some(variant.into()),
        }
    }

    /// Parses an Apertium language code such as `eng`, `es`, `pt_BR` or
    /// `cat_valencia`. Two- and three-letter codes DeepL knows are normalised
    /// to ISO 639-3; other well-formed codes are kept as they are.
    pub fn from_apertium(code: &str) -> Option<Self> {
        let (base, variant) = match code.split_once('_') {
            Some((b, v)) => (b, Some(v)),
            None => (code, None),
        };
        if !(2..=3).contains(&base.len()) || !base.bytes().all(|b| b.is_ascii_lowercase()) {
            return None;
        }
        if let Some(v) = variant
            && (v.is_empty() || !v.bytes().all(|b| b.is_ascii_alphanumeric()))
        {
            return None;
        }
        let base = code::by_iso(base).map_or_else(|| base.to_owned(), |i| i.iso3.to_owned());
        Some(Self {
            base,
            variant: variant.map(str::to_owned),
        })
    }

    /// The same language without its variant.
    pub fn plain(&self) -> Self {
        Self::new(self.base.clone())
    }

    /// DeepL code of the base language (`EN`), if DeepL has one.
    pub fn deepl_base(&self) -> Option<&'static str> {
        code::by_iso(&self.base).map(|i| i.deepl)
    }

    /// DeepL code including a DeepL variant (`EN-US`), if DeepL has one; an
    /// engine-only variant (`valencia`) gives `None`.
    pub fn deepl_code(&self) -> Option<String> {
        let base = self.deepl_base()?;
        match &self.variant {
            None => Some(base.to_owned()),
            Some(v) => code::target_variant(base, v).map(|tv| format!("{base}-{}", tv.variant)),
        }
    }

    /// English name of the base language, if known.
    pub fn name(&self) -> Option<&'static str> {
        code::by_iso(&self.base).map(|i| i.name)
    }

    /// Whether `variant` names the same variant as ours (case-insensitive).
    pub fn variant_is(&self, variant: &str) -> bool {
        self.variant
            .as_deref()
            .is_some_and(|v| v.eq_ignore_ascii_case(variant))
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.deepl_code(), &self.variant) {
            (Some(code), _) => f.write_str(&code),
            (None, Some(v)) => write!(f, "{}_{v}", self.base),
            (None, None) => f.write_str(&self.base),
        }
    }
}

/// Bases whose target list shows only variants (DeepL deprecated bare `EN`/`PT`).
const VARIANT_ONLY_TARGETS: &[&str] = &["EN", "PT"];

/// Parses a DeepL code in any case (`en`, `EN-us`).
fn parse(code: &str, field: &'static str) -> Result<Lang, EngineError> {
    let unknown = || EngineError::UnknownLanguage {
        field,
        code: code.to_owned(),
    };
    let trimmed = code.trim();
    let (base, variant) = match trimmed.split_once('-') {
        Some((b, v)) => (b, Some(v)),
        None => (trimmed, None),
    };
    let info = code::by_deepl(base).ok_or_else(unknown)?;
    let lang = Lang::new(info.iso3);
    match variant {
        None => Ok(lang),
        Some(v) => code::target_variant(info.deepl, v)
            .map(|tv| Lang::with_variant(info.iso3, tv.variant))
            .ok_or_else(unknown),
    }
}

/// Parses a `source_lang` code. Case-insensitive. DeepL source codes carry no
/// variant; a variant that DeepL knows as a target (`EN-GB`, `PT-BR`) is
/// accepted leniently and dropped, any other code is
/// [`EngineError::UnknownLanguage`].
pub fn parse_source(code: &str) -> Result<Lang, EngineError> {
    parse(code, "source_lang").map(|l| l.plain())
}

/// Parses a `target_lang` code, keeping its variant (`EN-US` →
/// `eng` + `US`). Bare `EN` and `PT` are accepted (DeepL deprecated them):
/// they pick the plain pairs.
pub fn parse_target(code: &str) -> Result<Lang, EngineError> {
    parse(code, "target_lang")
}

/// The DeepL target codes (with names) under which the base language `lang`
/// is offered: its variants for `EN` and `PT`, else the bare code.
pub(crate) fn target_codes(lang: &Lang) -> Vec<(String, String)> {
    let Some(info) = code::by_iso(&lang.base) else {
        return Vec::new();
    };
    if VARIANT_ONLY_TARGETS.contains(&info.deepl) {
        TARGET_VARIANTS
            .iter()
            .filter(|v| v.base == info.deepl)
            .map(|v| (format!("{}-{}", v.base, v.variant), v.name.to_owned()))
            .collect()
    } else {
        vec![(info.deepl.to_owned(), info.name.to_owned())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deepl_codes_map_to_iso() {
        assert_eq!(parse_source("EN").unwrap(), Lang::new("eng"));
        assert_eq!(parse_source("en").unwrap(), Lang::new("eng"));
        assert_eq!(parse_source("EN-GB").unwrap(), Lang::new("eng"));
        assert_eq!(parse_source("es").unwrap(), Lang::new("spa"));
        assert_eq!(parse_source("CA").unwrap(), Lang::new("cat"));
        assert_eq!(
            parse_target("EN-US").unwrap(),
            Lang::with_variant("eng", "US")
        );
        assert_eq!(
            parse_target("en-us").unwrap(),
            Lang::with_variant("eng", "US")
        );
        assert_eq!(
            parse_target("PT-BR").unwrap(),
            Lang::with_variant("por", "BR")
        );
        assert_eq!(
            parse_target("PT-PT").unwrap(),
            Lang::with_variant("por", "PT")
        );
        assert_eq!(parse_target("PT").unwrap(), Lang::new("por"));
        assert_eq!(parse_target("FR").unwrap(), Lang::new("fra"));
    }

    #[test]
    fn unknown_codes_are_rejected_with_their_field() {
        assert_eq!(
            parse_target("XX"),
            Err(EngineError::UnknownLanguage {
                field: "target_lang",
                code: "XX".into()
            })
        );
        assert_eq!(
            parse_source("EN-XX"),
            Err(EngineError::UnknownLanguage {
                field: "source_lang",
                code: "EN-XX".into()
            })
        );
        assert!(parse_target("DE-BR").is_err());
        assert!(parse_target("").is_err());
        assert!(parse_target("-").is_err());
    }

    #[test]
    fn apertium_codes() {
        assert_eq!(Lang::from_apertium("eng"), Some(Lang::new("eng")));
        assert_eq!(Lang::from_apertium("es"), Some(Lang::new("spa")));
        assert_eq!(
            Lang::from_apertium("pt_BR"),
            Some(Lang::with_variant("por", "BR"))
        );
        assert_eq!(Lang::from_apertium("fr"), Some(Lang::new("fra")));
        assert_eq!(
            Lang::from_apertium("spa_US").map(|l| l.deepl_code()),
            Some(None)
        );
        assert_eq!(
            Lang::from_apertium("eng_US").and_then(|l| l.deepl_code()),
            Some("EN-US".into())
        );
        assert_eq!(
            Lang::from_apertium("cat_valencia").and_then(|l| l.deepl_code()),
            None
        );
        assert_eq!(Lang::from_apertium("oci"), Some(Lang::new("oci")));
        assert_eq!(Lang::from_apertium("ECO"), None);
        assert_eq!(Lang::from_apertium("toolong"), None);
        assert_eq!(Lang::from_apertium("en_"), None);
    }

    #[test]
    fn target_listing_uses_variants_for_en_and_pt() {
        let codes: Vec<String> = target_codes(&Lang::new("eng"))
            .into_iter()
            .map(|(c, _)| c)
            .collect();
        assert_eq!(codes, ["EN-GB", "EN-US"]);
        let codes: Vec<String> = target_codes(&Lang::new("spa"))
            .into_iter()
            .map(|(c, _)| c)
            .collect();
        assert_eq!(codes, ["ES"]);
        assert!(target_codes(&Lang::new("srd")).is_empty());
    }
}
