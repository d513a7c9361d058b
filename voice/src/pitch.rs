//! Fundamental frequency (F0) tracking with YIN (de Cheveigné & Kawahara, 2002).

/// Lowest F0 tracked, in Hz.
pub const F0_MIN: f32 = 60.0;
/// Highest F0 tracked, in Hz.
pub const F0_MAX: f32 = 500.0;
/// YIN threshold on the cumulative mean normalised difference.
const THRESHOLD: f32 = 0.15;
/// Frames quieter than this fraction of the loudest frame's RMS are unvoiced.
const SILENCE_RATIO: f32 = 0.03;

/// F0 per frame; `0.0` marks an unvoiced (or silent) frame.
#[derive(Debug, Clone)]
pub struct PitchTrack {
    /// Samples between frame centres.
    pub hop: usize,
    /// One value per frame; frame `i` is centred on sample `i * hop`.
    pub f0: Vec<f32>,
}

impl PitchTrack {
    /// F0 at sample `pos` (nearest frame); 0 when unvoiced.
    pub fn at(&self, pos: usize) -> f32 {
        if self.f0.is_empty() {
            return 0.0;
        }
        let i = ((pos + self.hop / 2) / self.hop).min(self.f0.len() - 1);
        self.f0[i]
    }

    /// Values of the voiced frames.
    pub fn voiced(&self) -> Vec<f32> {
        self.f0.iter().copied().filter(|&f| f > 0.0).collect()
    }

    /// Median F0 of the voiced frames, if any.
    pub fn median(&self) -> Option<f32> {
        median(&self.voiced())
    }
}

/// Median of `values` (None when empty).
pub fn median(values: &[f32]) -> Option<f32> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f32::total_cmp);
    Some(v[v.len() / 2])
}

/// Tracks F0 over `x` (mono, `rate` Hz) every 10 ms.
pub fn track(x: &[f32], rate: u32) -> PitchTrack {
    let hop = (rate as usize / 100).max(1);
    let tau_min = (rate as f32 / F0_MAX).floor() as usize;
    let tau_max = (rate as f32 / F0_MIN).ceil() as usize;
    let w = tau_max;
    let frames = x.len() / hop + 1;
    let rms: Vec<f32> = (0..frames)
        .map(|i| {
            let c = i * hop;
            let lo = c.saturating_sub(w / 2);
            let hi = (c + w / 2).min(x.len());
            if hi <= lo {
                return 0.0;
            }
            (x[lo..hi].iter().map(|v| v * v).sum::<f32>() / (hi - lo) as f32).sqrt()
        })
        .collect();
    let loudest = rms.iter().copied().fold(0.0, f32::max);
    let mut d = vec![0.0f32; tau_max + 1];
    let f0 = (0..frames)
        .map(|i| {
            let c = i * hop;
            if rms[i] < loudest * SILENCE_RATIO || rms[i] < 1e-4 {
                return 0.0;
            }
            let start = c.saturating_sub(w / 2);
            if start + w + tau_max > x.len() {
                return 0.0;
            }
            yin(&x[start..start + w + tau_max], w, tau_min, tau_max, &mut d)
                .map(|tau| rate as f32 / tau)
                .unwrap_or(0.0)
        })
        .collect();
    PitchTrack { hop, f0 }
}

/// YIN on one frame: the period in samples (fractional), or None when unvoiced.
fn yin(frame: &[f32], w: usize, tau_min: usize, tau_max: usize, d: &mut [f32]) -> Option<f32> {
    let head = &frame[..w];
    d[0] = 0.0;
    for tau in 1..=tau_max {
        let shifted = &frame[tau..tau + w];
        d[tau] = head
            .iter()
            .zip(shifted)
            .map(|(a, b)| {
                let e = a - b;
                e * e
            })
            .sum();
    }
    // Cumulative mean normalised difference, in place.
    let mut running = 0.0f32;
    for (tau, v) in d.iter_mut().enumerate().take(tau_max + 1).skip(1) {
        running += *v;
        *v = if running > 0.0 {
            *v * tau as f32 / running
        } else {
            1.0
        };
    }
    let mut tau = tau_min.max(2);
    while tau < tau_max {
        if d[tau] < THRESHOLD {
            while tau + 1 < tau_max && d[tau + 1] < d[tau] {
                tau += 1;
            }
            // Parabolic interpolation around the minimum.
            let (a, b, c) = (d[tau - 1], d[tau], d[tau + 1]);
            let denom = a - 2.0 * b + c;
            let shift = if denom.abs() > 1e-12 {
                (0.5 * (a - c) / denom).clamp(-0.5, 0.5)
            } else {
                0.0
            };
            return Some(tau as f32 + shift);
        }
        tau += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pulse_train(f0: f32, rate: u32, n: usize) -> Vec<f32> {
        // A vowel-like signal: harmonics with falling amplitude.
        (0..n)
            .map(|i| {
                let t = i as f32 / rate as f32;
                (1..8)
                    .map(|h| (2.0 * std::f32::consts::PI * f0 * h as f32 * t).sin() / h as f32)
                    .sum::<f32>()
                    * 0.3
            })
            .collect()
    }

    #[test]
    fn finds_the_fundamental() {
        for f0 in [90.0, 150.0, 220.0, 330.0] {
            let x = pulse_train(f0, 22050, 22050);
            let m = track(&x, 22050).median().unwrap();
            assert!((m - f0).abs() / f0 < 0.02, "{f0}: {m}");
        }
    }

    #[test]
    fn silence_and_noise_are_unvoiced() {
        let t = track(&vec![0.0; 22050], 22050);
        assert!(t.median().is_none());
        let mut seed = 1u32;
        let noise: Vec<f32> = (0..22050)
            .map(|_| {
                seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
            })
            .collect();
        let t = track(&noise, 22050);
        assert!(t.voiced().len() < t.f0.len() / 10);
    }
}
