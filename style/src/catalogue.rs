//! The configurable rules: DeepL's `ConfiguredRules` schema (categories
//! `dates_and_times`, `formatting`, `numbers`, `punctuation`,
//! `spelling_and_grammar`, `style_and_tone`, `vocabulary`), extracted from the
//! interface description into `catalogue.json` (category → rule → options).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde_json::Value;

use crate::StyleError;

/// Category → rule → allowed options.
pub type Catalogue = BTreeMap<String, BTreeMap<String, Vec<String>>>;

static CATALOGUE: LazyLock<Catalogue> = LazyLock::new(|| {
    let raw: Value = serde_json::from_str(include_str!("catalogue.json")).unwrap_or(Value::Null);
    let mut out = Catalogue::new();
    if let Value::Object(cats) = raw {
        for (cat, rules) in cats {
            let entry = out.entry(cat).or_default();
            if let Value::Object(rules) = rules {
                for (rule, options) in rules {
                    let opts = options
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|o| o.as_str().map(str::to_owned))
                                .collect()
                        })
                        .unwrap_or_default();
                    entry.insert(rule, opts);
                }
            }
        }
    }
    out
});

/// The whole catalogue.
pub fn catalogue() -> &'static Catalogue {
    &CATALOGUE
}

/// Validates a `configured_rules` object: known categories, known rules,
/// allowed options. `null` is an empty set of rules.
pub fn validate(value: &Value) -> Result<BTreeMap<String, BTreeMap<String, String>>, StyleError> {
    let mut out = BTreeMap::new();
    let cats = match value {
        Value::Null => return Ok(out),
        Value::Object(c) => c,
        _ => {
            return Err(StyleError::Invalid(
                "Value for 'configured_rules' must be an object.".into(),
            ));
        }
    };
    for (cat, rules) in cats {
        let known = catalogue().get(cat).ok_or_else(|| {
            StyleError::Invalid(format!(
                "Unknown category '{cat}' in 'configured_rules' (allowed: {}).",
                catalogue().keys().cloned().collect::<Vec<_>>().join(", ")
            ))
        })?;
        let rules = match rules {
            Value::Null => continue,
            Value::Object(r) => r,
            _ => {
                return Err(StyleError::Invalid(format!(
                    "Value for 'configured_rules.{cat}' must be an object."
                )));
            }
        };
        let mut chosen = BTreeMap::new();
        for (rule, option) in rules {
            let options = known.get(rule).ok_or_else(|| {
                StyleError::Invalid(format!(
                    "Unknown rule '{rule}' in 'configured_rules.{cat}'."
                ))
            })?;
            let option = option.as_str().ok_or_else(|| {
                StyleError::Invalid(format!(
                    "Value for 'configured_rules.{cat}.{rule}' must be a string."
                ))
            })?;
            if !options.iter().any(|o| o == option) {
                return Err(StyleError::Invalid(format!(
                    "Value for 'configured_rules.{cat}.{rule}' not supported: '{option}' (allowed: {}).",
                    options.join(", ")
                )));
            }
            chosen.insert(rule.clone(), option.to_owned());
        }
        if !chosen.is_empty() {
            out.insert(cat.clone(), chosen);
        }
    }
    Ok(out)
}

/// The validated rules as a JSON object (for storage and responses).
pub fn to_json(rules: &BTreeMap<String, BTreeMap<String, String>>) -> Value {
    Value::Object(
        rules
            .iter()
            .map(|(c, r)| {
                (
                    c.clone(),
                    Value::Object(
                        r.iter()
                            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                            .collect(),
                    ),
                )
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn catalogue_has_the_seven_categories() {
        assert_eq!(catalogue().len(), 7);
        assert!(
            catalogue()["numbers"]["decimal_separator"]
                .contains(&"use_comma_as_decimal_separator".to_owned())
        );
    }

    #[test]
    fn validation_names_the_fault() {
        let ok = validate(&json!({"punctuation": {"apostrophe": "use_curly_apostrophes"}}));
        assert_eq!(
            ok.map(|r| to_json(&r)),
            Ok(json!({"punctuation": {"apostrophe": "use_curly_apostrophes"}}))
        );
        for (bad, needle) in [
            (json!([]), "'configured_rules'"),
            (json!({"colours": {}}), "'colours'"),
            (json!({"numbers": {"nope": "x"}}), "'nope'"),
            (
                json!({"numbers": {"decimal_separator": "use_dots"}}),
                "'use_dots'",
            ),
            (json!({"numbers": {"decimal_separator": 1}}), "string"),
            (json!({"numbers": 3}), "'configured_rules.numbers'"),
        ] {
            let Err(StyleError::Invalid(m)) = validate(&bad) else {
                panic!("accepted {bad}")
            };
            assert!(m.contains(needle), "{m}");
        }
        assert_eq!(validate(&Value::Null), Ok(BTreeMap::new()));
    }
}
