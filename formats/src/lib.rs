//! Document filters for Tolk.
//!
//! CONTRACT (implemented by the formats work; the worker codes against it):
//!
//! ```ignore
//! pub enum DocumentFormat { Txt, Html, Docx }
//! impl DocumentFormat {
//!     pub fn from_extension(ext: &str) -> Option<Self>;   // "txt", "html"/"htm", "docx" (case-insensitive)
//!     pub fn extension(&self) -> &'static str;
//!     pub fn content_type(&self) -> &'static str;
//! }
//! pub fn extract(format: DocumentFormat, input: &[u8]) -> Result<Extracted, FormatError>;
//! impl Extracted {
//!     pub fn segments(&self) -> &[String];          // inline markup, see `inline`
//!     pub fn merge(&self, translated: &[String]) -> Result<Vec<u8>, FormatError>;
//! }
//! pub mod inline { pub fn plain_text(segment: &str) -> String; }
//! ```
