//! `condense config`: the effective configuration as a file (`--show`), the
//! price model of each model (`--models`), or the file's JSON Schema
//! (`--schema`).

use crate::common::Common;
use anyhow::{Context, Result};
use clap::{ArgGroup, Args};
use condense_config::AgentSettings;
use std::io::Write;

#[derive(Args)]
#[command(group(ArgGroup::new("output").required(true).args(["schema", "show", "models"])))]
pub struct ConfigArgs {
    /// Print the JSON Schema of the config file: every key with its description, type,
    /// default and allowed range. The compressor's keys are those the compressor publishes:
    /// the embedded one's, or those of --compressor (or of the one --config names).
    #[arg(long, conflicts_with_all = ["summarizer"])]
    pub schema: bool,
    /// Print the effective configuration as TOML: every key with the value condense uses,
    /// after the defaults, --config, --agent and --compressor/--summarizer.
    #[arg(long)]
    pub show: bool,
    /// Print what each model pattern costs and holds (the embedded table with the file's
    /// [models."PATTERN"] tables over it) and the threshold its requests are compacted at.
    /// A request's `model` is priced by the most specific pattern it matches.
    #[arg(long)]
    pub models: bool,
    #[command(flatten)]
    pub common: Common,
}

pub fn run(args: ConfigArgs, out: &mut dyn Write) -> Result<()> {
    if args.schema {
        // A compressor from a path publishes its own keys.
        let (settings, _) = args.common.load(AgentSettings::default())?;
        let text = match &settings.components.compressor {
            None => condense_config::json_schema_text(),
            Some(path) => {
                let published = crate::components::middleware(&settings)?
                    .runtime()
                    .settings_schema()?;
                let schema = serde_json::from_str(&published).with_context(|| {
                    format!(
                        "the compressor {} published a settings schema that is not JSON",
                        path.display()
                    )
                })?;
                condense_config::schema_text(&condense_config::json_schema_with(&schema))
            }
        };
        out.write_all(text.as_bytes())?;
        return Ok(());
    }
    let (settings, file) = args.common.load(AgentSettings::default())?;
    if args.models {
        return models(&settings, out);
    }
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
         # A valid config file to start from; what each key does: docs/configuration.md or\n\
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

/// The price table, one model pattern a line.
fn models(settings: &AgentSettings, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "{:<22} {:>8} {:>8} {:>6} {:>6} {:>5} {:>9} {:>10}",
        "model", "input", "output", "read", "write", "ttl", "window", "threshold"
    )?;
    for (pattern, price) in settings.models.entries() {
        let (for_model, ..) = settings.for_model(Some(pattern));
        writeln!(
            out,
            "{:<22} {:>8.2} {:>8.2} {:>6.2} {:>6.2} {:>5} {:>9} {:>10}",
            pattern,
            price.input,
            price.output,
            price.cache_read,
            price.write(),
            ttl_text(price.cache_ttl_seconds),
            price.context_window,
            for_model.core.token_threshold
        )?;
    }
    writeln!(
        out,
        "\ninput and output: USD per million tokens; read and write: shares of the input price \
         (cached reads, cache writes at the TTL the requests use); threshold: where its \
         requests are compacted (the model's own, else the agent's held to 80% of the window)."
    )?;
    Ok(())
}

/// `300` as `5m`, `3600` as `1h`, `90` as `90s`.
fn ttl_text(seconds: u32) -> String {
    match seconds {
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}
