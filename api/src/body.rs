//! Reading request bodies: one size limit per kind of operation, one test of
//! the Content-Type, one 413, and the NUL check of stored text. Parameters of
//! bodies DeepL accepts as JSON or as `application/x-www-form-urlencoded` are
//! read by [`crate::params`].

use axum::body::{Body, Bytes};
use axum::http::HeaderMap;
use axum::http::header::CONTENT_TYPE;

use crate::ApiError;

/// Largest body of the text operations (`/v2/translate`, `/v2/write/*`,
/// document status and download): DeepL's 128 KiB.
pub const TEXT_BODY_BYTES: usize = 128 * 1024;
/// Largest glossary body (entries included).
pub const GLOSSARY_BODY_BYTES: usize = 32 * 1024 * 1024;
/// Style rule lists (their rules and custom instructions: a full list is well
/// under a megabyte; the room beyond lets a field that is too long be
/// answered 400 naming it, as the interface documents no 413 here).
pub const STYLE_RULES_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Largest quality evaluation body (its segments).
pub const EVALUATION_BODY_BYTES: usize = 48 * 1024 * 1024;

/// Whether the request's Content-Type says JSON (anything else, or none, is
/// read as a form where both are accepted).
pub fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            ct.trim_start()
                .to_ascii_lowercase()
                .starts_with("application/json")
        })
}

/// Reads a whole body of at most `limit` bytes; a larger one is a 413 that
/// names the limit.
pub async fn read(body: Body, limit: usize) -> Result<Bytes, ApiError> {
    axum::body::to_bytes(body, limit)
        .await
        .map_err(|_| ApiError::too_large("The request body", limit))
}

/// Refuses a JSON body with a NUL character (U+0000) in any string, key or
/// value: PostgreSQL cannot store one in text, so the request is answered 400
/// naming the field (`name`, `dictionaries[0].entries`) instead of failing when
/// stored.
pub fn reject_nul(value: &serde_json::Value) -> Result<(), ApiError> {
    nul_free(nul_path(vec![(String::new(), value)]))
}

/// [`reject_nul`] for a JSON object's members.
pub fn reject_nul_map(map: &serde_json::Map<String, serde_json::Value>) -> Result<(), ApiError> {
    let mut roots = Vec::new();
    if let Some(key) = members("", map, &mut roots) {
        return Err(nul_error(&key));
    }
    nul_free(nul_path(roots))
}

fn nul_free(path: Option<String>) -> Result<(), ApiError> {
    path.map_or(Ok(()), |p| Err(nul_error(&p)))
}

/// [`reject_nul`] for form pairs.
pub fn reject_nul_pairs(pairs: &[(String, String)]) -> Result<(), ApiError> {
    match pairs
        .iter()
        .find(|(k, v)| k.contains('\0') || v.contains('\0'))
    {
        None => Ok(()),
        Some((k, _)) => Err(nul_error(&k.replace('\0', "\\u0000"))),
    }
}

/// The 400 for a NUL character in `field`.
pub fn nul_error(field: &str) -> ApiError {
    ApiError::BadRequest(format!(
        "Value for '{field}' contains a NUL character (U+0000), which is not allowed."
    ))
}

/// Pushes the members of `map` (at `path`) onto `stack`; returns the name of a
/// key that holds a NUL, if one does.
fn members<'v>(
    path: &str,
    map: &'v serde_json::Map<String, serde_json::Value>,
    stack: &mut Vec<(String, &'v serde_json::Value)>,
) -> Option<String> {
    for (k, item) in map {
        if k.contains('\0') {
            return Some(k.replace('\0', "\\u0000"));
        }
        let name = if path.is_empty() {
            k.clone()
        } else {
            format!("{path}.{k}")
        };
        stack.push((name, item));
    }
    None
}

/// The path of the first string holding a NUL below the `(path, value)`
/// roots, walking without recursion (a JSON body nests at most 128 levels,
/// serde_json's limit, but the walk does not rely on it). A string at the
/// empty path is the body itself.
fn nul_path(mut stack: Vec<(String, &serde_json::Value)>) -> Option<String> {
    use serde_json::Value;
    while let Some((path, v)) = stack.pop() {
        match v {
            Value::String(s) if s.contains('\0') => {
                return Some(if path.is_empty() {
                    "body".to_owned()
                } else {
                    path
                });
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push((format!("{path}[{i}]"), item));
                }
            }
            Value::Object(map) => {
                if let Some(key) = members(&path, map, &mut stack) {
                    return Some(key);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(e: ApiError) -> String {
        e.to_string()
    }

    #[test]
    fn nul_characters_are_refused_naming_their_field() {
        assert!(reject_nul(&json!({"name": "ok", "n": 1, "list": ["a"]})).is_ok());
        let e = reject_nul(&json!({"name": "a\u{0}b"})).expect_err("NUL");
        assert!(message(e).contains("'name'"));
        let e = reject_nul(&json!({"dictionaries": [{"entries": "x"}, {"entries": "\u{0}"}]}))
            .expect_err("nested NUL");
        assert!(message(e).contains("'dictionaries[1].entries'"));
        let e = reject_nul(&json!({"a\u{0}": 1})).expect_err("NUL in a key");
        assert!(message(e).contains("a\\u0000"));
        let map = json!({"dictionaries": [{"entries": "\u{0}"}], "name": "n"});
        let e = reject_nul_map(map.as_object().expect("an object")).expect_err("member NUL");
        assert!(message(e).contains("'dictionaries[0].entries'"));
        assert!(reject_nul_pairs(&[("label".into(), "fine".into())]).is_ok());
        let e = reject_nul_pairs(&[("label".into(), "x\u{0}".into())]).expect_err("form NUL");
        assert!(message(e).contains("'label'"));
    }
}
