//! Translatable pieces inside the text of an element that is not a
//! paragraph: the column names of Excel's structured references in formulas
//! (`Orders[Amount]`), which must follow the translated table headers, and the
//! text values chart caches hold (`c:v`), which must follow the translated
//! cells they were read from. Each piece is a segment of its own, so the same
//! source text gets the same translation as the cell or header it names.

use std::ops::Range;

/// How the pieces of an element's text are found and written back.
#[derive(Debug)]
pub(crate) struct Pieces {
    /// The ranges of the element's raw text (XML as written) to translate.
    pub find: fn(&str) -> Vec<Range<usize>>,
    /// How a translation is written in its place, before XML escaping.
    pub write: fn(&str) -> String,
}

/// Column names of structured references in a formula (`Orders[Amount]`,
/// `Orders[[#This Row],[Amount]]`, `[@Amount]`): special items (`#Totals`),
/// external workbook indexes (`[1]`), names with escapes or entities, text in
/// string literals and in quoted sheet names are left alone.
pub(crate) static STRUCTURED_REFERENCES: Pieces = Pieces {
    find: structured_references,
    write: escape_structured_name,
};

/// The whole text of a cached chart value (`c:v`), unless it is a number.
pub(crate) static CACHED_TEXT: Pieces = Pieces {
    find: text_value,
    write: str::to_owned,
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
