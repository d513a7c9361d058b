//! Tests of the whole crate through its public API: against the real installed
//! Apertium pairs (they fail, never skip, when Apertium is missing) and against
//! stand-in pipelines made of shell scripts. They live in the crate's unit-test
//! binary so the workspace links one binary fewer.

mod apertium;
mod fake_pipelines;
