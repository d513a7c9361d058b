//! Refused uploads end cleanly: when a request is answered 413 before its body
//! was read to the end, the rest of the body is read and discarded (up to
//! [`DRAIN_BYTES`] or [`DRAIN_TIME`]) before the answer goes out. A client that
//! writes its whole body before reading (Node's `http`, most upload
//! libraries) then gets the 413 and its message instead of a connection reset
//! (`EPIPE`) in the middle of its write.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::StatusCode;
use axum::http::header::{CONNECTION, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Body as HttpBody, Frame, SizeHint};
use tokio::sync::oneshot;

/// Most bytes of a refused body read and discarded.
pub const DRAIN_BYTES: u64 = 256 * 1024 * 1024;
/// Longest time spent discarding a refused body.
pub const DRAIN_TIME: Duration = Duration::from_secs(30);
/// How long to wait for the handler to give the body back.
const RETURN_WAIT: Duration = Duration::from_millis(200);

/// A request body that hands what is left of it back when dropped.
struct Returning {
    inner: Option<Body>,
    back: Option<oneshot::Sender<Body>>,
}

impl HttpBody for Returning {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        match self.get_mut().inner.as_mut() {
            Some(inner) => Pin::new(inner).poll_frame(cx),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(HttpBody::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.inner
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), HttpBody::size_hint)
    }
}

impl Drop for Returning {
    fn drop(&mut self) {
        if let (Some(inner), Some(back)) = (self.inner.take(), self.back.take())
            && !inner.is_end_stream()
        {
            let _ = back.send(inner);
        }
    }
}

/// The middleware; see the module documentation.
pub async fn drain_refused_uploads(req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    if body.is_end_stream() {
        return next.run(Request::from_parts(parts, body)).await;
    }
    let (back, returned) = oneshot::channel();
    let body = Body::new(Returning {
        inner: Some(body),
        back: Some(back),
    });
    let mut res = next.run(Request::from_parts(parts, body)).await;
    if res.status() != StatusCode::PAYLOAD_TOO_LARGE {
        return res;
    }
    let Ok(Ok(rest)) = tokio::time::timeout(RETURN_WAIT, returned).await else {
        return res;
    };
    if !drain(rest).await {
        // Not all of it: the connection cannot carry another request.
        res.headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
    res
}

/// Reads and discards `body`; true when it ended within the limits.
async fn drain(mut body: Body) -> bool {
    let discard = async {
        let mut read = 0u64;
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
        {
            let Ok(frame) = frame else { return false };
            if let Some(data) = frame.data_ref() {
                read += data.len() as u64;
                if read > DRAIN_BYTES {
                    return false;
                }
            }
        }
        true
    };
    tokio::time::timeout(DRAIN_TIME, discard)
        .await
        .unwrap_or(false)
}
