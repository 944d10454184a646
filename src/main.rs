//! The mutdelta binary: parse the command line, run it, turn the outcome into an exit status.

fn main() -> std::process::ExitCode {
    let cli = mutdelta::cli::parse();
    mutdelta::app::run(cli).into()
}
