//! chrF (Popović 2015): character n-gram F-score, n = 1..6, β = 2, white space
//! removed. 0.0 (nothing shared) … 1.0 (identical).

use std::collections::HashMap;

const MAX_N: usize = 6;
const BETA: f64 = 2.0;

fn ngrams(chars: &[char], n: usize) -> HashMap<&[char], usize> {
    let mut m = HashMap::new();
    if chars.len() >= n {
        for w in chars.windows(n) {
            *m.entry(w).or_insert(0) += 1;
        }
    }
    m
}

/// chrF of `hypothesis` against `reference` (case-insensitive).
pub fn chrf(reference: &str, hypothesis: &str) -> f64 {
    let r: Vec<char> = reference
        .to_lowercase()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let h: Vec<char> = hypothesis
        .to_lowercase()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if r.is_empty() && h.is_empty() {
        return 1.0;
    }
    let (mut p_sum, mut r_sum, mut orders) = (0.0, 0.0, 0usize);
    for n in 1..=MAX_N {
        let rn = ngrams(&r, n);
        let hn = ngrams(&h, n);
        let r_total: usize = rn.values().sum();
        let h_total: usize = hn.values().sum();
        if r_total == 0 || h_total == 0 {
            continue;
        }
        let matched: usize = hn
            .iter()
            .map(|(g, c)| (*c).min(rn.get(g).copied().unwrap_or(0)))
            .sum();
        p_sum += matched as f64 / h_total as f64;
        r_sum += matched as f64 / r_total as f64;
        orders += 1;
    }
    if orders == 0 {
        return 0.0;
    }
    let p = p_sum / orders as f64;
    let rc = r_sum / orders as f64;
    if p + rc == 0.0 {
        return 0.0;
    }
    let b2 = BETA * BETA;
    (1.0 + b2) * p * rc / (b2 * p + rc)
}

#[cfg(test)]
mod tests {
    use super::chrf;

    #[test]
    fn identical_is_one_and_unrelated_is_low() {
        assert!((chrf("The cat sleeps.", "the cat sleeps.") - 1.0).abs() < 1e-9);
        assert!(chrf("The cat sleeps on the sofa.", "Quarterly revenue grew") < 0.2);
        let close = chrf(
            "The cat sleeps on the sofa.",
            "The cat is sleeping on the couch.",
        );
        assert!(close > 0.4 && close < 1.0, "{close}");
    }
}
