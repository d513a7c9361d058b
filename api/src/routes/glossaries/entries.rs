//! Glossary entries in TSV and CSV: parsing with the spec's limits, every
//! fault a 400 naming its line, and TSV output.

use std::collections::HashSet;

/// Most UTF-8 bytes of a glossary name or of one term.
pub const MAX_TERM_BYTES: usize = 1024;

/// An entry format of the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Tab-separated: `source<TAB>target` per line.
    Tsv,
    /// Comma-separated (RFC 4180 quoting): `source,target[,source_lang,target_lang]`.
    Csv,
}

impl Format {
    /// Parses `entries_format` (default tsv).
    pub fn parse(value: Option<&str>) -> Result<Self, String> {
        match value.map(str::to_ascii_lowercase).as_deref() {
            None | Some("tsv") => Ok(Self::Tsv),
            Some("csv") => Ok(Self::Csv),
            Some(other) => Err(format!(
                "Value for 'entries_format' not supported: '{other}' (allowed: tsv, csv)."
            )),
        }
    }
}

/// Parsed entries: sources and targets in order.
pub type Parsed = (Vec<String>, Vec<String>);

/// Checks one term: trimmed, non-empty, at most 1024 bytes, no control characters.
fn term(raw: &str, line: usize, what: &str) -> Result<String, String> {
    let t = raw.trim();
    if t.is_empty() {
        return Err(format!(
            "Invalid glossary entry on line {line}: empty {what} term."
        ));
    }
    if t.len() > MAX_TERM_BYTES {
        return Err(format!(
            "Invalid glossary entry on line {line}: the {what} term exceeds {MAX_TERM_BYTES} UTF-8 bytes."
        ));
    }
    if t.contains('\u{FFFD}') {
        return Err(format!(
            "Invalid glossary entry on line {line}: the {what} term is not valid UTF-8."
        ));
    }
    if t.chars()
        .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))
    {
        return Err(format!(
            "Invalid glossary entry on line {line}: the {what} term contains a control character."
        ));
    }
    Ok(t.to_owned())
}

/// Parses entries; `langs` is the dictionary's pair (for the optional CSV
/// language columns).
pub fn parse(text: &str, format: Format, langs: (&str, &str)) -> Result<Parsed, String> {
    let rows = match format {
        Format::Tsv => text
            .split('\n')
            .enumerate()
            .map(|(i, l)| {
                (
                    i + 1,
                    l.strip_suffix('\r')
                        .unwrap_or(l)
                        .split('\t')
                        .map(str::to_owned)
                        .collect(),
                )
            })
            .collect(),
        Format::Csv => csv_rows(text)?,
    };
    let mut seen = HashSet::new();
    let (mut sources, mut targets) = (Vec::new(), Vec::new());
    for (line, fields) in rows {
        let fields: Vec<String> = fields;
        if fields.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        let sep = if format == Format::Tsv {
            "tab"
        } else {
            "comma"
        };
        match fields.len() {
            2 => {}
            4 if format == Format::Csv => {
                let (s, t) = (fields[2].trim(), fields[3].trim());
                if !s.eq_ignore_ascii_case(langs.0) || !t.eq_ignore_ascii_case(langs.1) {
                    return Err(format!(
                        "Invalid glossary entry on line {line}: languages '{s}'/'{t}' differ from the dictionary's '{}'/'{}'.",
                        langs.0, langs.1
                    ));
                }
            }
            n => {
                return Err(format!(
                    "Invalid glossary entry on line {line}: expected a source and a target term separated by a {sep}, found {n} field(s)."
                ));
            }
        }
        let s = term(&fields[0], line, "source")?;
        let t = term(&fields[1], line, "target")?;
        if !seen.insert(s.clone()) {
            return Err(format!(
                "Invalid glossary entry on line {line}: duplicate source term '{s}'."
            ));
        }
        sources.push(s);
        targets.push(t);
    }
    if sources.is_empty() {
        return Err("The glossary entries must contain at least one entry.".to_owned());
    }
    Ok((sources, targets))
}

/// RFC 4180 rows with the line each starts on.
fn csv_rows(text: &str) -> Result<Vec<(usize, Vec<String>)>, String> {
    let mut rows = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1;
    let (mut row_line, mut field, mut fields) = (1, String::new(), Vec::new());
    let mut quoted = false;
    let mut field_started_quoted = false;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                c => {
                    if c == '\n' {
                        line += 1;
                    }
                    field.push(c);
                }
            }
            continue;
        }
        match c {
            '"' if field.trim().is_empty() && !field_started_quoted => {
                field.clear();
                quoted = true;
                field_started_quoted = true;
            }
            '"' => {
                return Err(format!(
                    "Invalid glossary entry on line {line}: stray quote in an unquoted CSV field."
                ));
            }
            ',' => {
                fields.push(std::mem::take(&mut field));
                field_started_quoted = false;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                fields.push(std::mem::take(&mut field));
                rows.push((row_line, std::mem::take(&mut fields)));
                field_started_quoted = false;
                line += 1;
                row_line = line;
            }
            c => field.push(c),
        }
    }
    if quoted {
        return Err(format!(
            "Invalid glossary entry on line {row_line}: unterminated quoted CSV field."
        ));
    }
    fields.push(field);
    rows.push((row_line, fields));
    Ok(rows)
}

/// Entries as TSV, one `source<TAB>target` per line.
pub fn to_tsv(sources: &[String], targets: &[String]) -> String {
    let mut out = String::new();
    for (i, (s, t)) in sources.iter().zip(targets).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(s);
        out.push('\t');
        out.push_str(t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const EN_DE: (&str, &str) = ("en", "de");

    #[test]
    fn tsv_and_csv_parse() {
        let (s, t) = parse("Hello\tHallo\r\n\n cat \t Katze \n", Format::Tsv, EN_DE).unwrap();
        assert_eq!(s, ["Hello", "cat"]);
        assert_eq!(t, ["Hallo", "Katze"]);
        let (s, t) = parse("\"a, b\",\"x \"\"y\"\"\"\nc,d,en,de\n", Format::Csv, EN_DE).unwrap();
        assert_eq!(s, ["a, b", "c"]);
        assert_eq!(t, ["x \"y\"", "d"]);
    }

    #[test]
    fn faults_name_their_line() {
        let e = parse("a\tb\nc\td\na\te", Format::Tsv, EN_DE).unwrap_err();
        assert!(e.contains("line 3") && e.contains("duplicate"), "{e}");
        let e = parse("a\tb\n\t x", Format::Tsv, EN_DE).unwrap_err();
        assert!(e.contains("line 2") && e.contains("empty source"), "{e}");
        let e = parse("a\tb\nc", Format::Tsv, EN_DE).unwrap_err();
        assert!(e.contains("line 2"), "{e}");
        let e = parse("a,b\nc,d,en,fr", Format::Csv, EN_DE).unwrap_err();
        assert!(e.contains("line 2"), "{e}");
        let e = parse("a\tb\u{FFFD}", Format::Tsv, EN_DE).unwrap_err();
        assert!(e.contains("line 1") && e.contains("UTF-8"), "{e}");
        let long = "x".repeat(1025);
        let e = parse(&format!("a\tb\n{long}\ty"), Format::Tsv, EN_DE).unwrap_err();
        assert!(e.contains("line 2") && e.contains("1024"), "{e}");
        assert!(parse("\n\n", Format::Tsv, EN_DE).is_err());
        let e = parse("a,b\n\"c,d", Format::Csv, EN_DE).unwrap_err();
        assert!(e.contains("line 2"), "{e}");
    }
}
