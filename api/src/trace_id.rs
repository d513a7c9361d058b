//! `X-Trace-ID`: propagated from the request when present (and sane), generated
//! otherwise; set on every response, on the request's tracing span, and available
//! to handlers as an extension.

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Span;

/// Header name.
pub const HEADER: &str = "x-trace-id";

/// The request's trace id, as an extension.
#[derive(Debug, Clone)]
pub struct TraceId(pub String);

fn valid(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Reads or makes the trace id of a request.
pub fn of_request<B>(req: &axum::http::Request<B>) -> String {
    req.headers()
        .get(HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|s| valid(s))
        .map(str::to_owned)
        .unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string())
}

/// Span per request, carrying the trace id.
pub fn make_span<B>(req: &axum::http::Request<B>) -> Span {
    let trace_id = req
        .extensions()
        .get::<TraceId>()
        .map(|t| t.0.clone())
        .unwrap_or_default();
    tracing::info_span!("request", method = %req.method(), uri = %req.uri().path(), trace_id = %trace_id, key_id = tracing::field::Empty)
}

/// Middleware: attaches the trace id to the request and the response.
pub async fn trace_id(mut req: Request, next: Next) -> Response {
    let id = of_request(&req);
    req.extensions_mut().insert(TraceId(id.clone()));
    let mut res = next.run(req).await;
    if let Ok(v) = HeaderValue::from_str(&id) {
        res.headers_mut().insert(HEADER, v);
    }
    res
}
