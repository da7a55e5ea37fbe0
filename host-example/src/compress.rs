//! `condense compress`: one request body from stdin, compressed, to stdout.

use crate::common::Common;
use anyhow::{Context, Result, bail};
use clap::Args;
use condense_config::AgentSettings;
use condense_host::formats::Format;
use condense_host::store::{CheckpointStore, FileStore, MemoryStore, write_atomically};
use condense_host::{BodyConfig, body};
use std::io::{Read, Write};
use std::path::PathBuf;

#[derive(Args)]
pub struct CompressArgs {
    #[command(flatten)]
    pub common: Common,
    /// Checkpoint file: read if it exists, replaced (atomically) with the new checkpoint.
    /// Keep one per session so compactions are reused between calls.
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<PathBuf>,
    /// Write a JSON report (tokens before/after, trigger, boundary, failures, time) here.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Request body format (`openai`: Chat Completions; `responses`: OpenAI
    /// Responses, `input` a list of items; `anthropic`: Messages); `auto`
    /// tells them apart by their shape.
    #[arg(long, default_value = AUTO, value_name = "FORMAT", value_parser = format_names())]
    pub format: String,
}

/// The `--format` that detects the protocol.
const AUTO: &str = "auto";

/// `--format`'s values: [`AUTO`] and each protocol's name, as `formats`
/// describes them, so a protocol added there is a value here.
fn format_names() -> clap::builder::PossibleValuesParser {
    let names: Vec<&'static str> = std::iter::once(AUTO)
        .chain(Format::ALL.map(Format::name))
        .collect();
    clap::builder::PossibleValuesParser::new(names)
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

pub fn run(args: CompressArgs, stdin: &mut dyn Read, stdout: &mut dyn Write) -> Result<()> {
    // Everything that can fail on bad input is checked before anything is
    // written.
    let settings = args.common.settings(AgentSettings::default())?;
    let input = read_body(stdin, settings.limits.max_request_bytes as usize)?;
    let format = (args.format != AUTO)
        .then(|| args.format.parse::<Format>())
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let middleware = crate::components::middleware(&settings)?;
    // The body goes to a sender that cannot answer `condense_recall` calls:
    // no handles, no tool, whatever `[recall]` says (the proxy and `condense
    // agent` answer them).
    let config = BodyConfig {
        recall: None,
        ..settings.body_config()
    };
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

#[cfg(test)]
mod tests {
    use super::*;

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
