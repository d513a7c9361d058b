//! Language codes of translation memories.
//!
//! TMX files name languages with RFC 4646 tags (`en-US`, `de-DE`, `zh-CN`).
//! A memory stores them lower-case: the base (`de`) unless the region is one of
//! DeepL's target variants (`en-gb`, `en-us`, `pt-br`, `pt-pt`, `es-419`,
//! `zh-hans`, `zh-hant`; `zh-cn`/`zh-sg` count as `zh-hans`, `zh-tw`/`zh-hk`/
//! `zh-mo` as `zh-hant`). A request's target language is covered by a memory
//! target that is the same code, or the request's base (a `de` memory serves
//! DE, an `en` memory serves EN-US and EN-GB), or a variant of a base-only
//! request (an `en-us` memory serves EN).

/// DeepL's target variants.
const VARIANTS: [&str; 7] = [
    "en-gb", "en-us", "pt-br", "pt-pt", "es-419", "zh-hans", "zh-hant",
];

pub use tolk_lang::base;

/// The memory code of a TMX or DeepL language code.
pub fn normalize(code: &str) -> String {
    let lower = code.trim().replace('_', "-").to_ascii_lowercase();
    if VARIANTS.contains(&lower.as_str()) {
        return lower;
    }
    match lower.as_str() {
        "zh-cn" | "zh-sg" | "zh-hans-cn" => "zh-hans".to_owned(),
        "zh-tw" | "zh-hk" | "zh-mo" | "zh-hant-tw" => "zh-hant".to_owned(),
        _ => base(&lower),
    }
}

/// The memory target (of `targets`) that serves the request target `target`
/// (a DeepL code, any case), preferring the exact code.
pub fn covering<'a>(targets: &'a [String], target: &str) -> Option<&'a str> {
    let wanted = normalize(target);
    let wanted_base = base(target);
    targets
        .iter()
        .find(|t| **t == wanted)
        .or_else(|| targets.iter().find(|t| **t == wanted_base))
        .or_else(|| {
            (wanted == wanted_base)
                .then(|| targets.iter().find(|t| base(t) == wanted_base))
                .flatten()
        })
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_normalized() {
        assert_eq!(normalize("de-DE"), "de");
        assert_eq!(normalize("EN-us"), "en-us");
        assert_eq!(normalize("en_GB"), "en-gb");
        assert_eq!(normalize("zh-CN"), "zh-hans");
        assert_eq!(normalize("fr"), "fr");
        assert_eq!(base("PT-BR"), "pt");
    }

    #[test]
    fn coverage() {
        let t = vec!["de".to_owned(), "en-us".to_owned(), "es".to_owned()];
        assert_eq!(covering(&t, "DE"), Some("de"));
        assert_eq!(covering(&t, "EN-US"), Some("en-us"));
        assert_eq!(covering(&t, "EN"), Some("en-us"));
        assert_eq!(covering(&t, "EN-GB"), None);
        assert_eq!(covering(&t, "ES-419"), Some("es"));
        assert_eq!(covering(&t, "FR"), None);
    }
}
