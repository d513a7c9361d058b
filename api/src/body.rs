//! Reading request bodies: one size limit per kind of operation, one test of
//! the Content-Type, one 413, and the NUL check of stored text. Parameters of
//! bodies DeepL accepts as JSON or as `application/x-www-form-urlencoded` are
//! read by [`crate::params`].
//!
//! Handlers take their body through an extractor that carries its limit in
//! its type ([`FormOrJson`], [`Object`], [`JsonBody`], with the aliases
//! [`TextParams`], [`GlossaryBody`], [`StyleRulesBody`], [`EvaluationBody`],
//! [`JobBody`], [`AdminBody`]),
//! so a route's limit is read from its signature and every refusal is the same
//! `{"message": …}` answer.

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request};
use axum::http::HeaderMap;
use axum::http::header::CONTENT_TYPE;
use serde_json::{Map, Value};

use crate::ApiError;
use crate::params::Params;

/// Largest body of the text operations (`/v2/translate`, `/v2/write/*`,
/// document status and download): DeepL's 128 KiB.
pub const TEXT_BODY_BYTES: usize = 128 * 1024;
/// Largest glossary body (entries included).
pub const GLOSSARY_BODY_BYTES: usize = 32 * 1024 * 1024;
/// Style rule lists (their rules and custom instructions: a full list is well
/// under a megabyte; the room beyond lets a field that is too long be
/// answered 400 naming it, as the interface documents no 413 here).
pub const STYLE_RULES_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Largest body that creates a voice or translation memory job (its options
/// and the file's description, not the file): room for a field that is too
/// long to be answered 400 naming it, as those operations document no 413.
pub const JOB_BODY_BYTES: usize = 2 * 1024 * 1024;
/// Largest body of the admin API (a key's id, label and limits): room for a
/// field that is too long to be answered 400 naming it, as the admin
/// operations document no 413.
pub const ADMIN_BODY_BYTES: usize = 2 * 1024 * 1024;
/// Largest quality evaluation body (its segments).
pub const EVALUATION_BODY_BYTES: usize = 48 * 1024 * 1024;

/// DeepL parameters of a body of at most `LIMIT` bytes, JSON or form
/// ([`Params::read`]).
#[derive(Debug)]
pub struct FormOrJson<const LIMIT: usize>(pub Params);

impl<S: Send + Sync, const LIMIT: usize> FromRequest<S> for FormOrJson<LIMIT> {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        let (parts, body) = req.into_parts();
        Params::read(&parts.headers, body, LIMIT).await.map(Self)
    }
}

/// A body of at most `LIMIT` bytes read as one object: a JSON object, or a
/// form's keys once each ([`Params::into_object`]).
#[derive(Debug)]
pub struct Object<const LIMIT: usize>(pub Map<String, Value>);

impl<S: Send + Sync, const LIMIT: usize> FromRequest<S> for Object<LIMIT> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let FormOrJson(params) = FormOrJson::<LIMIT>::from_request(req, state).await?;
        params.into_object().map(Self)
    }
}

/// A JSON body of at most `LIMIT` bytes: another Content-Type, invalid JSON
/// or a NUL character in a string is a 400.
#[derive(Debug)]
pub struct JsonBody<const LIMIT: usize>(pub Value);

impl<S: Send + Sync, const LIMIT: usize> FromRequest<S> for JsonBody<LIMIT> {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        let (parts, body) = req.into_parts();
        if !is_json(&parts.headers) {
            return Err(ApiError::bad(
                "The request body must be JSON (Content-Type: application/json).",
            ));
        }
        json(&read(body, LIMIT).await?).map(Self)
    }
}

/// A JSON body as an object (anything else is a 400).
pub fn object(value: Value) -> Result<Map<String, Value>, ApiError> {
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(ApiError::bad("Invalid JSON body: expected an object.")),
    }
}

/// Parses a JSON body: invalid JSON, or a NUL character in a string or key
/// ([`reject_nul`]), is a 400.
pub fn json(bytes: &[u8]) -> Result<Value, ApiError> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::bad(format!("Invalid JSON body: {e}")))?;
    reject_nul(&value)?;
    Ok(value)
}

/// The parameters of the text operations (128 KiB).
pub type TextParams = FormOrJson<TEXT_BODY_BYTES>;
/// A glossary as one object (32 MiB).
pub type GlossaryBody = Object<GLOSSARY_BODY_BYTES>;
/// A style rule list, JSON only (4 MiB).
pub type StyleRulesBody = JsonBody<STYLE_RULES_BODY_BYTES>;
/// A quality evaluation, JSON only (48 MiB).
pub type EvaluationBody = JsonBody<EVALUATION_BODY_BYTES>;
/// An admin API body as one object (2 MiB; an empty body is `{}`).
pub type AdminBody = Object<ADMIN_BODY_BYTES>;
/// The JSON bodies that create a voice or translation memory job (2 MiB).
pub type JobBody = JsonBody<JOB_BODY_BYTES>;

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

/// The answer to a multipart body axum could not read: the one 413 naming
/// `what` and its `limit` when it is too large, else a 400 with the cause.
pub fn multipart_error(
    e: axum::extract::multipart::MultipartError,
    what: &str,
    limit: usize,
) -> ApiError {
    unread(e.status(), what, limit, || {
        format!("Invalid multipart body: {}", e.body_text())
    })
}

/// [`multipart_error`] for a raw body (`Bytes`).
pub fn bytes_error(
    e: axum::extract::rejection::BytesRejection,
    what: &str,
    limit: usize,
) -> ApiError {
    unread(e.status(), what, limit, || e.body_text())
}

fn unread(
    status: axum::http::StatusCode,
    what: &str,
    limit: usize,
    cause: impl FnOnce() -> String,
) -> ApiError {
    if status == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::too_large(what, limit)
    } else {
        ApiError::bad(cause())
    }
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

    fn request(content_type: &str, body: &str) -> Request {
        Request::builder()
            .header(CONTENT_TYPE, content_type)
            .body(Body::from(body.to_owned()))
            .expect("a request")
    }

    fn status(e: ApiError) -> u16 {
        use axum::response::IntoResponse;
        e.into_response().status().as_u16()
    }

    /// Each extractor reads at most its type's limit (413 beyond, the same
    /// answer everywhere), and JSON-only bodies refuse other types.
    #[tokio::test]
    async fn extractors_apply_the_limit_of_their_type() {
        let form = request("application/x-www-form-urlencoded", "text=a&text=b");
        let FormOrJson(params) = FormOrJson::<64>::from_request(form, &())
            .await
            .expect("form");
        assert_eq!(params.texts().expect("texts"), ["a", "b"]);
        let big = request(
            "application/json",
            &format!("{{\"a\":\"{}\"}}", "x".repeat(64)),
        );
        let e = FormOrJson::<64>::from_request(big, &())
            .await
            .expect_err("too large");
        assert_eq!(status(e), 413);
        let big = request(
            "application/json",
            &format!("{{\"a\":\"{}\"}}", "x".repeat(64)),
        );
        assert!(JsonBody::<128>::from_request(big, &()).await.is_ok());
        let e = JsonBody::<128>::from_request(request("text/plain", "{}"), &())
            .await
            .expect_err("not JSON");
        assert_eq!(status(e), 400);
        assert!(message(e_json("[1]").await).contains("expected an object"));
        let Object(map) = Object::<64>::from_request(request("application/json", "{\"n\":1}"), &())
            .await
            .expect("an object");
        assert_eq!(map["n"], 1);
    }

    async fn e_json(body: &str) -> ApiError {
        let JsonBody(value) = JsonBody::<64>::from_request(request("application/json", body), &())
            .await
            .expect("JSON");
        object(value).expect_err("not an object")
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
