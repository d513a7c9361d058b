//! Applying glossaries to a translation: the protection of terms lives in
//! `tolk_engine::glossary`, shared with the document worker.

pub use tolk_engine::glossary::{TERM_TAG, Terms, protect, release};
