//! Translatable pieces inside the text of an element that is not a
//! paragraph: the column names of Excel's structured references in formulas
//! (`Orders[Amount]`), which must follow the translated table headers, and the
//! text values chart caches hold (`c:v`), which must follow the translated
//! cells they were read from. Each piece is a segment of its own, so the same
//! source text gets the same translation as the cell or header it names.
//! The sections of a sheet's page headers and footers (`&L`, `&C`, `&R` in
//! `oddHeader`…) are pieces too, their codes (`&P`, `&"Arial,Bold"`, `&12`)
//! tags of the segment.

use std::ops::Range;

/// How the pieces of an element's text are found and written back.
#[derive(Debug)]
pub(crate) struct Pieces {
    /// The ranges of the element's raw text (XML as written) to translate.
    pub find: fn(&str) -> Vec<Range<usize>>,
    /// How a translation is written in its place, before XML escaping.
    pub write: fn(&str) -> String,
    /// The length of the code a piece's (unescaped) text starts with, if it
    /// does: codes are tags of the segment, written back as they were.
    pub codes: Option<fn(&str) -> Option<usize>>,
}

/// Column names of structured references in a formula (`Orders[Amount]`,
/// `Orders[[#This Row],[Amount]]`, `[@Amount]`): special items (`#Totals`),
/// external workbook indexes (`[1]`), names with escapes or entities, text in
/// string literals and in quoted sheet names are left alone.
pub(crate) static STRUCTURED_REFERENCES: Pieces = Pieces {
    find: structured_references,
    write: escape_structured_name,
    codes: None,
};

/// The whole text of a cached chart value (`c:v`), unless it is a number.
pub(crate) static CACHED_TEXT: Pieces = Pieces {
    find: text_value,
    write: str::to_owned,
    codes: None,
};

/// The left, centre and right sections of a page header or footer
/// (`&LConfidential&CPage &P of &N`) that hold text besides codes.
pub(crate) static HEADER_FOOTER: Pieces = Pieces {
    find: header_sections,
    write: str::to_owned,
    codes: Some(header_code),
};

fn structured_references(formula: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    // Open brackets: where each one's content starts and whether it holds
    // another bracket.
    let mut open: Vec<(usize, bool)> = Vec::new();
    let mut in_string = false;
    let mut in_sheet = false;
    let mut escaped = false;
    for (i, c) in formula.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '"' if open.is_empty() && !in_sheet => in_string = !in_string,
            '\'' if open.is_empty() && !in_string => in_sheet = !in_sheet,
            '\'' if !open.is_empty() => escaped = true,
            '[' if !in_string && !in_sheet => {
                if let Some(parent) = open.last_mut() {
                    parent.1 = true;
                }
                open.push((i + 1, false));
            }
            ']' if !in_string && !in_sheet => {
                if let Some((start, nested)) = open.pop()
                    && !nested
                    && let Some(range) = column_name(formula, start..i)
                {
                    out.push(range);
                }
            }
            _ => {}
        }
    }
    out
}

/// The column name a bracket's content names, if it is one this reader can
/// rewrite safely.
fn column_name(formula: &str, mut range: Range<usize>) -> Option<Range<usize>> {
    if formula[range.clone()].starts_with('@') {
        range.start += 1;
    }
    let name = &formula[range.clone()];
    let plain = !name.trim().is_empty()
        && !name.starts_with('#')
        && !name.chars().all(|c| c.is_ascii_digit())
        && !name.contains(['\'', '&', ',', ':', '[', ']']);
    plain.then_some(range)
}

/// A translated column name as a structured reference writes it: `'` escapes
/// the characters that have a meaning there.
fn escape_structured_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '\'' | '[' | ']' | '#' | '@') {
            out.push('\'');
        }
        out.push(c);
    }
    out
}

/// The sections of a header or footer as written (XML-escaped: a code's
/// `&` is `&amp;`), without their section codes, that hold letters outside
/// codes.
fn header_sections(raw: &str) -> Vec<Range<usize>> {
    const AMP: &str = "&amp;";
    let mut out = Vec::new();
    let mut start = 0;
    let mut at = 0;
    let mut push = |range: Range<usize>| {
        let text = quick_xml::escape::unescape(&raw[range.clone()])
            .map_or_else(|_| raw[range.clone()].to_owned(), |t| t.into_owned());
        if has_text_outside_codes(&text) {
            out.push(range);
        }
    };
    while let Some(found) = raw[at..].find(AMP) {
        let code = at + found;
        let next = code + AMP.len();
        match raw.as_bytes().get(next) {
            Some(b'L' | b'C' | b'R') => {
                push(start..code);
                start = next + 1;
                at = start;
            }
            // `&&` is an ampersand of the text.
            Some(b'&') if raw[next..].starts_with(AMP) => at = next + AMP.len(),
            _ => at = next,
        }
    }
    push(start..raw.len());
    out
}

/// Whether a section's text has letters outside its codes.
fn has_text_outside_codes(text: &str) -> bool {
    let (segment, _) = crate::placeholders::with_codes(text, header_code);
    crate::inline::plain_text(&segment)
        .chars()
        .any(char::is_alphabetic)
}

/// The length of the header/footer code at the start of `text`: `&&`,
/// `&"font,style"`, a font size (`&12`), a colour (`&KFF0000`,
/// `&K01+049`), a page number with an offset (`&P+1`), or one of the
/// one-letter codes (page, pages, date, time, path, file, sheet, picture,
/// styles).
fn header_code(text: &str) -> Option<usize> {
    let rest = text.strip_prefix('&')?;
    let first = rest.chars().next()?;
    let len = match first {
        '&' => 1,
        '"' => rest[1..].find('"').map(|end| end + 2)?,
        '0'..='9' => rest.chars().take_while(char::is_ascii_digit).count(),
        'K' => {
            1 + rest[1..]
                .chars()
                .take(6)
                .take_while(|c| c.is_ascii_hexdigit() || matches!(c, '+' | '-'))
                .count()
        }
        'P' => {
            let offset = rest[1..].strip_prefix(['+', '-']).map_or(0, |digits| {
                let n = digits.chars().take_while(char::is_ascii_digit).count();
                if n > 0 { n + 1 } else { 0 }
            });
            1 + offset
        }
        'N' | 'D' | 'T' | 'Z' | 'F' | 'A' | 'G' | 'B' | 'I' | 'U' | 'E' | 'S' | 'X' | 'Y' | 'O'
        | 'H' | 'L' | 'C' | 'R' => 1,
        _ => return None,
    };
    Some(1 + len)
}

fn text_value(text: &str) -> Vec<Range<usize>> {
    let trimmed = text.trim();
    let number = trimmed.parse::<f64>().is_ok();
    if trimmed.is_empty() || number || !trimmed.chars().any(char::is_alphabetic) {
        return Vec::new();
    }
    std::iter::once(0..text.len()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(formula: &str) -> Vec<&str> {
        structured_references(formula)
            .into_iter()
            .map(|r| &formula[r])
            .collect()
    }

    #[test]
    fn column_names_of_structured_references_are_found() {
        assert_eq!(names("SUM(Orders[Amount])"), ["Amount"]);
        assert_eq!(
            names("Orders[[#This Row],[Unit Price]]*[@Quantity]"),
            ["Unit Price", "Quantity"]
        );
        assert_eq!(names("SUM(Orders[[Amount]:[Tax]])"), ["Amount", "Tax"]);
        assert_eq!(names("Orders[@[Unit Price]]"), ["Unit Price"]);
        assert_eq!(
            names("ROWS(Orders[#Data])+Orders[#Totals]"),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn literals_sheet_names_and_external_references_are_not_names() {
        assert_eq!(names(r#"IF(A1="[Amount]",1,2)"#), Vec::<&str>::new());
        assert_eq!(
            names("'[Book1.xlsx]Sheet 1'!A1+[1]Sheet1!B2"),
            Vec::<&str>::new()
        );
        assert_eq!(names("Orders['#Amount]"), Vec::<&str>::new());
        assert_eq!(names("SUM(B1:B2)"), Vec::<&str>::new());
    }

    fn sections(raw: &str) -> Vec<&str> {
        header_sections(raw).into_iter().map(|r| &raw[r]).collect()
    }

    #[test]
    fn header_sections_with_text_are_found_and_codes_are_known() {
        assert_eq!(
            sections(
                "&amp;L&amp;\"Arial,Bold\"Confidential&amp;CPage &amp;P of &amp;N&amp;R&amp;D"
            ),
            ["&amp;\"Arial,Bold\"Confidential", "Page &amp;P of &amp;N"]
        );
        assert_eq!(sections("Tom &amp;&amp; Jerry"), ["Tom &amp;&amp; Jerry"]);
        assert_eq!(sections("&amp;C&amp;P / &amp;N"), Vec::<&str>::new());
        assert_eq!(header_code("&\"Arial,Bold\"x"), Some(13));
        assert_eq!(header_code("&12Title"), Some(3));
        assert_eq!(header_code("&KFF0000Red"), Some(8));
        assert_eq!(header_code("&K01+049x"), Some(8));
        assert_eq!(header_code("&P+1 more"), Some(4));
        assert_eq!(header_code("&&"), Some(2));
        assert_eq!(header_code("& x"), None);
    }

    #[test]
    fn a_translated_name_is_escaped_where_references_need_it() {
        assert_eq!(escape_structured_name("Importe [€]"), "Importe '[€']");
        assert_eq!(escape_structured_name("l'import"), "l''import");
        assert_eq!(escape_structured_name("Nº #"), "Nº '#");
    }

    #[test]
    fn cached_values_are_text_unless_numbers() {
        assert_eq!(
            text_value("East"),
            std::iter::once(0..4).collect::<Vec<_>>()
        );
        assert_eq!(text_value("12.5"), Vec::<Range<usize>>::new());
        assert_eq!(text_value("2026"), Vec::<Range<usize>>::new());
        assert_eq!(text_value(" "), Vec::<Range<usize>>::new());
    }
}
