//! Applying a text transformation to the character data of a text only.
//!
//! With markup, every tag (and every entity other than the XML ones and
//! numeric references) is replaced by one private-use character from plane 15
//! while the rules run, so the rules see the text as one string (a quotation
//! opened before `<b>` and closed after `</b>` still pairs) and never touch a
//! tag; XML entities are decoded first and `&`, `<`, `>` escaped again after.

/// First private-use character standing for a tag.
const FIRST: u32 = 0xF0000;
/// Last one.
const LAST: u32 = 0xFFFFD;

/// Whether `c` stands for a tag while rules run.
pub fn is_tag(c: char) -> bool {
    (FIRST..=LAST).contains(&(c as u32))
}

/// Runs `f` on the character data of `text`. Without `markup` the text is
/// plain and `f` sees it whole.
pub fn map_character_data(text: &str, markup: bool, f: impl FnOnce(&str) -> String) -> String {
    if !markup {
        return f(text);
    }
    if text.chars().any(is_tag) {
        // Cannot stand tags in for characters the text already uses.
        return text.to_owned();
    }
    let mut tags: Vec<&str> = Vec::new();
    let mut plain = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find(['<', '&']) {
        plain.push_str(&rest[..pos]);
        rest = &rest[pos..];
        if rest.starts_with('<') {
            let Some(end) = rest.find('>') else {
                plain.push_str(rest);
                rest = "";
                break;
            };
            if !stand_in(&mut tags, &mut plain, &rest[..=end]) {
                return text.to_owned();
            }
            rest = &rest[end + 1..];
        } else if let Some((ch, len)) = decode_entity(rest) {
            plain.push(ch);
            rest = &rest[len..];
        } else if let Some(end) = named_entity_len(rest) {
            if !stand_in(&mut tags, &mut plain, &rest[..end]) {
                return text.to_owned();
            }
            rest = &rest[end..];
        } else {
            plain.push('&');
            rest = &rest[1..];
        }
    }
    plain.push_str(rest);
    let done = f(&plain);
    let mut out = String::with_capacity(done.len() + text.len() / 4);
    for c in done.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if is_tag(c) => {
                let i = (c as u32 - FIRST) as usize;
                out.push_str(tags.get(i).copied().unwrap_or_default());
            }
            c => out.push(c),
        }
    }
    out
}

fn stand_in<'a>(tags: &mut Vec<&'a str>, plain: &mut String, tag: &'a str) -> bool {
    let Some(c) = char::from_u32(FIRST + tags.len() as u32).filter(|c| is_tag(*c)) else {
        return false;
    };
    tags.push(tag);
    plain.push(c);
    true
}

/// `&name;` of another vocabulary (HTML's `&nbsp;`): its length.
fn named_entity_len(s: &str) -> Option<usize> {
    let end = s.find(';')?;
    let name = &s[1..end];
    (!name.is_empty() && name.len() <= 32 && name.chars().all(|c| c.is_ascii_alphanumeric()))
        .then_some(end + 1)
}

/// An XML entity or numeric reference at the start of `s`: the character and
/// the length consumed.
fn decode_entity(s: &str) -> Option<(char, usize)> {
    for (ent, ch) in [
        ("&amp;", '&'),
        ("&lt;", '<'),
        ("&gt;", '>'),
        ("&quot;", '"'),
        ("&apos;", '\''),
    ] {
        if s.starts_with(ent) {
            return Some((ch, ent.len()));
        }
    }
    let body = s.strip_prefix("&#")?;
    let end = body.find(';')?;
    let num = &body[..end];
    let code = match num.strip_prefix(['x', 'X']) {
        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
        None => num.parse().ok()?,
    };
    let ch = char::from_u32(code).filter(|c| !is_tag(*c))?;
    Some((ch, end + 3))
}

/// The nearest character before `i` (a char index into `chars`) that is not a
/// tag stand-in.
pub fn prev_visible(chars: &[char], i: usize) -> Option<char> {
    chars[..i].iter().rev().copied().find(|c| !is_tag(*c))
}

/// The nearest character after `i` that is not a tag stand-in.
pub fn next_visible(chars: &[char], i: usize) -> Option<char> {
    chars.get(i + 1..)?.iter().copied().find(|c| !is_tag(*c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_character_data_changes() {
        let out = map_character_data(r#"<p title="a">x &amp; "y"</p>&nbsp;&#65;"#, true, |s| {
            assert_eq!(s.chars().filter(|c| is_tag(*c)).count(), 3);
            s.replace('"', "'").replace('A', "B")
        });
        assert_eq!(out, r#"<p title="a">x &amp; 'y'</p>&nbsp;B"#);
    }

    #[test]
    fn plain_text_is_passed_whole() {
        assert_eq!(
            map_character_data("<b>", false, |s| s.to_uppercase()),
            "<B>"
        );
    }
}
