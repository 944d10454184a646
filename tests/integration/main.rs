//! Integration tests: mutdelta run as a process on real git repositories and real pytest runs.

mod action;
mod arid;
mod bad_input;
mod changes;
mod cli;
mod common;
mod config;
mod git_lines;
mod hostile;
mod hostile_tests;
mod install_hook;
mod interrupt;
mod kill;
mod kill_loss;
mod pre_commit;
mod progress;
mod properties;
mod python_fixtures;
mod reformat;
mod reports;
mod reproduce;
mod reuse;
mod rust_fixtures;
mod schema_parity;
mod shards;
mod swap_parity;
