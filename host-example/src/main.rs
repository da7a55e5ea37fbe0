//! The `condense` binary: the command line lives in `condense_host::cli`.

fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CONDENSE_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let result = condense_host::cli::run(
        std::env::args_os(),
        &mut std::io::stdin().lock(),
        &mut std::io::stdout().lock(),
    );
    if let Err(e) = result {
        eprintln!("condense: error: {e:#}");
        std::process::exit(1);
    }
}
