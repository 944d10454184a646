//! The Python side of a check: the coverage run as baseline with the compile check beside it, per-mutant test selection, canaries, warm workers.

pub mod audit;
pub mod audit_budget;
pub mod check;
pub mod collector;
pub mod compile;
pub mod copies;
pub mod coverage;
pub mod executor;
pub mod first_round;
pub mod impact;
pub mod interpreter;
pub mod job;
pub mod language;
pub mod map;
pub mod plugin;
pub mod proof;
pub mod pytest;
pub mod rest;
pub mod second_round;
pub mod select;
pub mod served;
pub mod spec;
pub mod touched;
pub mod tried_first;
pub mod warm;
pub mod worker;
