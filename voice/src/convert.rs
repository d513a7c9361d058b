//! Voice conversion by TD-PSOLA with a formant shift.
//!
//! 1. F0 is tracked with YIN and pitch marks are placed one period apart on
//!    the glottal peaks of voiced stretches (every 5 ms elsewhere).
//! 2. Each voiced mark gets a target F0: the profile's median, with the
//!    speaker's intonation around their own median scaled by the profile.
//! 3. Two-period Hann grains are overlap-added at the new period (pitch) while
//!    the time axis is stretched by the formant ratio `α`.
//! 4. Resampling the result by `1/α` restores the duration and scales the
//!    whole spectral envelope (formants) by `α`; the pitch change of step 3
//!    was divided by `α` so that F0 ends exactly on target.
//!
//! The output has the input's length and sample rate.

use crate::VoiceError;
use crate::pitch::{self, PitchTrack};
use crate::resample;
use crate::voices::VcVoice;

/// Spacing of marks in unvoiced stretches, in seconds.
const UNVOICED_STEP_S: f32 = 0.005;
/// Voiced frames needed to convert at all.
const MIN_VOICED_FRAMES: usize = 5;

#[derive(Debug, Clone, Copy)]
struct Mark {
    pos: usize,
    period: usize,
    /// Pitch factor for voiced marks; None for unvoiced ones.
    factor: Option<f32>,
}

/// Converts `x` (mono, `rate` Hz) toward `voice`.
pub fn convert(x: &[f32], rate: u32, voice: &VcVoice) -> Result<Vec<f32>, VoiceError> {
    let track = pitch::track(x, rate);
    let voiced = track.voiced();
    if voiced.len() < MIN_VOICED_FRAMES {
        return Err(VoiceError::BadAudio(
            "No voiced speech was found in the audio.".to_owned(),
        ));
    }
    let source_median = pitch::median(&voiced).unwrap_or(voice.f0_hz);
    let alpha = voice.formant_ratio.clamp(0.5, 2.0);
    let marks = marks(x, rate, &track, source_median, voice);
    let stretched = overlap_add(x, &marks, alpha);
    let mut out = resample::stretch(&stretched, x.len());
    out.truncate(x.len());
    out.resize(x.len(), 0.0);
    // Keep the level of the input (grain overlap and resampling change it slightly).
    let peak_in = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let peak_out = out.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    if peak_out > 0.0 {
        let gain = (peak_in / peak_out).min(4.0);
        for v in &mut out {
            *v *= gain;
        }
    }
    Ok(out)
}

/// Target F0 for a frame at `f0` Hz.
fn target_f0(f0: f32, source_median: f32, voice: &VcVoice) -> f32 {
    let log = voice.f0_hz.ln() + voice.intonation * (f0.ln() - source_median.ln());
    log.exp().clamp(pitch::F0_MIN * 0.8, pitch::F0_MAX * 1.2)
}

fn marks(
    x: &[f32],
    rate: u32,
    track: &PitchTrack,
    source_median: f32,
    voice: &VcVoice,
) -> Vec<Mark> {
    let unvoiced_step = ((rate as f32 * UNVOICED_STEP_S) as usize).max(1);
    let mut marks = Vec::with_capacity(x.len() / unvoiced_step + 1);
    let mut pos = 0usize;
    let mut prev_voiced = false;
    while pos < x.len() {
        let f0 = track.at(pos);
        if f0 > 0.0 {
            let period = ((rate as f32 / f0).round() as usize).max(2);
            // Snap to the strongest peak near the expected place, so grains
            // stay centred on glottal pulses.
            let (lo, hi) = if prev_voiced {
                (
                    pos.saturating_sub(period / 4),
                    (pos + period / 4).min(x.len() - 1),
                )
            } else {
                (pos, (pos + period).min(x.len() - 1))
            };
            let mut best = lo;
            for i in lo..=hi {
                if x[i] > x[best] {
                    best = i;
                }
            }
            let factor = target_f0(f0, source_median, voice) / f0;
            marks.push(Mark {
                pos: best,
                period,
                factor: Some(factor),
            });
            pos = best + period;
            prev_voiced = true;
        } else {
            marks.push(Mark {
                pos,
                period: unvoiced_step,
                factor: None,
            });
            pos += unvoiced_step;
            prev_voiced = false;
        }
    }
    marks
}

/// PSOLA synthesis: output is `alpha` times longer than `x`; voiced grains
/// are spaced at `period / (factor / alpha)`.
fn overlap_add(x: &[f32], marks: &[Mark], alpha: f32) -> Vec<f32> {
    let out_len = (x.len() as f32 * alpha).round() as usize;
    let max_period = marks.iter().map(|m| m.period).max().unwrap_or(1);
    let mut out = vec![0.0f32; out_len + 2 * max_period + 1];
    let mut wsum = vec![0.0f32; out.len()];
    let positions: Vec<usize> = marks.iter().map(|m| m.pos).collect();
    let mut ts = 0.0f32;
    while (ts as usize) < out_len {
        let ta = ts / alpha;
        let k = nearest(&positions, ta);
        let m = marks[k];
        let p = m.period as isize;
        let centre = ts.round() as isize;
        let scale = std::f32::consts::PI / p as f32;
        for j in -p..p {
            let src = m.pos as isize + j;
            let dst = centre + j;
            if src < 0 || src >= x.len() as isize || dst < 0 || dst >= out.len() as isize {
                continue;
            }
            let w = 0.5 - 0.5 * ((j + p) as f32 * scale).cos();
            out[dst as usize] += x[src as usize] * w;
            wsum[dst as usize] += w;
        }
        let step = match m.factor {
            Some(f) => m.period as f32 * alpha / f,
            None => m.period as f32,
        };
        ts += step.max(1.0);
    }
    out.truncate(out_len);
    for (o, w) in out.iter_mut().zip(&wsum) {
        if *w > 1.0 {
            *o /= *w;
        }
    }
    out
}

/// Index of the mark nearest to `t`.
fn nearest(positions: &[usize], t: f32) -> usize {
    let i = positions.partition_point(|&p| (p as f32) < t);
    if i == 0 {
        0
    } else if i >= positions.len() {
        positions.len() - 1
    } else if (positions[i] as f32 - t) < (t - positions[i - 1] as f32) {
        i
    } else {
        i - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::voices::VC_VOICES;

    fn vowel(f0: f32, rate: u32, n: usize) -> Vec<f32> {
        // A glottal-pulse train through two formant-ish resonances.
        let mut out = vec![0.0f32; n];
        let period = rate as f32 / f0;
        let mut next = 0.0f32;
        let (mut y1, mut y2, mut z1, mut z2) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
        let res = |f: f32, bw: f32| {
            let r = (-std::f32::consts::PI * bw / rate as f32).exp();
            (
                2.0 * r * (2.0 * std::f32::consts::PI * f / rate as f32).cos(),
                -r * r,
            )
        };
        let (a1, a2) = res(700.0, 80.0);
        let (b1, b2) = res(1200.0, 90.0);
        for (i, o) in out.iter_mut().enumerate() {
            let e = if i as f32 >= next {
                next += period;
                1.0
            } else {
                0.0
            };
            let y = e + a1 * y1 + a2 * y2;
            y2 = y1;
            y1 = y;
            let z = y + b1 * z1 + b2 * z2;
            z2 = z1;
            z1 = z;
            *o = z;
        }
        let peak = out.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        out.iter().map(|v| v / peak * 0.5).collect()
    }

    #[test]
    fn moves_f0_to_the_profile_and_keeps_length() {
        let x = vowel(120.0, 22050, 22050);
        for voice in VC_VOICES.iter().filter(|v| v.intonation > 0.0) {
            let y = convert(&x, 22050, voice).unwrap();
            assert_eq!(y.len(), x.len());
            let f = pitch::track(&y, 22050).median().unwrap();
            assert!(
                (f - voice.f0_hz).abs() / voice.f0_hz < 0.06,
                "{}: wanted {} Hz, got {f}",
                voice.name,
                voice.f0_hz
            );
        }
    }

    #[test]
    fn unvoiced_input_is_refused() {
        let silence = vec![0.0f32; 22050];
        assert!(matches!(
            convert(&silence, 22050, &VC_VOICES[0]),
            Err(VoiceError::BadAudio(_))
        ));
    }
}
