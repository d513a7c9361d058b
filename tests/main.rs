//! End-to-end tests: the real `tolk` binary as API and worker processes, a real
//! PostgreSQL (one database per test), real Apertium, a real S3-compatible
//! server, spoken to over HTTP. One test binary (see Cargo.toml `[[test]] e2e`).

mod in_process;
mod openapi;
mod support;

mod admin;
mod architecture;
mod auth_and_errors;
mod auth_authlib;
mod auth_browser;
mod auth_server;
mod deploy;
mod document_glossaries;
mod documents;
mod engines;
mod glossaries;
mod hostile;
mod hostile_documents;
mod languages_v3;
mod maintenance;
mod metering;
mod migrations;
mod official_clients;
mod outage;
mod pg_server;
mod preserve;
mod quality;
mod queue_rows;
mod queue_wake;
mod recovery;
mod redis_optional;
mod requests;
mod s3;
mod spoken_terms;
mod style_rules;
mod translate;
mod translation_memories;
mod voice;
mod worker_pools;
mod write;
