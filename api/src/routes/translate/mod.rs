//! Text translation: `POST /v2/translate`, in the DeepL wire format.
//!
//! The body is JSON or `application/x-www-form-urlencoded` (at most 128 KiB,
//! else 413), read as [`crate::body::TextParams`]; [`options`] validates it. The route then
//! resolves the customisations the request names, reserves the characters,
//! runs the one translation pipeline (`tolk_pipeline`) and answers.

mod options;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde::Serialize;
use tolk_engine::TranslateOptions;
use tolk_pipeline::{Customizations, NoProgress, Request};
use tolk_storage::limits::Meter;
use tolk_storage::usage;

pub use options::{MAX_CUSTOM_INSTRUCTION_CHARS, MAX_CUSTOM_INSTRUCTIONS, MAX_GLOSSARIES};

use crate::auth::AuthKey;
use crate::body::{FormOrJson, TextParams};
use crate::limits::Charge;

use crate::{ApiError, AppState};
use options::{Options, model_type_used};

use crate::requests::reporting_tag;

/// Routes of this module.
pub fn router() -> Router<AppState> {
    Router::new().route("/v2/translate", post(translate))
}

/// One translated text.
#[derive(Debug, Serialize)]
struct Translation {
    detected_source_language: String,
    text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    billed_characters: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_type_used: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tag_handling_version: Option<&'static str>,
}

/// Body of a successful `POST /v2/translate`.
#[derive(Debug, Serialize)]
struct TranslateResponse {
    translations: Vec<Translation>,
}

/// The glossaries, style rule list and translation memory the request names:
/// 404 for one that does not exist, 400 for one that does not fit the pair.
async fn customizations(
    state: &AppState,
    organization_id: uuid::Uuid,
    opts: &Options,
) -> Result<Customizations, ApiError> {
    let pipeline = state.pipeline();
    let terms = match opts.source_lang.as_deref() {
        Some(source) if !opts.glossary_ids.is_empty() => {
            // The codes' own 400s first (a code glossaries never support).
            crate::requests::lang_code("source_lang", source)?;
            crate::requests::lang_code("target_lang", &opts.target_lang)?;
            pipeline
                .glossary_terms(
                    organization_id,
                    &opts.glossary_ids,
                    source,
                    &opts.target_lang,
                )
                .await?
        }
        _ => Default::default(),
    };
    let style = match opts.style_id {
        Some(id) => Some(
            pipeline
                .style_rules(organization_id, id, &opts.target_lang)
                .await?,
        ),
        None => None,
    };
    let memory = match opts.translation_memory_id {
        Some(id) => Some(
            pipeline
                .memory(
                    organization_id,
                    id,
                    opts.source_lang.as_deref(),
                    &opts.target_lang,
                    opts.translation_memory_threshold,
                )
                .await?,
        ),
        None => None,
    };
    Ok(Customizations {
        terms,
        style,
        memory,
    })
}

async fn translate(
    State(state): State<AppState>,
    AuthKey(key): AuthKey,
    headers: HeaderMap,
    FormOrJson(params): TextParams,
) -> Result<Response, ApiError> {
    let opts = options::options(&params)?;
    let custom_tag = reporting_tag(&headers)?;
    crate::requests::languages(
        &state,
        opts.source_lang.as_deref(),
        &opts.target_lang,
        opts.formality,
    )?;
    let custom = customizations(&state, key.organization_id, &opts).await?;

    let billed: Vec<usize> = opts.texts.iter().map(|t| t.chars().count()).collect();
    let total = i64::try_from(billed.iter().sum::<usize>())
        .map_err(|_| ApiError::Internal("character count overflow".to_owned()))?;
    // Metering (api/src/limits.rs): 456 unless the characters fit the key's
    // limit; for a key without one, the ledger entry is appended during the work.
    let charge = Charge::reserve(
        &state,
        &key,
        Meter::Characters,
        total,
        usage::kind::TEXT_TRANSLATION,
        custom_tag.as_deref(),
    )
    .await?;

    let out = state
        .pipeline()
        .translate(
            Request {
                source_lang: opts.source_lang.clone(),
                target_lang: opts.target_lang.clone(),
                texts: opts.texts,
                markup: opts.tag_handling.map(|_| opts.markup.clone()),
                split_lines: opts.split_lines,
                options: TranslateOptions {
                    formality: opts.formality,
                    context: opts.context.clone(),
                    custom_instructions: opts.custom_instructions.clone(),
                    model_type: opts.model_type.map(str::to_owned),
                    style_instructions: Vec::new(),
                    mark_unknown: opts.mark_unknown,
                },
                custom: &custom,
                protect_placeholders: true,
            },
            &NoProgress,
        )
        .await?;

    // The ledger entry durable (a hold becomes the entry in one transaction).
    charge.settle(&state).await?;

    let model_type_used = opts.model_type.map(model_type_used);
    let tag_handling_version = opts
        .tag_handling
        .map(|_| opts.tag_handling_version.unwrap_or("v2"));
    let translations = out
        .texts
        .into_iter()
        .zip(out.detected_source_langs)
        .zip(billed)
        .map(|((text, detected_source_language), chars)| Translation {
            detected_source_language,
            text,
            billed_characters: opts.show_billed_characters.then_some(chars),
            model_type_used,
            tag_handling_version,
        })
        .collect();
    Ok(Json(TranslateResponse { translations }).into_response())
}
