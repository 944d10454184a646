//! The Rust side of a check: every mutant switched into one build of the packages (a mutant schema) and run against the tests that reach it; those the schema cannot hold built and tested one by one.

pub mod build;
pub mod check;
pub mod libtest;
pub mod nextest;
pub mod plugin;
pub mod refusal;
pub mod schema;
pub mod settings;
pub mod spec;
pub mod workspace;
