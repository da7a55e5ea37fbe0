//! The wit-bindgen glue: converts between the WIT types (shared through
//! `condense_guest_sdk`) and `condense_model`, and calls the pure pipeline.
//! Everything else in this crate is plain Rust.

wit_bindgen::generate!({
    world: "compressor-world",
    path: "../../wit",
    with: { "condense:middleware/types@0.2.0": condense_guest_sdk::types },
});

use condense::middleware::{folding, prepare, recall, summarizer};
use condense_guest_sdk::types as wit;

struct Component;

impl exports::condense::middleware::compressor::Guest for Component {
    fn compress(request: wit::CompressRequest) -> Result<wit::Outcome, wit::CompressError> {
        let settings =
            crate::Settings::parse(&request.settings).map_err(wit::CompressError::InvalidConfig)?;
        let history: Vec<condense_model::Message> =
            request.history.into_iter().map(Into::into).collect();
        let checkpoint = request.checkpoint.map(condense_model::Checkpoint::from);
        let config = condense_model::CoreConfig::from(request.config);
        // What the fold replaces goes to the host first, for a summarizer
        // that asks the model in the agent's own conversation.
        let mut summarize = |request: condense_model::SummaryRequest,
                             replaced: &[condense_model::Item]| {
            let replaced: Vec<wit::Item> = replaced.iter().map(Into::into).collect();
            folding::replaces(&replaced);
            summarizer::summarize(&(&request).into())
        };
        crate::compress(
            crate::Request {
                history: &history,
                offset: request.offset as usize,
                config: &config,
                settings: &settings,
                checkpoint: checkpoint.as_ref(),
                tokens: request.tokens.as_deref(),
                recall: recall::offered(),
                preparing: prepare::preparing(),
            },
            &mut summarize,
        )
        .map(|outcome| {
            if !outcome.handles.is_empty() {
                let named: Vec<recall::Handle> = outcome.handles.iter().map(handle).collect();
                recall::named(&named);
            }
            if outcome.prepare_due {
                prepare::due();
            }
            outcome.into()
        })
        .map_err(Into::into)
    }

    fn settings_schema() -> String {
        crate::Settings::schema()
    }

    fn validate_settings(settings: String) -> Result<(), String> {
        crate::Settings::parse(&settings).map(|_| ())
    }
}

export!(Component);

fn handle(h: &condense_model::recall::Handle) -> recall::Handle {
    let (start, end) = match h.span {
        condense_model::recall::Span::Fold { end } => (0, end),
        condense_model::recall::Span::Message(i) => (i, i + 1),
    };
    recall::Handle {
        id: h.id.clone(),
        start: start as u32,
        end: end as u32,
    }
}
