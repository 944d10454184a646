//! mutdelta: mutation-test the lines a change adds.

pub mod app;
pub mod cache;
pub mod cargo;
pub mod choose;
pub mod cli;
pub mod config;
pub mod console;
pub mod demo;
pub mod exit;
pub mod hook;
pub mod lines;
pub mod model;
pub mod options;
pub mod paint;
pub mod plan;
pub mod python;
pub mod reformat;
pub mod report;
pub mod reproduce;
pub mod run;
pub mod scratch;
pub mod seal;
pub mod shard;
pub mod watchdog;
pub mod words;
pub mod worktree;
