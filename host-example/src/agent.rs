//! `condense agent`: a task run by a model with the coding toolset in a
//! working directory, condense in the model-call loop, every step journaled.
//! This module assembles the runtime's parts from the command line and the
//! config file; the loop itself is `condense_runtime::agent`.

use crate::common::Common;
use anyhow::{Context, Result, bail};
use clap::Args;
use condense_config::{AgentSettings, CompactionPolicy, RuntimeSettings, cold_settings_of};
use condense_contract::settings::CompactWhen;
use condense_host::ColdSettings;
use condense_host::FileStore;
use condense_host::prepared::Prepared;
use condense_runtime::agent::{Agent, Step};
use condense_runtime::context::{BlockKind, ContextCompiler};
use condense_runtime::journal::{Contents, Journal};
use condense_runtime::layers::{Condense, Layers, UsageMeter};
use condense_runtime::model::{
    AgentFrame, AnthropicConfig, AnthropicModel, Model, OpenAiConfig, OpenAiModel, key_from_env,
};
use condense_runtime::policy::{Automatic, Confirm, Due, Policy, RateLimited};
use condense_runtime::tools::{CommandPolicy, ToolClass, ToolRegistry, Workspace, coding_tools};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The wire format of the model endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Provider {
    /// OpenAI Chat Completions: OpenAI, Ollama, vLLM, llama.cpp server, most gateways.
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

/// What `condense agent` was asked to do.
pub struct AgentRun {
    pub provider: Provider,
    /// The endpoint's base URL (for OpenAI-compatible servers, up to `/v1`).
    pub model_url: Option<String>,
    pub model: String,
    /// The environment variable holding the API key.
    pub api_key_env: Option<String>,
    pub workdir: PathBuf,
    pub allow_commands: bool,
    /// The journal: created, or with `resume` continued.
    pub session: PathBuf,
    pub resume: bool,
    pub max_calls: u64,
    /// A file to append each compaction event to, as a JSON line.
    pub events: Option<PathBuf>,
    /// Overrides `[runtime] compaction`.
    pub compaction: Option<CompactionPolicy>,
    /// Prepare each compaction's summary while the model answers.
    pub prepare_ahead: bool,
    pub task: String,
}

/// The longest a compaction waits for its summary's job.
const PREPARE_WAIT: Duration = Duration::from_secs(10);

/// Runs the task, printing each tool call and the answer to `out`.
pub fn run(settings: &AgentSettings, run: &AgentRun, out: &mut dyn Write) -> Result<()> {
    // The model's price model: its threshold, and the cache prices the cost
    // rule weighs compactions with.
    let (settings, ..) = settings.for_model(Some(&run.model));
    // Preparing ahead, an LLM chain plans each compaction.
    let settings = match run.prepare_ahead {
        true => settings.preparing_ahead(),
        false => settings,
    };
    let settings = &settings;
    // Everything that can fail on bad input fails before the journal is
    // touched: the workdir, the key, the compressor's settings, the
    // components.
    let workspace = Workspace::new(&run.workdir)
        .with_context(|| format!("--workdir {}", run.workdir.display()))?;
    let tools = coding_tools(
        workspace.clone(),
        run.allow_commands.then(CommandPolicy::default),
    );
    let model = model(run)?;
    let compaction = run.compaction.unwrap_or(settings.runtime.compaction);
    let (compressor, cold) = compressor_settings(settings, &tools, compaction)?;
    let context = context(&settings.runtime, &workspace, &run.task)?;
    let events = crate::session::events_log(run.events.as_deref())?;
    // The frame the agent's requests send, for the LLM summarizer's.
    let frame = AgentFrame::default();
    let mut middleware = crate::components::middleware_in(settings, Some(&frame))?;
    if run.prepare_ahead {
        middleware = middleware.with_prepared(Arc::new(Prepared::new(PREPARE_WAIT, None)));
    }
    let (journal, journaled) = if run.resume {
        Journal::resume(&run.session)?
    } else {
        (Journal::create(&run.session)?, Contents::default())
    };
    if !journaled.torn.is_empty() {
        writeln!(
            out,
            "note: {}: {} line(s) torn by a crash were skipped",
            run.session.display(),
            journaled.torn.len()
        )?;
    }
    let mut condense = Condense::new(
        Arc::new(middleware),
        settings.core,
        compressor,
        Box::new(FileStore::new(run.session.with_extension("ckpt"))),
    )
    .with_placement(settings.runtime.summary_placement)
    .with_policy(policy(&settings.runtime, compaction))
    .with_frame(frame);
    if let Some(cold) = cold {
        condense = condense.with_cold_settings(cold.ttl, cold.settings);
    }
    if run.prepare_ahead {
        condense = condense.with_summaries_prepared_ahead();
    }
    // A resumed session's cache has been idle since its last model call.
    if let Some(at_ms) = journaled.last_model_call_ms() {
        condense = condense.with_last_call(std::time::UNIX_EPOCH + Duration::from_millis(at_ms));
    }
    let meter = UsageMeter::new();
    let chain = Layers::new().with(condense).with(meter.clone());
    let mut agent = Agent::new(
        model,
        Box::new(tools),
        chain,
        journal,
        &journaled,
        Vec::new(),
    )?
    .with_context(context);
    if let Some(events) = events {
        agent = agent.with_events(events);
    }
    // The model can read back what a compaction took out, from the journal.
    if let Some(recall) = settings.recall.recall() {
        agent = agent.with_recall(recall.budget_tokens);
    }
    // Each step as it happens: a tool call before it runs, its failure
    // after, condense's compactions.
    let mut printed: std::io::Result<()> = Ok(());
    let answer = agent.run_turn_with(&run.task, run.max_calls, |step| {
        if printed.is_ok() {
            printed = print_step(&step, out);
        }
    });
    printed?;
    let answer = answer?;
    let usage = meter.total();
    writeln!(out, "\n{}", answer.joined_text())?;
    writeln!(
        out,
        "\n{} model calls; provider tokens: {} in ({} cached), {} out; journal: {}",
        agent.calls(),
        usage.input_tokens,
        usage.cached_tokens,
        usage.output_tokens,
        run.session.display()
    )?;
    Ok(())
}

fn model(run: &AgentRun) -> Result<Box<dyn Model>> {
    let key = run.api_key_env.as_deref().map(key_from_env).transpose()?;
    Ok(match run.provider {
        Provider::Openai => {
            let Some(url) = &run.model_url else {
                bail!(
                    "--model-url is needed for an OpenAI-compatible model, e.g. http://127.0.0.1:11434/v1"
                );
            };
            Box::new(OpenAiModel::new(OpenAiConfig {
                api_key: key,
                ..OpenAiConfig::new(url.clone(), run.model.clone())
            }))
        }
        Provider::Anthropic => {
            let Some(key) = key else {
                bail!("an Anthropic model needs --api-key-env VAR (e.g. ANTHROPIC_API_KEY)");
            };
            let mut config = AnthropicConfig::new(run.model.clone(), key);
            if let Some(url) = &run.model_url {
                config.base_url = url.clone();
            }
            Box::new(AnthropicModel::new(config))
        }
    })
}

/// The compressor's settings JSON, for the embedded compressor with the
/// registry's tools added to its tool classes: the runtime knows what its own
/// tools do, so the config file needs no `[tools]` patterns for them. A
/// compressor loaded from a path gets its settings as written, untouched:
/// its keys are its own, and this host cannot know where it keeps its tool
/// classes, or whether it has any. For the embedded compressor, also how
/// long its cache lives and the settings that tell it the cache expired.
fn compressor_settings(
    settings: &AgentSettings,
    tools: &ToolRegistry,
    compaction: CompactionPolicy,
) -> Result<(String, Option<ColdSettings>)> {
    let Some(embedded) = settings.embedded_compressor() else {
        return Ok((settings.compressor_json(), None));
    };
    let mut embedded = embedded.map_err(anyhow::Error::msg)?;
    for class in [ToolClass::Mutating, ToolClass::ExecCapable] {
        embedded.tools.add(class, tools.names_of(class));
    }
    // A policy that must allow each compaction sees only those the threshold
    // makes due: the `cost` rule compacts inside the call that asks whether
    // one is due, before any policy is asked.
    if compaction != CompactionPolicy::Automatic {
        embedded.compact_when = CompactWhen::Threshold;
    }
    let json = embedded.to_json();
    Ok((json, Some(cold_settings_of(embedded))))
}

/// The system prompt's blocks: the configured persona (or condense
/// agent's own), rules and memory; the working directory as it was when the
/// run started (listed once: a listing that followed each edit would change
/// the prompt, and break the prompt cache, on every call); the task.
fn context(
    runtime: &RuntimeSettings,
    workspace: &Workspace,
    task: &str,
) -> Result<ContextCompiler> {
    let root = workspace.root();
    let mut context = ContextCompiler::new(runtime.budgets);
    context.set(
        BlockKind::Persona,
        runtime.persona.clone().unwrap_or_else(|| {
            "You are a coding agent. Use the tools to read, search and edit files in the \
             working directory; paths are relative to it. When the task is done, answer with \
             a short account of what you changed, without calling a tool."
                .to_owned()
        }),
    );
    let rules: Vec<String> = runtime.rules.iter().map(|r| format!("- {r}")).collect();
    context.set(BlockKind::Rules, rules.join("\n"));
    if let Some(file) = &runtime.memory_file {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("runtime.memory_file: cannot read {}", path.display()))?;
        context.set(BlockKind::Memory, text);
    }
    let mut entries: Vec<String> = std::fs::read_dir(root)
        .with_context(|| format!("--workdir {}", root.display()))?
        .filter_map(|e| e.ok())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                format!("{name}/")
            } else {
                name
            }
        })
        .collect();
    entries.sort();
    const LISTED: usize = 50;
    let more = entries.len().saturating_sub(LISTED);
    entries.truncate(LISTED);
    let mut workspace_text = format!(
        "Working directory: {}\nAt the start: {}",
        root.display(),
        if entries.is_empty() {
            "empty".to_owned()
        } else {
            entries.join(", ")
        }
    );
    if more > 0 {
        workspace_text.push_str(&format!(" and {more} more"));
    }
    context.set(BlockKind::Workspace, workspace_text);
    context.set(BlockKind::Task, task);
    Ok(context)
}

/// The compaction policy `[runtime]` asks for.
fn policy(runtime: &RuntimeSettings, kind: CompactionPolicy) -> Box<dyn Policy> {
    match kind {
        CompactionPolicy::Automatic => Box::new(Automatic),
        CompactionPolicy::RateLimited => Box::new(RateLimited::new(
            u64::from(runtime.min_calls_between_compactions),
            std::time::Duration::from_secs(u64::from(runtime.min_seconds_between_compactions)),
            u64::from(runtime.context_window),
        )),
        CompactionPolicy::Confirm => Box::new(Confirm(ask_on_terminal)),
    }
}

/// Asks on stderr and reads the answer from stdin (stdout carries the run's
/// output). An empty answer or `y` compacts; end of input, or anything
/// else, sends the request as it stands: it is asked again next call.
fn ask_on_terminal(due: &Due) -> bool {
    eprint!(
        "condense: call {}: the request is ~{} tokens, over the {}-token threshold. Compact now? [Y/n] ",
        due.call, due.request_tokens, due.threshold
    );
    let mut answer = String::new();
    match std::io::stdin().read_line(&mut answer) {
        Ok(0) | Err(_) => {
            eprintln!();
            false
        }
        Ok(_) => matches!(answer.trim(), "" | "y" | "Y" | "yes"),
    }
}

fn print_step(step: &Step<'_>, out: &mut dyn Write) -> std::io::Result<()> {
    match step {
        Step::Calling(call) => writeln!(out, "→ {}({})", call.name, call.arguments)?,
        Step::Answered(result) if result.is_error => {
            writeln!(out, "  ✗ {}", first_line(&result.content))?
        }
        Step::Answered(_) => {}
        Step::Compacted(c) => writeln!(
            out,
            "  ⋯ condense compacted the request: ~{} → ~{} tokens, {} messages folded",
            c.tokens_before, c.tokens_after, c.messages_folded
        )?,
    }
    out.flush()
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

#[derive(Args)]
pub struct AgentArgs {
    #[command(flatten)]
    pub common: Common,
    /// The model endpoint's wire format.
    #[arg(long, value_enum, default_value = "openai")]
    pub provider: crate::agent::Provider,
    /// Base URL of the endpoint: for OpenAI-compatible servers up to `/v1`
    /// (http://127.0.0.1:11434/v1 for Ollama); Anthropic's by default.
    #[arg(long, value_name = "URL")]
    pub model_url: Option<String>,
    /// Model name, as the endpoint knows it.
    #[arg(long, value_name = "NAME")]
    pub model: String,
    /// Environment variable holding the API key (none is sent without it).
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// Directory the file tools work in, and may not leave. Default: the current one.
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Give the model a tool to run shell commands in the working directory (30 s
    /// timeout, 64 KiB of output).
    #[arg(long)]
    pub allow_commands: bool,
    /// Journal to start (it must not exist). Default: condense-session-<time>.jsonl in
    /// the current directory.
    #[arg(long, value_name = "FILE", conflicts_with = "resume")]
    pub session: Option<PathBuf>,
    /// Journal of a session to continue.
    #[arg(long, value_name = "SESSION")]
    pub resume: Option<PathBuf>,
    /// Model calls the task may take before the agent stops.
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub max_calls: u64,
    /// Append each compaction event (trigger, tokens before/after, messages folded,
    /// passes, summarizer, cache breaks so far, time) to FILE as a JSON line. They are
    /// in the journal too, and logged (CONDENSE_LOG=info).
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// Whether a due compaction proceeds: automatic, rate-limited (see [runtime] in
    /// `condense config --show`), or confirm (asked on the terminal). Default: [runtime]
    /// compaction, automatic.
    #[arg(long, value_enum, value_name = "POLICY")]
    pub compaction: Option<condense_config::CompactionPolicy>,
    /// Write each compaction's summary ahead, on a thread, while the model answers, so
    /// that no compaction waits for an LLM summarizer (half way to the compaction
    /// unless the config sets prepare_at_permille; a compaction waits at most 10 s for
    /// its job). Only under a policy that allows every compaction (automatic). Its
    /// summary requests go out beside the agent's own: with a cache-friendly [llm]
    /// they start from the agent's request as it was when the job began.
    #[arg(long)]
    pub prepare_ahead: bool,
    /// What the agent is to do.
    #[arg(value_name = "TASK")]
    pub task: String,
}

/// `condense agent` from its arguments.
pub fn command(args: AgentArgs, out: &mut dyn Write) -> Result<()> {
    let settings = args.common.settings(AgentSettings::default())?;
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
        prepare_ahead: args.prepare_ahead,
        task: args.task,
    };
    crate::agent::run(&settings, &run, out)
}
