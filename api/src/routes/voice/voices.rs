//! `GET /v1/tts/voices` and `GET /v1/vc/voices`.

use axum::Json;
use serde::Serialize;
use tolk_voice::voices::{self, VoiceInfo};

use super::VoiceAuth;

/// One voice on the wire.
#[derive(Debug, Serialize)]
pub struct VoiceJson {
    id: u32,
    name: String,
    description: String,
}

fn to_json(list: Vec<VoiceInfo>) -> Json<Vec<VoiceJson>> {
    Json(
        list.into_iter()
            .map(|v| VoiceJson {
                id: v.id,
                name: v.name,
                description: v.description,
            })
            .collect(),
    )
}

pub(super) async fn tts_voices(_auth: VoiceAuth) -> Json<Vec<VoiceJson>> {
    to_json(voices::tts_list())
}

pub(super) async fn vc_voices(_auth: VoiceAuth) -> Json<Vec<VoiceJson>> {
    to_json(voices::vc_list())
}
