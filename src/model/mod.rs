//! The data every layer shares, depending on nothing else of the binary: what is planned, the verdicts, the evidence behind them and what a check came to.

pub mod audit;
pub mod outcome;
pub mod plan;
pub mod record;
pub mod report;
