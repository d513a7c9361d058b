//! Reading what other servers answer (identity providers, client metadata
//! documents): a JSON body no larger than a cap, read chunk by chunk so that a
//! hostile or broken server cannot make the service hold more.

use serde_json::Value;

/// Why an answer could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReadError {
    /// Larger than the cap (by its announced length or what arrived).
    #[error("the answer is larger than {0} bytes")]
    TooLarge(usize),
    /// The connection failed or timed out mid-body.
    #[error("the answer could not be read")]
    Unreadable,
    /// Not JSON.
    #[error("the answer is not JSON")]
    NotJson,
}

/// The body of `res`, at most `cap` bytes.
pub async fn read_capped(res: reqwest::Response, cap: usize) -> Result<Vec<u8>, ReadError> {
    if res.content_length().is_some_and(|n| n > cap as u64) {
        return Err(ReadError::TooLarge(cap));
    }
    let mut body = Vec::new();
    let mut res = res;
    while let Some(chunk) = res.chunk().await.map_err(|_| ReadError::Unreadable)? {
        if body.len() + chunk.len() > cap {
            return Err(ReadError::TooLarge(cap));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The body of `res` as JSON, at most `cap` bytes.
pub async fn read_json(res: reqwest::Response, cap: usize) -> Result<Value, ReadError> {
    let body = read_capped(res, cap).await?;
    serde_json::from_slice(&body).map_err(|_| ReadError::NotJson)
}
