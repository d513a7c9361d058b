//! The text a page's content stream shows: every text-showing operator
//! (`Tj`, `TJ`, `'`, `"`) with the glyphs it paints, where (in page space),
//! at which size, in which font and colour, followed through the graphics
//! and text state (`q`/`Q`, `cm`, `BT`, `Tf`, `Tm`, `Td`, `TD`, `T*`, `Tc`,
//! `Tw`, `Tz`, `TL`, `Ts`, `Tr`, fill colours) as ISO 32000-1 §9.4 says.
//! Text inside form XObjects is not followed (it stays as it is).

use std::collections::HashMap;
use std::rc::Rc;

use lopdf::Object;
use lopdf::content::Operation;

use super::decode::{PdfFont, number};
use super::fonts::Style;

/// An affine matrix `[a b c d e f]` as PDF writes them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Matrix(pub [f32; 6]);

impl Matrix {
    pub(crate) const IDENTITY: Matrix = Matrix([1.0, 0.0, 0.0, 1.0, 0.0, 0.0]);

    fn translate(x: f32, y: f32) -> Self {
        Matrix([1.0, 0.0, 0.0, 1.0, x, y])
    }

    /// `self × other` (apply `self`, then `other`).
    pub(crate) fn then(&self, other: &Matrix) -> Matrix {
        let [a, b, c, d, e, f] = self.0;
        let [a2, b2, c2, d2, e2, f2] = other.0;
        Matrix([
            a * a2 + b * c2,
            a * b2 + b * d2,
            c * a2 + d * c2,
            c * b2 + d * d2,
            e * a2 + f * c2 + e2,
            e * b2 + f * d2 + f2,
        ])
    }
}

/// The marked content a show operator lies in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Marking {
    /// The innermost sequence with a marked-content id (`MCID`, which the
    /// structure tree of a tagged PDF refers to): its tag and id.
    pub mcid: Option<(Vec<u8>, i64)>,
    /// Whether it lies in an `/Artifact` sequence (page furniture).
    pub artifact: bool,
}

/// Why text is left as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Left {
    /// Set in a Type3 font.
    Type3,
    /// Its codes say no text (a composite font without `ToUnicode`, codes
    /// outside the font's maps).
    Unmapped,
    /// Rotated, skewed or mirrored.
    Rotated,
    /// Inside a form XObject.
    InForm,
}

impl Left {
    /// What a job's note says of it.
    pub(crate) fn what(self) -> &'static str {
        match self {
            Left::Type3 => "Text in Type3 fonts (glyphs drawn without their characters)",
            Left::Unmapped => {
                "Text in fonts that do not map their glyphs to characters (no ToUnicode)"
            }
            Left::Rotated => "Rotated or skewed text",
            Left::InForm => "Text inside form XObjects",
        }
    }
}

/// A fill colour, re-used for the translation of text painted in it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Color {
    Gray(f32),
    Rgb(f32, f32, f32),
    Cmyk(f32, f32, f32, f32),
}

/// One glyph a show operator paints, in page space.
#[derive(Debug, Clone)]
pub(crate) struct Glyph {
    /// Its text (`None`: the font does not say).
    pub text: Option<String>,
    /// Where it starts and ends along the baseline.
    pub x0: f32,
    pub x1: f32,
    /// Its baseline.
    pub y: f32,
    /// Its font size in page space.
    pub size: f32,
}

/// How a show operator moves to the next line before painting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Show {
    /// `Tj` or `TJ`.
    Plain,
    /// `'`: `T*` first.
    NextLine,
    /// `"`: word and character spacing set, then `T*`.
    Spaced(f32, f32),
}

/// A text-showing operator and what it paints.
#[derive(Debug, Clone)]
pub(crate) struct Shown {
    /// Its index among the page's operations.
    pub op: usize,
    pub kind: Show,
    pub glyphs: Vec<Glyph>,
    /// Whether its text can be read and rewritten: upright, visible, in a
    /// font whose codes say their text.
    pub translatable: bool,
    /// Whether it paints nothing (render mode 3, as OCR text layers are).
    pub invisible: bool,
    /// Why visible text it paints is left as it is.
    pub left: Option<Left>,
    /// The marked content it lies in (a tagged PDF's).
    pub marking: Marking,
    /// How far it moves the text position, in unscaled text space, and the
    /// font size times horizontal scaling it moved at (for an operator
    /// that moves as far and paints nothing).
    pub advance: f32,
    pub scale: f32,
    pub style: Style,
    pub color: Color,
}

#[derive(Clone)]
struct State {
    ctm: Matrix,
    fill: Color,
    font: Option<Rc<PdfFont>>,
    size: f32,
    char_spacing: f32,
    word_spacing: f32,
    scaling: f32,
    leading: f32,
    rise: f32,
    render: i64,
}

impl Default for State {
    fn default() -> Self {
        Self {
            ctm: Matrix::IDENTITY,
            fill: Color::Gray(0.0),
            font: None,
            size: 0.0,
            char_spacing: 0.0,
            word_spacing: 0.0,
            scaling: 1.0,
            leading: 0.0,
            rise: 0.0,
            render: 0,
        }
    }
}

/// The most graphics states a page may push.
const STACK_LIMIT: usize = 1024;

/// What the operations of a page show; `font` reads the font a resource
/// name gives (`None`: no such font).
pub(crate) fn shown(
    ops: &[Operation],
    mut font: impl FnMut(&[u8]) -> Option<Rc<PdfFont>>,
) -> Vec<Shown> {
    let mut out = Vec::new();
    let mut state = State::default();
    let mut stack: Vec<State> = Vec::new();
    let mut tm = Matrix::IDENTITY;
    let mut tlm = Matrix::IDENTITY;
    let mut fonts: HashMap<Vec<u8>, Option<Rc<PdfFont>>> = HashMap::new();
    let mut marks: Vec<(Vec<u8>, Option<i64>)> = Vec::new();
    for (index, op) in ops.iter().enumerate() {
        let nums: Vec<f32> = op.operands.iter().filter_map(number).collect();
        let n = |i: usize| nums.get(i).copied().unwrap_or(0.0);
        match op.operator.as_str() {
            "q" if stack.len() < STACK_LIMIT => stack.push(state.clone()),
            "Q" => {
                if let Some(saved) = stack.pop() {
                    state = saved;
                }
            }
            "cm" if nums.len() == 6 => {
                state.ctm = Matrix([n(0), n(1), n(2), n(3), n(4), n(5)]).then(&state.ctm);
            }
            "BT" => {
                tm = Matrix::IDENTITY;
                tlm = Matrix::IDENTITY;
            }
            "Tf" => {
                if let Some(Object::Name(name)) = op.operands.first() {
                    state.font = fonts
                        .entry(name.clone())
                        .or_insert_with(|| font(name))
                        .clone();
                }
                state.size = op.operands.get(1).and_then(number).unwrap_or(0.0);
            }
            "Tc" => state.char_spacing = n(0),
            "Tw" => state.word_spacing = n(0),
            "Tz" => state.scaling = n(0) / 100.0,
            "TL" => state.leading = n(0),
            "Ts" => state.rise = n(0),
            "Tr" => state.render = n(0) as i64,
            "Td" => {
                tlm = Matrix::translate(n(0), n(1)).then(&tlm);
                tm = tlm;
            }
            "TD" => {
                state.leading = -n(1);
                tlm = Matrix::translate(n(0), n(1)).then(&tlm);
                tm = tlm;
            }
            "Tm" if nums.len() == 6 => {
                tlm = Matrix([n(0), n(1), n(2), n(3), n(4), n(5)]);
                tm = tlm;
            }
            "T*" => {
                tlm = Matrix::translate(0.0, -state.leading).then(&tlm);
                tm = tlm;
            }
            "g" if nums.len() == 1 => state.fill = Color::Gray(n(0)),
            "rg" if nums.len() == 3 => state.fill = Color::Rgb(n(0), n(1), n(2)),
            "k" if nums.len() == 4 => state.fill = Color::Cmyk(n(0), n(1), n(2), n(3)),
            "sc" | "scn" => {
                state.fill = match nums.len() {
                    1 => Color::Gray(n(0)),
                    3 => Color::Rgb(n(0), n(1), n(2)),
                    4 => Color::Cmyk(n(0), n(1), n(2), n(3)),
                    _ => Color::Gray(0.0),
                }
            }
            "Tj" | "TJ" | "'" | "\"" => {
                let kind = match op.operator.as_str() {
                    "'" => Show::NextLine,
                    "\"" => Show::Spaced(n(0), n(1)),
                    _ => Show::Plain,
                };
                if kind != Show::Plain {
                    if let Show::Spaced(word, char) = kind {
                        state.word_spacing = word;
                        state.char_spacing = char;
                    }
                    tlm = Matrix::translate(0.0, -state.leading).then(&tlm);
                    tm = tlm;
                }
                let mut shown = show(index, kind, op, &state, &mut tm);
                shown.marking = marking(&marks);
                out.push(shown);
            }
            "BMC" | "BDC" if marks.len() < STACK_LIMIT => {
                let tag = op
                    .operands
                    .first()
                    .and_then(|t| t.as_name().ok())
                    .unwrap_or_default()
                    .to_vec();
                // An id in the properties written in place (not in the
                // page's `Properties` resources).
                let mcid = match op.operands.get(1) {
                    Some(Object::Dictionary(d)) => {
                        d.get(b"MCID").ok().and_then(|m| m.as_i64().ok())
                    }
                    _ => None,
                };
                marks.push((tag, mcid));
            }
            "EMC" => {
                marks.pop();
            }
            _ => {}
        }
    }
    out
}

/// Where the open marked-content sequences put a show operator.
fn marking(marks: &[(Vec<u8>, Option<i64>)]) -> Marking {
    Marking {
        mcid: marks
            .iter()
            .rev()
            .find_map(|(tag, mcid)| mcid.map(|id| (tag.clone(), id))),
        artifact: marks.iter().any(|(tag, _)| tag == b"Artifact"),
    }
}

/// Paints the string or array of a show operator: its glyphs, and the
/// text matrix moved past them.
fn show(index: usize, kind: Show, op: &Operation, state: &State, tm: &mut Matrix) -> Shown {
    let items: Vec<&Object> = match op.operator.as_str() {
        "TJ" => match op.operands.first() {
            Some(Object::Array(items)) => items.iter().collect(),
            _ => Vec::new(),
        },
        _ => op.operands.last().into_iter().collect(),
    };
    let scale = state.size * state.scaling;
    let mut glyphs = Vec::new();
    let mut advance = 0.0;
    let font = state.font.as_deref();
    for item in items {
        match item {
            Object::String(bytes, _) => {
                let step = if font.is_some_and(|f| f.two_byte) {
                    2
                } else {
                    1
                };
                for code in bytes.chunks(step) {
                    let code = code.iter().fold(0u32, |c, b| c << 8 | u32::from(*b));
                    let width = font.map_or(0.0, |f| f.width(code)) / 1000.0;
                    let spacing = state.char_spacing
                        + if step == 1 && code == 32 {
                            state.word_spacing
                        } else {
                            0.0
                        };
                    let start = Matrix([1.0, 0.0, 0.0, 1.0, 0.0, state.rise])
                        .then(tm)
                        .then(&state.ctm);
                    let paint = width * scale;
                    glyphs.push(Glyph {
                        text: font.and_then(|f| f.text(code)),
                        x0: start.0[4],
                        x1: start.0[4] + paint * start.0[0],
                        y: start.0[5],
                        size: state.size * start.0[3].abs(),
                    });
                    let tx = (width * state.size + spacing) * state.scaling;
                    advance += tx;
                    *tm = Matrix::translate(tx, 0.0).then(tm);
                }
            }
            other => {
                if let Some(adjust) = number(other) {
                    let tx = -adjust / 1000.0 * scale;
                    advance += tx;
                    *tm = Matrix::translate(tx, 0.0).then(tm);
                }
            }
        }
    }
    let m = tm.then(&state.ctm).0;
    let upright =
        m[0] > 0.0 && m[3] > 0.0 && m[1].abs() <= m[0] * 1e-3 && m[2].abs() <= m[3] * 1e-3;
    let readable = font.is_some_and(|f| f.readable) && glyphs.iter().all(|g| g.text.is_some());
    let translatable = upright && state.render != 3 && state.size > 0.0 && readable;
    let left = match () {
        _ if translatable || glyphs.is_empty() || state.render == 3 || state.size <= 0.0 => None,
        _ if font.is_some_and(|f| f.type3) => Some(Left::Type3),
        _ if !readable => Some(Left::Unmapped),
        _ => Some(Left::Rotated),
    };
    Shown {
        op: index,
        kind,
        glyphs,
        translatable,
        invisible: state.render == 3,
        left,
        marking: Marking::default(),
        advance,
        scale,
        style: font.map(|f| f.style).unwrap_or_default(),
        color: state.fill,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrices_compose_in_pdf_order() {
        let scale = Matrix([2.0, 0.0, 0.0, 2.0, 0.0, 0.0]);
        let moved = Matrix::translate(10.0, 5.0).then(&scale);
        assert_eq!(moved.0, [2.0, 0.0, 0.0, 2.0, 20.0, 10.0]);
    }
}
