//! Request parameters, whatever their encoding: the one reader of the DeepL
//! operations' bodies.
//!
//! A body is a JSON object or an `application/x-www-form-urlencoded` form (by
//! the Content-Type, a form when there is none), also when it comes with a
//! GET, as DeepL's clients send `GET /v2/languages`. Both are read into one
//! [`Params`] map, so that every option is validated the same way whatever the
//! encoding:
//!
//! - repeated form keys (`text=a&text=b`) keep their order;
//! - form keys in bracket or dot notation (`dictionaries[0][source_lang]`,
//!   `dictionaries[0].source_lang`, `a.b`) build the nested value a JSON body
//!   would carry (indexes from 0 without gaps, at most [`MAX_INDEX`]);
//! - a NUL character anywhere is a 400 naming the field (PostgreSQL cannot
//!   store it);
//! - every rejection is the JSON `{"message": …}` error with its status.

use std::collections::{BTreeMap, HashMap};

use axum::body::Body;
use axum::http::HeaderMap;
use serde_json::{Map, Value};

use crate::ApiError;

/// Largest index accepted in a form key's notation (`a[999]`).
pub const MAX_INDEX: usize = 999;

/// One parameter as sent.
#[derive(Debug, Clone, PartialEq)]
enum Field {
    /// A member of a JSON object, or a nested value of form keys in notation.
    Value(Value),
    /// Every value of a plain form key, in order.
    Form(Vec<String>),
}

/// The parameters of a request body.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params {
    fields: HashMap<String, Field>,
    json: bool,
}

impl Params {
    /// Reads a body of at most `limit` bytes (413 beyond) and parses it by the
    /// Content-Type in `headers`. An empty or blank body has no parameters.
    pub async fn read(headers: &HeaderMap, body: Body, limit: usize) -> Result<Self, ApiError> {
        let bytes = crate::body::read(body, limit).await?;
        let json = crate::body::is_json(headers);
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self {
                json,
                ..Self::default()
            });
        }
        Self::parse(&bytes, json)
    }

    /// Parses a JSON object (`json`) or form pairs.
    pub fn parse(bytes: &[u8], json: bool) -> Result<Self, ApiError> {
        if json {
            let map = crate::body::object(crate::body::json(bytes)?)?;
            let fields = map.into_iter().map(|(k, v)| (k, Field::Value(v))).collect();
            return Ok(Self { fields, json });
        }
        let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(bytes)
            .map_err(|e| ApiError::bad(format!("Invalid form body: {e}")))?;
        Self::from_pairs(pairs)
    }

    /// Parameters from decoded form pairs (a query string's, or a form body's).
    pub fn from_pairs(pairs: Vec<(String, String)>) -> Result<Self, ApiError> {
        crate::body::reject_nul_pairs(&pairs)?;
        let mut fields: HashMap<String, Field> = HashMap::new();
        let mut nested: BTreeMap<String, Node> = BTreeMap::new();
        for (k, v) in pairs {
            match notation(&k)? {
                None => match fields.entry(k).or_insert_with(|| Field::Form(Vec::new())) {
                    Field::Form(values) => values.push(v),
                    Field::Value(_) => {}
                },
                Some((root, path)) => nested
                    .entry(root)
                    .or_insert_with(Node::branch)
                    .insert(&k, &path, v)?,
            }
        }
        for (root, node) in nested {
            if fields.contains_key(&root) {
                return Err(ApiError::bad(format!(
                    "Parameter '{root}' is given both plainly and in notation."
                )));
            }
            fields.insert(root.clone(), Field::Value(node.into_value(&root)?));
        }
        Ok(Self {
            fields,
            json: false,
        })
    }

    /// Whether the body was JSON.
    pub fn is_json(&self) -> bool {
        self.json
    }

    /// Whether `name` was sent at all (even as null).
    pub fn contains(&self, name: &str) -> bool {
        self.fields.contains_key(name)
    }

    /// `name` as a JSON value: a JSON member as sent, a form key's single
    /// value as a string (several as an array of strings), form keys in
    /// notation as their nested value; `None` when absent.
    pub fn value(&self, name: &str) -> Option<Value> {
        match self.fields.get(name)? {
            Field::Value(v) => Some(v.clone()),
            Field::Form(values) => match values.as_slice() {
                [v] => Some(Value::String(v.clone())),
                vs => Some(Value::Array(
                    vs.iter().cloned().map(Value::String).collect(),
                )),
            },
        }
    }

    /// A single string, untrimmed; `None` when absent or null.
    pub fn raw_string(&self, name: &str) -> Result<Option<String>, ApiError> {
        match self.fields.get(name) {
            None | Some(Field::Value(Value::Null)) => Ok(None),
            Some(Field::Value(Value::String(s))) => Ok(Some(s.clone())),
            Some(Field::Value(Value::Number(n))) => Ok(Some(n.to_string())),
            Some(Field::Value(_)) => Err(ApiError::bad(format!(
                "Value for '{name}' must be a string."
            ))),
            Some(Field::Form(values)) => match values.as_slice() {
                [] => Ok(None),
                [v] => Ok(Some(v.clone())),
                _ => Err(ApiError::bad(format!(
                    "Parameter '{name}' may be given only once."
                ))),
            },
        }
    }

    /// A single string, trimmed; `None` when absent, null or empty.
    pub fn string(&self, name: &str) -> Result<Option<String>, ApiError> {
        Ok(self
            .raw_string(name)?
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty()))
    }

    /// A boolean: JSON `true`/`false`, or `1`/`0`/`true`/`false` as text.
    pub fn bool(&self, name: &str) -> Result<Option<bool>, ApiError> {
        let invalid = || {
            ApiError::bad(format!(
                "Value for '{name}' must be a boolean (true/false or 1/0)."
            ))
        };
        if let Some(Field::Value(Value::Bool(b))) = self.fields.get(name) {
            return Ok(Some(*b));
        }
        match self.string(name).map_err(|_| invalid())? {
            None => Ok(None),
            Some(v) => match v.to_ascii_lowercase().as_str() {
                "1" | "true" => Ok(Some(true)),
                "0" | "false" => Ok(Some(false)),
                _ => Err(invalid()),
            },
        }
    }

    /// Strings: a JSON array of strings, or every value of a form key in
    /// order (also one in notation, `name[0]=…`); `None` when absent or null.
    pub fn strings(&self, name: &str) -> Result<Option<Vec<String>>, ApiError> {
        let invalid = || ApiError::bad(format!("Value for '{name}' must be an array of strings."));
        match self.fields.get(name) {
            None | Some(Field::Value(Value::Null)) => Ok(None),
            Some(Field::Value(Value::Array(items))) => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned).ok_or_else(invalid))
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(Field::Value(_)) => Err(invalid()),
            Some(Field::Form(values)) => Ok(Some(values.clone())),
        }
    }

    /// The texts of `/v2/translate` and `/v2/write/*`: the `text` parameter's
    /// strings, at least one.
    pub fn texts(&self) -> Result<Vec<String>, ApiError> {
        let texts = self
            .strings("text")?
            .ok_or_else(|| ApiError::bad("Parameter 'text' is required.".to_owned()))?;
        if texts.is_empty() {
            return Err(ApiError::bad(
                "Parameter 'text' must contain at least one text.".to_owned(),
            ));
        }
        Ok(texts)
    }

    /// A list of names: a JSON array of strings (or one comma-separated
    /// string), or form values, each comma-separated. Empty entries are dropped.
    pub fn name_list(&self, name: &str) -> Result<Vec<String>, ApiError> {
        let raw = match self.fields.get(name) {
            Some(Field::Value(Value::String(s))) => vec![s.clone()],
            _ => self.strings(name).map_err(|_| {
                ApiError::bad(format!(
                    "Value for '{name}' must be an array of strings or a comma-separated string."
                ))
            })?
            .unwrap_or_default(),
        };
        Ok(raw
            .iter()
            .flat_map(|v| v.split(','))
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
            .collect())
    }

    /// A string that must be one of `allowed` (any case).
    pub fn choice(
        &self,
        name: &str,
        allowed: &'static [&'static str],
    ) -> Result<Option<&'static str>, ApiError> {
        match self.string(name)? {
            None => Ok(None),
            Some(v) => allowed
                .iter()
                .find(|a| a.eq_ignore_ascii_case(&v))
                .copied()
                .map(Some)
                .ok_or_else(|| {
                    ApiError::bad(format!(
                        "Value for '{name}' not supported: '{v}' (allowed: {}).",
                        allowed.join(", ")
                    ))
                }),
        }
    }

    /// The parameters as one JSON object: form keys given once become strings
    /// (a repeated one is a 400), keys in notation their nested values.
    pub fn into_object(self) -> Result<Map<String, Value>, ApiError> {
        let mut out = Map::new();
        for (k, field) in self.fields {
            let v = match field {
                Field::Value(v) => v,
                Field::Form(mut values) => {
                    if values.len() != 1 {
                        return Err(ApiError::bad(format!(
                            "Parameter '{k}' may be given only once."
                        )));
                    }
                    Value::String(values.remove(0))
                }
            };
            out.insert(k, v);
        }
        Ok(out)
    }

    /// These parameters with the query's on top (the query wins).
    pub fn under_query(mut self, query: Params) -> Self {
        self.fields.extend(query.fields);
        self
    }
}

/// The parameters of a text-sized body (at most
/// [`crate::body::TEXT_BODY_BYTES`]), as an extractor.
/// One step of a key in notation.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Index(usize),
    Key(String),
}

/// Splits `a[0][b]` / `a[0].b` / `a.b` into the root and its steps; `None`
/// for a plain key.
fn notation(key: &str) -> Result<Option<(String, Vec<Step>)>, ApiError> {
    let Some(first) = key.find(['[', '.']) else {
        return Ok(None);
    };
    let invalid = || ApiError::bad(format!("Invalid form field '{key}'."));
    let root = &key[..first];
    if root.is_empty() {
        return Err(invalid());
    }
    let mut steps = Vec::new();
    let mut rest = &key[first..];
    while !rest.is_empty() {
        let (name, tail) = if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']').ok_or_else(invalid)?;
            (&r[..end], &r[end + 1..])
        } else if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['[', '.']).unwrap_or(r.len());
            (&r[..end], &r[end..])
        } else {
            return Err(invalid());
        };
        if name.is_empty() {
            return Err(invalid());
        }
        steps.push(match name.parse::<usize>() {
            Ok(i) if i <= MAX_INDEX => Step::Index(i),
            Ok(_) => {
                return Err(ApiError::bad(format!(
                    "Invalid form field '{key}': indexes go up to {MAX_INDEX}."
                )));
            }
            Err(_) if name.bytes().all(|b| b.is_ascii_digit()) => return Err(invalid()),
            Err(_) => Step::Key(name.to_owned()),
        });
        rest = tail;
    }
    Ok(Some((root.to_owned(), steps)))
}

/// A value being built from keys in notation.
#[derive(Debug)]
enum Node {
    Leaf(String),
    Branch(BTreeMap<Step, Node>),
}

impl Node {
    fn branch() -> Self {
        Self::Branch(BTreeMap::new())
    }

    fn insert(&mut self, key: &str, path: &[Step], value: String) -> Result<(), ApiError> {
        let conflict = || ApiError::bad(format!("Form field '{key}' is given more than once."));
        let Self::Branch(children) = self else {
            return Err(conflict());
        };
        let [step, rest @ ..] = path else {
            return Err(conflict());
        };
        if rest.is_empty() {
            if children.insert(step.clone(), Self::Leaf(value)).is_some() {
                return Err(conflict());
            }
            return Ok(());
        }
        children
            .entry(step.clone())
            .or_insert_with(Self::branch)
            .insert(key, rest, value)
    }

    /// The JSON value: a branch of indexes is an array (numbered from 0
    /// without gaps), one of names an object.
    fn into_value(self, path: &str) -> Result<Value, ApiError> {
        let children = match self {
            Self::Leaf(s) => return Ok(Value::String(s)),
            Self::Branch(children) => children,
        };
        let indexed = children.keys().all(|s| matches!(s, Step::Index(_)));
        if indexed {
            let mut items = Vec::with_capacity(children.len());
            for (n, (step, child)) in children.into_iter().enumerate() {
                if step != Step::Index(n) {
                    return Err(ApiError::bad(format!(
                        "Form fields {path}[N] must be numbered from 0 without gaps."
                    )));
                }
                items.push(child.into_value(&format!("{path}[{n}]"))?);
            }
            return Ok(Value::Array(items));
        }
        let mut map = Map::new();
        for (step, child) in children {
            let Step::Key(name) = step else {
                return Err(ApiError::bad(format!(
                    "Form fields below '{path}' mix indexes and names."
                )));
            };
            let v = child.into_value(&format!("{path}.{name}"))?;
            map.insert(name, v);
        }
        Ok(Value::Object(map))
    }
}

/// A string member of a body object (see [`Params::into_object`]); `None`
/// when absent or null, a 400 naming it for another type.
pub fn object_string<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a str>, ApiError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ApiError::BadRequest(format!(
            "Value for '{key}' must be a string."
        ))),
    }
}

/// A required string member of a body object.
pub fn object_required<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<&'a str, ApiError> {
    object_string(obj, key)?
        .ok_or_else(|| ApiError::BadRequest(format!("Missing required parameter '{key}'.")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(body: &str) -> Params {
        Params::parse(body.as_bytes(), false).unwrap_or_else(|e| panic!("{e}"))
    }

    fn refused(body: &str) -> String {
        match Params::parse(body.as_bytes(), false) {
            Ok(p) => panic!("accepted: {p:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn repeated_form_keys_keep_their_order() {
        let p = form("text=a&target_lang=ES&text=b%20c&text=");
        assert_eq!(
            p.strings("text").ok().flatten(),
            Some(vec!["a".to_owned(), "b c".to_owned(), String::new()])
        );
        assert!(p.raw_string("text").is_err(), "a single string expected");
        assert_eq!(
            p.string("target_lang").ok().flatten().as_deref(),
            Some("ES")
        );
    }

    #[test]
    fn brackets_and_dots_build_the_same_nested_value() {
        let brackets = form(
            "name=g&dictionaries%5B1%5D%5Bsource_lang%5D=de&dictionaries%5B0%5D%5Bsource_lang%5D=en&dictionaries%5B0%5D%5Bentries%5D=a%09b",
        );
        let dots = form(
            "name=g&dictionaries.1.source_lang=de&dictionaries%5B0%5D.source_lang=en&dictionaries%5B0%5D.entries=a%09b",
        );
        let expected = json!([
            {"source_lang": "en", "entries": "a\tb"},
            {"source_lang": "de"}
        ]);
        assert_eq!(brackets.value("dictionaries"), Some(expected.clone()));
        assert_eq!(dots.value("dictionaries"), Some(expected));
        assert_eq!(form("a.b.c=1").value("a"), Some(json!({"b": {"c": "1"}})));
    }

    #[test]
    fn notation_mistakes_are_refused_naming_the_field() {
        for (body, says) in [
            ("d%5B1%5D%5Bx%5D=a", "without gaps"),
            ("d%5Bx%5D%5B0%5D=a&d%5B0%5D=b", "mix indexes"),
            ("d%5B0%5D=a&d%5B0%5D=b", "more than once"),
            ("d%5B0%5D=a&d=b", "plainly and in notation"),
            ("d%5B1000%5D=a", "up to 999"),
            ("d%5B0=a", "Invalid form field"),
            ("%5B0%5D=a", "Invalid form field"),
            ("d..x=a", "Invalid form field"),
        ] {
            let m = refused(body);
            assert!(m.contains(says), "{body}: {m}");
        }
    }

    #[test]
    fn json_bodies_and_objects() {
        let p = Params::parse(br#"{"text":["a"],"n":3,"b":true}"#, true)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(p.is_json());
        assert_eq!(p.raw_string("n").ok().flatten().as_deref(), Some("3"));
        assert_eq!(p.bool("b").ok().flatten(), Some(true));
        assert!(Params::parse(b"[1]", true).is_err());
        assert!(Params::parse(b"{\"a\":\"x\\u0000\"}", true).is_err());
        let o = form("a=1&b%5B0%5D=x").into_object().unwrap_or_default();
        assert_eq!(Value::Object(o), json!({"a": "1", "b": ["x"]}));
        assert!(form("a=1&a=2").into_object().is_err());
    }

    #[test]
    fn lists_and_choices() {
        let p = form("tags=a,%20b&tags=c&mode=NoNewLines&flag=maybe");
        assert_eq!(
            p.name_list("tags").ok(),
            Some(vec!["a".into(), "b".into(), "c".into()])
        );
        assert_eq!(
            p.choice("mode", &["0", "1", "nonewlines"]).ok().flatten(),
            Some("nonewlines")
        );
        assert!(p.choice("flag", &["0", "1"]).is_err());
        assert!(p.bool("flag").is_err());
        let q = form("type=target");
        assert_eq!(
            form("type=source")
                .under_query(q)
                .string("type")
                .ok()
                .flatten()
                .as_deref(),
            Some("target")
        );
    }
}
