//! A page's glyphs as lines and paragraphs, so that the engine sees whole
//! sentences: glyphs on one baseline, close together, make a line (a space
//! where a gap says one is, as TeX and most producers write no spaces);
//! lines below one another at one size and leading, overlapping in width,
//! make a paragraph (a hyphen at a line's end joined away), columns and
//! table cells apart because their lines do not overlap.

use super::fonts::Style;
use super::text::{Color, Shown};

/// How a paragraph's lines sit in its box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    /// Left, every line but the last reaching the right edge too.
    Justified,
    Center,
    Right,
}

/// Where a stretch of text in one font style and colour starts (a byte
/// offset of its line's or paragraph's text).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Run {
    pub at: usize,
    pub style: Style,
    pub color: Color,
}

impl Run {
    fn looks_like(&self, other: &Run) -> bool {
        self.style == other.style && self.color == other.color
    }
}

/// Adds `run` to `runs` unless it looks like the last one.
fn push_run(runs: &mut Vec<Run>, run: Run) {
    match runs.last_mut() {
        Some(last) if last.looks_like(&run) => {}
        Some(last) if last.at == run.at => *last = run,
        _ => runs.push(run),
    }
}

/// A line of text on a page.
#[derive(Debug, Clone, Default)]
pub(crate) struct Line {
    pub text: String,
    pub x0: f32,
    pub x1: f32,
    pub y: f32,
    pub size: f32,
    /// The show operators it came from (indices into the page's shows).
    pub shows: Vec<usize>,
    /// Its stretches of one style and colour, the first at 0.
    pub runs: Vec<Run>,
    /// The right edge of the column it starts in: the farthest any line
    /// starting where it starts reaches.
    pub column_right: f32,
    /// The kind of list it starts an item of (a list item starts a
    /// paragraph of its own).
    pub item: Option<ListKind>,
}

/// A paragraph: lines read as one text.
#[derive(Debug, Clone)]
pub(crate) struct Paragraph {
    pub text: String,
    pub lines: Vec<Line>,
    pub size: f32,
    /// The style and colour of most of its text.
    pub style: Style,
    pub color: Color,
    /// Its stretches of one style and colour, the first at 0.
    pub runs: Vec<Run>,
    /// How far left and right its text may spread without meeting other
    /// text on the page.
    pub room: (f32, f32),
}

impl Paragraph {
    /// Its top and bottom: its first line's ascent, its last's descent.
    pub(crate) fn band(&self) -> (f32, f32) {
        let first = &self.lines[0];
        let last = &self.lines[self.lines.len() - 1];
        (first.y + self.size * 0.8, last.y - self.size * 0.25)
    }

    /// The left and right edges of its lines.
    pub(crate) fn x_range(&self) -> (f32, f32) {
        self.lines
            .iter()
            .fold((f32::MAX, f32::MIN), |(a, b), l| (a.min(l.x0), b.max(l.x1)))
    }

    /// The distance between its baselines (1.2 × its size for one line).
    pub(crate) fn leading(&self) -> f32 {
        match self.lines.len() {
            0 | 1 => self.size * 1.2,
            n => (self.lines[0].y - self.lines[n - 1].y) / (n - 1) as f32,
        }
    }

    /// How its lines are aligned; one line is centred when it sits in the
    /// middle of the page (`page_center`), else left.
    pub(crate) fn align(&self, page_center: f32) -> Align {
        let tolerance = self.size * 0.5;
        let same = |f: &dyn Fn(&Line) -> f32| {
            let first = f(&self.lines[0]);
            self.lines.iter().all(|l| (f(l) - first).abs() <= tolerance)
        };
        match self.lines.len() {
            0 => Align::Left,
            1 => {
                let line = &self.lines[0];
                match ((line.x0 + line.x1) / 2.0 - page_center).abs() < 2.0 {
                    true => Align::Center,
                    false => Align::Left,
                }
            }
            _ if same(&|l| l.x0)
                && self.lines[..self.lines.len() - 1]
                    .iter()
                    .all(|l| (l.x1 - self.x_range().1).abs() <= tolerance) =>
            {
                Align::Justified
            }
            _ if same(&|l| l.x0) => Align::Left,
            _ if same(&|l| (l.x0 + l.x1) / 2.0) => Align::Center,
            _ if same(&|l| l.x1) => Align::Right,
            _ => Align::Left,
        }
    }
}

/// The lines of the translatable shows of a page, in their order.
pub(crate) fn lines(shows: &[Shown]) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    let mut last_end: Option<f32> = None;
    for (index, shown) in shows.iter().enumerate() {
        if !shown.translatable {
            continue;
        }
        for glyph in &shown.glyphs {
            let Some(text) = glyph.text.as_deref() else {
                continue;
            };
            let joins = lines.last().zip(last_end).is_some_and(|(line, end)| {
                let size = line.size.max(glyph.size);
                (glyph.y - line.y).abs() <= size * 0.35
                    && glyph.x0 >= end - size * 0.5
                    && glyph.x0 - end <= size * 1.2
            });
            if joins && let Some(line) = lines.last_mut() {
                let gap = glyph.x0 - last_end.unwrap_or(glyph.x0);
                let spaced = line.text.ends_with(char::is_whitespace)
                    || text.starts_with(char::is_whitespace);
                if gap > glyph.size.max(line.size) * 0.15 && !spaced {
                    line.text.push(' ');
                }
                let run = Run {
                    at: line.text.len(),
                    style: shown.style,
                    color: shown.color,
                };
                push_run(&mut line.runs, run);
                line.text.push_str(text);
                line.x1 = line.x1.max(glyph.x1);
                line.size = line.size.max(glyph.size);
                if line.shows.last() != Some(&index) {
                    line.shows.push(index);
                }
            } else {
                lines.push(Line {
                    text: text.to_owned(),
                    x0: glyph.x0,
                    x1: glyph.x1,
                    y: glyph.y,
                    size: glyph.size,
                    shows: vec![index],
                    runs: vec![Run {
                        at: 0,
                        style: shown.style,
                        color: shown.color,
                    }],
                    column_right: 0.0,
                    item: None,
                });
            }
            last_end = Some(glyph.x1);
        }
    }
    join_beside_rtl(&mut lines);
    for line in &mut lines {
        // A line's edges are those of its ink, not of trailing spaces.
        let lead = line.text.len() - line.text.trim_start().len();
        let trimmed = line.text.trim().to_owned();
        let runs = std::mem::take(&mut line.runs);
        for run in runs {
            let at = run.at.saturating_sub(lead).min(trimmed.len());
            if at < trimmed.len() || line.runs.is_empty() {
                push_run(&mut line.runs, Run { at, ..run });
            }
        }
        if let Some(first) = line.runs.first_mut() {
            first.at = 0;
        }
        line.text = trimmed;
    }
    lines.retain(|l| !l.text.is_empty());
    for line in &mut lines {
        to_logical(line);
    }
    let edges: Vec<(f32, f32, f32)> = lines.iter().map(|l| (l.x0, l.x1, l.size)).collect();
    for line in &mut lines {
        line.column_right = edges
            .iter()
            .filter(|(x0, _, _)| (x0 - line.x0).abs() <= line.size)
            .fold(line.x1, |right, (_, x1, _)| right.max(*x1));
    }
    mark_items(&mut lines);
    lines
}

/// Whether `c` is a letter of a right-to-left script.
fn is_rtl(c: char) -> bool {
    use unicode_bidi::BidiClass::{AL, R};
    matches!(unicode_bidi::bidi_class(c), R | AL)
}

/// Lines on one baseline side by side, one of them with right-to-left
/// text, made one (producers place a line's right-to-left and
/// left-to-right runs in any order), its text left to right as it is
/// seen.
fn join_beside_rtl(lines: &mut Vec<Line>) {
    let mut i = 0;
    while i < lines.len() {
        let found = (i + 1..lines.len().min(i + 1 + 8)).find(|&j| {
            let (a, b) = (&lines[i], &lines[j]);
            let size = a.size.max(b.size);
            let rtl = a.text.chars().any(is_rtl) || b.text.chars().any(is_rtl);
            let apart = |left: &Line, right: &Line| {
                right.x0 >= left.x1 - size * 0.5 && right.x0 - left.x1 <= size * 1.2
            };
            rtl && (a.y - b.y).abs() <= size * 0.35 && (apart(a, b) || apart(b, a))
        });
        let Some(j) = found else {
            i += 1;
            continue;
        };
        let other = lines.remove(j);
        let line = &mut lines[i];
        let (mut left, right) = match other.x0 < line.x0 {
            true => (other, std::mem::take(line)),
            false => (std::mem::take(line), other),
        };
        if !left.text.ends_with(char::is_whitespace) && !right.text.starts_with(char::is_whitespace)
        {
            left.text.push(' ');
        }
        let offset = left.text.len();
        left.text.push_str(&right.text);
        for run in right.runs {
            push_run(
                &mut left.runs,
                Run {
                    at: run.at + offset,
                    ..run
                },
            );
        }
        left.x0 = left.x0.min(right.x0);
        left.x1 = left.x1.max(right.x1);
        left.size = left.size.max(right.size);
        left.shows.extend(right.shows);
        left.shows.sort_unstable();
        left.shows.dedup();
        *line = left;
    }
}

/// A line with right-to-left text, read as it is seen (left to right), put
/// in the order it was written. A line with more right-to-left letters than
/// left-to-right ones is reversed, then its left-to-right stretches turned
/// back: runs of Latin letters (with the spaces between), and numbers,
/// each on its own (as Unicode's rules N1 set a number after right-to-left
/// text apart from a Latin word after it: `5 GB`). What is seen cannot
/// tell a number after a Latin word (`iPhone 15`, one left-to-right run
/// when written) from one before it: such a pair reads swapped. Otherwise
/// only its
/// right-to-left stretches are reversed, the numbers inside them turned
/// back. Each character keeps its look.
fn to_logical(line: &mut Line) {
    use unicode_bidi::BidiClass::{AN, EN, L};
    let Some(&first) = line.runs.first() else {
        return;
    };
    if !line.text.chars().any(is_rtl) {
        return;
    }
    let mut order: Vec<(char, Run)> = line
        .text
        .char_indices()
        .map(|(at, c)| {
            let run = line.runs.iter().rev().find(|r| r.at <= at).copied();
            (c, run.unwrap_or(first))
        })
        .collect();
    let number = |c: char| matches!(unicode_bidi::bidi_class(c), EN | AN);
    let latin = |c: char| unicode_bidi::bidi_class(c) == L;
    let rtl_letters = order.iter().filter(|(c, _)| is_rtl(*c)).count();
    let ltr_letters = order.iter().filter(|(c, _)| latin(*c)).count();
    if rtl_letters >= ltr_letters {
        order.reverse();
        // What each character is, in (nearly) written order: a Latin
        // letter or a number after one ('L'), a number after
        // right-to-left text ('D'), a right-to-left letter ('R'), else
        // neutral.
        let mut strong = 'R';
        let kinds: Vec<char> = order
            .iter()
            .map(|(c, _)| match *c {
                c if latin(c) => {
                    strong = 'L';
                    'L'
                }
                c if is_rtl(c) => {
                    strong = 'R';
                    'R'
                }
                c if number(c) => match strong {
                    'L' => 'L',
                    _ => 'D',
                },
                _ => 'N',
            })
            .collect();
        turn(&mut order, &kinds, 'L');
        turn(&mut order, &kinds, 'D');
    } else {
        let kinds: Vec<char> = order
            .iter()
            .map(|(c, _)| match *c {
                c if is_rtl(c) => 'R',
                c if latin(c) => 'L',
                _ => 'N',
            })
            .collect();
        for (start, end) in turn(&mut order, &kinds, 'R') {
            // The numbers inside read left to right again.
            let stretch = &mut order[start..=end];
            let kinds: Vec<char> = stretch
                .iter()
                .map(|(c, _)| if number(*c) { 'D' } else { 'N' })
                .collect();
            turn(stretch, &kinds, 'D');
        }
    }
    line.text = order.iter().map(|(c, _)| *c).collect();
    line.runs.clear();
    let mut at = 0;
    for (c, run) in order {
        push_run(&mut line.runs, Run { at, ..run });
        at += c.len_utf8();
    }
}

/// Reverses each stretch of `order` from a character of kind `kind` to the
/// last of that kind before one of another kind than neutral (`N`); the
/// stretches (first and last index).
fn turn(order: &mut [(char, Run)], kinds: &[char], kind: char) -> Vec<(usize, usize)> {
    let mut stretches = Vec::new();
    let mut i = 0;
    while i < order.len() {
        if kinds[i] != kind {
            i += 1;
            continue;
        }
        let mut end = i;
        for (k, &other) in kinds.iter().enumerate().skip(i) {
            if other == kind {
                end = k;
            } else if other != 'N' {
                break;
            }
        }
        order[i..=end].reverse();
        stretches.push((i, end));
        i = end + 1;
    }
    stretches
}

/// The kind of list a line's marker starts an item of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListKind {
    /// `•`, `–`, `*`…
    Bullets,
    /// `1.`, `2)`…
    Numbers,
}

/// Whether a character is a list bullet: the usual ones, or one of the
/// private-use characters symbol fonts draw bullets with (LibreOffice's
/// OpenSymbol, Word's Symbol and Wingdings).
fn is_bullet(c: char) -> bool {
    "•◦▪▫‣∙●○■□–-*".contains(c) || ('\u{f000}'..='\u{f0ff}').contains(&c)
}

/// The length of a number marker (`12.`, `3)`) at the start of `text`.
fn number_marker(text: &str) -> Option<usize> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    ((1..=3).contains(&digits) && matches!(text.as_bytes().get(digits), Some(b'.' | b')')))
        .then_some(digits + 1)
}

/// A list item's marker at the start of a text (a bullet, or up to three
/// digits and `.` or `)`, then a space): the kind of list, and the length
/// of the marker with the spaces after it.
pub(crate) fn list_marker(text: &str) -> Option<(ListKind, usize)> {
    let trimmed = text.trim_start();
    let lead = text.len() - trimmed.len();
    let first = trimmed.chars().next()?;
    let (kind, marker) = if is_bullet(first) {
        (ListKind::Bullets, first.len_utf8())
    } else {
        (ListKind::Numbers, number_marker(trimmed)?)
    };
    let rest = &trimmed[marker..];
    if !rest.starts_with(' ') {
        return None;
    }
    let gap = rest.len() - rest.trim_start().len();
    Some((kind, lead + marker + gap))
}

/// The kind of list a line holding only a marker (a bullet, `3.`) starts
/// an item of: producers that set the marker apart with a tab draw it as
/// a line of its own, left of the item's text.
pub(crate) fn marker_only(text: &str) -> Option<ListKind> {
    let text = text.trim();
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if is_bullet(c) => Some(ListKind::Bullets),
        _ => (number_marker(text) == Some(text.len())).then_some(ListKind::Numbers),
    }
}

/// Marks the lines that start a list item: by their own marker, or by a
/// marker line just left of them on their baseline.
fn mark_items(lines: &mut [Line]) {
    let markers: Vec<(f32, f32, ListKind)> = lines
        .iter()
        .filter_map(|l| marker_only(&l.text).map(|kind| (l.x1, l.y, kind)))
        .collect();
    for line in lines.iter_mut() {
        if marker_only(&line.text).is_some() {
            continue;
        }
        line.item = list_marker(&line.text).map(|(kind, _)| kind).or_else(|| {
            markers
                .iter()
                .find(|(x1, y, _)| {
                    (y - line.y).abs() <= line.size * 0.35
                        && *x1 <= line.x0 + 0.5
                        && line.x0 - x1 <= line.size * 4.0
                })
                .map(|(_, _, kind)| *kind)
        });
    }
}

/// How many paragraphs back a line may continue (table cells interleave).
const LOOK_BACK: usize = 8;

/// The paragraphs of a page's lines.
pub(crate) fn paragraphs(lines: Vec<Line>) -> Vec<Paragraph> {
    let mut paragraphs: Vec<Paragraph> = Vec::new();
    let beside = beside(&lines);
    for (line, beside) in lines.into_iter().zip(beside) {
        let start = paragraphs.len().saturating_sub(LOOK_BACK);
        let continued = (start..paragraphs.len())
            .rev()
            .find(|&i| continues(&paragraphs[i], &line, &beside));
        match continued {
            Some(i) => {
                let p = &mut paragraphs[i];
                let offset = join(&mut p.text, &line.text);
                for run in &line.runs {
                    let at = run.at + offset;
                    push_run(&mut p.runs, Run { at, ..*run });
                }
                p.lines.push(line);
            }
            None => paragraphs.push(Paragraph {
                text: line.text.clone(),
                size: line.size,
                style: line.runs[0].style,
                color: line.runs[0].color,
                runs: line.runs.clone(),
                room: (line.x0, line.x1),
                lines: vec![line],
            }),
        }
    }
    for p in &mut paragraphs {
        // The look of most of the text is the paragraph's.
        let mut counts: Vec<(Run, usize)> = Vec::new();
        for (i, run) in p.runs.iter().enumerate() {
            let end = p.runs.get(i + 1).map_or(p.text.len(), |r| r.at);
            let chars = p.text.get(run.at..end).map_or(0, |t| t.chars().count());
            match counts.iter_mut().find(|(r, _)| r.looks_like(run)) {
                Some((_, n)) => *n += chars,
                None => counts.push((*run, chars)),
            }
        }
        if let Some((run, _)) = counts.iter().max_by_key(|(_, n)| *n) {
            p.style = run.style;
            p.color = run.color;
        }
    }
    make_room(&mut paragraphs);
    paragraphs
}

/// Each paragraph's room: up to the nearest paragraph beside it (in its
/// band), else the edges of the page's text.
fn make_room(paragraphs: &mut [Paragraph]) {
    let boxes: Vec<(f32, f32, f32, f32)> = paragraphs
        .iter()
        .map(|p| {
            let (x0, x1) = p.x_range();
            let (top, bottom) = p.band();
            (x0, x1, top, bottom)
        })
        .collect();
    let text_left = boxes.iter().map(|b| b.0).fold(f32::MAX, f32::min);
    let text_right = boxes.iter().map(|b| b.1).fold(f32::MIN, f32::max);
    for (i, p) in paragraphs.iter_mut().enumerate() {
        let (x0, x1, top, bottom) = boxes[i];
        let gap = p.size * 0.25;
        let beside = boxes
            .iter()
            .enumerate()
            .filter(|(j, b)| *j != i && b.2 > bottom && b.3 < top);
        let (mut left, mut right) = (text_left.min(x0), text_right.max(x1));
        for (_, b) in beside {
            if b.0 >= x1 - 0.5 {
                right = right.min(b.0 - gap);
            } else if b.1 <= x0 + 0.5 {
                left = left.max(b.1 + gap);
            }
        }
        p.room = (left.min(x0), right.max(x1));
    }
}

/// The left and right edges of the other lines on each line's baseline.
fn beside(lines: &[Line]) -> Vec<Vec<(f32, f32)>> {
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by(|&a, &b| lines[a].y.total_cmp(&lines[b].y));
    let mut out = vec![Vec::new(); lines.len()];
    for (k, &i) in order.iter().enumerate() {
        let near = |&&j: &&usize| (lines[j].y - lines[i].y).abs() <= lines[i].size * 0.2;
        let below = order[..k].iter().rev().take_while(near);
        let above = order[k + 1..].iter().take_while(near);
        out[i] = below
            .chain(above)
            .map(|&j| (lines[j].x0, lines[j].x1))
            .collect();
    }
    out
}

/// Whether `line` goes on paragraph `p`: directly below its last line at
/// its size and leading, overlapping it in width, after a line that did not
/// end the paragraph, and with no line beside it (`beside`: their edges)
/// under the paragraph too — a row of table cells under a line is no
/// continuation of it.
fn continues(p: &Paragraph, line: &Line, beside: &[(f32, f32)]) -> bool {
    let Some(last) = p.lines.last() else {
        return false;
    };
    let size = p.size;
    let drop = last.y - line.y;
    let (x0, x1) = p.x_range();
    let same_size = (line.size - size).abs() <= size * 0.15;
    let below = drop > size * 0.6
        && match p.lines.len() {
            1 => drop <= size * 1.75,
            _ => (drop - p.leading()).abs() <= size * 0.25,
        };
    let overlaps = line.x0 < x1 && line.x1 > x0 && line.x0 >= x0 - size * 3.0;
    // A sentence ending well before its column's edge ends its paragraph.
    let short_end = last.x1 < x1.max(last.column_right) - size * 2.5
        && last.text.ends_with(['.', '!', '?', ':', '。']);
    let row = beside.iter().any(|&(b0, b1)| b0 < x1 && b1 > x0);
    // A list item starts a paragraph of its own.
    same_size && below && overlaps && !short_end && !row && line.item.is_none()
}

/// Adds a line's text to a paragraph's: a hyphen at the end joined away
/// before a lower-case word, else a space between; where `next` starts.
fn join(text: &mut String, next: &str) -> usize {
    let mut chars = text.chars().rev();
    let hyphen = matches!(chars.next(), Some('-' | '\u{ad}'));
    let after_letter = chars.next().is_some_and(char::is_alphabetic);
    let lower_next = next.chars().next().is_some_and(char::is_lowercase);
    if hyphen && after_letter && lower_next {
        text.pop();
    } else if text.ends_with('\u{ad}') {
        text.pop();
        text.push(' ');
    } else {
        text.push(' ');
    }
    let at = text.len();
    text.push_str(next);
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_markers_are_bullets_and_numbers_followed_by_a_space() {
        assert_eq!(list_marker("• The house"), Some((ListKind::Bullets, 4)));
        assert_eq!(list_marker("- The house"), Some((ListKind::Bullets, 2)));
        assert_eq!(list_marker("12. The house"), Some((ListKind::Numbers, 4)));
        assert_eq!(list_marker("3) The house"), Some((ListKind::Numbers, 3)));
        assert_eq!(list_marker("2026. The year"), None);
        assert_eq!(list_marker("-5 degrees"), None);
        assert_eq!(list_marker("The house"), None);
        assert_eq!(
            list_marker("\u{f0b7} The house"),
            Some((ListKind::Bullets, 4))
        );
        assert_eq!(marker_only(" \u{f0b7} "), Some(ListKind::Bullets));
        assert_eq!(marker_only("12."), Some(ListKind::Numbers));
        assert_eq!(marker_only("12"), None);
        assert_eq!(marker_only("• x"), None);
    }

    fn line(text: &str, x0: f32, x1: f32, y: f32) -> Line {
        Line {
            text: text.to_owned(),
            x0,
            x1,
            y,
            size: 10.0,
            shows: vec![0],
            runs: vec![Run {
                at: 0,
                style: Style::default(),
                color: Color::Gray(0.0),
            }],
            column_right: x1,
            item: None,
        }
    }

    #[test]
    fn lines_below_one_another_make_a_paragraph_and_hyphens_join() {
        let ps = paragraphs(vec![
            line("The trans-", 50.0, 250.0, 700.0),
            line("lation of the", 50.0, 251.0, 688.0),
            line("text.", 50.0, 80.0, 676.0),
            line("Next paragraph.", 50.0, 250.0, 640.0),
        ]);
        let texts: Vec<&str> = ps.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts, ["The translation of the text.", "Next paragraph."]);
    }

    #[test]
    fn a_row_of_cells_under_a_line_starts_paragraphs_of_its_own() {
        let ps = paragraphs(vec![
            line(
                "The dog sleeps in the house and the cat sleeps in the garden.",
                50.0,
                350.0,
                700.0,
            ),
            line("Name", 120.0, 150.0, 688.0),
            line("City", 270.0, 300.0, 688.0),
        ]);
        let texts: Vec<&str> = ps.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "The dog sleeps in the house and the cat sleeps in the garden.",
                "Name",
                "City"
            ]
        );
    }

    #[test]
    fn lines_seen_left_to_right_read_as_written() {
        let logical = |seen: &str| {
            let mut l = line(seen, 50.0, 250.0, 700.0);
            to_logical(&mut l);
            l.text
        };
        // Right-to-left: Latin words with their numbers, and numbers
        // after Arabic, each left to right.
        assert_eq!(logical("Tolk 2026 تيبلا"), "البيت 2026 Tolk");
        assert_eq!(logical("GB 5 ةقيدحلاو تيبلا"), "البيت والحديقة 5 GB");
        assert_eq!(logical("version 2.0 تيبلا"), "version 2.0 البيت");
        assert_eq!(
            logical("In the year 2026 ةقيدحلاو تيبلا was big"),
            "In the year 2026 البيت والحديقة was big"
        );
        // Left-to-right with an Arabic word: only that word turned.
        assert_eq!(
            logical("The word تيبلا is Arabic"),
            "The word البيت is Arabic"
        );
        assert_eq!(logical("The house"), "The house");
    }

    #[test]
    fn columns_and_cells_stay_apart() {
        let ps = paragraphs(vec![
            line("Left column one", 50.0, 250.0, 700.0),
            line("Right column one", 300.0, 500.0, 700.0),
            line("left two", 50.0, 250.0, 688.0),
            line("right two", 300.0, 500.0, 688.0),
        ]);
        let texts: Vec<&str> = ps.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(
            texts,
            ["Left column one left two", "Right column one right two"]
        );
    }

    #[test]
    fn a_short_line_ending_a_sentence_ends_the_paragraph() {
        let ps = paragraphs(vec![
            line("A long first line of text", 50.0, 250.0, 700.0),
            line("ends.", 50.0, 90.0, 688.0),
            line("Another starts here", 50.0, 250.0, 676.0),
        ]);
        assert_eq!(ps.len(), 2);
    }
}
