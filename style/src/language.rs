//! Languages of style rule lists and which translations a list applies to.
//!
//! A list is for a root language (`de en es fr it ja ko zh`) or one of the
//! variants DeepL offers for style rules (`en-GB en-US es-419 zh-Hans
//! zh-Hant`). A root list applies to its language and every variant of it; a
//! variant list only to that variant.

/// Root languages a list may have.
pub const ROOTS: [&str; 8] = ["de", "en", "es", "fr", "it", "ja", "ko", "zh"];
/// Variants a list may have (canonical spelling).
pub const VARIANTS: [&str; 5] = ["en-GB", "en-US", "es-419", "zh-Hans", "zh-Hant"];

/// The canonical code of a list language given in any case (`EN-gb` →
/// `en-GB`), or `None` when style rules do not support it.
pub fn parse(code: &str) -> Option<String> {
    let c = code.trim();
    ROOTS
        .iter()
        .chain(VARIANTS.iter())
        .find(|l| l.eq_ignore_ascii_case(c))
        .map(|l| (*l).to_owned())
}

pub use tolk_lang::base;

/// Whether a list for `list_lang` applies to translations into `target`
/// (a DeepL target code, any case: `EN-GB`, `zh-hans`, `DE`).
pub fn applies_to(list_lang: &str, target: &str) -> bool {
    if list_lang.contains('-') {
        list_lang.eq_ignore_ascii_case(target.trim())
    } else {
        base(list_lang) == base(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_covers_variants_and_variant_only_itself() {
        assert!(applies_to("en", "EN-GB"));
        assert!(applies_to("en", "en-us"));
        assert!(applies_to("en", "EN"));
        assert!(!applies_to("en", "DE"));
        assert!(applies_to("en-GB", "EN-GB"));
        assert!(!applies_to("en-GB", "EN-US"));
        assert!(!applies_to("en-GB", "EN"));
        assert!(applies_to("zh-Hans", "ZH-HANS"));
        assert!(applies_to("zh", "ZH-HANT"));
    }

    #[test]
    fn parses_known_languages_only() {
        assert_eq!(parse("EN-gb").as_deref(), Some("en-GB"));
        assert_eq!(parse("FR").as_deref(), Some("fr"));
        assert_eq!(parse("pt"), None);
        assert_eq!(parse("en-AU"), None);
    }
}
