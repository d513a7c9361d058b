//! Tolk's storage layer: the PostgreSQL pool and migrations, one repository
//! module per table group, the job queue (payloads and enqueue inside a
//! transaction, on apalis-postgres), the object store, and the rate limits
//! (Redis, or in-process without it).
//!
//! storage knows no HTTP and no job handler; api, worker and scheduler call it.

#![deny(missing_docs)]

pub mod analytics;
pub mod auth;
pub mod db;
pub mod documents;
pub mod enqueuer;
pub mod error;
pub mod glossaries;
pub mod keys;
pub mod lifecycle;
pub mod limits;
pub mod objects;
pub mod quality;
pub mod queue;
pub mod queue_admin;
pub mod queue_stats;
pub mod rate_limit;
pub mod rollup;
pub mod spoken_terms;
pub mod style_rules;
#[cfg(feature = "throwaway")]
pub mod throwaway;
pub mod translation_memories;
pub mod usage;
pub mod usage_appender;
pub mod voice_jobs;

pub use error::StorageError;
pub use sqlx::PgPool;
