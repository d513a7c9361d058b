//! Texts cut into lines for the engines, so that a line break ends a sentence
//! (DeepL's `split_sentences=1`), and put together again keeping every line
//! break and the whitespace around lines.

/// A piece of an input text: kept as it is (line breaks and the whitespace
/// around lines) or the translation of one line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Keep(String),
    Line(usize),
}

/// How the texts were cut: what [`join`] needs to put them together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layouts(Vec<Vec<Part>>);

/// Cuts every text into lines; returns the layouts and the lines to translate
/// (whitespace-only lines are kept, not sent).
pub fn split(texts: &[String]) -> (Layouts, Vec<String>) {
    let mut lines = Vec::new();
    let layouts = texts
        .iter()
        .map(|text| {
            let mut parts = Vec::new();
            for line in text.split_inclusive(['\n', '\r']) {
                let core = line.trim();
                if core.is_empty() {
                    parts.push(Part::Keep(line.to_owned()));
                    continue;
                }
                let start = line.len() - line.trim_start().len();
                let end = start + core.len();
                if start > 0 {
                    parts.push(Part::Keep(line[..start].to_owned()));
                }
                parts.push(Part::Line(lines.len()));
                lines.push(core.to_owned());
                if end < line.len() {
                    parts.push(Part::Keep(line[end..].to_owned()));
                }
            }
            parts
        })
        .collect();
    (Layouts(layouts), lines)
}

/// Puts translated lines back into their texts; `None` when a line is missing.
pub fn join(layouts: Layouts, translated: &[String]) -> Option<Vec<String>> {
    layouts
        .0
        .into_iter()
        .map(|parts| {
            let mut text = String::new();
            for part in parts {
                match part {
                    Part::Keep(s) => text.push_str(&s),
                    Part::Line(i) => text.push_str(translated.get(i)?),
                }
            }
            Some(text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_split_and_joined_keeping_whitespace() {
        let texts = vec![
            "One.\n  Two  \r\n\nThree".to_owned(),
            String::new(),
            " x ".to_owned(),
        ];
        let (layouts, lines) = split(&texts);
        assert_eq!(lines, ["One.", "Two", "Three", "x"]);
        let upper: Vec<String> = lines.iter().map(|l| l.to_uppercase()).collect();
        assert_eq!(
            join(layouts.clone(), &upper),
            Some(vec![
                "ONE.\n  TWO  \r\n\nTHREE".to_owned(),
                String::new(),
                " X ".to_owned()
            ])
        );
        assert_eq!(join(layouts, &["a".to_owned()]), None);
    }
}
