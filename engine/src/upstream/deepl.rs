//! An upstream speaking the DeepL wire format (a paid DeepL account, or
//! another Tolk): `POST {url}/v2/translate` with `DeepL-Auth-Key`.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    Gate, HttpEngineConfig, client, deepl_code, parse_pairs, status_error, transport_error,
};
use crate::{Engine, EngineError, Feature, Pair, TagHandling, TranslateOptions};

/// Texts per upstream request (DeepL accepts 50).
const BATCH: usize = 50;

/// Targets with formality support at DeepL (bases and variants).
const FORMALITY_TARGETS: &[&str] = &[
    "DE", "ES", "ES-419", "FR", "IT", "JA", "NL", "PL", "PT-BR", "PT-PT", "PT", "RU",
];

/// Targets (bases) that accept custom instructions at DeepL.
const INSTRUCTION_TARGETS: &[&str] = &["DE", "EN", "ES", "FR", "IT", "JA", "KO", "ZH"];

/// The DeepL-wire upstream engine.
pub struct DeeplEngine {
    config: HttpEngineConfig,
    pairs: Vec<Pair>,
    http: reqwest::Client,
    gate: Gate,
}

#[derive(Deserialize)]
struct Answer {
    translations: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    text: String,
}

impl DeeplEngine {
    /// An engine for `config` (`pairs` must be listed).
    pub fn new(config: HttpEngineConfig) -> Result<Self, EngineError> {
        let pairs = parse_pairs("deepl", &config.pairs)?;
        if pairs.is_empty() {
            return Err(EngineError::Failed(
                "deepl: no pairs configured (TOLK_DEEPL_PAIRS)".into(),
            ));
        }
        Ok(Self {
            http: client(config.timeout)?,
            gate: Gate::new("deepl", config.concurrency, config.queue),
            pairs,
            config,
        })
    }

    async fn call(
        &self,
        pair: &Pair,
        texts: &[String],
        tags: TagHandling,
        options: &TranslateOptions,
    ) -> Result<Vec<String>, EngineError> {
        let mut body = json!({
            "text": texts,
            "source_lang": deepl_code(&pair.source),
            "target_lang": deepl_code(&pair.target),
        });
        if tags == TagHandling::Xml {
            body["tag_handling"] = json!("xml");
            // Segments are already cut at the splitting tags.
            body["outline_detection"] = json!(false);
        }
        if self.supports(pair, Feature::Formality) && options.formality.wants_formal().is_some() {
            body["formality"] = json!(options.formality.as_str());
        }
        if let Some(c) = &options.context {
            body["context"] = json!(c);
        }
        let instructions = instructions(options, self.supports(pair, Feature::CustomInstructions));
        if !instructions.is_empty() {
            body["custom_instructions"] = json!(instructions);
        }
        if let Some(m) = &options.model_type {
            body["model_type"] = json!(m);
        }
        let _turn = self.gate.enter().await?;
        let mut req = self
            .http
            .post(format!("{}/v2/translate", self.config.base()))
            .json(&body);
        if let Some(key) = &self.config.api_key {
            req = req.header("Authorization", format!("DeepL-Auth-Key {key}"));
        }
        let res = req.send().await.map_err(|e| transport_error("deepl", &e))?;
        let status = res.status().as_u16();
        let text = res.text().await.map_err(|e| transport_error("deepl", &e))?;
        if status != 200 {
            return Err(status_error("deepl", status, &text));
        }
        let answer: Answer = serde_json::from_str(&text).map_err(|e| {
            EngineError::Failed(format!(
                "deepl: unexpected answer ({e}): {}",
                snippet(&text)
            ))
        })?;
        if answer.translations.len() != texts.len() {
            return Err(EngineError::Failed(format!(
                "deepl returned {} translations for {} texts",
                answer.translations.len(),
                texts.len()
            )));
        }
        Ok(answer.translations.into_iter().map(|t| t.text).collect())
    }
}

/// Most custom instructions DeepL accepts per request, and their longest length.
const MAX_INSTRUCTIONS: usize = 10;
const MAX_INSTRUCTION_CHARS: usize = 300;

/// The `custom_instructions` to send: the request's own, then as many of the
/// style rule list's as DeepL accepts (a list's own ids mean nothing to the
/// upstream, so its rules travel as instructions), when the target supports
/// them.
fn instructions(options: &TranslateOptions, supported: bool) -> Vec<String> {
    let mut out = options.custom_instructions.clone();
    if supported {
        out.extend(
            options
                .style_instructions
                .iter()
                .filter(|i| i.chars().count() <= MAX_INSTRUCTION_CHARS)
                .take(MAX_INSTRUCTIONS.saturating_sub(out.len()))
                .cloned(),
        );
    }
    out
}

fn snippet(text: &str) -> String {
    let v: Option<Value> = serde_json::from_str(text).ok();
    v.map_or_else(|| text.chars().take(200).collect(), |v| v.to_string())
}

#[async_trait]
impl Engine for DeeplEngine {
    fn name(&self) -> &str {
        "deepl"
    }

    fn pairs(&self) -> Vec<Pair> {
        self.pairs.clone()
    }

    fn supports(&self, pair: &Pair, feature: Feature) -> bool {
        let code = deepl_code(&pair.target);
        let base = tolk_lang::deepl_base(&code);
        match feature {
            Feature::Formality => {
                FORMALITY_TARGETS.contains(&code.as_str())
                    || FORMALITY_TARGETS.contains(&base.as_str())
            }
            Feature::CustomInstructions => INSTRUCTION_TARGETS.contains(&base.as_str()),
        }
    }

    async fn translate(
        &self,
        pair: &Pair,
        texts: Vec<String>,
        tags: TagHandling,
        options: &TranslateOptions,
    ) -> Result<Vec<String>, EngineError> {
        let calls = texts
            .chunks(BATCH)
            .map(|chunk| self.call(pair, chunk, tags, options));
        let outs = futures::future::try_join_all(calls).await?;
        Ok(outs.into_iter().flatten().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn style_instructions_fill_the_free_slots() {
        let options = TranslateOptions {
            custom_instructions: vec!["Own.".into(); 8],
            style_instructions: vec!["a".into(), "x".repeat(301), "b".into(), "c".into()],
            ..Default::default()
        };
        let out = instructions(&options, true);
        assert_eq!(out.len(), MAX_INSTRUCTIONS);
        assert_eq!(
            &out[8..],
            ["a", "b"],
            "too long ones skipped, at most 10 in all"
        );
        assert_eq!(
            instructions(&options, false).len(),
            8,
            "unsupported target: own only"
        );
    }
}
