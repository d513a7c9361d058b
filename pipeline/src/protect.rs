//! Spans no engine may change: URLs, e-mail addresses, file paths, file
//! names (`statue_by_nicu.png`, `setup.exe`), identifiers written in
//! snake_case (`max_retries`), code spans (`` `cargo build` ``), numbers
//! with a unit of measure (`5 kg`,
//! `2.4 GHz`, `16 GB`; percentages are text) and placeholders (`{0}`,
//! `{name}`, `{{name}}`, `${name}`, `%s`, `%1$d`, `%@`).
//! They travel through the engines wrapped like glossary terms (an ignored
//! `<tolk-term>` element, released after), so they come back verbatim
//! whatever the engine would have done with them (lower-casing a URL,
//! translating the words of an address).
//!
//! [`spans`] works on XML: the character data between tags is searched; tags,
//! and the content of wrappers already there (glossary terms), are not.

use std::sync::LazyLock;

use regex::Regex;
use tolk_engine::glossary::TERM_TAG;

/// URLs, e-mail addresses and paths, in the order tried at one place
/// (longest kinds first).
const SPANS: &str = concat!(
    r"(?:(?:https?|ftp)://|www\.)[^\s<>]+",
    "|",
    r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}",
    "|",
    r"(?:[A-Za-z]:|\\\\[A-Za-z0-9._\-]+)\\[^\s<>]+",
    "|",
    r"(?:~|\.{1,2})?/[A-Za-z0-9._\-]+(?:/[A-Za-z0-9._\-]+)+/?",
    "|",
    r"\b[\w\-]+(?:\.[\w\-]+)*\.(?i:png|jpe?g|gif|bmp|svg|webp|tiff?|ico|pdf|docx?|xlsx?|pptx?|od[tspg]|rtf|txt|csv|tsv|json|ya?ml|xml|html?|md|zip|gz|tgz|7z|tar|exe|msi|dll|so|dylib|apk|dmg|iso|js|mjs|ts|py|rb|rs|go|java|jar|php|cs|cpp|hpp|c|h|sh|bat|ps1|sql|mp3|mp4|m4a|wav|ogg|flac|mov|avi|mkv|ttf|otf|woff2?|log|ini|cfg|conf|toml|lock)\b",
    "|",
    r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b",
    "|",
    r"`[^`\n]+`",
    "|",
    r"\b\d+(?:[.,]\d+)*[ \u{a0}]?(?:km/h|mph|kWh|Wh|mAh|kHz|MHz|GHz|Hz|KiB|MiB|GiB|TiB|KB|kB|MB|GB|TB|kbps|Mbps|Gbps|kbit|Mbit|Gbit|dpi|px|mm|cm|km|µm|nm|mg|kg|ml|min|ms|mV|kV|mA|kW|MW|°C|°F|m|g|l|s|h|V|W)\b",
);

/// What is protected: those spans and placeholders.
static PROTECTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!("{SPANS}|{}", tolk_formats::placeholders::PATTERN))
        .unwrap_or_else(|e| unreachable!("the protected-span pattern is valid: {e}"))
});

/// The spans without placeholders (placeholders translated with the text).
static PROTECTED_NO_PLACEHOLDERS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(SPANS).unwrap_or_else(|e| unreachable!("the span pattern is valid: {e}"))
});

/// Punctuation that ends a sentence rather than a URL or path.
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '\'', '"'];

/// What a translation protects.
fn pattern(placeholders: bool) -> &'static Regex {
    if placeholders {
        &PROTECTED
    } else {
        &PROTECTED_NO_PLACEHOLDERS
    }
}

/// Whether the character data of `xml` holds a protected span
/// (`placeholders`: placeholders count).
pub fn any(xml: &str, placeholders: bool) -> bool {
    pieces(xml).any(|(text, is_text)| is_text && pattern(placeholders).is_match(text))
        && spans(xml, placeholders) != xml
}

/// `xml` with every protected span of its character data wrapped in the
/// ignored element (`placeholders`: placeholders too).
pub fn spans(xml: &str, placeholders: bool) -> String {
    let open = format!("<{TERM_TAG}>");
    let close = format!("</{TERM_TAG}>");
    let mut out = String::with_capacity(xml.len() + 32);
    for (piece, is_text) in pieces(xml) {
        if !is_text {
            out.push_str(piece);
            continue;
        }
        let mut last = 0;
        for m in pattern(placeholders).find_iter(piece) {
            let matched = m.as_str();
            // A path starts a word (`and/or/either`, `12/05/2026` are not paths).
            if matched.starts_with('/')
                && piece[..m.start()]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphanumeric)
            {
                continue;
            }
            let core = matched.trim_end_matches(TRAILING);
            // A closing bracket that opened inside the span belongs to it.
            let core = if matched.len() > core.len()
                && matched[core.len()..].starts_with(')')
                && core.contains('(')
            {
                &matched[..core.len() + 1]
            } else {
                core
            };
            if core.is_empty() {
                continue;
            }
            out.push_str(&piece[last..m.start()]);
            out.push_str(&open);
            out.push_str(core);
            out.push_str(&close);
            last = m.start() + core.len();
        }
        out.push_str(&piece[last..]);
    }
    out
}

/// The pieces of `xml`: `(text, true)` for character data outside wrappers,
/// `(markup, false)` for tags and wrapped content, in order.
pub(crate) fn pieces(xml: &str) -> impl Iterator<Item = (&str, bool)> {
    let wrapper_open = format!("<{TERM_TAG}>");
    let wrapper_close = format!("</{TERM_TAG}>");
    let mut rest = xml;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        if rest.starts_with(&wrapper_open) {
            let end = rest
                .find(&wrapper_close)
                .map_or(rest.len(), |i| i + wrapper_close.len());
            let (piece, tail) = rest.split_at(end);
            rest = tail;
            return Some((piece, false));
        }
        if rest.starts_with('<') {
            let end = rest.find('>').map_or(rest.len(), |i| i + 1);
            let (piece, tail) = rest.split_at(end);
            rest = tail;
            return Some((piece, false));
        }
        let end = rest.find('<').unwrap_or(rest.len());
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some((piece, true))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrapped(xml: &str) -> Vec<String> {
        let out = spans(xml, true);
        out.split("<tolk-term>")
            .skip(1)
            .filter_map(|s| s.split("</tolk-term>").next())
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn urls_emails_paths_and_placeholders_are_found() {
        assert_eq!(
            wrapped(
                "Write to public-webapps-request@w3.org, see https://Example.com/A?b=1&amp;c=2. \
                 Open /usr/local/etc/tolk.conf or C:\\Users\\Ana\\notes.txt with {0}, {name}, {{ user }}, ${HOME}, %s and %1$d."
            ),
            [
                "public-webapps-request@w3.org",
                "https://Example.com/A?b=1&amp;c=2",
                "/usr/local/etc/tolk.conf",
                "C:\\Users\\Ana\\notes.txt",
                "{0}",
                "{name}",
                "{{ user }}",
                "${HOME}",
                "%s",
                "%1$d",
            ]
        );
    }

    #[test]
    fn code_spans_and_numbers_with_units_are_found() {
        assert_eq!(
            wrapped("Run `cargo build --release` on 2.4 GHz, 16 GB, 5 kg at 120 km/h for 30 min."),
            [
                "`cargo build --release`",
                "2.4 GHz",
                "16 GB",
                "5 kg",
                "120 km/h",
                "30 min"
            ]
        );
        // A number before a word that only starts like a unit is text.
        for text in ["3 liters", "2 minutes", "5 great ideas", "in 10 mins"] {
            assert_eq!(spans(text, true), text, "{text}");
        }
    }

    #[test]
    fn file_names_and_snake_case_identifiers_are_found() {
        assert_eq!(
            wrapped(
                "The photo statue_by_nicu.png, the report Q3-results.final.PDF? No: report.pdf and max_retries."
            ),
            [
                "statue_by_nicu.png",
                "Q3-results.final.PDF",
                "report.pdf",
                "max_retries"
            ]
        );
        for text in ["The end. Then more.", "Node and js.", "A_ B _c"] {
            assert_eq!(spans(text, true), text, "{text}");
        }
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        for text in [
            "The house and/or the garden.",
            "On 12/05/2026 the km/h/s fell.",
            "100% sure, 10% more.",
            "It costs 10% more, 50 % less.",
            "A {multi word group} stays translatable.",
            "Email me at home.",
        ] {
            assert_eq!(spans(text, true), text, "{text}");
            assert!(!any(text, true), "{text}");
        }
    }

    #[test]
    fn tags_and_existing_wrappers_are_not_searched() {
        let xml = "<a href=\"https://example.com/x\">the site</a> <tolk-term>www.example.org</tolk-term> and {0}";
        assert_eq!(
            spans(xml, true),
            "<a href=\"https://example.com/x\">the site</a> <tolk-term>www.example.org</tolk-term> and <tolk-term>{0}</tolk-term>"
        );
    }

    #[test]
    fn a_closing_bracket_belongs_to_the_url_that_opened_it() {
        assert_eq!(
            wrapped("(see https://en.wikipedia.org/wiki/Rust_(language))"),
            ["https://en.wikipedia.org/wiki/Rust_(language)"]
        );
        assert_eq!(
            wrapped("(see https://example.com/a)"),
            ["https://example.com/a"]
        );
    }
}
