//! Band-limited resampling by any ratio (windowed sinc, table-driven).

/// Zero crossings of the kernel on each side at full bandwidth.
const HALF_TAPS: usize = 16;
/// Table entries per unit of the kernel argument.
const TABLE_RES: usize = 256;

/// Kernel `sinc(x)·hann(x/H)` for x in [0, H], sampled every 1/TABLE_RES.
fn kernel_table() -> &'static [f32] {
    static TABLE: std::sync::OnceLock<Vec<f32>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let n = HALF_TAPS * TABLE_RES + 2;
        (0..n)
            .map(|i| {
                let x = i as f64 / TABLE_RES as f64;
                let sinc = if x == 0.0 {
                    1.0
                } else {
                    (std::f64::consts::PI * x).sin() / (std::f64::consts::PI * x)
                };
                let w = if x >= HALF_TAPS as f64 {
                    0.0
                } else {
                    0.5 + 0.5 * (std::f64::consts::PI * x / HALF_TAPS as f64).cos()
                };
                (sinc * w) as f32
            })
            .collect()
    })
}

#[inline]
fn kernel(table: &[f32], x: f32) -> f32 {
    let x = x.abs() * TABLE_RES as f32;
    let i = x as usize;
    if i + 1 >= table.len() {
        return 0.0;
    }
    let frac = x - i as f32;
    table[i] + (table[i + 1] - table[i]) * frac
}

/// Resamples `input` from `from` Hz to `to` Hz.
pub fn resample(input: &[f32], from: u32, to: u32) -> Vec<f32> {
    if from == to || input.is_empty() {
        return input.to_vec();
    }
    let out_len = ((input.len() as u64 * u64::from(to)) as f64 / f64::from(from)).round() as usize;
    stretch(input, out_len)
}

/// Resamples `input` to exactly `out_len` samples (the ratio is
/// `out_len / input.len()`); below 1 it low-passes first, so nothing aliases.
pub fn stretch(input: &[f32], out_len: usize) -> Vec<f32> {
    if input.is_empty() || out_len == 0 {
        return vec![0.0; out_len];
    }
    if out_len == input.len() {
        return input.to_vec();
    }
    let table = kernel_table();
    let ratio = out_len as f64 / input.len() as f64;
    let cutoff = ratio.min(1.0) as f32;
    let half = (HALF_TAPS as f32 / cutoff).ceil() as isize;
    let n = input.len() as isize;
    let step = 1.0 / ratio;
    let mut out = Vec::with_capacity(out_len);
    for o in 0..out_len {
        let t = o as f64 * step;
        let center = t.floor() as isize;
        let frac = (t - center as f64) as f32;
        let lo = (center - half + 1).max(0);
        let hi = (center + half).min(n - 1);
        let mut acc = 0.0f32;
        for k in lo..=hi {
            let d = (k - center) as f32 - frac;
            acc += input[k as usize] * kernel(table, d * cutoff);
        }
        out.push(acc * cutoff);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sine(f: f32, rate: u32, n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| (2.0 * std::f32::consts::PI * f * i as f32 / rate as f32).sin() * 0.5)
            .collect()
    }

    #[test]
    fn keeps_a_tone_and_its_length() {
        let x = sine(440.0, 22050, 22050);
        let y = resample(&x, 22050, 16000);
        assert_eq!(y.len(), 16000);
        let expect = sine(440.0, 16000, 16000);
        let err: f32 = y[200..15800]
            .iter()
            .zip(&expect[200..15800])
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        assert!(err < 0.01, "max error {err}");
        assert_eq!(resample(&x, 22050, 44100).len(), 44100);
    }

    #[test]
    fn removes_what_the_new_rate_cannot_hold() {
        // 10 kHz is above 8 kHz (Nyquist of 16 kHz): it must vanish, not alias.
        let x = sine(10_000.0, 44100, 44100);
        let y = resample(&x, 44100, 16000);
        let rms = (y[500..15500].iter().map(|v| v * v).sum::<f32>() / 15000.0).sqrt();
        assert!(rms < 0.02, "rms {rms}");
    }
}
