//! Style rule lists (`/v3/style_rules`), pure of HTTP and storage.
//!
//! * [`catalogue`]: every configurable rule of DeepL's `ConfiguredRules`
//!   schema (category → rule → allowed options), to validate what clients send.
//! * [`language`]: the languages a list may have and the matching rule of the
//!   spec: a list for a root language (`en`) applies to every variant of it
//!   (`EN-US`, `EN-GB`); a list for a variant (`en-GB`) only to that variant.
//! * [`StyleRules::apply`]: the rules Tolk applies itself, deterministically,
//!   after any engine: number separators and percentages ([`numbers`]), dates
//!   and times ([`dates`]), quotation marks, apostrophes, ellipses and the
//!   space before `? ! : ;` ([`punctuation`]). Markup is respected: only
//!   character data changes ([`text`]).
//! * [`StyleRules::instructions`]: every configured rule and custom
//!   instruction in words, for engines driven by a language model.
//!
//! ```
//! use std::collections::BTreeMap;
//! use tolk_style::StyleRules;
//!
//! let mut rules = StyleRules::new("fr");
//! rules.set("numbers", "decimal_separator", "use_comma_as_decimal_separator");
//! rules.set("punctuation", "spacing_and_punctuation", "use_regular_space");
//! assert_eq!(rules.apply("Prix: 3.5 euros!", false, None), "Prix\u{a0}: 3,5 euros\u{a0}!");
//! ```

#![deny(missing_docs)]

pub mod catalogue;
pub mod dates;
pub mod language;
pub mod numbers;
pub mod punctuation;
pub mod text;

use std::collections::BTreeMap;

/// A problem with a style rule list as given by a client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StyleError {
    /// The configured rules are not an object of categories of rules.
    #[error("{0}")]
    Invalid(String),
}

/// The rules of one list, as applied to a translation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StyleRules {
    /// The list's language (`fr`, `en-GB`).
    pub language: String,
    /// Category → rule → chosen option (validated against the [`catalogue`]).
    pub configured: BTreeMap<String, BTreeMap<String, String>>,
    /// The list's custom instructions.
    pub custom_instructions: Vec<Instruction>,
}

/// One custom instruction of a list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Instruction {
    /// What the engine is told.
    pub prompt: String,
    /// Lower-case base code of the source language it is meant for; `None`
    /// for every source.
    pub source_language: Option<String>,
}

impl StyleRules {
    /// An empty list for `language`.
    pub fn new(language: &str) -> Self {
        Self {
            language: language.to_owned(),
            ..Default::default()
        }
    }

    /// The rules of a stored list: `configured` is the `configured_rules`
    /// object and `instructions` the `custom_instructions` array (objects
    /// with a `prompt`). Rules the catalogue does not know are dropped.
    pub fn from_json(
        language: &str,
        configured: &serde_json::Value,
        instructions: &serde_json::Value,
    ) -> Self {
        let configured = match configured {
            serde_json::Value::Object(cats) => cats
                .iter()
                .filter_map(|(cat, rules)| {
                    let known = catalogue::catalogue().get(cat)?;
                    let rules: BTreeMap<String, String> = rules
                        .as_object()?
                        .iter()
                        .filter(|(r, _)| known.contains_key(*r))
                        .filter_map(|(r, o)| Some((r.clone(), o.as_str()?.to_owned())))
                        .collect();
                    Some((cat.clone(), rules))
                })
                .collect(),
            _ => BTreeMap::new(),
        };
        let custom_instructions = instructions
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| {
                        Some(Instruction {
                            prompt: i.get("prompt")?.as_str()?.to_owned(),
                            source_language: i
                                .get("source_language")
                                .and_then(serde_json::Value::as_str)
                                .map(language::base),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            language: language.to_owned(),
            configured,
            custom_instructions,
        }
    }

    /// Sets one rule (no validation; see [`catalogue::validate`]).
    pub fn set(&mut self, category: &str, rule: &str, option: &str) {
        self.configured
            .entry(category.to_owned())
            .or_default()
            .insert(rule.to_owned(), option.to_owned());
    }

    /// The chosen option of a rule, if configured.
    pub fn option(&self, category: &str, rule: &str) -> Option<&str> {
        self.configured
            .get(category)
            .and_then(|c| c.get(rule))
            .map(String::as_str)
    }

    /// Lower-case base of the list's language (`en` for `en-GB`).
    pub fn base(&self) -> String {
        language::base(&self.language)
    }

    /// Applies the deterministic rules to one translated text. With `markup`
    /// the text is XML (tags and entities); only its character data changes.
    /// `source_base` (lower-case base code of the source language) decides
    /// ambiguous numeric dates such as `03/04/2024`: month first for English
    /// sources, day first otherwise.
    pub fn apply(&self, text: &str, markup: bool, source_base: Option<&str>) -> String {
        if self.configured.is_empty() {
            return text.to_owned();
        }
        text::map_character_data(text, markup, |plain| {
            let s = dates::apply(plain, self, source_base);
            let s = numbers::apply(&s, self);
            punctuation::apply(&s, self)
        })
    }

    /// The list in words for a language model: one line per configured rule,
    /// then the custom instructions meant for `source_base` (lower-case base
    /// code; `None` when the source is not known yet: all of them).
    pub fn instructions(&self, source_base: Option<&str>) -> Vec<String> {
        let mut out = Vec::new();
        for (category, rules) in &self.configured {
            for (rule, option) in rules {
                out.push(format!(
                    "Style rule ({}, {}): {}.",
                    words(category),
                    words(rule),
                    words(option)
                ));
            }
        }
        out.extend(
            self.custom_instructions
                .iter()
                .filter(|i| match (&i.source_language, source_base) {
                    (Some(l), Some(s)) => l.eq_ignore_ascii_case(s),
                    _ => true,
                })
                .map(|i| i.prompt.clone()),
        );
        out
    }
}

/// `use_comma_as_decimal_separator` → `use comma as decimal separator`.
fn words(s: &str) -> String {
    s.replace('_', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_describe_rules_and_prompts() {
        let mut r = StyleRules::new("en");
        r.set("punctuation", "serial_comma", "use");
        r.custom_instructions.push(Instruction {
            prompt: "Write for engineers.".into(),
            source_language: None,
        });
        r.custom_instructions.push(Instruction {
            prompt: "Keep German compounds.".into(),
            source_language: Some("de".into()),
        });
        assert_eq!(
            r.instructions(Some("en")),
            [
                "Style rule (punctuation, serial comma): use.",
                "Write for engineers."
            ]
        );
        assert_eq!(r.instructions(Some("de")).len(), 3);
        assert_eq!(r.instructions(None).len(), 3);
    }

    #[test]
    fn from_stored_json() {
        let r = StyleRules::from_json(
            "fr",
            &serde_json::json!({"numbers": {"decimal_separator": "use_comma_as_decimal_separator", "bogus": "x"}, "nope": {}}),
            &serde_json::json!([{"id": "1", "label": "l", "prompt": "Be brief."}]),
        );
        assert_eq!(
            r.option("numbers", "decimal_separator"),
            Some("use_comma_as_decimal_separator")
        );
        assert_eq!(r.configured.len(), 1);
        assert_eq!(r.custom_instructions[0].prompt, "Be brief.");
        assert_eq!(r.apply("1.5", false, None), "1,5");
    }

    #[test]
    fn markup_tags_are_boundaries_and_stay_untouched() {
        let mut r = StyleRules::new("es");
        r.set(
            "numbers",
            "decimal_separator",
            "use_comma_as_decimal_separator",
        );
        r.set("punctuation", "quotation_mark", "use_guillemets");
        assert_eq!(
            r.apply(
                r#"<p title="1.5 "x"">It is <b>2.5</b> &amp; "<i>ok</i>"</p>"#,
                true,
                None
            ),
            r#"<p title="1.5 "x"">It is <b>2,5</b> &amp; «<i>ok</i>»</p>"#
        );
    }

    #[test]
    fn empty_list_changes_nothing() {
        let r = StyleRules::new("fr");
        assert_eq!(r.apply("a \"b\" 1.5", false, None), "a \"b\" 1.5");
    }
}
