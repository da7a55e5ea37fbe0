//! `condense agent`: a task run by a model with the coding toolset in a
//! working directory, condense in the model-call loop, every step journaled.
//! This module assembles the runtime's parts from the command line and the
//! config file; the loop itself is `condense_runtime::agent`.

use crate::settings::Settings;
use anyhow::{Context, Result, bail};
use condense_host::FileStore;
use condense_model::{Message, Part, Role};
use condense_runtime::agent::Agent;
use condense_runtime::chain::{Chain, Condense, UsageMeter};
use condense_runtime::events::EventLog;
use condense_runtime::journal::{Contents, Journal};
use condense_runtime::model::{
    AnthropicConfig, AnthropicModel, Model, OpenAiConfig, OpenAiModel, key_from_env,
};
use condense_runtime::tools::{CommandPolicy, ToolClass, ToolRegistry, Workspace, coding_tools};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    pub task: String,
}

/// Runs the task, printing each tool call and the answer to `out`.
pub fn run(settings: &Settings, run: &AgentRun, out: &mut dyn Write) -> Result<()> {
    // Everything that can fail on bad input fails before the journal is
    // touched: the workdir, the key, the components.
    let workspace = Workspace::new(&run.workdir)
        .with_context(|| format!("--workdir {}", run.workdir.display()))?;
    let tools = coding_tools(
        workspace.clone(),
        run.allow_commands.then(CommandPolicy::default),
    );
    let model = model(run)?;
    let events = run
        .events
        .as_ref()
        .map(|path| EventLog::open(path).with_context(|| format!("--events {}", path.display())))
        .transpose()?;
    let middleware = settings.middleware()?;
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
    let condense = Condense::new(
        Arc::new(middleware),
        settings.core,
        compressor_settings(settings, &tools),
        Box::new(FileStore::new(run.session.with_extension("ckpt"))),
    );
    let meter = UsageMeter::new();
    let chain = Chain::new().with(condense).with(meter.clone());
    let mut agent = Agent::new(
        model,
        Box::new(tools),
        chain,
        journal,
        &journaled,
        vec![system_prompt(workspace.root())],
    )?;
    if let Some(events) = events {
        agent = agent.with_events(events);
    }
    let start = agent.history().len();
    let answer = agent.run_turn(&run.task, run.max_calls);
    // What the turn did, also when it stopped early: every tool call and
    // its outcome is in the history.
    for message in &agent.history().messages()[start..] {
        for part in &message.parts {
            match part {
                Part::ToolCall(call) => writeln!(out, "→ {}({})", call.name, call.arguments)?,
                Part::ToolResult(result) if result.is_error => {
                    writeln!(out, "  ✗ {}", first_line(&result.content))?
                }
                _ => {}
            }
        }
    }
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

/// The compressor's settings with the registry's tools added to its tool
/// classes: the runtime knows what its own tools do, so the config file
/// needs no `[tools]` patterns for them.
fn compressor_settings(settings: &Settings, tools: &ToolRegistry) -> String {
    let mut json = settings.compressor.clone();
    let table = json
        .entry("tools")
        .or_insert_with(|| Value::Object(Default::default()));
    for (key, class) in [
        ("mutating", ToolClass::Mutating),
        ("exec_capable", ToolClass::ExecCapable),
    ] {
        // The config file's schema makes `tools` a table of lists.
        if let Some(list) = table
            .as_object_mut()
            .map(|t| t.entry(key).or_insert_with(|| Value::Array(Vec::new())))
            .and_then(Value::as_array_mut)
        {
            list.extend(tools.names_of(class).into_iter().map(Value::String));
        }
    }
    Value::Object(json).to_string()
}

fn system_prompt(workdir: &Path) -> Message {
    Message::text(
        Role::System,
        format!(
            "You are a coding agent working in the directory {}. Use the tools to read, \
             search and edit files there; paths are relative to it. When the task is done, \
             answer with a short account of what you changed, without calling a tool.",
            workdir.display()
        ),
    )
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}
