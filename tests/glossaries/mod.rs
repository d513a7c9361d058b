//! Glossaries, v2 and v3 (`/v2/glossaries`, `/v3/glossaries`), against a real
//! API process and PostgreSQL.

use anyhow::Result;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{Answer, Api, World, call, exchange};

mod terms;
mod v2;
mod v3;
