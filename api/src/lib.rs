//! tolk-api
