//! Decoding uploaded audio (WAV, FLAC, OGG/Vorbis, MP3) to mono floats with symphonia.

use std::io::Cursor;

use symphonia::core::audio::SampleBuffer;
use symphonia::core::codecs::{CODEC_TYPE_NULL, DecoderOptions};
use symphonia::core::errors::Error as SymError;
use symphonia::core::formats::FormatOptions;
use symphonia::core::io::MediaSourceStream;
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;

use crate::VoiceError;

/// Peak level under which audio counts as silent.
const SILENT_PEAK: f32 = 1.0 / 1000.0;

/// Decoded audio: mono samples and their rate.
#[derive(Debug, Clone)]
pub struct Decoded {
    /// Mono samples in [-1, 1].
    pub samples: Vec<f32>,
    /// Sample rate in Hz.
    pub rate: u32,
}

impl Decoded {
    /// Duration in milliseconds.
    pub fn duration_ms(&self) -> u64 {
        crate::wav::duration_ms(self.samples.len(), self.rate)
    }
}

/// Decodes `bytes` (any supported container; `extension` is a hint and may be
/// empty). Refuses corrupt, empty and silent audio, and audio longer than
/// `max_seconds`, with [`VoiceError::BadAudio`].
pub fn decode(bytes: &[u8], extension: &str, max_seconds: u32) -> Result<Decoded, VoiceError> {
    if bytes.is_empty() {
        return Err(VoiceError::BadAudio("The audio file is empty.".to_owned()));
    }
    let mss = MediaSourceStream::new(Box::new(Cursor::new(bytes.to_vec())), Default::default());
    let mut hint = Hint::new();
    if !extension.is_empty() {
        hint.with_extension(extension);
    }
    let probed = symphonia::default::get_probe()
        .format(
            &hint,
            mss,
            &FormatOptions::default(),
            &MetadataOptions::default(),
        )
        .map_err(|e| {
            VoiceError::BadAudio(format!(
                "The file is not audio in a supported format (WAV, FLAC, OGG/Vorbis, MP3): {e}"
            ))
        })?;
    let mut format = probed.format;
    let track = format
        .tracks()
        .iter()
        .find(|t| t.codec_params.codec != CODEC_TYPE_NULL)
        .ok_or_else(|| VoiceError::BadAudio("The file has no audio track.".to_owned()))?;
    let track_id = track.id;
    // What a WAV header declares (a streaming header's placeholder size, far
    // beyond any accepted length, declares nothing).
    let is_wav = bytes.len() >= 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WAVE";
    let declared_frames = track.codec_params.n_frames.filter(|_| is_wav);
    let mut decoder = symphonia::default::get_codecs()
        .make(&track.codec_params, &DecoderOptions::default())
        .map_err(|e| VoiceError::BadAudio(format!("Unsupported audio codec: {e}")))?;
    let mut rate = track.codec_params.sample_rate.unwrap_or(0);
    let max_samples = |rate: u32| u64::from(rate) * u64::from(max_seconds);

    let mut samples: Vec<f32> = Vec::new();
    let mut buf: Option<SampleBuffer<f32>> = None;
    let mut errors = 0usize;
    let mut packets = 0usize;
    loop {
        let packet = match format.next_packet() {
            Ok(p) => p,
            Err(SymError::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(SymError::ResetRequired) => break,
            Err(e) => {
                if packets == 0 {
                    return Err(VoiceError::BadAudio(format!("The audio is corrupt: {e}")));
                }
                break;
            }
        };
        if packet.track_id() != track_id {
            continue;
        }
        packets += 1;
        let decoded = match decoder.decode(&packet) {
            Ok(d) => d,
            Err(SymError::DecodeError(_)) | Err(SymError::IoError(_)) => {
                errors += 1;
                continue;
            }
            Err(e) => return Err(VoiceError::BadAudio(format!("The audio is corrupt: {e}"))),
        };
        let spec = *decoded.spec();
        rate = spec.rate;
        let channels = spec.channels.count().max(1);
        let b = match &mut buf {
            Some(b) if b.capacity() >= decoded.capacity() * channels => b,
            _ => buf.insert(SampleBuffer::<f32>::new(decoded.capacity() as u64, spec)),
        };
        b.copy_interleaved_ref(decoded);
        for frame in b.samples().chunks(channels) {
            samples.push(frame.iter().sum::<f32>() / channels as f32);
        }
        if samples.len() as u64 > max_samples(rate.max(1)) {
            return Err(VoiceError::BadAudio(format!(
                "The audio is longer than {max_seconds} seconds."
            )));
        }
    }
    if let Some(declared) = declared_frames
        && declared <= max_samples(rate.max(1))
        && (samples.len() as u64) < declared
    {
        return Err(VoiceError::BadAudio(format!(
            "The WAV file is truncated: its header declares {declared} samples, it holds {}.",
            samples.len()
        )));
    }
    if samples.is_empty() || rate == 0 {
        return Err(VoiceError::BadAudio(if errors > 0 {
            "The audio is corrupt: no packet could be decoded.".to_owned()
        } else {
            "The audio file contains no samples.".to_owned()
        }));
    }
    if errors * 2 > packets {
        return Err(VoiceError::BadAudio(format!(
            "The audio is corrupt: {errors} of {packets} packets could not be decoded."
        )));
    }
    let peak = samples.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    if peak < SILENT_PEAK {
        return Err(VoiceError::BadAudio("The audio is silent.".to_owned()));
    }
    Ok(Decoded { samples, rate })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wav(samples: &[i16], rate: u32) -> Vec<u8> {
        crate::wav::encode(samples, rate).unwrap()
    }

    #[test]
    fn decodes_wav() {
        let s: Vec<i16> = (0..8000)
            .map(|i| ((i % 100) * 200 - 10000) as i16)
            .collect();
        let d = decode(&wav(&s, 8000), "wav", 60).unwrap();
        assert_eq!(d.rate, 8000);
        assert_eq!(d.samples.len(), 8000);
        assert_eq!(d.duration_ms(), 1000);
    }

    #[test]
    fn refuses_garbage_silence_and_length() {
        assert!(matches!(
            decode(b"not audio at all", "", 60),
            Err(VoiceError::BadAudio(_))
        ));
        assert!(matches!(
            decode(&[], "wav", 60),
            Err(VoiceError::BadAudio(_))
        ));
        let silent = wav(&vec![0i16; 8000], 8000);
        let e = decode(&silent, "wav", 60).unwrap_err().to_string();
        assert!(e.contains("silent"), "{e}");
        let long = wav(&vec![1000i16; 8000 * 3], 8000);
        assert!(
            decode(&long, "wav", 2)
                .unwrap_err()
                .to_string()
                .contains("longer")
        );
        let mut truncated = wav(&vec![1000i16; 8000], 8000);
        truncated.truncate(30);
        assert!(decode(&truncated, "wav", 60).is_err());
        // Cut in the middle of its audio: refused, not converted in part.
        let speech: Vec<i16> = (0..8000).map(|i| ((i % 50) * 400 - 10000) as i16).collect();
        let mut cut = wav(&speech, 8000);
        cut.truncate(44 + 8000);
        let e = decode(&cut, "wav", 60).unwrap_err().to_string();
        assert!(e.contains("truncated"), "{e}");
        // A streaming header (placeholder sizes) declares nothing.
        let mut streamed = crate::wav::streaming_header(8000).to_vec();
        streamed.extend_from_slice(&crate::wav::pcm_bytes(&speech));
        assert_eq!(decode(&streamed, "wav", 60).unwrap().samples.len(), 8000);
    }
}
