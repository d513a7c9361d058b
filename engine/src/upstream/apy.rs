//! Apertium-APY (`apertium-apy`, Apertium's own HTTP server): one
//! `POST {url}/translate` per text; pairs from `GET {url}/listPairs`.
//! Plain text goes with `format=txt`, markup with APY's HTML deformatter.

use std::collections::HashMap;

use async_trait::async_trait;
use serde::Deserialize;

use super::{Gate, HttpEngineConfig, client, parse_pairs, status_error, transport_error};
use crate::{Engine, EngineError, Lang, Pair, TagHandling, TranslateOptions};

/// The Apertium-APY engine.
pub struct ApyEngine {
    config: HttpEngineConfig,
    pairs: Vec<Pair>,
    /// Pair id → APY `langpair` (`eng|spa`).
    langpairs: HashMap<String, String>,
    http: reqwest::Client,
    gate: Gate,
}

#[derive(Deserialize)]
struct ListPairs {
    #[serde(rename = "responseData")]
    data: Vec<ApyPair>,
}

#[derive(Deserialize)]
struct ApyPair {
    #[serde(rename = "sourceLanguage")]
    source: String,
    #[serde(rename = "targetLanguage")]
    target: String,
}

#[derive(Deserialize)]
struct Translated {
    #[serde(rename = "responseData")]
    data: TranslatedData,
}

#[derive(Deserialize)]
struct TranslatedData {
    #[serde(rename = "translatedText")]
    text: String,
}

impl ApyEngine {
    /// Connects to APY and lists its pairs (all of them, or those of
    /// `config.pairs` when given, as DeepL codes `EN:ES`).
    pub async fn connect(config: HttpEngineConfig) -> Result<Self, EngineError> {
        let http = client(config.timeout)?;
        let res = http
            .get(format!("{}/listPairs", config.base()))
            .send()
            .await
            .map_err(|e| transport_error("apy", &e))?;
        let status = res.status().as_u16();
        let body = res.text().await.map_err(|e| transport_error("apy", &e))?;
        if status != 200 {
            return Err(status_error("apy", status, &body));
        }
        let list: ListPairs = serde_json::from_str(&body)
            .map_err(|e| EngineError::Failed(format!("apy: unexpected /listPairs answer: {e}")))?;
        let wanted = parse_pairs("apy", &config.pairs)?;
        let mut pairs = Vec::new();
        let mut langpairs = HashMap::new();
        for p in list.data {
            let (Some(source), Some(target)) = (
                Lang::from_apertium(&p.source),
                Lang::from_apertium(&p.target),
            ) else {
                continue;
            };
            if source.deepl_base().is_none() || target.deepl_base().is_none() {
                continue;
            }
            if !wanted.is_empty()
                && !wanted
                    .iter()
                    .any(|w| w.source.base == source.base && w.target == target)
            {
                continue;
            }
            let id = format!("apy:{}-{}", p.source, p.target);
            if langpairs.contains_key(&id) {
                continue;
            }
            langpairs.insert(id.clone(), format!("{}|{}", p.source, p.target));
            pairs.push(Pair { id, source, target });
        }
        if pairs.is_empty() {
            return Err(EngineError::Failed(format!(
                "apy at {} offers none of the wanted pairs",
                config.url
            )));
        }
        tracing::info!(url = config.url, pairs = ?pairs.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(), "Apertium-APY pairs");
        Ok(Self {
            gate: Gate::new("apy", config.concurrency, config.queue),
            config,
            pairs,
            langpairs,
            http,
        })
    }

    async fn one(
        &self,
        langpair: &str,
        text: String,
        tags: TagHandling,
    ) -> Result<String, EngineError> {
        if text.trim().is_empty() {
            return Ok(text);
        }
        let format = match tags {
            TagHandling::None => "txt",
            TagHandling::Xml => "html",
        };
        let _turn = self.gate.enter().await?;
        let res = self
            .http
            .post(format!("{}/translate", self.config.base()))
            .form(&[
                ("langpair", langpair),
                ("q", text.as_str()),
                ("markUnknown", "no"),
                ("format", format),
            ])
            .send()
            .await
            .map_err(|e| transport_error("apy", &e))?;
        let status = res.status().as_u16();
        let body = res.text().await.map_err(|e| transport_error("apy", &e))?;
        if status != 200 {
            return Err(status_error("apy", status, &body));
        }
        let t: Translated = serde_json::from_str(&body)
            .map_err(|e| EngineError::Failed(format!("apy: unexpected answer: {e}")))?;
        // APY drops the input's surrounding whitespace; keep it.
        let lead = &text[..text.len() - text.trim_start().len()];
        let trail = &text[text.trim_end().len()..];
        Ok(format!("{lead}{}{trail}", t.data.text.trim()))
    }
}

#[async_trait]
impl Engine for ApyEngine {
    fn name(&self) -> &str {
        "apy"
    }

    fn pairs(&self) -> Vec<Pair> {
        self.pairs.clone()
    }

    async fn translate(
        &self,
        pair: &Pair,
        texts: Vec<String>,
        tags: TagHandling,
        _options: &TranslateOptions,
    ) -> Result<Vec<String>, EngineError> {
        let langpair = self
            .langpairs
            .get(&pair.id)
            .ok_or_else(|| EngineError::Failed(format!("apy has no pair {}", pair.id)))?;
        let calls = texts.into_iter().map(|t| self.one(langpair, t, tags));
        futures::future::try_join_all(calls).await
    }
}
