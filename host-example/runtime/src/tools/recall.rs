//! `condense_recall`: the original text of what a compaction took out of the
//! request, read back from the session's own history (the journal's), by
//! the handle the summary or a placeholder names
//! ([`condense_model::recall`]). Not a registry tool: it reads the agent's
//! history, so the agent runs it itself.

use super::args::{self, Param};
use super::{ToolClass, ToolOutput, ToolSpec};
use condense_model::Message;
use serde_json::Value;

/// The tool's name, as the model calls it.
pub const NAME: &str = condense_model::recall::TOOL_NAME;

/// The most tokens of text one recall gives back, unless set otherwise: a
/// few files' worth, far under what a compaction took out.
pub const DEFAULT_BUDGET_TOKENS: u32 = 4_000;

const HANDLE: Param = Param::string(
    "handle",
    "The handle the summary or a placeholder names, e.g. f3a91c0b2d4e",
);
const QUERY: Param = Param::string(
    "query",
    "Only the lines holding all these words (any case); leave it out for everything",
)
.optional();
const PARAMS: &[Param] = &[HANDLE, QUERY];

/// The tool definition the model is sent.
pub fn spec() -> ToolSpec {
    args::spec(
        NAME,
        condense_model::recall::TOOL_DESCRIPTION,
        ToolClass::ReadOnly,
        PARAMS,
    )
}

/// Runs a call with `arguments` against `history`, giving back at most
/// about `budget_tokens` of text.
pub fn run(history: &[Message], arguments: &str, budget_tokens: u32) -> ToolOutput {
    let spec = spec();
    let arguments: Value = match serde_json::from_str(arguments) {
        Ok(value) => value,
        Err(e) => return ToolOutput::error(format!("{NAME}: arguments are not JSON: {e}")),
    };
    args::invoke(&spec, PARAMS, &arguments, |args| {
        let recalled = condense_model::recall::recall(
            history,
            args.string(&HANDLE)?,
            args.opt_string(&QUERY)?,
            budget_tokens,
        )?;
        Ok(ToolOutput::ok(recalled.text))
    })
}
