//! DeepL's v3 language model: `GET /v3/languages?resource=…` lists, for one
//! resource, every language Tolk offers there (BCP 47 codes), whether it can
//! be a source or a target, and the optional features it has;
//! `GET /v3/languages/resources` lists the resources and, for each feature,
//! whether the source, the target or both must have it.
//!
//! Everything comes from what is installed: the engines' reachable languages
//! (translation, documents, glossaries, translation memories), formality per
//! target, the Hunspell dictionaries (write), the style rules' languages and
//! the speech recogniser's languages (voice).

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{RawQuery, State};
use serde_json::{Value, json};

use crate::auth::AuthKey;
use crate::{ApiError, AppState};

/// What a feature needs of a pair: `(name, source, target)`.
type Feature = (&'static str, bool, bool);

/// The resources, with their features.
const RESOURCES: [(&str, &[Feature]); 7] = [
    (
        "translate_text",
        &[
            ("formality", false, true),
            ("style_rules", false, true),
            ("tag_handling", true, true),
            ("glossary", true, true),
            ("auto_detection", true, false),
            ("translation_memory", true, true),
        ],
    ),
    (
        "translate_document",
        &[
            ("formality", false, true),
            ("glossary", true, true),
            ("auto_detection", true, false),
            ("translation_memory", true, true),
        ],
    ),
    ("glossary", &[]),
    ("voice", &[]),
    (
        "write",
        &[("writing_style", false, true), ("tone", false, true)],
    ),
    ("style_rules", &[]),
    ("translation_memory", &[]),
];

/// `GET /v3/languages/resources`.
pub async fn resources(AuthKey(_key): AuthKey) -> Json<Value> {
    Json(Value::Array(
        RESOURCES
            .iter()
            .map(|(name, features)| {
                let features: Vec<Value> = features
                    .iter()
                    .map(|(feature, source, target)| {
                        let mut f = json!({ "name": feature });
                        if *source {
                            f["needs_source_support"] = json!(true);
                        }
                        if *target {
                            f["needs_target_support"] = json!(true);
                        }
                        f
                    })
                    .collect();
                json!({ "name": name, "features": features })
            })
            .collect(),
    ))
}

/// One language of a resource.
#[derive(Default)]
struct Entry {
    name: String,
    source: bool,
    target: bool,
    features: BTreeMap<&'static str, Value>,
}

/// The languages of one resource, by BCP 47 code.
#[derive(Default)]
struct Table(BTreeMap<String, Entry>);

impl Table {
    fn entry(&mut self, deepl_code: &str, name: &str) -> &mut Entry {
        let entry = self.0.entry(tolk_lang::bcp47(deepl_code)).or_default();
        if entry.name.is_empty() {
            entry.name = name.to_owned();
        }
        entry
    }

    fn source(&mut self, code: &str, name: &str, features: &[&'static str]) {
        let e = self.entry(code, name);
        e.source = true;
        for f in features {
            e.features.insert(f, json!({ "status": "stable" }));
        }
    }

    fn target(&mut self, code: &str, name: &str, features: &[&'static str]) {
        let e = self.entry(code, name);
        e.target = true;
        for f in features {
            e.features.insert(f, json!({ "status": "stable" }));
        }
    }

    fn into_json(self) -> Value {
        Value::Array(
            self.0
                .into_iter()
                .map(|(lang, e)| {
                    json!({
                        "lang": lang,
                        "name": e.name,
                        "usable_as_source": e.source,
                        "usable_as_target": e.target,
                        "status": "stable",
                        "features": e.features,
                    })
                })
                .collect(),
        )
    }
}

/// `GET /v3/languages?resource=…` (`include=beta|external` accepted: every
/// language and feature Tolk offers is stable and runs locally).
pub async fn languages(
    State(state): State<AppState>,
    AuthKey(_key): AuthKey,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_str(query.as_deref().unwrap_or(""))
            .map_err(|e| ApiError::BadRequest(format!("Invalid query string: {e}")))?;
    let resource = pairs
        .iter()
        .rev()
        .find(|(k, _)| k == "resource")
        .map(|(_, v)| v.as_str())
        .ok_or_else(|| ApiError::BadRequest("Parameter 'resource' is required.".to_owned()))?;
    for (_, include) in pairs.iter().filter(|(k, _)| k == "include") {
        if include != "beta" && include != "external" {
            return Err(ApiError::BadRequest(format!(
                "Value for 'include' not supported: '{include}' (allowed: beta, external)."
            )));
        }
    }
    let langs = state.translator.languages();
    let mut table = Table::default();
    match resource {
        "translate_text" | "translate_document" => {
            let text = resource == "translate_text";
            for l in &langs.source {
                let mut features = if text {
                    vec!["tag_handling", "glossary", "translation_memory"]
                } else {
                    vec!["glossary", "translation_memory"]
                };
                if state.translator.detectable(&l.code) {
                    features.push("auto_detection");
                }
                table.source(&l.code, &l.name, &features);
            }
            for l in &langs.target {
                let mut features = vec!["glossary", "translation_memory"];
                if text {
                    features.push("tag_handling");
                    if style_rules_for(&l.code) {
                        features.push("style_rules");
                    }
                }
                if l.supports_formality {
                    features.push("formality");
                }
                table.target(&l.code, &l.name, &features);
            }
        }
        "glossary" | "translation_memory" => {
            // Base codes only, as glossaries and memories name them.
            for l in &langs.source {
                table.source(tolk_lang::primary(&l.code), &l.name, &[]);
            }
            for l in &langs.target {
                let name = l.name.split(" (").next().unwrap_or(&l.name);
                table.target(tolk_lang::primary(&l.code), name, &[]);
            }
        }
        "write" => {
            for l in langs
                .target
                .iter()
                .filter(|l| state.speller.supports(&l.code))
            {
                table.target(&l.code, &l.name, &["writing_style", "tone"]);
            }
        }
        "style_rules" => {
            for l in langs.target.iter().filter(|l| style_rules_for(&l.code)) {
                table.target(&l.code, &l.name, &[]);
            }
        }
        "voice" => {
            // Speech recognised in these languages, translated into any target
            // reachable from them.
            let recognizer = tolk_voice::asr::Recognizer::default();
            let heard = recognizer.languages();
            for l in langs
                .source
                .iter()
                .filter(|l| heard.contains(&l.code.as_str()))
            {
                table.source(&l.code, &l.name, &[]);
                for t in &langs.target {
                    if state.translator.route(&l.code, &t.code).is_ok() {
                        table.target(&t.code, &t.name, &[]);
                    }
                }
            }
        }
        other => {
            return Err(ApiError::BadRequest(format!(
                "Value for 'resource' not supported: '{other}' (allowed: translate_text, \
                 translate_document, glossary, voice, write, style_rules, translation_memory)."
            )));
        }
    }
    Ok(Json(table.into_json()))
}

/// Whether the style rules have rules for a target language.
fn style_rules_for(code: &str) -> bool {
    let tag = tolk_lang::bcp47(code);
    tolk_style::language::ROOTS.contains(&tolk_lang::primary(&tag))
        || tolk_style::language::VARIANTS.contains(&tag.as_str())
}
