//! Tokens and sentences with code-point offsets (the unit of the wire format's spans).

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Letters (with inner apostrophes and hyphens).
    Word,
    /// Digits with inner `.`, `,`, thin/no-break spaces.
    Number,
    /// An inline tag `<b>`, `</b>`, `<br/>`.
    Tag,
    /// A placeholder `{name}`, `{{x}}`, `%s`, `%1$d`.
    Placeholder,
    /// Any other non-space character.
    Punct,
}

/// A token of a text: `[start, end)` in code points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub kind: Kind,
    /// Its text.
    pub text: String,
    /// First code point.
    pub start: usize,
    /// One past the last code point.
    pub end: usize,
}

impl Token {
    /// Lower-cased text.
    pub fn lower(&self) -> String {
        self.text.to_lowercase()
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphabetic() || c == '\u{00B7}' // Catalan middle dot (l·l)
}

/// Splits `text` into tokens.
pub fn tokenize(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let n = chars.len();
    let slice = |a: usize, b: usize| chars[a..b].iter().collect::<String>();
    while i < n {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let kind;
        if c == '<' {
            // A tag when it closes before the next '<' and starts like one.
            let close = chars[i + 1..].iter().position(|&x| x == '>' || x == '<');
            let looks = chars
                .get(i + 1)
                .is_some_and(|&x| x.is_ascii_alphabetic() || x == '/' || x == '!');
            if let (Some(off), true) = (close, looks)
                && chars[i + 1 + off] == '>'
            {
                i = i + 1 + off + 1;
                kind = Kind::Tag;
            } else {
                i += 1;
                kind = Kind::Punct;
            }
        } else if c == '{' {
            let close = chars[i + 1..].iter().position(|&x| x == '}');
            match close {
                Some(off) if off > 0 && off < 60 => {
                    let mut end = i + 1 + off + 1;
                    if chars.get(i + 1) == Some(&'{') && chars.get(end) == Some(&'}') {
                        end += 1;
                    }
                    i = end;
                    kind = Kind::Placeholder;
                }
                _ => {
                    i += 1;
                    kind = Kind::Punct;
                }
            }
        } else if c == '%'
            && let Some(len) = printf_len(&chars[i..])
        {
            i += len;
            kind = Kind::Placeholder;
        } else if c.is_ascii_digit() {
            i += 1;
            while i < n {
                let x = chars[i];
                if x.is_ascii_digit() {
                    i += 1;
                } else if matches!(x, '.' | ',' | '\u{00A0}' | '\u{202F}' | '\'')
                    && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit())
                {
                    i += 2;
                } else {
                    break;
                }
            }
            kind = Kind::Number;
        } else if is_word_char(c) {
            i += 1;
            while i < n {
                let x = chars[i];
                if is_word_char(x) || x.is_ascii_digit() {
                    i += 1;
                } else if matches!(x, '\'' | '’' | '-')
                    && chars.get(i + 1).is_some_and(|&d| is_word_char(d))
                {
                    i += 2;
                } else {
                    break;
                }
            }
            kind = Kind::Word;
        } else {
            i += 1;
            kind = Kind::Punct;
        }
        out.push(Token {
            kind,
            text: slice(start, i),
            start,
            end: i,
        });
    }
    out
}

/// Length of a printf placeholder at the start of `s` (`%s`, `%d`, `%1$s`, `%.2f`).
fn printf_len(s: &[char]) -> Option<usize> {
    let mut i = 1;
    while i < s.len() && (s[i].is_ascii_digit() || s[i] == '$' || s[i] == '.') {
        i += 1;
    }
    match s.get(i) {
        Some('s' | 'd' | 'i' | 'f' | 'u' | 'x' | '@') => {
            // "%s" must not be glued to a following letter ("%standard").
            if s.get(i + 1).is_some_and(|c| c.is_alphabetic()) {
                None
            } else {
                Some(i + 1)
            }
        }
        _ => None,
    }
}

/// A sentence: `[start, end)` in code points, trimmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sentence {
    /// First code point.
    pub start: usize,
    /// One past the last code point.
    pub end: usize,
}

impl Sentence {
    /// Length in code points.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// Splits `text` into sentences at `.`, `!`, `?`, `…` (with closing quotes or
/// brackets) followed by white space and a capital letter, digit or opening
/// punctuation (`¿`, `¡`, quotes). Abbreviations of one letter ("J. Smith") and a
/// few common ones do not end a sentence.
pub fn sentences(text: &str) -> Vec<Sentence> {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < n {
        let c = chars[i];
        if matches!(c, '.' | '!' | '?' | '…' | '。' | '！' | '？') {
            let mut j = i + 1;
            while j < n
                && matches!(
                    chars[j],
                    '.' | '!' | '?' | '"' | '\'' | '”' | '’' | ')' | '»'
                )
            {
                j += 1;
            }
            let mut k = j;
            while k < n && chars[k].is_whitespace() {
                k += 1;
            }
            let spaced = k > j;
            let next_starts = chars.get(k).is_some_and(|&x| {
                x.is_uppercase()
                    || x.is_ascii_digit()
                    || matches!(x, '¿' | '¡' | '"' | '“' | '«' | '(' | '<')
            });
            if spaced && next_starts && !(c == '.' && is_abbreviation(&chars[..i])) {
                push_trimmed(&chars, start, j, &mut out);
                start = k;
                i = k;
                continue;
            }
            i = j;
            continue;
        }
        i += 1;
    }
    push_trimmed(&chars, start, n, &mut out);
    out
}

fn is_abbreviation(before: &[char]) -> bool {
    let word: String = before
        .iter()
        .rev()
        .take_while(|c| c.is_alphabetic())
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let count = word.chars().count();
    if count == 1 {
        return true;
    }
    const ABBR: [&str; 16] = [
        "Mr", "Mrs", "Ms", "Dr", "Prof", "Sr", "Sra", "Srta", "St", "etc", "vs", "No", "Nr", "Mme",
        "Mlle", "Inc",
    ];
    ABBR.contains(&word.as_str())
}

fn push_trimmed(chars: &[char], mut a: usize, mut b: usize, out: &mut Vec<Sentence>) {
    while a < b && chars[a].is_whitespace() {
        a += 1;
    }
    while b > a && chars[b - 1].is_whitespace() {
        b -= 1;
    }
    if b > a {
        out.push(Sentence { start: a, end: b });
    }
}

/// The code points `[start, end)` of `text` as a string.
pub fn substring(text: &str, start: usize, end: usize) -> String {
    text.chars()
        .skip(start)
        .take(end.saturating_sub(start))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_carry_code_point_offsets() {
        let t = tokenize("Él pagó 1.000,50 € <b>hoy</b> {name} %s.");
        let texts: Vec<_> = t.iter().map(|t| (t.text.as_str(), t.kind)).collect();
        assert_eq!(texts[0], ("Él", Kind::Word));
        assert_eq!(texts[2], ("1.000,50", Kind::Number));
        assert_eq!(texts[4], ("<b>", Kind::Tag));
        assert_eq!(texts[7], ("{name}", Kind::Placeholder));
        assert_eq!(texts[8], ("%s", Kind::Placeholder));
        assert_eq!(t[1].start, 3);
        assert_eq!(t[1].end, 7);
    }

    #[test]
    fn sentences_split_at_capitals_not_abbreviations() {
        let s = sentences("Mr. Smith came. He left! ¿Vino? Yes.");
        assert_eq!(s.len(), 4);
        let text = "Mr. Smith came. He left! ¿Vino? Yes.";
        assert_eq!(substring(text, s[0].start, s[0].end), "Mr. Smith came.");
        assert_eq!(substring(text, s[2].start, s[2].end), "¿Vino?");
    }
}
