//! Speech for Tolk, pure of HTTP and database:
//!
//! * [`voices`]: the catalogues of text-to-speech voices and voice-conversion
//!   profiles (stable integer ids).
//! * [`tts`]: text to speech with espeak-ng, whole or streamed.
//! * [`convert`]: voice conversion by TD-PSOLA plus a formant shift.
//! * [`decode`]: WAV, FLAC, OGG/Vorbis and MP3 input (symphonia).
//! * [`wav`]: WAV output (hound) and the streaming header.
//! * [`pitch`]: F0 tracking (YIN). [`resample`]: band-limited resampling.
//! * [`asr`]: speech recognition with pocketsphinx. [`text`]: sentence splitting.

#![deny(missing_docs)]

pub mod asr;
pub mod convert;
pub mod decode;
mod error;
pub mod pitch;
pub mod resample;
pub mod text;
pub mod tts;
pub mod voices;
pub mod wav;

pub use error::VoiceError;
