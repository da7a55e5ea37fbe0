//! The `condense` command line: compress request bodies, replay recorded
//! sessions, and the demo. The logic lives in the other modules; this one
//! parses arguments, reads and writes files, and prints. It is a library
//! module (`main.rs` only calls [`run`]) so tests drive the real command line
//! in-process, with their own stdin and stdout.

use crate::common::Common;
use anyhow::{Result, bail};
use clap::{Args, Parser, Subcommand};
use condense_config::AgentSettings;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "condense",
    version,
    arg_required_else_help = true,
    about = "Context compression for LLM agents, run as a sandboxed WebAssembly component",
    long_about = "Context compression for LLM agents, run as a sandboxed WebAssembly component.\n\n\
        Before each model call, hand condense the whole request: it returns what the model should \
        see — system messages and the recent tail verbatim, older history folded into one summary, \
        tool calls never split from their results. It compacts with hysteresis and keeps a \
        checkpoint, so between compactions each request extends the previous one byte for byte and \
        the provider's prompt cache keeps hitting.\n\n\
        Start with `condense demo`.",
    after_help = "Examples:\n  \
        condense demo\n  \
        condense compress --checkpoint session.ckpt < request.json > sent.json\n  \
        condense replay --config condense.toml session.json\n  \
        condense agent --model-url http://127.0.0.1:11434/v1 --model qwen2.5-coder \"fix the test\"\n  \
        condense compact session.jsonl\n  \
        condense config --show > condense.toml"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compress one request body (OpenAI Chat Completions or Anthropic Messages JSON) read
    /// on stdin; write the body to send on stdout, in the same format.
    ///
    /// Fail-open: if a component fails, the body comes back unchanged and the report says why.
    Compress(crate::compress::CompressArgs),
    /// Replay recorded sessions call by call (the request before each assistant message)
    /// and print cost, cache breaks and peak request size.
    Replay(crate::replay::ReplayArgs),
    /// Replay a real recorded Claude Code session, embedded in the binary, and show what
    /// condense did to it.
    Demo(DemoArgs),
    /// Run a task with a model and a coding toolset in a working directory, condense in
    /// the model-call loop, every step journaled.
    #[command(
        long_about = "Run a task with a model and a coding toolset in a working directory, \
            condense in the model-call loop, every step journaled.\n\n\
            The model gets tools to read, list, search, write and edit files inside --workdir \
            (never outside it), and with --allow-commands to run shell commands there. Before \
            each model call condense compresses the request; the journal (--session, JSON \
            lines) records what really happened and is never rewritten, with the checkpoint \
            beside it (SESSION.ckpt). --resume SESSION continues a journaled session with a \
            new message.",
        after_help = "Examples:\n  \
            condense agent --model-url http://127.0.0.1:11434/v1 --model qwen2.5-coder \\\n      \
                --workdir ~/src/project --session fix.jsonl \"fix the failing test\"\n  \
            condense agent --provider anthropic --model claude-sonnet-4-5 \\\n      \
                --api-key-env ANTHROPIC_API_KEY --resume fix.jsonl \"now update the docs\""
    )]
    Agent(crate::agent::AgentArgs),
    /// Compact a session now, whatever the threshold says, and write the compacted history
    /// to a new file in the same format.
    #[command(
        long_about = "Compact a session now, whatever the threshold says, and write the \
            compacted history to a new file in the same format: a journal of `condense agent` \
            (.jsonl) or a request body / message list (OpenAI or Anthropic JSON).\n\n\
            The file written starts with condense's summary pair. condense recognises such a \
            history (by the pair's position and marker) when it compresses it again, with \
            `condense agent --resume`, `compress` or another `compact`: the pair is taken as \
            the previous summary, and only what came after it is folded into it.\n\n\
            The session itself is not touched unless --in-place is given, which keeps the \
            original as SESSION.bak. A file already at the destination is never overwritten.",
        after_help = "Examples:\n  \
            condense compact fix.jsonl\n      \
                writes fix.compacted.jsonl\n  \
            condense compact --in-place request.json\n      \
                replaces request.json, the original kept as request.json.bak"
    )]
    Compact(crate::compact::CompactArgs),
    /// Fold a whole session (or its first N messages) with a summarizer and print the
    /// summary, its size and its time: the way to try a summarizer out.
    #[command(
        long_about = "Fold a whole session (or its first N messages) with a summarizer and \
            print the summary, its size and its time: the way to try a summarizer out.\n\n\
            Every message but the system ones goes to the summarizer in one fold, as a \
            compaction of the whole session would send it, with an empty previous summary. The \
            summarizer is the embedded heuristic one, or --summarizer (or the --config's \
            [components] summarizer, the first of a chain); --settings gives it its own \
            settings, a JSON or TOML file it reads into its settings type. Nothing is written \
            but the summary and a line of figures.",
        after_help = "Examples:\n  \
            condense summarize session.json\n      \
                the embedded heuristic summarizer, at the configured summary_max_tokens\n  \
            condense summarize fix.jsonl --summarizer mine.wasm --settings mine.toml --upto 120\n      \
                a summarizer of your own, its settings, the first 120 messages"
    )]
    Summarize(crate::summarize::SummarizeArgs),
    /// Print the config file's JSON Schema (--schema), or the effective configuration
    /// as TOML (--show).
    #[command(
        long_about = "Print the config file's JSON Schema (--schema), or the effective \
            configuration as TOML (--show).\n\n\
            --schema prints the JSON Schema (draft 2020-12) of the TOML config file: every key \
            with its description, type, default and allowed range. Point an editor's TOML \
            support at it to get completion and checking while you write condense.toml. \
            The compressor's keys come from the compressor itself (its settings-schema \
            export): the embedded one's, or with --compressor (or a --config naming one) \
            that compressor's.\n\n\
            --show prints every key with the value condense uses: the defaults, then the \
            --config file, then the --agent NAME overrides, then --compressor/--summarizer. \
            The output is itself a valid config file; copy it as a starting point. Without \
            --config it shows the defaults of `condense compress` (`replay` and `demo` use a \
            40k-token threshold when no --config is given).",
        after_help = "Examples:\n  \
            condense config --show > condense.toml\n      \
                every key with its default, to edit\n  \
            condense config --show --config condense.toml --agent review\n      \
                what agent `review` runs with ([agents.review] merged over the top level)\n  \
            condense config --schema > condense.schema.json\n      \
                the JSON Schema, e.g. for an editor's TOML support"
    )]
    Config(crate::config::ConfigArgs),
    /// Serve an HTTP proxy in front of the provider: any Anthropic or OpenAI client pointed
    /// at it gets its requests compressed, each session's prefix kept byte-stable.
    #[command(
        long_about = "Serve an HTTP proxy in front of the provider: any Anthropic or OpenAI \
            client pointed at it gets its requests compressed, each session's prefix kept \
            byte-stable between compactions so the provider's prompt cache keeps hitting.\n\n\
            POST /v1/messages (Anthropic Messages), POST /v1/chat/completions (OpenAI Chat \
            Completions) and POST /v1/responses (OpenAI Responses, its list form of `input`) \
            are compressed; every other request goes on unchanged. Answers, \
            streamed ones included, come back byte for byte as the upstream sends them, and \
            the client's own API key goes upstream untouched (never logged or stored). A \
            session is found from the request itself (or named by an x-condense-session \
            header); its checkpoints are kept in an embedded database under --state-dir, so a \
            restarted proxy goes on where it stopped, or in a Redis/Valkey server (--store) \
            that several proxies share. The config file's top-level settings \
            are agent `default`; [agents.NAME] tables are selected with /agents/NAME/v1/... or \
            an x-condense-agent: NAME header. Anything condense cannot do forwards the \
            original request (fail-open); only an unreachable upstream is a 502.\n\n\
            GET /ui is the operator's page: what condense did to each session and what it \
            saved, measured from the provider's own usage in every answer, beside an estimate \
            of the same calls uncompressed (GET /sessions the same as JSON; who may read them: \
            --operator-token-env). GET /healthz answers ok; GET /metrics serves the counters \
            (requests, compactions, measured tokens and cost, cache breaks, fail-opens, the \
            condense step's latency) for Prometheus. Each request is logged as one JSON line on stderr, without headers or \
            body (CONDENSE_LOG_FORMAT=text for plain lines, CONDENSE_LOG=warn for fewer). \
            Ctrl-C or SIGTERM finishes the requests and streams in flight, then stops.",
        after_help = "Examples:\n  \
            condense proxy --config condense.toml\n  \
            condense proxy --store redis://127.0.0.1:6379      # sessions shared by proxies\n  \
            ANTHROPIC_BASE_URL=http://127.0.0.1:8787 claude\n  \
            OpenAI(base_url=\"http://127.0.0.1:8787/v1\")        # the openai Python SDK\n  \
            Anthropic(base_url=\"http://127.0.0.1:8787\")        # the anthropic Python SDK\n  \
            base_url = \"http://127.0.0.1:8787/v1\"              # Codex: [model_providers.X] in config.toml"
    )]
    Proxy(crate::proxy::ProxyArgs),
    /// List the sessions the proxy's checkpoint store holds, or show one: its compactions,
    /// each with the handle that recalls what it folded, and its current summary.
    ///
    /// Read-only, for the proxy's operator: the summaries hold its users' words. The
    /// embedded database takes one process at a time, so stop the proxy first, or give
    /// the Redis server the proxies share (--store).
    #[command(after_help = "Examples:\n  \
            condense sessions --state-dir /var/lib/condense\n  \
            condense sessions --store redis://127.0.0.1:6379 'default/session/s-1'")]
    Sessions(crate::sessions::SessionsArgs),
}

#[derive(Args)]
struct DemoArgs {
    #[command(flatten)]
    common: Common,
    /// Where to write the chart (SVG) of the request tokens per model call, no
    /// compression vs condense. Default: condense-demo.svg in the temporary directory.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
}

/// Runs the command line `args` (program name first) with the given stdin and
/// stdout. Bad input is an error before anything is written to `stdout` or to
/// a checkpoint or report file. `--help`/`--version` are printed to `stdout`.
pub fn run(
    args: impl IntoIterator<Item = OsString>,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
) -> Result<()> {
    run_on(args, stdin, stdout, Terminals::default())
}

/// Which of the standard streams are a person's terminal.
#[derive(Clone, Copy, Debug, Default)]
pub struct Terminals {
    /// `condense compress` then says what it expects instead of waiting for
    /// a body nobody is typing.
    pub stdin: bool,
    /// `condense demo` then draws a progress bar instead of plain lines.
    pub stdout: bool,
}

/// [`run`], told which streams are terminals.
pub fn run_on(
    args: impl IntoIterator<Item = OsString>,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    terminals: Terminals,
) -> Result<()> {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        // `--help`, `--version`, and a bare `condense`: what it can do, on
        // stdout, and no error.
        Err(e)
            if !e.use_stderr()
                || e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
        {
            write!(stdout, "{}", e.render())?;
            return Ok(());
        }
        Err(e) => {
            // The binary prefixes `condense: error:` itself.
            let text = e.render().to_string();
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            return Err(anyhow::Error::msg(text.trim_end().to_owned()));
        }
    };
    match cli.command {
        Command::Compress(args) if terminals.stdin => {
            let _ = args;
            bail!(
                "condense compress reads the request body (JSON) on stdin: pipe one in, e.g. \
                 `condense compress < request.json > send.json`"
            )
        }
        Command::Compress(args) => crate::compress::run(args, stdin, stdout),
        Command::Replay(args) => crate::replay::run(args, stdout),
        Command::Demo(args) => demo(args, terminals.stdout, stdout),
        Command::Agent(args) => crate::agent::command(args, stdout),
        Command::Compact(args) => {
            let settings = args.common.settings(AgentSettings::default())?;
            let run = crate::compact::CompactRun {
                session: args.session,
                output: args.output,
                in_place: args.in_place,
                events: args.events,
            };
            crate::compact::run(&settings, &run, stdout)
        }
        Command::Summarize(args) => {
            let settings = args.common.settings(AgentSettings::default())?;
            let run = crate::summarize::SummarizeRun {
                session: args.session,
                upto: args.upto,
                settings: args.settings,
                max_tokens: args.max_tokens,
                language: args.language,
            };
            crate::summarize::run(&settings, &run, stdout)
        }
        Command::Config(args) => crate::config::run(args, stdout),
        Command::Sessions(args) => crate::sessions::run(args, stdout),
        Command::Proxy(args) => {
            let file = args
                .config
                .as_deref()
                .map(condense_config::ConfigFile::load)
                .transpose()?;
            let run = crate::proxy::ProxyRun {
                listen: args.listen,
                allow_remote: args.allow_remote,
                allowed_hosts: args.allowed_hosts,
                anthropic_upstream: args.anthropic_upstream,
                openai_upstream: args.openai_upstream,
                context_management: args.context_management,
                state_dir: args.state_dir,
                store: args.store,
                token_env: args.token_env,
                operator_token_env: args.operator_token_env,
                log_bodies: args.log_bodies,
                events: args.events,
                prepare_jobs: args.prepare_jobs,
                prepare_wait_ms: args.prepare_wait_ms,
                prepare_quiet: args.prepare_quiet,
            };
            crate::proxy::run(file.as_ref(), &run, stdout)
        }
    }
}

fn demo(args: DemoArgs, stdout_is_terminal: bool, out: &mut dyn Write) -> Result<()> {
    let settings = args.common.settings(crate::demo::defaults())?;
    let plot = args
        .plot
        .unwrap_or_else(|| std::env::temp_dir().join("condense-demo.svg"));
    let run = crate::demo::DemoRun {
        plot,
        progress: stdout_is_terminal,
    };
    crate::demo::run(&settings, &run, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
