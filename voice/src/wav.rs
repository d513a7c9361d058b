//! WAV encoding (hound) and sample conversions.

use std::io::Cursor;

use crate::VoiceError;

/// Size of the canonical PCM WAV header.
pub const HEADER_LEN: usize = 44;

/// A complete 16-bit PCM mono WAV file.
pub fn encode(samples: &[i16], rate: u32) -> Result<Vec<u8>, VoiceError> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut buf = Cursor::new(Vec::with_capacity(HEADER_LEN + samples.len() * 2));
    let mut writer = hound::WavWriter::new(&mut buf, spec)
        .map_err(|e| VoiceError::Engine(format!("WAV encoder: {e}")))?;
    {
        let mut w = writer.get_i16_writer(samples.len() as u32);
        for &s in samples {
            w.write_sample(s);
        }
        w.flush()
            .map_err(|e| VoiceError::Engine(format!("WAV encoder: {e}")))?;
    }
    writer
        .finalize()
        .map_err(|e| VoiceError::Engine(format!("WAV encoder: {e}")))?;
    Ok(buf.into_inner())
}

/// The header of a WAV stream of unknown length: 16-bit PCM mono at `rate`,
/// with placeholder sizes (RIFF 0x7FFFF024, data 0x7FFFF000), as `espeak-ng
/// --stdout` writes it. Every later frame of a stream is raw PCM.
pub fn streaming_header(rate: u32) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..4].copy_from_slice(b"RIFF");
    h[4..8].copy_from_slice(&0x7FFF_F024u32.to_le_bytes());
    h[8..12].copy_from_slice(b"WAVE");
    h[12..16].copy_from_slice(b"fmt ");
    h[16..20].copy_from_slice(&16u32.to_le_bytes());
    h[20..22].copy_from_slice(&1u16.to_le_bytes()); // PCM
    h[22..24].copy_from_slice(&1u16.to_le_bytes()); // mono
    h[24..28].copy_from_slice(&rate.to_le_bytes());
    h[28..32].copy_from_slice(&(rate * 2).to_le_bytes());
    h[32..34].copy_from_slice(&2u16.to_le_bytes());
    h[34..36].copy_from_slice(&16u16.to_le_bytes());
    h[36..40].copy_from_slice(b"data");
    h[40..44].copy_from_slice(&0x7FFF_F000u32.to_le_bytes());
    h
}

/// Little-endian bytes of 16-bit samples.
pub fn pcm_bytes(samples: &[i16]) -> Vec<u8> {
    let mut out = Vec::with_capacity(samples.len() * 2);
    for s in samples {
        out.extend_from_slice(&s.to_le_bytes());
    }
    out
}

/// Samples to floats in [-1, 1).
pub fn to_f32(samples: &[i16]) -> Vec<f32> {
    samples.iter().map(|&s| f32::from(s) / 32768.0).collect()
}

/// Floats to 16-bit samples, clipped.
pub fn to_i16(samples: &[f32]) -> Vec<i16> {
    samples
        .iter()
        .map(|&s| (s * 32768.0).round().clamp(-32768.0, 32767.0) as i16)
        .collect()
}

/// Milliseconds of `samples` at `rate`.
pub fn duration_ms(samples: usize, rate: u32) -> u64 {
    (samples as u64 * 1000) / u64::from(rate.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_file_reads_back() {
        let samples: Vec<i16> = (0..1000).map(|i| (i * 30 - 15000) as i16).collect();
        let bytes = encode(&samples, 22050).unwrap();
        assert_eq!(bytes.len(), HEADER_LEN + 2000);
        let mut r = hound::WavReader::new(Cursor::new(bytes)).unwrap();
        assert_eq!(r.spec().sample_rate, 22050);
        let back: Vec<i16> = r.samples::<i16>().map(|s| s.unwrap()).collect();
        assert_eq!(back, samples);
    }

    #[test]
    fn streaming_header_fields() {
        let h = streaming_header(44100);
        assert_eq!(&h[0..4], b"RIFF");
        assert_eq!(u16::from_le_bytes([h[22], h[23]]), 1);
        assert_eq!(u32::from_le_bytes([h[24], h[25], h[26], h[27]]), 44100);
        assert_eq!(u16::from_le_bytes([h[34], h[35]]), 16);
    }

    #[test]
    fn conversions_round_trip_and_clip() {
        assert_eq!(
            to_i16(&to_f32(&[-32768, 0, 1234, 32767])),
            [-32768, 0, 1234, 32767]
        );
        assert_eq!(to_i16(&[2.0, -2.0]), [32767, -32768]);
        assert_eq!(duration_ms(22050, 22050), 1000);
    }
}
