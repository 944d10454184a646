//! The mutdelta binary: parse the command line, run it, turn the outcome into an exit status.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = mutdelta::cli::Cli::parse();
    mutdelta::app::run(cli).into()
}
