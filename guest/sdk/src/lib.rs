//! What every Rust guest of condense shares: the WIT `types` interface,
//! generated here once, and lossless conversions between those types and
//! `condense_model`, where the guests' logic lives. A component crate generates
//! its own world with
//! `with: { "condense:middleware/types@0.2.0": condense_guest_sdk::types }`
//! so its bindings use these types, and converts with `.into()`.

wit_bindgen::generate!({
    inline: "
        package condense:guest-sdk;
        world types-only { import condense:middleware/types@0.2.0; }
    ",
    path: "../../wit",
    generate_all,
});

/// The generated WIT types (`condense:middleware/types`).
pub use condense::middleware::types;

condense_model::wit_conversions!(crate::types);

#[cfg(test)]
mod tests {
    use super::types as wit;
    use condense_model as model;

    #[test]
    fn messages_round_trip() {
        let m = model::Message {
            role: model::Role::Assistant,
            parts: vec![
                model::Part::Text("t".into()),
                model::Part::Thinking(model::Thinking {
                    text: "k".into(),
                    signature: Some("s".into()),
                }),
                model::Part::ToolCall(model::ToolCall {
                    id: "1".into(),
                    name: "n".into(),
                    arguments: "{}".into(),
                }),
                model::Part::ToolResult(model::ToolResult {
                    call_id: "1".into(),
                    content: "c".into(),
                    is_error: true,
                }),
                model::Part::Opaque("{\"type\":\"image\"}".into()),
            ],
        };
        let w: wit::Message = (&m).into();
        assert_eq!(model::Message::from(w), m);
    }
}
