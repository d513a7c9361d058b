//! The voice catalogues: text-to-speech voices (espeak-ng languages and
//! variants) and voice-conversion profiles (target pitch, formants, intonation).
//!
//! Ids are constants of this table, so they are the same on every replica and
//! after every restart. TTS ids are 101–199, voice-conversion ids 201–299: an id
//! from one list is never valid in the other.

/// A text-to-speech voice: an espeak-ng language with a variant, pitch and rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TtsVoice {
    /// Stable id.
    pub id: u32,
    /// Display name.
    pub name: &'static str,
    /// What it sounds like.
    pub description: &'static str,
    /// espeak-ng voice (`-v`): language, optionally `+variant`.
    pub espeak: &'static str,
    /// espeak-ng pitch (`-p`, 0–99).
    pub pitch: u8,
    /// Words per minute (`-s`).
    pub rate: u16,
    /// Language as a DeepL base code (`EN`, `ES`…), used to pick a voice for a target language.
    pub language: &'static str,
}

/// A voice-conversion target profile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VcVoice {
    /// Stable id.
    pub id: u32,
    /// Display name.
    pub name: &'static str,
    /// What it sounds like.
    pub description: &'static str,
    /// Median fundamental frequency of the target voice, in Hz.
    pub f0_hz: f32,
    /// Formant (spectral envelope) scale: above 1 a shorter vocal tract.
    pub formant_ratio: f32,
    /// Scale of the pitch movement around the median: 1 keeps the speaker's
    /// intonation, 0 is a monotone.
    pub intonation: f32,
}

/// `{id, name, description}`, as the voice lists answer it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoiceInfo {
    /// Stable id.
    pub id: u32,
    /// Display name.
    pub name: String,
    /// Description.
    pub description: String,
}

/// Which list an id belongs to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum VoiceLookup<T> {
    /// Found in the list asked for.
    Found(T),
    /// The id is a voice of the other list.
    OtherKind,
    /// No voice has this id.
    Unknown,
}

const fn tts(
    id: u32,
    name: &'static str,
    description: &'static str,
    espeak: &'static str,
    pitch: u8,
    rate: u16,
    language: &'static str,
) -> TtsVoice {
    TtsVoice {
        id,
        name,
        description,
        espeak,
        pitch,
        rate,
        language,
    }
}

/// All text-to-speech voices, by id.
pub const TTS_VOICES: &[TtsVoice] = &[
    tts(
        101,
        "Adam",
        "English (American), male, neutral pace.",
        "en-us",
        50,
        170,
        "EN",
    ),
    tts(
        102,
        "Ava",
        "English (American), female, calm and slow.",
        "en-us+f2",
        50,
        130,
        "EN",
    ),
    tts(
        103,
        "Oliver",
        "English (British), male, received pronunciation.",
        "en-gb-x-rp",
        45,
        165,
        "EN",
    ),
    tts(
        104,
        "Fiona",
        "English (Scottish), female.",
        "en-gb-scotland+f3",
        60,
        165,
        "EN",
    ),
    tts(
        105,
        "Max",
        "English (American), deep male, slow.",
        "en-us+m1",
        30,
        140,
        "EN",
    ),
    tts(
        106,
        "Klatt",
        "English (American), Klatt formant synthesiser, clear.",
        "en-us+klatt",
        50,
        150,
        "EN",
    ),
    tts(
        111,
        "Lucía",
        "Spanish (Spain), female.",
        "es+f3",
        55,
        165,
        "ES",
    ),
    tts(
        112,
        "Diego",
        "Spanish (Latin America), male.",
        "es-419",
        45,
        165,
        "ES",
    ),
    tts(
        121,
        "Chloé",
        "French (France), female.",
        "fr-fr+f2",
        55,
        165,
        "FR",
    ),
    tts(
        122,
        "Louis",
        "French (France), male.",
        "fr-fr",
        45,
        165,
        "FR",
    ),
    tts(
        131,
        "Beatriz",
        "Portuguese (Brazil), female.",
        "pt-br+f2",
        55,
        165,
        "PT",
    ),
    tts(
        132,
        "João",
        "Portuguese (Portugal), male.",
        "pt",
        45,
        165,
        "PT",
    ),
    tts(141, "Montse", "Catalan, female.", "ca+f2", 55, 165, "CA"),
    tts(142, "Jordi", "Catalan, male.", "ca", 45, 165, "CA"),
    tts(151, "Greta", "German, female.", "de+f2", 55, 160, "DE"),
    tts(152, "Hans", "German, male.", "de", 45, 160, "DE"),
    tts(161, "Giulia", "Italian, female.", "it+f2", 55, 165, "IT"),
    tts(171, "Sanne", "Dutch, female.", "nl+f2", 55, 165, "NL"),
];

const fn vc(
    id: u32,
    name: &'static str,
    description: &'static str,
    f0_hz: f32,
    formant_ratio: f32,
    intonation: f32,
) -> VcVoice {
    VcVoice {
        id,
        name,
        description,
        f0_hz,
        formant_ratio,
        intonation,
    }
}

/// All voice-conversion profiles, by id.
pub const VC_VOICES: &[VcVoice] = &[
    vc(
        201,
        "Bass",
        "Deep male voice: median pitch 85 Hz, formants lowered 12 %.",
        85.0,
        0.88,
        1.0,
    ),
    vc(
        202,
        "Baritone",
        "Male voice: median pitch 115 Hz, formants lowered 5 %.",
        115.0,
        0.95,
        1.0,
    ),
    vc(
        203,
        "Alto",
        "Female voice: median pitch 190 Hz, formants raised 12 %.",
        190.0,
        1.12,
        1.0,
    ),
    vc(
        204,
        "Soprano",
        "High female voice: median pitch 240 Hz, formants raised 17 %.",
        240.0,
        1.17,
        1.1,
    ),
    vc(
        205,
        "Child",
        "Child voice: median pitch 290 Hz, formants raised 25 %.",
        290.0,
        1.25,
        1.2,
    ),
    vc(
        206,
        "Robot",
        "Monotone voice at 110 Hz with the speaker's formants.",
        110.0,
        1.0,
        0.0,
    ),
];

/// Looks up a text-to-speech voice.
pub fn tts_voice(id: i64) -> VoiceLookup<&'static TtsVoice> {
    if let Some(v) = TTS_VOICES.iter().find(|v| i64::from(v.id) == id) {
        VoiceLookup::Found(v)
    } else if VC_VOICES.iter().any(|v| i64::from(v.id) == id) {
        VoiceLookup::OtherKind
    } else {
        VoiceLookup::Unknown
    }
}

/// Looks up a voice-conversion profile.
pub fn vc_voice(id: i64) -> VoiceLookup<&'static VcVoice> {
    if let Some(v) = VC_VOICES.iter().find(|v| i64::from(v.id) == id) {
        VoiceLookup::Found(v)
    } else if TTS_VOICES.iter().any(|v| i64::from(v.id) == id) {
        VoiceLookup::OtherKind
    } else {
        VoiceLookup::Unknown
    }
}

/// The first TTS voice speaking `language` (a DeepL code such as `ES`, `PT-BR`, `en`).
pub fn tts_voice_for_language(language: &str) -> Option<&'static TtsVoice> {
    let base = tolk_lang::primary(language);
    TTS_VOICES
        .iter()
        .find(|v| v.language.eq_ignore_ascii_case(base))
}

/// The TTS list as `{id, name, description}`.
pub fn tts_list() -> Vec<VoiceInfo> {
    TTS_VOICES
        .iter()
        .map(|v| VoiceInfo {
            id: v.id,
            name: v.name.to_owned(),
            description: v.description.to_owned(),
        })
        .collect()
}

/// The voice-conversion list as `{id, name, description}`.
pub fn vc_list() -> Vec<VoiceInfo> {
    VC_VOICES
        .iter()
        .map(|v| VoiceInfo {
            id: v.id,
            name: v.name.to_owned(),
            description: v.description.to_owned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_disjoint() {
        let mut ids: Vec<u32> = TTS_VOICES.iter().map(|v| v.id).collect();
        ids.extend(VC_VOICES.iter().map(|v| v.id));
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n);
        assert!(TTS_VOICES.iter().all(|v| (101..200).contains(&v.id)));
        assert!(VC_VOICES.iter().all(|v| (201..300).contains(&v.id)));
    }

    #[test]
    fn lookups_tell_the_lists_apart() {
        assert!(matches!(tts_voice(101), VoiceLookup::Found(v) if v.espeak == "en-us"));
        assert_eq!(tts_voice(201), VoiceLookup::OtherKind);
        assert_eq!(vc_voice(101), VoiceLookup::OtherKind);
        assert_eq!(vc_voice(9999), VoiceLookup::Unknown);
        assert_eq!(tts_voice_for_language("pt-BR").map(|v| v.id), Some(131));
        assert_eq!(tts_voice_for_language("xx"), None);
    }
}
