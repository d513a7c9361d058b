//! stub
use crate::FormatError;
#[derive(Debug)]
pub(crate) struct Skeleton;
pub(crate) fn extract(_input: &[u8]) -> Result<(Vec<String>, Skeleton), FormatError> {
    Err(FormatError::unsupported("todo"))
}
impl Skeleton {
    pub(crate) fn merge(&self, _s: &[String], _t: &[String]) -> Result<Vec<u8>, FormatError> {
        Ok(Vec::new())
    }
}
