//! An OpenAI-compatible chat-completions server (llama.cpp, vLLM, Ollama,
//! …): one `POST {url}/chat/completions` per text. Formality, context and
//! custom instructions go into the system prompt.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::{
    Gate, HttpEngineConfig, client, display_name, parse_pairs, status_error, transport_error,
};
use crate::{Engine, EngineError, Feature, Pair, TagHandling, TranslateOptions};

/// The chat-completions engine.
pub struct OpenAiEngine {
    config: HttpEngineConfig,
    pairs: Vec<Pair>,
    http: reqwest::Client,
    gate: Gate,
}

#[derive(Deserialize)]
struct Answer {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: Message,
}

#[derive(Deserialize)]
struct Message {
    content: Option<String>,
}

/// The system prompt for one request.
pub(crate) fn prompt(pair: &Pair, tags: TagHandling, options: &TranslateOptions) -> String {
    let mut p = format!(
        "You are a translation engine. Translate the text of the user message from {} to {}. \
         Answer with the translation only, without quotes, notes or explanations. \
         Keep line breaks, leading and trailing spaces, numbers and names as they are.",
        display_name(&pair.source),
        display_name(&pair.target)
    );
    if tags == TagHandling::Xml {
        p.push_str(
            " The text is XML: keep every tag exactly as written (same names, attributes and \
             self-closing tags), around the translated words they belong to, and keep entities \
             such as &amp; escaped.",
        );
    }
    match options.formality.wants_formal() {
        Some(true) => p.push_str(" Use a formal register (polite forms of address)."),
        Some(false) => p.push_str(" Use an informal register (familiar forms of address)."),
        None => {}
    }
    if let Some(c) = &options.context {
        p.push_str("\n\nContext, for understanding only (do not translate it):\n");
        p.push_str(c);
    }
    if !options.custom_instructions.is_empty() {
        p.push_str("\n\nFollow these instructions:");
        for i in &options.custom_instructions {
            p.push_str("\n- ");
            p.push_str(i);
        }
    }
    if !options.style_instructions.is_empty() {
        p.push_str("\n\nFollow this style guide for the translation:");
        for i in &options.style_instructions {
            p.push_str("\n- ");
            p.push_str(i);
        }
    }
    p
}

/// The system prompt of a rephrasing request.
pub(crate) fn rephrase_prompt(lang: &crate::Lang, instructions: &[String]) -> String {
    let mut p = format!(
        "You are a writing assistant. Rewrite the text of the user message in {}, improving \
         clarity, grammar and flow while keeping its meaning, facts, numbers and names. \
         Answer with the rewritten text only, without quotes, notes or explanations.",
        display_name(lang)
    );
    if !instructions.is_empty() {
        p.push_str("\n\nFollow these instructions:");
        for i in instructions {
            p.push_str("\n- ");
            p.push_str(i);
        }
    }
    p
}

impl OpenAiEngine {
    /// An engine for `config` (`pairs` and `model` must be given).
    pub fn new(config: HttpEngineConfig) -> Result<Self, EngineError> {
        let pairs = parse_pairs("openai", &config.pairs)?;
        if pairs.is_empty() {
            return Err(EngineError::Failed(
                "openai: no pairs configured (TOLK_OPENAI_PAIRS)".into(),
            ));
        }
        if config.model.as_deref().is_none_or(str::is_empty) {
            return Err(EngineError::Failed(
                "openai: no model configured (TOLK_OPENAI_MODEL)".into(),
            ));
        }
        Ok(Self {
            http: client(config.timeout)?,
            gate: Gate::new("openai", config.concurrency, config.queue),
            pairs,
            config,
        })
    }

    async fn one(&self, system: &str, text: String) -> Result<String, EngineError> {
        if text.trim().is_empty() {
            return Ok(text);
        }
        let body = json!({
            "model": self.config.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": text},
            ],
        });
        let _turn = self.gate.enter().await?;
        let mut req = self
            .http
            .post(format!("{}/chat/completions", self.config.base()))
            .json(&body);
        if let Some(key) = &self.config.api_key {
            req = req.bearer_auth(key);
        }
        let res = req
            .send()
            .await
            .map_err(|e| transport_error("openai", &e))?;
        let status = res.status().as_u16();
        let body = res
            .text()
            .await
            .map_err(|e| transport_error("openai", &e))?;
        if status != 200 {
            return Err(status_error("openai", status, &body));
        }
        let answer: Answer = serde_json::from_str(&body)
            .map_err(|e| EngineError::Failed(format!("openai: unexpected answer: {e}")))?;
        answer
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.message.content)
            .map(|c| c.trim().to_owned())
            .ok_or_else(|| EngineError::Failed("openai: the answer has no message".into()))
    }
}

#[async_trait]
impl Engine for OpenAiEngine {
    fn name(&self) -> &str {
        "openai"
    }

    fn pairs(&self) -> Vec<Pair> {
        self.pairs.clone()
    }

    fn supports(&self, _pair: &Pair, feature: Feature) -> bool {
        matches!(feature, Feature::Formality | Feature::CustomInstructions)
    }

    async fn translate(
        &self,
        pair: &Pair,
        texts: Vec<String>,
        tags: TagHandling,
        options: &TranslateOptions,
    ) -> Result<Vec<String>, EngineError> {
        let system = prompt(pair, tags, options);
        let calls = texts.into_iter().map(|t| self.one(&system, t));
        futures::future::try_join_all(calls).await
    }

    /// A language model writes every language of its configured pairs.
    fn can_rephrase(&self, lang: &crate::Lang) -> bool {
        self.pairs
            .iter()
            .any(|p| p.source.base == lang.base || p.target.base == lang.base)
    }

    async fn rephrase(
        &self,
        lang: &crate::Lang,
        texts: Vec<String>,
        instructions: &[String],
    ) -> Result<Vec<String>, EngineError> {
        let system = rephrase_prompt(lang, instructions);
        let calls = texts.into_iter().map(|t| self.one(&system, t));
        futures::future::try_join_all(calls).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Formality, lang};

    #[test]
    fn prompt_carries_the_options() {
        let pair = Pair {
            id: "openai:EN-DE".into(),
            source: lang::parse_source("EN").unwrap(),
            target: lang::parse_target("DE").unwrap(),
        };
        let p = prompt(
            &pair,
            TagHandling::Xml,
            &TranslateOptions {
                formality: Formality::More,
                context: Some("A bank of a river.".into()),
                custom_instructions: vec!["Use short words.".into()],
                style_instructions: vec!["Style rule (punctuation, serial comma): use.".into()],
                ..Default::default()
            },
        );
        assert!(p.contains("from English to German"), "{p}");
        assert!(p.contains("formal register"), "{p}");
        assert!(p.contains("A bank of a river."), "{p}");
        assert!(p.contains("- Use short words."), "{p}");
        assert!(p.contains("XML"), "{p}");
        assert!(p.contains("style guide"), "{p}");
        assert!(
            p.ends_with("- Style rule (punctuation, serial comma): use."),
            "{p}"
        );
    }

    #[test]
    fn rephrase_prompt_names_the_language_and_instructions() {
        let en = lang::parse_target("EN-US").unwrap();
        let p = rephrase_prompt(&en, &["Use a friendly tone.".to_owned()]);
        assert!(p.contains("English"), "{p}");
        assert!(p.ends_with("- Use a friendly tone."), "{p}");
        assert!(!rephrase_prompt(&en, &[]).contains("instructions"));
    }
}
