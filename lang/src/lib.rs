//! The vocabulary every Tolk crate shares: language codes ([`code`]) and
//! inline markup tags ([`tag`]). Pure functions and tables, no dependencies,
//! so the engine, the document filters, storage, the API and the workers
//! read a language code, and recognise a tag, the same way.
//!
//! ```
//! assert_eq!(tolk_lang::base("pt_BR"), "pt");
//! assert_eq!(tolk_lang::deepl_base("zh-hant"), "ZH");
//! assert_eq!(tolk_lang::bcp47("ZH-HANT"), "zh-Hant");
//! assert!(tolk_lang::same_language("fre", "FR"));
//! ```

#![deny(missing_docs)]

pub mod code;
pub mod tag;

pub use code::{Language, base, bcp47, deepl_base, primary, same_language};
