//! Date and time rules on numeric dates and clock times:
//! `dates_and_times.date_format` (its numeric options),
//! `dates_and_times.dates_in_numerical_form`,
//! `dates_and_times.single_digit_days_and_months`,
//! `dates_and_times.hours_minutes_separator` and
//! `dates_and_times.single_digit_hours`.
//!
//! Dates are read as `yyyy-mm-dd` (also with `/` or `.`), `dd.mm.yyyy`,
//! `dd-mm-yyyy` and `dd/mm/yyyy` or `mm/dd/yyyy`: a slash date is read month
//! first when its first number cannot be a month or its second cannot be a
//! day, and otherwise as the source language writes them (month first for
//! English, day first for every other language). Times are `h:mm`, `hhhmm`
//! and `hh h mm`; `h:mm:ss` is left alone.

use crate::StyleRules;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    Dmy,
    Mdy,
    Ymd,
}

/// How a date is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Format {
    order: Order,
    sep: char,
    /// Leading zeros: `Some(true)` always, `Some(false)` never, `None` as written.
    pad: Option<bool>,
    /// Two-digit year.
    short_year: bool,
}

fn format_of(option: &str) -> Option<Format> {
    let pad = if option.contains("with_leading_zero") {
        Some(true)
    } else if option.contains("without_leading_zero") {
        Some(false)
    } else {
        None
    };
    let f = |order, sep| Format {
        order,
        sep,
        pad,
        short_year: false,
    };
    // Only numeric formats (no month names, eras or CJK words).
    let numeric = option
        .strip_prefix("use_")
        .map(|o| {
            o.split("_with")
                .next()
                .unwrap_or_default()
                .split("_without")
                .next()
                .unwrap_or_default()
        })
        .unwrap_or_default();
    Some(match numeric {
        "dd_period_mm_period_yyyy" => f(Order::Dmy, '.'),
        "dd_period_mm_period_yy" => Format {
            short_year: true,
            ..f(Order::Dmy, '.')
        },
        "dd_slash_mm_slash_yyyy" => f(Order::Dmy, '/'),
        "dd_hyphen_mm_hyphen_yyyy" => f(Order::Dmy, '-'),
        "mm_slash_dd_slash_yyyy" => f(Order::Mdy, '/'),
        "yyyy_hyphen_mm_hyphen_dd" => f(Order::Ymd, '-'),
        "yyyy_period_mm_period_dd" => f(Order::Ymd, '.'),
        "yyyy_slash_mm_slash_dd" => f(Order::Ymd, '/'),
        _ => return None,
    })
}

/// The wanted date format, if a rule sets a numeric one.
fn date_format(rules: &StyleRules) -> Option<Format> {
    let mut f = rules
        .option("dates_and_times", "date_format")
        .and_then(format_of)
        .or_else(|| {
            rules
                .option("dates_and_times", "dates_in_numerical_form")
                .and_then(format_of)
        });
    let pad = match rules.option("dates_and_times", "single_digit_days_and_months") {
        Some("use_leading_zero") => Some(true),
        Some("do_not_use_leading_zero") => Some(false),
        _ => None,
    };
    if let Some(p) = pad {
        match &mut f {
            Some(f) if f.pad.is_none() => f.pad = Some(p),
            Some(_) => {}
            None => {
                // Only the padding is set: keep the order and separator read.
                return Some(Format {
                    order: Order::Dmy,
                    sep: '\0',
                    pad: Some(p),
                    short_year: false,
                });
            }
        }
    }
    f
}

/// A date as read.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Date {
    y: String,
    m: String,
    d: String,
    order: Order,
    sep: char,
}

fn digits_at(chars: &[char], i: usize) -> usize {
    chars[i..].iter().take_while(|c| c.is_ascii_digit()).count()
}

fn num(chars: &[char], i: usize, n: usize) -> String {
    chars[i..i + n].iter().collect()
}

/// Reads a date at `i`; returns it and the index after it.
fn read_date(chars: &[char], i: usize, month_first: bool) -> Option<(Date, usize)> {
    let a = digits_at(chars, i);
    let s1 = *chars.get(i + a)?;
    if !matches!(s1, '-' | '/' | '.') {
        return None;
    }
    let j = i + a + 1;
    let b = digits_at(chars, j);
    if chars.get(j + b) != Some(&s1) {
        return None;
    }
    let k = j + b + 1;
    let c = digits_at(chars, k);
    let end = k + c;
    // Not part of a longer run (`1.2.3.4`, `2024-05-01-2`).
    if chars.get(end).is_some_and(|x| matches!(x, '-' | '/' | '.'))
        && chars.get(end + 1).is_some_and(char::is_ascii_digit)
    {
        return None;
    }
    let (y, m, d, order) = if a == 4 && (1..=2).contains(&b) && (1..=2).contains(&c) {
        (
            num(chars, i, 4),
            num(chars, j, b),
            num(chars, k, c),
            Order::Ymd,
        )
    } else if (1..=2).contains(&a) && (1..=2).contains(&b) && c == 4 {
        let (x, z) = (num(chars, i, a), num(chars, j, b));
        let (xv, zv): (u32, u32) = (x.parse().ok()?, z.parse().ok()?);
        // Day first unless a slash date reads month first (see the module).
        let mdy = s1 == '/' && xv <= 12 && (zv > 12 || month_first);
        if mdy {
            (num(chars, k, 4), x, z, Order::Mdy)
        } else {
            (num(chars, k, 4), z, x, Order::Dmy)
        }
    } else {
        return None;
    };
    let (mv, dv): (u32, u32) = (m.parse().ok()?, d.parse().ok()?);
    if !(1..=12).contains(&mv) || !(1..=31).contains(&dv) {
        return None;
    }
    Some((
        Date {
            y,
            m,
            d,
            order,
            sep: s1,
        },
        end,
    ))
}

fn pad(s: &str, p: Option<bool>) -> String {
    let v: u32 = s.parse().unwrap_or(0);
    match p {
        Some(true) => format!("{v:02}"),
        Some(false) => v.to_string(),
        None => s.to_owned(),
    }
}

fn write_date(d: &Date, f: Format) -> String {
    let (order, sep) = if f.sep == '\0' {
        (d.order, d.sep)
    } else {
        (f.order, f.sep)
    };
    let (m, day) = (pad(&d.m, f.pad), pad(&d.d, f.pad));
    let y = if f.short_year && d.y.len() == 4 {
        d.y[2..].to_owned()
    } else {
        d.y.clone()
    };
    match order {
        Order::Dmy => format!("{day}{sep}{m}{sep}{y}"),
        Order::Mdy => format!("{m}{sep}{day}{sep}{y}"),
        Order::Ymd => format!("{y}{sep}{m}{sep}{day}"),
    }
}

/// How clock times are written, if a rule says.
#[derive(Debug, Clone, Copy, Default)]
struct Clock {
    /// `:`, `h` or ` h ` between hours and minutes.
    sep: Option<&'static str>,
    /// Leading zero on single-digit hours.
    pad_hour: Option<bool>,
}

fn clock(rules: &StyleRules) -> Option<Clock> {
    let sep = match rules.option("dates_and_times", "hours_minutes_separator") {
        Some("use_colon_without_spaces") => Some(":"),
        Some("use_letter_h_without_spaces") => Some("h"),
        Some("use_letter_h_with_regular_space_on_either_side") => Some("\u{a0}h\u{a0}"),
        _ => None,
    };
    let pad_hour = match rules.option("dates_and_times", "single_digit_hours") {
        Some("use_leading_zero") => Some(true),
        Some("do_not_use_leading_zero") => Some(false),
        _ => None,
    };
    (sep.is_some() || pad_hour.is_some()).then_some(Clock { sep, pad_hour })
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\u{a0}' | '\u{202f}')
}

/// Reads a clock time at `i` (`14:30`, `14h30`, `14 h 30`): hours, minutes,
/// separator as written and the index after it.
fn read_time(chars: &[char], i: usize) -> Option<(String, String, usize)> {
    let a = digits_at(chars, i);
    if !(1..=2).contains(&a) {
        return None;
    }
    let mut j = i + a;
    if chars.get(j) == Some(&':') {
        j += 1;
    } else {
        let mut k = j;
        if chars.get(k).copied().is_some_and(is_space) {
            k += 1;
        }
        if chars.get(k) != Some(&'h') {
            return None;
        }
        k += 1;
        let spaced = chars.get(k).copied().is_some_and(is_space);
        if spaced {
            k += 1;
        }
        j = k;
    }
    let b = digits_at(chars, j);
    if b != 2 {
        return None;
    }
    let end = j + 2;
    // `10:30:15` (seconds) and `10:30h` stay as they are.
    if chars
        .get(end)
        .is_some_and(|c| *c == ':' || c.is_alphanumeric())
    {
        return None;
    }
    let (h, m) = (num(chars, i, a), num(chars, j, 2));
    let (hv, mv): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    if hv > 24 || mv > 59 {
        return None;
    }
    Some((h, m, end))
}

/// Applies the date and time rules to plain text.
pub fn apply(text: &str, rules: &StyleRules, source_base: Option<&str>) -> String {
    let date = date_format(rules);
    let time = clock(rules);
    if date.is_none() && time.is_none() {
        return text.to_owned();
    }
    let month_first = source_base.is_some_and(|s| s.eq_ignore_ascii_case("en"));
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let boundary = i == 0 || {
            let p = chars[i - 1];
            !(p.is_alphanumeric() || matches!(p, '.' | ',' | '/' | '-' | ':'))
        };
        if c.is_ascii_digit() && boundary {
            if let Some(f) = date
                && let Some((d, end)) = read_date(&chars, i, month_first)
            {
                out.push_str(&write_date(&d, f));
                i = end;
                continue;
            }
            if let Some(t) = time
                && let Some((h, m, end)) = read_time(&chars, i)
            {
                let written: String = chars[i..end].iter().collect();
                let sep = t
                    .sep
                    .map(str::to_owned)
                    .unwrap_or_else(|| written[h.len()..written.len() - 2].to_owned());
                out.push_str(&pad(&h, t.pad_hour));
                out.push_str(&sep);
                out.push_str(&m);
                i = end;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(pairs: &[(&str, &str)]) -> StyleRules {
        let mut r = StyleRules::new("de");
        for (rule, opt) in pairs {
            r.set("dates_and_times", rule, opt);
        }
        r
    }

    #[test]
    fn converts_numeric_dates() {
        let r = rules(&[(
            "date_format",
            "use_dd_period_mm_period_yyyy_with_leading_zeros_for_single_digit_days_and_months",
        )]);
        assert_eq!(
            apply("On 2024-3-5 and 12/25/2024.", &r, Some("en")),
            "On 05.03.2024 and 25.12.2024."
        );
        // Ambiguous slash dates: month first for English sources only.
        assert_eq!(apply("03/04/2024", &r, Some("en")), "04.03.2024");
        assert_eq!(apply("03/04/2024", &r, Some("fr")), "03.04.2024");
        let r = rules(&[(
            "date_format",
            "use_yyyy_hyphen_mm_hyphen_dd_with_leading_zeros_for_single_digit_days_and_months",
        )]);
        assert_eq!(apply("le 5.3.2024", &r, None), "le 2024-03-05");
        let r = rules(&[("dates_in_numerical_form", "use_dd_slash_mm_slash_yyyy")]);
        assert_eq!(apply("2024-03-05", &r, None), "05/03/2024");
    }

    #[test]
    fn padding_alone_keeps_the_layout() {
        let r = rules(&[("single_digit_days_and_months", "do_not_use_leading_zero")]);
        assert_eq!(apply("05.03.2024", &r, None), "5.3.2024");
    }

    #[test]
    fn leaves_non_dates_alone() {
        let r = rules(&[("date_format", "use_dd_period_mm_period_yyyy")]);
        for s in [
            "1.2.3.4",
            "13/13/2024",
            "2024-13-01",
            "10-20",
            "ISBN 978-3-16",
        ] {
            assert_eq!(apply(s, &r, None), s);
        }
    }

    #[test]
    fn clock_times() {
        let r = rules(&[("hours_minutes_separator", "use_letter_h_without_spaces")]);
        assert_eq!(apply("at 14:30 and 9:05.", &r, None), "at 14h30 and 9h05.");
        assert_eq!(apply("10:30:15", &r, None), "10:30:15");
        let r = rules(&[
            ("hours_minutes_separator", "use_colon_without_spaces"),
            ("single_digit_hours", "use_leading_zero"),
        ]);
        assert_eq!(apply("à 9 h 05 et 14h30", &r, None), "à 09:05 et 14:30");
        let r = rules(&[(
            "hours_minutes_separator",
            "use_letter_h_with_regular_space_on_either_side",
        )]);
        assert_eq!(apply("14:30", &r, None), "14\u{a0}h\u{a0}30");
        assert_eq!(apply("ratio 3:1", &r, None), "ratio 3:1");
    }
}
