//! Number rules: decimal and thousands separators
//! (`numbers.decimal_separator`, `numbers.thousands_separator`,
//! `numbers.numbers_of_5_digits_or_more`, `numbers.numbers_up_to_4_digits`)
//! and the space before `%` (`numbers.percentage_format`).
//!
//! A number is read whatever convention the engine wrote it in: with two kinds
//! of separators the last one is the decimal mark (`1,234.5`, `1.234,5`,
//! `1 234,5`); a single `,` or `.` followed by exactly three digits is a
//! thousands separator (`1,234` = `1.234` = 1234), otherwise a decimal mark
//! (`3.5`, `0,25`). Anything else made of digits and dots (versions `1.2.3`,
//! dates, addresses) is left alone, and separators are never put into a bare
//! run of digits (years, postal codes, identifiers).

use crate::StyleRules;

/// No-break space, for spaces that must not break a line (`10 000`, `5 %`).
pub const NBSP: char = '\u{a0}';

/// The separators wanted for numbers of a size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Wanted {
    /// Decimal mark, when a rule sets it.
    decimal: Option<char>,
    /// Thousands separator when a rule sets it: `Some(None)` for none.
    thousands: Option<Option<char>>,
}

fn combined(option: &str) -> Wanted {
    let decimal = if option.starts_with("use_comma_as_decimal") {
        Some(',')
    } else if option.starts_with("use_period_as_decimal") {
        Some('.')
    } else {
        None
    };
    let thousands = if option.contains("period_as_thousands") {
        Some(Some('.'))
    } else if option.contains("space_as_thousands") {
        Some(Some(NBSP))
    } else if option.contains("comma_as_thousands") {
        Some(Some(','))
    } else {
        None
    };
    Wanted { decimal, thousands }
}

fn wanted(rules: &StyleRules, int_digits: usize) -> Wanted {
    let mut w = Wanted::default();
    match rules.option("numbers", "decimal_separator") {
        Some(o) if o.starts_with("use_comma") => w.decimal = Some(','),
        Some(o) if o.starts_with("use_period") => w.decimal = Some('.'),
        _ => {}
    }
    if rules
        .option("numbers", "decimal_separator")
        .is_some_and(|o| o.contains("do_not_use_thousands"))
    {
        w.thousands = Some(None);
    }
    if let Some(o) = rules.option("numbers", "thousands_separator") {
        w.thousands = Some(if o.starts_with("do_not_use") {
            None
        } else if o.starts_with("use_comma") {
            Some(',')
        } else if o.starts_with("use_period") {
            Some('.')
        } else if o.starts_with("use_space") {
            Some(NBSP)
        } else if o.starts_with("use_straight_apostrophe") {
            Some('\'')
        } else {
            return w;
        });
    }
    let by_size = if int_digits >= 5 {
        "numbers_of_5_digits_or_more"
    } else {
        "numbers_up_to_4_digits"
    };
    if let Some(o) = rules.option("numbers", by_size) {
        let c = combined(o);
        w.decimal = c.decimal.or(w.decimal);
        w.thousands = c.thousands.or(w.thousands);
    }
    w
}

fn is_space_sep(c: char) -> bool {
    matches!(c, ' ' | '\u{a0}' | '\u{202f}' | '\u{2009}')
}

fn is_apostrophe_sep(c: char) -> bool {
    matches!(c, '\'' | '\u{2019}')
}

/// A number as read: integer digits, fraction digits, whether it was grouped.
#[derive(Debug, PartialEq, Eq)]
struct Number {
    int: String,
    frac: Option<String>,
    grouped: bool,
}

/// Reads groups of digits and the separators between them.
fn interpret(groups: &[String], seps: &[char]) -> Option<Number> {
    let kind = |c: char| match c {
        ',' => 0,
        '.' => 1,
        _ => 2,
    };
    let n = seps.len();
    if n == 0 {
        return None;
    }
    let three = |gs: &[String]| gs.iter().all(|g| g.len() == 3);
    let first_ok = (1..=3).contains(&groups[0].len());
    let last = seps[n - 1];
    let all_same = seps.iter().all(|s| kind(*s) == kind(last));
    if all_same {
        if n == 1 && kind(last) < 2 && !(first_ok && groups[1].len() == 3) {
            // `3.5`, `1234.56`: a decimal mark.
            return Some(Number {
                int: groups[0].clone(),
                frac: Some(groups[1].clone()),
                grouped: false,
            });
        }
        if first_ok && three(&groups[1..]) {
            return Some(Number {
                int: groups.concat(),
                frac: None,
                grouped: true,
            });
        }
        return None;
    }
    // The last separator differs: it is the decimal mark.
    if kind(last) == 2 {
        return None;
    }
    let head = &seps[..n - 1];
    if !head.iter().all(|s| kind(*s) == kind(head[0])) {
        return None;
    }
    if !(first_ok && three(&groups[1..n])) {
        return None;
    }
    Some(Number {
        int: groups[..n].concat(),
        frac: Some(groups[n].clone()),
        grouped: true,
    })
}

fn write(num: &Number, decimal: char, thousands: Option<char>) -> String {
    let mut out = String::new();
    let digits: Vec<char> = num.int.chars().collect();
    for (i, d) in digits.iter().enumerate() {
        if i > 0
            && (digits.len() - i).is_multiple_of(3)
            && let Some(t) = thousands
        {
            out.push(t);
        }
        out.push(*d);
    }
    if let Some(f) = &num.frac {
        out.push(decimal);
        out.push_str(f);
    }
    out
}

/// Applies the number rules to plain text.
pub fn apply(text: &str, rules: &StyleRules) -> String {
    let separators = rules.configured.get("numbers").is_some_and(|n| {
        [
            "decimal_separator",
            "thousands_separator",
            "numbers_of_5_digits_or_more",
            "numbers_up_to_4_digits",
        ]
        .iter()
        .any(|r| n.contains_key(*r))
    });
    let text = if separators {
        separators_in(text, rules)
    } else {
        text.to_owned()
    };
    match rules.option("numbers", "percentage_format") {
        Some(
            "use_numerals_followed_by_percent_symbol"
            | "use_arabic_numerals_followed_by_percent_symbol_without_space",
        ) => percent(&text, None),
        Some(
            "use_numerals_followed_by_space_then_percent_symbol"
            | "use_numerals_followed_by_space_then_half_width_percent_symbol",
        ) => percent(&text, Some(NBSP)),
        _ => text,
    }
}

fn separators_in(text: &str, rules: &StyleRules) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let boundary = i == 0 || {
            let p = chars[i - 1];
            !(p.is_alphanumeric() || p == '.' || p == ',' || p == '_')
        };
        if !(c.is_ascii_digit() && boundary) {
            out.push(c);
            i += 1;
            continue;
        }
        // Read digit groups and separators.
        let mut groups = vec![String::new()];
        let mut seps = Vec::new();
        let mut j = i;
        loop {
            while j < chars.len() && chars[j].is_ascii_digit() {
                if let Some(g) = groups.last_mut() {
                    g.push(chars[j]);
                }
                j += 1;
            }
            let Some(&s) = chars.get(j) else { break };
            let digits_after = chars[j + 1..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            if digits_after == 0 {
                break;
            }
            let prev_len = groups.last().map_or(0, String::len);
            let ok = if s == ',' || s == '.' {
                true
            } else if is_space_sep(s) || is_apostrophe_sep(s) {
                digits_after == 3
                    && prev_len <= 3
                    && (groups.len() == 1 || prev_len == 3)
                    && !seps.iter().any(|p: &char| *p == ',' || *p == '.')
            } else {
                false
            };
            if !ok {
                break;
            }
            seps.push(s);
            groups.push(String::new());
            j += 1;
        }
        let original: String = chars[i..j].iter().collect();
        let followed_by_digit_sep = chars.get(j).is_some_and(|c| *c == '.' || *c == ',')
            && chars.get(j + 1).is_some_and(char::is_ascii_digit);
        let replaced = if followed_by_digit_sep {
            None
        } else {
            interpret(&groups, &seps).and_then(|num| {
                let w = wanted(rules, num.int.len());
                let old_decimal = num.frac.as_ref().and_then(|_| seps.last().copied());
                let old_thousands = if num.grouped {
                    seps.first().copied()
                } else {
                    None
                };
                let decimal = w.decimal.or(old_decimal).unwrap_or('.');
                let mut thousands = match w.thousands {
                    Some(t) => t,
                    None => old_thousands,
                };
                if !num.grouped {
                    thousands = None;
                }
                if thousands == Some(decimal) {
                    thousands = Some(if decimal == ',' {
                        if rules.base() == "fr" { NBSP } else { '.' }
                    } else {
                        ','
                    });
                }
                let s = write(&num, decimal, thousands);
                (s != original).then_some(s)
            })
        };
        out.push_str(replaced.as_deref().unwrap_or(&original));
        i = j;
    }
    out
}

/// Sets the space between a number and `%`.
fn percent(text: &str, space: Option<char>) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        out.push(c);
        i += 1;
        if c.is_ascii_digit() {
            let mut j = i;
            while j < chars.len() && is_space_sep(chars[j]) && j - i < 2 {
                j += 1;
            }
            if chars.get(j) == Some(&'%') {
                if let Some(s) = space {
                    out.push(s);
                }
                out.push('%');
                i = j + 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(pairs: &[(&str, &str)]) -> StyleRules {
        let mut r = StyleRules::new("de");
        for (rule, opt) in pairs {
            r.set("numbers", rule, opt);
        }
        r
    }

    #[test]
    fn decimal_separator_converts_both_conventions() {
        let r = rules(&[("decimal_separator", "use_comma_as_decimal_separator")]);
        assert_eq!(
            apply("3.5 and 1,234.56 and 0.25", &r),
            "3,5 and 1.234,56 and 0,25"
        );
        let r = rules(&[("decimal_separator", "use_period_as_decimal_separator")]);
        assert_eq!(apply("3,5 und 1.234,56", &r), "3.5 und 1,234.56");
    }

    #[test]
    fn thousands_separator_and_removal() {
        let r = rules(&[("thousands_separator", "use_space")]);
        assert_eq!(apply("1,234,567 people", &r), "1\u{a0}234\u{a0}567 people");
        let r = rules(&[(
            "decimal_separator",
            "use_comma_and_do_not_use_thousands_separator",
        )]);
        assert_eq!(apply("12,345.5", &r), "12345,5");
        let r = rules(&[(
            "thousands_separator",
            "use_straight_apostrophe_as_thousands_separator",
        )]);
        assert_eq!(apply("CHF 10 000", &r), "CHF 10'000");
    }

    #[test]
    fn by_size_rules_take_precedence() {
        let r = rules(&[
            (
                "numbers_of_5_digits_or_more",
                "use_comma_as_decimal_separator_and_space_as_thousands_separator",
            ),
            (
                "numbers_up_to_4_digits",
                "use_comma_as_decimal_separator_and_period_as_thousands_separator",
            ),
        ]);
        assert_eq!(apply("12,345.6 / 1,234.5", &r), "12\u{a0}345,6 / 1.234,5");
    }

    #[test]
    fn leaves_years_versions_dates_and_codes_alone() {
        let r = rules(&[("decimal_separator", "use_comma_as_decimal_separator")]);
        for s in [
            "In 2024.",
            "version 1.2.3",
            "12.05.2024",
            "v1.5",
            "192.168.1.1",
            "75001 Paris",
            "It ends.",
        ] {
            assert_eq!(apply(s, &r), s);
        }
        assert_eq!(apply("It costs 3.5.", &r), "It costs 3,5.");
    }

    #[test]
    fn percentages() {
        let r = rules(&[(
            "percentage_format",
            "use_numerals_followed_by_space_then_percent_symbol",
        )]);
        assert_eq!(apply("50% and 7 %", &r), "50\u{a0}% and 7\u{a0}%");
        let r = rules(&[(
            "percentage_format",
            "use_numerals_followed_by_percent_symbol",
        )]);
        assert_eq!(apply("50 % and 7\u{a0}%", &r), "50% and 7%");
    }
}
