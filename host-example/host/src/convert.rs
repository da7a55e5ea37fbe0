//! The generated bindings of `wit/condense.wit`, and the conversions between
//! their types and `condense_model`'s (expanded from the one definition in
//! `condense_model::wit_conversions!`, which the guests' SDK expands too).
//!
//! Bindings are generated once per world the host drives. Both worlds use the
//! `types` interface; the summarizer world reuses the compressor world's
//! generated types (`with`), so a summary request the compressor sends can be
//! forwarded to the summarizer as it is, with no conversion.

/// Bindings of `compressor-world`: the host calls the `compressor` export and
/// provides the `summarizer` import.
pub mod compressor_world {
    wasmtime::component::bindgen!({
        world: "compressor-world",
        path: "../../wit",
        // The host's `summarize` runs another guest, which can fail; the
        // failure must reach the host as such instead of as a summary.
        imports: { default: trappable },
    });
}

/// Bindings of `llm-summarizer-world`: the host calls the `summarizer`
/// export and provides the `llm` import. Every summarizer is loaded with
/// them; one that does not import `llm` (a `summarizer-world` component)
/// simply never calls it.
pub mod summarizer_world {
    wasmtime::component::bindgen!({
        world: "llm-summarizer-world",
        path: "../../wit",
        with: { "condense:middleware/types": super::compressor_world::condense::middleware::types },
    });
}

pub use compressor_world::condense::middleware::types as wit;

condense_model::wit_conversions!(crate::convert::wit);

#[cfg(test)]
mod tests {
    use super::wit;
    use condense_model::{Checkpoint, Item, Message, Part, Role, ToolCall};

    #[test]
    fn messages_and_items_survive_the_round_trip() {
        let m = Message {
            role: Role::Assistant,
            parts: vec![
                Part::Text("t".into()),
                Part::ToolCall(ToolCall {
                    id: "1".into(),
                    name: "n".into(),
                    arguments: "{}".into(),
                }),
                Part::Opaque("{}".into()),
            ],
        };
        assert_eq!(Message::from(wit::Message::from(&m)), m);
        for item in [
            Item::Kept(3),
            Item::Rewritten(4, m.clone()),
            Item::Written(m),
        ] {
            assert_eq!(Item::from(wit::Item::from(&item)), item);
        }
        let cp = Checkpoint {
            version: 1,
            boundary: 7,
            state: vec![1, 2, 3],
        };
        assert_eq!(Checkpoint::from(wit::Checkpoint::from(&cp)), cp);
    }
}
