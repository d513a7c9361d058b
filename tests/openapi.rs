//! Conformance with the DeepL API's OpenAPI description
//! (`tests/data/deepl-openapi.json`, version 3.13.0).
//!
//! Every API process the suite starts ([`crate::support::World::start_api`]) is
//! reached through a [`Proxy`] that checks each answer against the documented
//! responses of its operation, as DeepL's mock server does with
//! `VALIDATE_RESPONSES`: the status code must be documented, a JSON body must
//! match the schema, any other body must be of a documented media type (or a
//! binary download). An answer that breaks the description is replaced by
//! status [`VIOLATION`] and a message naming the rule, so whatever the test
//! expected, it fails. Paths the description does not list (`/healthz`,
//! `/auth/…`, the voice service) pass through unchecked and unbuffered.
//!
//! Two readings of the description, each where it is at odds with itself or
//! with the interface Tolk implements:
//! - 503 and 504 are one status: the description documents "Resource
//!   currently unavailable" as 503 on some operations and as 504 on others;
//!   an operation documenting either accepts both.
//! - Style rule lists may have the variants `translation-service.md` gives
//!   them (a list for a variant applies only to that variant): `en-GB`,
//!   `en-US`, `es-419`, `zh-Hans`, `zh-Hant` join `StyleRuleLanguage`.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, LazyLock, Mutex};

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper::{Request, Response, StatusCode, header};
use hyper_util::rt::TokioIo;
use jsonschema::Validator;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};

/// Status of an answer that broke the description (not an HTTP status any
/// server sends, so no test expects it).
pub const VIOLATION: u16 = 555;

/// The description, with OpenAPI 3.0's `nullable` turned into JSON Schema.
pub struct Spec {
    doc: Value,
    validators: Mutex<HashMap<String, Arc<Validator>>>,
}

/// The one description, read once.
pub static SPEC: LazyLock<Spec> = LazyLock::new(|| {
    let text = include_str!("data/deepl-openapi.json");
    let mut doc: Value = serde_json::from_str(text).expect("tests/data/deepl-openapi.json");
    to_json_schema(&mut doc);
    if let Some(Value::Array(e)) = doc.pointer_mut("/components/schemas/StyleRuleLanguage/enum") {
        e.extend(tolk_style::language::VARIANTS.iter().map(|v| json!(v)));
    }
    Spec {
        doc,
        validators: Mutex::new(HashMap::new()),
    }
});

impl Spec {
    /// Checks one answer: `Ok` when it conforms (or the path is not described).
    pub fn check(
        &self,
        method: &str,
        path: &str,
        status: u16,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Result<(), String> {
        match self.operation(method, path) {
            Some(found) => self.check_answer(method, found, status, content_type, body),
            None => Ok(()),
        }
    }

    /// Checks one answer of the described operation `(template, operation)`
    /// ([`Spec::operation`]).
    fn check_answer(
        &self,
        method: &str,
        (template, operation): (&str, &Value),
        status: u16,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Result<(), String> {
        let what = format!("{} {template} → {status}", method.to_ascii_uppercase());
        let responses = &operation["responses"];
        let code = status.to_string();
        let range = format!("{}XX", status / 100);
        let unavailable = match status {
            503 => "504",
            504 => "503",
            _ => "",
        };
        let Some(response) = [code.as_str(), unavailable, range.as_str(), "default"]
            .iter()
            .filter(|k| !k.is_empty())
            .find_map(|k| responses.get(*k))
        else {
            let known: Vec<&String> = responses
                .as_object()
                .map(|o| o.keys().collect())
                .unwrap_or_default();
            return Err(format!(
                "{what}: status {status} is not documented (documented: {known:?}); body: {}",
                String::from_utf8_lossy(&body[..body.len().min(300)])
            ));
        };
        let response = self.resolve(response);
        let Some(content) = response.get("content").and_then(Value::as_object) else {
            return Ok(());
        };
        let media = content_type
            .and_then(|c| c.split(';').next())
            .map(|m| m.trim().to_ascii_lowercase())
            .unwrap_or_default();
        let Some(entry) = content.get(&media) else {
            let binary = content.values().any(|c| {
                let s = self.resolve(&c["schema"]);
                s["type"] == "string" && s["format"] == "binary"
            });
            // "The content type used in the response corresponds to the
            // document type."
            if binary && !media.is_empty() {
                return Ok(());
            }
            return Err(format!(
                "{what}: content type {media:?} is not documented (documented: {:?})",
                content.keys().collect::<Vec<_>>()
            ));
        };
        if !is_json(&media) {
            return Ok(());
        }
        let Some(schema) = entry.get("schema") else {
            return Ok(());
        };
        let instance: Value = serde_json::from_slice(body)
            .map_err(|e| format!("{what}: the body is not JSON ({e})"))?;
        let validator = self.validator(&format!("{template} {method} {code} {media}"), schema)?;
        let errors: Vec<String> = validator
            .iter_errors(&instance)
            .map(|e| format!("{} at {:?}", e, e.instance_path().as_str()))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{what}: the body breaks the schema: {}; body: {}",
                errors.join("; "),
                String::from_utf8_lossy(&body[..body.len().min(600)])
            ))
        }
    }

    /// The described operation answering `method path`: the template with the
    /// most literal segments wins (`/v3/languages/resources` over a parameter).
    fn operation(&self, method: &str, path: &str) -> Option<(&str, &Value)> {
        let path = path.split('?').next().unwrap_or(path);
        let parts: Vec<&str> = path.trim_end_matches('/').split('/').collect();
        let method = method.to_ascii_lowercase();
        self.doc["paths"]
            .as_object()?
            .iter()
            .filter_map(|(template, item)| {
                let t: Vec<&str> = template.split('/').collect();
                if t.len() != parts.len() {
                    return None;
                }
                let mut literal = 0;
                for (a, b) in t.iter().zip(&parts) {
                    if a.starts_with('{') && a.ends_with('}') {
                        if b.is_empty() {
                            return None;
                        }
                    } else if a == b {
                        literal += 1;
                    } else {
                        return None;
                    }
                }
                let op = item.get(&method)?;
                Some((literal, template.as_str(), op))
            })
            .max_by_key(|(literal, _, _)| *literal)
            .map(|(_, t, op)| (t, op))
    }

    /// Follows a local `$ref` (`#/components/...`).
    fn resolve<'a>(&'a self, v: &'a Value) -> &'a Value {
        match v.get("$ref").and_then(Value::as_str) {
            Some(r) => self
                .doc
                .pointer(r.trim_start_matches('#'))
                .map_or(v, |t| self.resolve(t)),
            None => v,
        }
    }

    /// A validator for `schema`, whose references point into the description.
    fn validator(&self, key: &str, schema: &Value) -> Result<Arc<Validator>, String> {
        let mut cache = self
            .validators
            .lock()
            .map_err(|_| "validator cache poisoned".to_owned())?;
        if let Some(v) = cache.get(key) {
            return Ok(v.clone());
        }
        let root = json!({ "allOf": [schema], "components": self.doc["components"] });
        let v = jsonschema::draft4::options()
            .should_validate_formats(true)
            .build(&root)
            .map_err(|e| format!("the description's schema for {key} does not compile: {e}"))?;
        let v = Arc::new(v);
        cache.insert(key.to_owned(), v.clone());
        Ok(v)
    }
}

fn is_json(media: &str) -> bool {
    media == "application/json" || media.ends_with("+json")
}

/// Rewrites OpenAPI 3.0 schema objects into JSON Schema: `nullable: true`
/// admits `null`.
fn to_json_schema(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if o.remove("nullable") == Some(Value::Bool(true)) {
                if let Some(Value::String(t)) = o.get("type").cloned() {
                    o.insert("type".into(), json!([t, "null"]));
                    if let Some(Value::Array(e)) = o.get_mut("enum") {
                        e.push(Value::Null);
                    }
                } else {
                    let inner = Value::Object(std::mem::take(o));
                    o.insert("anyOf".into(), json!([{ "type": "null" }, inner]));
                }
            }
            o.values_mut().for_each(to_json_schema);
        }
        Value::Array(a) => a.iter_mut().for_each(to_json_schema),
        _ => {}
    }
}

/// A checking HTTP/1.1 proxy in front of one API process. Each client
/// connection gets its own connection to the API, opened when the client
/// connects: when the API is down the client's connection is closed at once,
/// as the API's own port would refuse it.
pub struct Proxy {
    /// `http://127.0.0.1:port` of the proxy.
    pub base: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// Starts a proxy forwarding to `upstream` (`127.0.0.1:port`).
    pub async fn start(upstream: SocketAddr) -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(serve(client, upstream));
            }
        });
        Ok(Self { base, task })
    }
}

/// Serves one client connection.
async fn serve(client: TcpStream, upstream: SocketAddr) {
    let Ok(first) = connect(upstream).await else {
        return; // the API is down: the client sees its connection closed
    };
    let sender = Arc::new(tokio::sync::Mutex::new(first));
    let service = hyper::service::service_fn(move |req| {
        let sender = sender.clone();
        async move { forward(req, &sender, upstream).await }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(client), service)
        .await;
}

/// A body either way: whole (checked answers) or streamed (the rest).
type Body = BoxBody<Bytes, hyper::Error>;

fn whole(bytes: Bytes) -> Body {
    Full::new(bytes).map_err(|never| match never {}).boxed()
}

async fn connect(upstream: SocketAddr) -> Result<SendRequest<Body>> {
    let stream = TcpStream::connect(upstream).await?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(conn);
    Ok(sender)
}

/// Forwards one request and checks its answer. An error closes the client's
/// connection without an answer (the API went away mid-request). Answers
/// outside the description stream through unchecked.
async fn forward(
    req: Request<Incoming>,
    sender: &tokio::sync::Mutex<SendRequest<Body>>,
    upstream: SocketAddr,
) -> Result<Response<Body>> {
    let (parts, body) = req.into_parts();
    let method = parts.method.to_string();
    let path = parts.uri.path().to_owned();
    let described = SPEC.operation(&method, &path);
    // The request is read whole before it goes on: a client still sending a
    // body the API refused early would otherwise meet a reset connection.
    let body = whole(body.collect().await?.to_bytes());
    // The Host header stays the proxy's, so URLs the API builds from it
    // (upload and download links) lead back through the proxy.
    let out = Request::from_parts(parts, body);
    let mut sender = sender.lock().await;
    if sender.ready().await.is_err() {
        *sender = connect(upstream).await.context("reconnecting to the API")?;
    }
    let res = sender.send_request(out).await?;
    drop(sender);
    let (parts, body) = res.into_parts();
    let Some(operation) = described else {
        return Ok(Response::from_parts(parts, body.boxed()));
    };
    let body = body.collect().await?.to_bytes();
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    match SPEC.check_answer(
        &method,
        operation,
        parts.status.as_u16(),
        content_type,
        &body,
    ) {
        Ok(()) => Ok(Response::from_parts(parts, whole(body))),
        Err(violation) => {
            eprintln!("OpenAPI violation: {violation}");
            let body = json!({ "message": format!("OpenAPI violation: {violation}") });
            Ok(Response::builder()
                .status(StatusCode::from_u16(VIOLATION)?)
                .header(header::CONTENT_TYPE, "application/json")
                .body(whole(Bytes::from(body.to_string())))?)
        }
    }
}

#[test]
fn the_checker_catches_what_breaks_the_description() {
    let ok = br#"{"translations":[{"detected_source_language":"EN","text":"Hola"}]}"#;
    let json = Some("application/json; charset=utf-8");
    SPEC.check("POST", "/v2/translate", 200, json, ok).unwrap();
    // Too few items, a wrong type, an undocumented status, an undocumented
    // media type, a required property missing.
    let empty = br#"{"translations":[]}"#;
    let e = SPEC
        .check("POST", "/v2/translate", 200, json, empty)
        .unwrap_err();
    assert!(e.contains("translations"), "{e}");
    let wrong = br#"{"translations":[{"detected_source_language":"EN","text":5}]}"#;
    assert!(
        SPEC.check("POST", "/v2/translate", 200, json, wrong)
            .is_err()
    );
    assert!(SPEC.check("POST", "/v2/translate", 418, json, ok).is_err());
    assert!(
        SPEC.check("POST", "/v2/translate", 200, Some("text/html"), ok)
            .is_err()
    );
    let no_message = br#"{"detail":"x"}"#;
    let e = SPEC
        .check("POST", "/v2/translate", 400, json, no_message)
        .unwrap_err();
    assert!(e.contains("message"), "{e}");
    // Paths with parameters, binary downloads of any document type, paths
    // outside the description.
    let status = br#"{"document_id":"a","status":"queued"}"#;
    SPEC.check("POST", "/v2/document/ABC", 200, json, status)
        .unwrap();
    let docx = Some("application/vnd.openxmlformats-officedocument.wordprocessingml.document");
    SPEC.check("POST", "/v2/document/ABC/result", 200, docx, b"PK")
        .unwrap();
    SPEC.check("POST", "/v2/document/ABC/result", 200, json, b"{}")
        .unwrap();
    // 503 where the operation documents 504, and a style rule list for a
    // variant.
    let unavailable = br#"{"message":"down"}"#;
    SPEC.check("POST", "/v2/document", 503, json, unavailable)
        .unwrap();
    let list = br#"{"style_id":"a","name":"n","creation_time":"2026-01-01T00:00:00Z","updated_time":"2026-01-01T00:00:00Z","language":"en-GB","version":1}"#;
    SPEC.check("POST", "/v3/style_rules", 201, json, list)
        .unwrap();
    let list = br#"{"style_id":"a","name":"n","creation_time":"2026-01-01T00:00:00Z","updated_time":"2026-01-01T00:00:00Z","language":"pt","version":1}"#;
    assert!(
        SPEC.check("POST", "/v3/style_rules", 201, json, list)
            .is_err()
    );
    SPEC.check("GET", "/healthz", 200, None, b"ok").unwrap();
}
