//! The `condense` binary: the command line lives in `condense_cli::cli`.

use std::io::IsTerminal;

fn main() {
    condense_cli::logging::install(std::env::args().nth(1).as_deref());
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let terminals = condense_cli::cli::Terminals {
        stdin: stdin.is_terminal(),
        stdout: stdout.is_terminal(),
    };
    let result = condense_cli::cli::run_on(
        std::env::args_os(),
        &mut stdin.lock(),
        &mut stdout.lock(),
        terminals,
    );
    if let Err(e) = result {
        eprintln!("condense: error: {e:#}");
        std::process::exit(1);
    }
}
