//! Bar charts drawn as inline SVG (nothing to fetch, no script): one bar per
//! slot, series stacked, each chart labelled for screen readers and each bar
//! titled with its figures.

use maud::{Markup, html};

/// Dark blue (contrast above 7:1 on white).
pub(super) const BLUE: &str = "#1d3557";
/// Dark red, for failures.
pub(super) const RED: &str = "#9b0000";
/// Dark green.
pub(super) const GREEN: &str = "#2a6f3f";
/// Dark purple.
pub(super) const PURPLE: &str = "#5b2a86";
/// Dark brown.
pub(super) const BROWN: &str = "#7a4a00";

/// Height of a chart, in pixels.
const HEIGHT: f64 = 32.0;
/// Width of one slot, in pixels (its bar is 2 pixels narrower).
const SLOT: f64 = 10.0;

/// One series of a chart: a value per slot, drawn in `color`.
pub(super) struct Series {
    values: Vec<f64>,
    color: &'static str,
}

impl Series {
    pub(super) fn new(values: Vec<f64>, color: &'static str) -> Self {
        Self { values, color }
    }
}

/// Bars of `series` stacked slot by slot, scaled to the tallest stack;
/// `label` names the chart, `titles[i]` says slot `i`'s figures.
pub(super) fn bars(label: &str, series: &[Series], titles: &[String]) -> Markup {
    let slots = titles.len();
    let stack = |i: usize| -> f64 {
        series
            .iter()
            .map(|s| s.values.get(i).copied().unwrap_or(0.0).max(0.0))
            .sum()
    };
    let top = (0..slots).map(stack).fold(0.0_f64, f64::max);
    let scale = if top > 0.0 { HEIGHT / top } else { 0.0 };
    let width = SLOT * slots as f64;
    // Each slot's bars, bottom up: (y, height, color).
    let stacks: Vec<Vec<(f64, f64, &str)>> = (0..slots)
        .map(|i| {
            let mut base = HEIGHT;
            let mut rects = Vec::new();
            for s in series {
                let h = s.values.get(i).copied().unwrap_or(0.0).max(0.0) * scale;
                if h > 0.0 {
                    rects.push((round(base - h), round(h), s.color));
                }
                base -= h;
            }
            rects
        })
        .collect();
    html! {
        svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label=(label)
            width=(width) height=(HEIGHT) viewBox={ "0 0 " (width) " " (HEIGHT) } {
            title { (label) }
            line x1="0" y1=(HEIGHT - 0.5) x2=(width) y2=(HEIGHT - 0.5) stroke="#888" {}
            @for (i, (title, rects)) in titles.iter().zip(&stacks).enumerate() {
                g {
                    title { (title) }
                    @for (y, h, color) in rects {
                        rect x=(i as f64 * SLOT + 1.0) y=(y) width=(SLOT - 2.0) height=(h) fill=(color) {}
                    }
                }
            }
        }
    }
}

/// `x` to two decimals, for short attributes.
fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_are_scaled_to_the_tallest_and_titled() {
        let svg = bars(
            "q: 3 done",
            &[
                Series::new(vec![1.0, 2.0], BLUE),
                Series::new(vec![0.0, 2.0], RED),
            ],
            &["a".to_owned(), "b".to_owned()],
        )
        .into_string();
        assert!(
            svg.contains(r#"role="img" aria-label="q: 3 done""#),
            "{svg}"
        );
        // Slot 1 is the tallest (4): its blue bar is half the height, the
        // red one on top of it.
        assert!(
            svg.contains(r##"x="11" y="16" width="8" height="16" fill="#1d3557""##),
            "{svg}"
        );
        assert!(
            svg.contains(r##"x="11" y="0" width="8" height="16" fill="#9b0000""##),
            "{svg}"
        );
        // Slot 0: a quarter, no red bar of zero height.
        assert!(
            svg.contains(r##"x="1" y="24" width="8" height="8" fill="#1d3557""##),
            "{svg}"
        );
        assert_eq!(svg.matches("<rect").count(), 3, "{svg}");
        assert!(svg.contains("<title>b</title>"), "{svg}");
    }

    #[test]
    fn an_empty_chart_draws_no_bar() {
        let svg = bars(
            "none",
            &[Series::new(vec![0.0; 3], GREEN)],
            &vec![String::new(); 3],
        )
        .into_string();
        assert_eq!(svg.matches("<rect").count(), 0, "{svg}");
    }
}
