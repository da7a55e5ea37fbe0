//! The `condense` command line: compress request bodies, replay recorded
//! sessions, and the demo. The logic lives in the other modules; this one
//! parses arguments, reads and writes files, and prints. It is a library
//! module (`main.rs` only calls [`run`]) so tests drive the real command line
//! in-process, with their own stdin and stdout.

use crate::session::SessionFile;
use crate::settings::{self, ConfigFile, Settings};
use anyhow::{Context, Result, bail};
use clap::{ArgGroup, Args, Parser, Subcommand};
use condense_host::body;
use condense_host::formats::Format;
use condense_host::replay::{ReplayStats, replay_middleware};
use condense_host::store::{CheckpointStore, FileStore, MemoryStore, write_atomically};
use condense_model::Message;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

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
    Compress(CompressArgs),
    /// Replay recorded sessions call by call (the request before each assistant message)
    /// and print cost, cache breaks and peak request size.
    Replay(ReplayArgs),
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
    Agent(AgentArgs),
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
    Compact(CompactArgs),
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
    Summarize(SummarizeArgs),
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
    Config(ConfigArgs),
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
            GET /healthz answers ok; GET /metrics serves the counters (requests, compactions, \
            tokens saved, cache breaks, fail-opens, the condense step's latency) for \
            Prometheus. Each request is logged as one JSON line on stderr, without headers or \
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
    Proxy(ProxyArgs),
}

#[derive(Args)]
struct Common {
    /// TOML config: compressor keys (token_threshold, target_tokens, clear_mode, ...),
    /// [tools], [components], [limits] and per-agent [agents.NAME] overrides. Every key
    /// and its default: `condense config --show`; their meaning: README or
    /// `condense config --schema`.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Use the settings of agent NAME: its [agents.NAME] table of the --config file merged
    /// over the file's top-level keys.
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    /// Compressor component to load instead of the embedded one.
    #[arg(long, value_name = "PATH")]
    compressor: Option<PathBuf>,
    /// Summarizer component to load instead of the embedded heuristic one.
    #[arg(long, value_name = "PATH")]
    summarizer: Option<PathBuf>,
}

impl Common {
    /// The config file (or the given defaults), with command-line overrides.
    fn settings(&self, defaults: Settings) -> Result<Settings> {
        Ok(self.load(defaults)?.0)
    }

    /// The settings, and the config file they come from if there is one.
    fn load(&self, defaults: Settings) -> Result<(Settings, Option<ConfigFile>)> {
        let (mut settings, file) = match (&self.config, &self.agent) {
            (Some(path), agent) => {
                let file = ConfigFile::load(path)?;
                (file.settings(agent.as_deref())?.clone(), Some(file))
            }
            (None, Some(agent)) => bail!(
                "--agent {agent} needs --config FILE: agents are the [agents.NAME] tables \
                 of a config file"
            ),
            (None, None) => (defaults, None),
        };
        if let Some(p) = &self.compressor {
            settings.components.compressor = Some(p.clone());
        }
        if let Some(p) = &self.summarizer {
            // One summarizer given on the command line replaces the file's.
            settings.components.summarizer = Some(p.clone());
            settings.components.summarizers = None;
        }
        Ok((settings, file))
    }
}

#[derive(Args)]
struct ProxyArgs {
    /// TOML config: the fold settings (top level: agent `default`) and [agents.NAME]
    /// tables, as for the other commands.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address to serve on. Only loopback addresses unless --allow-remote.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8787")]
    listen: std::net::SocketAddr,
    /// Serve on a non-loopback --listen address (other machines' clients send their API
    /// keys through it: set --token-env too).
    #[arg(long)]
    allow_remote: bool,
    /// Where Anthropic requests go.
    #[arg(long, value_name = "URL", default_value = "https://api.anthropic.com")]
    anthropic_upstream: String,
    /// Where OpenAI requests go.
    #[arg(long, value_name = "URL", default_value = "https://api.openai.com")]
    openai_upstream: String,
    /// Directory of the checkpoint database. Default: $XDG_STATE_HOME/condense, else
    /// ~/.local/state/condense.
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Keep the checkpoints in a Redis or Valkey server instead (redis://[:PASSWORD@]HOST[:PORT][/DB]),
    /// shared by every proxy given the same URL. While it cannot be reached, requests are
    /// forwarded unchanged.
    #[arg(long, value_name = "URL", conflicts_with = "state_dir")]
    store: Option<String>,
    /// Environment variable holding a token clients must send as `Proxy-Authorization:
    /// Bearer TOKEN` (their own Authorization header is the provider's).
    #[arg(long, value_name = "VAR")]
    token_env: Option<String>,
    /// USD per million input tokens, for the estimate of what condense saved in GET
    /// /metrics (condense_proxy_estimated_cost_saved_usd_total).
    #[arg(long, value_name = "USD", default_value_t = condense_proxy::DEFAULT_INPUT_PRICE)]
    input_price: f64,
    /// Log the body each compressed request is sent upstream with (your users' words and
    /// their tools' output). Headers, API keys among them, are never logged.
    #[arg(long)]
    log_bodies: bool,
    /// Append each compaction (agent, session, tokens before/after, messages folded,
    /// passes, summarizer, time) to FILE as a JSON line. They are logged too.
    #[arg(long, value_name = "FILE")]
    events: Option<PathBuf>,
}

#[derive(Args)]
struct CompressArgs {
    #[command(flatten)]
    common: Common,
    /// Checkpoint file: read if it exists, replaced (atomically) with the new checkpoint.
    /// Keep one per session so compactions are reused between calls.
    #[arg(long, value_name = "FILE")]
    checkpoint: Option<PathBuf>,
    /// Write a JSON report (tokens before/after, trigger, boundary, failures, time) here.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Request body format; `auto` tells them apart by their shape.
    #[arg(long, default_value = "auto", value_name = "FORMAT")]
    format: FormatArg,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum FormatArg {
    Auto,
    Openai,
    Anthropic,
    /// OpenAI Responses (`input` as a list of items).
    Responses,
}

#[derive(Args)]
struct ReplayArgs {
    #[command(flatten)]
    common: Common,
    /// Print the figures as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write a chart (SVG) of the request tokens per model call, no compression vs
    /// condense, compactions marked, threshold drawn. With several sessions, one file each:
    /// FILE's name with the session's before `.svg`.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Session files: a bare message list or a request body, in either format, or a
    /// journal of `condense agent` (.jsonl).
    #[arg(required = true, value_name = "SESSION")]
    sessions: Vec<PathBuf>,
}

#[derive(Args)]
struct AgentArgs {
    #[command(flatten)]
    common: Common,
    /// The model endpoint's wire format.
    #[arg(long, value_enum, default_value = "openai")]
    provider: crate::agent::Provider,
    /// Base URL of the endpoint: for OpenAI-compatible servers up to `/v1`
    /// (http://127.0.0.1:11434/v1 for Ollama); Anthropic's by default.
    #[arg(long, value_name = "URL")]
    model_url: Option<String>,
    /// Model name, as the endpoint knows it.
    #[arg(long, value_name = "NAME")]
    model: String,
    /// Environment variable holding the API key (none is sent without it).
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
    /// Directory the file tools work in, and may not leave. Default: the current one.
    #[arg(long, value_name = "DIR")]
    workdir: Option<PathBuf>,
    /// Give the model a tool to run shell commands in the working directory (30 s
    /// timeout, 64 KiB of output).
    #[arg(long)]
    allow_commands: bool,
    /// Journal to start (it must not exist). Default: condense-session-<time>.jsonl in
    /// the current directory.
    #[arg(long, value_name = "FILE", conflicts_with = "resume")]
    session: Option<PathBuf>,
    /// Journal of a session to continue.
    #[arg(long, value_name = "SESSION")]
    resume: Option<PathBuf>,
    /// Model calls the task may take before the agent stops.
    #[arg(long, default_value_t = 200, value_name = "N")]
    max_calls: u64,
    /// Append each compaction event (trigger, tokens before/after, messages folded,
    /// passes, summarizer, cache breaks so far, time) to FILE as a JSON line. They are
    /// in the journal too, and logged (CONDENSE_LOG=info).
    #[arg(long, value_name = "FILE")]
    events: Option<PathBuf>,
    /// Whether a due compaction proceeds: automatic, rate-limited (see [runtime] in
    /// `condense config --show`), or confirm (asked on the terminal). Default: [runtime]
    /// compaction, automatic.
    #[arg(long, value_enum, value_name = "POLICY")]
    compaction: Option<crate::settings::CompactionPolicy>,
    /// What the agent is to do.
    #[arg(value_name = "TASK")]
    task: String,
}

#[derive(Args)]
struct CompactArgs {
    #[command(flatten)]
    common: Common,
    /// Where to write the compacted history. Default: SESSION's name with `.compacted`
    /// before its extension, beside it.
    #[arg(long, short, value_name = "FILE", conflicts_with = "in_place")]
    output: Option<PathBuf>,
    /// Replace SESSION, keeping the original as SESSION.bak.
    #[arg(long)]
    in_place: bool,
    /// Append the compaction event to FILE as a JSON line.
    #[arg(long, value_name = "FILE")]
    events: Option<PathBuf>,
    /// The session: a journal (.jsonl) or a request body / message list.
    #[arg(value_name = "SESSION")]
    session: PathBuf,
}

#[derive(Args)]
struct SummarizeArgs {
    #[command(flatten)]
    common: Common,
    /// The summarizer's own settings: a JSON or TOML (.toml) file holding an object.
    #[arg(long, value_name = "FILE")]
    settings: Option<PathBuf>,
    /// Fold only the first N messages of the session.
    #[arg(long, value_name = "N")]
    upto: Option<usize>,
    /// The summary's token budget. Default: summary_max_tokens of the config (2000).
    #[arg(long, value_name = "TOKENS")]
    max_tokens: Option<u32>,
    /// The conversation's language tag (en, de, zh, ...). Default: detected from the
    /// person's messages, as the compressor does.
    #[arg(long, value_name = "TAG")]
    language: Option<String>,
    /// The session: a journal (.jsonl) or a request body / message list.
    #[arg(value_name = "SESSION")]
    session: PathBuf,
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

#[derive(Args)]
#[command(group(ArgGroup::new("output").required(true).args(["schema", "show"])))]
struct ConfigArgs {
    /// Print the JSON Schema of the config file: every key with its description, type,
    /// default and allowed range. The compressor's keys are those the compressor publishes:
    /// the embedded one's, or those of --compressor (or of the one --config names).
    #[arg(long, conflicts_with_all = ["summarizer"])]
    schema: bool,
    /// Print the effective configuration as TOML: every key with the value condense uses,
    /// after the defaults, --config, --agent and --compressor/--summarizer.
    #[arg(long)]
    show: bool,
    #[command(flatten)]
    common: Common,
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
        Command::Compress(args) => compress(args, stdin, stdout),
        Command::Replay(args) => replay(args, stdout),
        Command::Demo(args) => demo(args, terminals.stdout, stdout),
        Command::Agent(args) => agent(args, stdout),
        Command::Compact(args) => {
            let settings = args.common.settings(Settings::default())?;
            let run = crate::compact::CompactRun {
                session: args.session,
                output: args.output,
                in_place: args.in_place,
                events: args.events,
            };
            crate::compact::run(&settings, &run, stdout)
        }
        Command::Summarize(args) => {
            let settings = args.common.settings(Settings::default())?;
            let run = crate::summarize::SummarizeRun {
                session: args.session,
                upto: args.upto,
                settings: args.settings,
                max_tokens: args.max_tokens,
                language: args.language,
            };
            crate::summarize::run(&settings, &run, stdout)
        }
        Command::Config(args) => config(args, stdout),
        Command::Proxy(args) => {
            let file = args
                .config
                .as_deref()
                .map(crate::settings::ConfigFile::load)
                .transpose()?;
            let run = crate::proxy::ProxyRun {
                listen: args.listen,
                allow_remote: args.allow_remote,
                anthropic_upstream: args.anthropic_upstream,
                openai_upstream: args.openai_upstream,
                state_dir: args.state_dir,
                store: args.store,
                token_env: args.token_env,
                input_price: args.input_price,
                log_bodies: args.log_bodies,
                events: args.events,
            };
            crate::proxy::run(file.as_ref(), &run, stdout)
        }
    }
}

fn agent(args: AgentArgs, out: &mut dyn Write) -> Result<()> {
    let settings = args.common.settings(Settings::default())?;
    let (session, resume) = match (args.resume, args.session) {
        (Some(path), _) => (path, true),
        (None, Some(path)) => (path, false),
        (None, None) => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            (
                PathBuf::from(format!("condense-session-{now}.jsonl")),
                false,
            )
        }
    };
    let workdir = match args.workdir {
        Some(dir) => dir,
        None => std::env::current_dir().context("the current directory")?,
    };
    let run = crate::agent::AgentRun {
        provider: args.provider,
        model_url: args.model_url,
        model: args.model,
        api_key_env: args.api_key_env,
        workdir,
        allow_commands: args.allow_commands,
        session,
        resume,
        max_calls: args.max_calls,
        events: args.events,
        compaction: args.compaction,
        task: args.task,
    };
    crate::agent::run(&settings, &run, out)
}

fn config(args: ConfigArgs, out: &mut dyn Write) -> Result<()> {
    if args.schema {
        // A compressor from a path publishes its own keys.
        let (settings, _) = args.common.load(Settings::default())?;
        let text = match &settings.components.compressor {
            None => settings::json_schema_text(),
            Some(path) => {
                let published = settings.middleware()?.runtime().settings_schema()?;
                let schema = serde_json::from_str(&published).with_context(|| {
                    format!(
                        "the compressor {} published a settings schema that is not JSON",
                        path.display()
                    )
                })?;
                settings::schema_text(&settings::json_schema_with(&schema))
            }
        };
        out.write_all(text.as_bytes())?;
        return Ok(());
    }
    let (settings, file) = args.common.load(Settings::default())?;
    let toml = settings.to_toml()?;
    let mut sources = vec!["the defaults".to_owned()];
    if let Some(path) = &args.common.config {
        // One comment line, whatever the path holds.
        sources.push(path.display().to_string().replace(['\n', '\r'], " "));
    }
    if let Some(agent) = &args.common.agent {
        sources.push(format!("its [agents.{agent}] table"));
    }
    for (flag, given) in [
        ("--compressor", args.common.compressor.is_some()),
        ("--summarizer", args.common.summarizer.is_some()),
    ] {
        if given {
            sources.push(flag.to_owned());
        }
    }
    let mut header = format!(
        "# condense configuration: every key with the value condense uses, from {}.\n\
         # A valid config file to start from; what each key does: README or\n\
         # `condense config --schema`.\n",
        sources.join(", then ")
    );
    if let Some(file) = file.as_ref().filter(|_| args.common.agent.is_none()) {
        let names: Vec<&str> = file.agent_names().collect();
        if !names.is_empty() {
            header.push_str(&format!(
                "# The file's agents ({}) are shown with --agent NAME.\n",
                names.join(", ")
            ));
        }
    }
    out.write_all(header.as_bytes())?;
    out.write_all(b"\n")?;
    out.write_all(toml.as_bytes())?;
    Ok(())
}

/// Reads the request body from `stdin`, refusing one over `limit` bytes
/// (`limits.max_request_bytes`) without holding more than one byte over it.
fn read_body(stdin: &mut dyn Read, limit: usize) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    // One byte over the limit tells that the body is too large: a larger body
    // is never held in memory.
    Read::take(&mut *stdin, limit as u64 + 1)
        .read_to_end(&mut bytes)
        .context("stdin: cannot read the request body")?;
    if bytes.len() > limit {
        // Counted, not kept, so that the error can say how large it is.
        let rest = std::io::copy(stdin, &mut std::io::sink())
            .context("stdin: cannot read the request body")?;
        let size = bytes.len() + rest as usize;
        bail!("stdin: {}", body::BodyError::TooLarge { size, limit });
    }
    Ok(bytes)
}

fn compress(args: CompressArgs, stdin: &mut dyn Read, stdout: &mut dyn Write) -> Result<()> {
    // Everything that can fail on bad input is checked before anything is
    // written.
    let settings = args.common.settings(Settings::default())?;
    let input = read_body(stdin, settings.limits.max_request_bytes as usize)?;
    let format = match args.format {
        FormatArg::Auto => None,
        FormatArg::Openai => Some(Format::OpenAi),
        FormatArg::Anthropic => Some(Format::Anthropic),
        FormatArg::Responses => Some(Format::Responses),
    };
    let middleware = settings.middleware()?;
    let config = settings.body_config();
    // condense's own state never blocks a model call: a checkpoint file it
    // cannot read is ignored (the report says why) and replaced.
    let mut memory = MemoryStore::default();
    let mut file = args.checkpoint.as_ref().map(FileStore::new);
    let store: &mut dyn CheckpointStore = match &mut file {
        Some(file) => file,
        None => &mut memory,
    };
    // A malformed body is an error before anything is written or stored.
    let sent = body::compress_body(&middleware, &config, &input, format, store)
        .map_err(|e| anyhow::anyhow!("stdin: {e}"))?;
    if let Some(path) = &args.report {
        write_atomically(path, &serde_json::to_vec_pretty(&sent.report)?)
            .with_context(|| format!("cannot write report file {}", path.display()))?;
    }
    stdout.write_all(&sent.body)?;
    stdout.write_all(b"\n")?;
    Ok(())
}

fn replay(args: ReplayArgs, out: &mut dyn Write) -> Result<()> {
    let settings = args.common.settings(Settings::for_replay())?;
    // Parse every session before running any, so a bad file fails fast.
    let sessions: Vec<(String, Vec<Message>)> = args
        .sessions
        .iter()
        .map(|path| {
            Ok((
                path.display().to_string(),
                SessionFile::read(path)?.into_messages(),
            ))
        })
        .collect::<Result<_>>()?;
    let middleware = settings.middleware()?;
    let results: Vec<(String, ReplayStats)> = sessions
        .iter()
        .map(|(name, messages)| {
            (
                name.clone(),
                replay_middleware(
                    &middleware,
                    &settings.core,
                    &settings.compressor_json(),
                    messages,
                    |_, _| {},
                ),
            )
        })
        .collect();
    // One chart per session: with several, each file is named after its
    // session.
    let charts: Vec<Option<PathBuf>> = args
        .sessions
        .iter()
        .zip(&results)
        .map(|(path, (_, stats))| {
            let Some(plot) = &args.plot else {
                return Ok(None);
            };
            let stem = path.file_stem().unwrap_or_default().to_string_lossy();
            let file = if results.len() == 1 {
                plot.clone()
            } else {
                let plot_stem = plot.file_stem().unwrap_or_default().to_string_lossy();
                plot.with_file_name(format!("{plot_stem}.{stem}.svg"))
            };
            let series = crate::plot::series_of(&stem, settings.core.token_threshold, stats);
            crate::plot::write_svg(&file, &series)?;
            Ok(Some(file))
        })
        .collect::<Result<_>>()?;
    if args.json {
        let rows: Vec<_> = results
            .iter()
            .zip(&charts)
            .map(|((name, stats), chart)| {
                serde_json::json!({
                    "session": name,
                    "stats": stats,
                    "cost_ratio": stats.cost_ratio(),
                    "chart": chart,
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "token_threshold = {}, target_tokens = {}\n",
        settings.core.token_threshold, settings.core.target_tokens
    )?;
    writeln!(
        out,
        "{:<40} {:>6} {:>9} {:>7} {:>9} {:>8} {:>7}",
        "session", "calls", "history", "folds", "breaks", "peak", "cost"
    )?;
    for (name, s) in &results {
        let short = Path::new(name)
            .file_name()
            .map_or(name.clone(), |n| n.to_string_lossy().into_owned());
        writeln!(
            out,
            "{:<40} {:>6} {:>9} {:>7} {:>9} {:>8} {:>7.3}{}",
            short,
            s.calls,
            s.history_tokens,
            s.compactions,
            s.cache_breaks,
            s.peak_request_tokens,
            s.cost_ratio(),
            if s.failed_open > 0 {
                format!("  ({} failed open)", s.failed_open)
            } else {
                String::new()
            }
        )?;
    }
    for (name, stats) in &results {
        writeln!(out, "\n{name}")?;
        crate::demo::table(stats, out)?;
    }
    writeln!(out, "\n{}", crate::demo::COST_NOTE)?;
    for (name, chart) in results.iter().map(|(name, _)| name).zip(&charts) {
        if let Some(chart) = chart {
            writeln!(out, "chart of {name}: {}", chart.display())?;
        }
    }
    Ok(())
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

    #[test]
    fn checkpoint_file_is_replaced_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.json");
        write_atomically(&path, b"one").unwrap();
        write_atomically(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
    }

    #[test]
    fn read_body_refuses_a_body_over_the_limit_and_one_not_utf8() {
        assert_eq!(read_body(&mut &b"12345"[..], 5).unwrap(), b"12345");
        let e = read_body(&mut &b"123456789"[..], 5)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("stdin: request body of 9 bytes is over limits.max_request_bytes = 5"),
            "{e}"
        );
        let e = body::parse_body(b"{}", None)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("cannot tell the format"), "{e}");
        let e = body::parse_body(b"{\n  \"a\": \"\xff\"}", None)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("byte 0xff at offset 10 (line 2, column 9)"),
            "{e}"
        );
    }
}
