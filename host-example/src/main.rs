//! The `condense` binary: the command line lives in `condense::cli`.

use std::io::IsTerminal;

fn main() {
    let spec = std::env::var("CONDENSE_LOG").unwrap_or_else(|_| "warn".into());
    // Colours only for a person reading a terminal, not in a log file.
    let ansi = std::io::stderr().is_terminal();
    tracing::subscriber::set_global_default(condense::logging::subscriber(
        std::io::stderr,
        ansi,
        &spec,
    ))
    .expect("the first subscriber");
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let terminals = condense::cli::Terminals {
        stdin: stdin.is_terminal(),
        stdout: stdout.is_terminal(),
    };
    let result = condense::cli::run_on(
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
