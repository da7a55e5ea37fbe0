//! `condense summarize`: one fold of a whole session (or its first N
//! messages) by a summarizer component, printed with its size and time —
//! the way to try a summarizer out, without a compressor deciding what to
//! fold.

use crate::common::Common;
use crate::session::SessionFile;
use anyhow::{Context, Result, bail};
use clap::Args;
use condense_config::AgentSettings;
use condense_model::tokens::{estimate_text, estimate_total};
use condense_model::{Role, SummaryRequest};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What `condense summarize` was asked to do.
pub struct SummarizeRun {
    pub session: PathBuf,
    /// Fold only the first N messages of the session.
    pub upto: Option<usize>,
    /// The summarizer's settings: a JSON or TOML file.
    pub settings: Option<PathBuf>,
    /// The budget; `None`: the configured `summary_max_tokens`.
    pub max_tokens: Option<u32>,
    /// The language tag; `None`: detected from the person's messages, as
    /// the compressor does.
    pub language: Option<String>,
}

pub fn run(settings: &AgentSettings, run: &SummarizeRun, out: &mut dyn Write) -> Result<()> {
    let session = SessionFile::read(&run.session)?;
    let mut messages = session.into_messages();
    if let Some(n) = run.upto {
        if n == 0 || n > messages.len() {
            bail!(
                "--upto {n}: the session has {} messages; give 1 to {}",
                messages.len(),
                messages.len()
            );
        }
        messages.truncate(n);
    }
    // What a compressor would fold: everything but the system messages.
    messages.retain(|m| m.role != Role::System);
    if messages.is_empty() {
        bail!("{}: no messages to summarize", run.session.display());
    }
    let summarizer_settings = match &run.settings {
        Some(path) => read_settings(path)?,
        None => "{}".to_owned(),
    };
    let request = SummaryRequest {
        previous_summary: String::new(),
        language: run
            .language
            .clone()
            .unwrap_or_else(|| condense_contract::language::detect(&messages).to_owned()),
        max_tokens: run.max_tokens.unwrap_or(settings.core.summary_max_tokens),
        settings: summarizer_settings,
        messages,
    };
    let middleware = crate::components::middleware(settings)?;
    let runtime = middleware.runtime();
    let started = Instant::now();
    let result = runtime.summarize(&request);
    let elapsed = started.elapsed();
    let summary = match result {
        Ok(Ok(summary)) => summary,
        Ok(Err(why)) => bail!("{} refused to summarize: {why}", runtime.summarizer()),
        Err(failure) => bail!("{failure}"),
    };
    writeln!(out, "{summary}")?;
    let tokens = estimate_text(&summary);
    writeln!(
        out,
        "\n--- {} messages (~{} tokens) folded by {} into ~{tokens} tokens (budget {}{}) in {:.1?}",
        request.messages.len(),
        estimate_total(&request.messages),
        runtime.summarizer(),
        request.max_tokens,
        if tokens > request.max_tokens {
            "; over it: a compressor would cut it"
        } else {
            ""
        },
        elapsed
    )?;
    Ok(())
}

/// A settings file as the JSON text a summarizer reads: JSON as it is, TOML
/// (by its `.toml` extension) converted. Either must be an object.
fn read_settings(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--settings: cannot read {}", path.display()))?;
    let value: serde_json::Value = if path.extension().is_some_and(|e| e == "toml") {
        let table: toml::Table = toml::from_str(&text)
            .with_context(|| format!("--settings {}: not valid TOML", path.display()))?;
        serde_json::to_value(table)?
    } else {
        serde_json::from_str(&text)
            .with_context(|| format!("--settings {}: not valid JSON", path.display()))?
    };
    if !value.is_object() {
        bail!(
            "--settings {}: the settings must be an object (a table), not {value}",
            path.display()
        );
    }
    Ok(value.to_string())
}

#[derive(Args)]
pub struct SummarizeArgs {
    #[command(flatten)]
    pub common: Common,
    /// The summarizer's own settings: a JSON or TOML (.toml) file holding an object.
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// Fold only the first N messages of the session.
    #[arg(long, value_name = "N")]
    pub upto: Option<usize>,
    /// The summary's token budget. Default: summary_max_tokens of the config (5000).
    #[arg(long, value_name = "TOKENS")]
    pub max_tokens: Option<u32>,
    /// The conversation's language tag (en, de, zh, ...). Default: detected from the
    /// person's messages, as the compressor does.
    #[arg(long, value_name = "TAG")]
    pub language: Option<String>,
    /// The session: a journal (.jsonl) or a request body / message list.
    #[arg(value_name = "SESSION")]
    pub session: PathBuf,
}
