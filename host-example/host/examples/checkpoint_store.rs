//! Keep checkpoints in your own store.
//!
//! `compress_body` takes a request body as the client sent it (OpenAI Chat,
//! OpenAI Responses or Anthropic Messages), compresses its message list and
//! returns the body to send, loading the session's checkpoint from a store
//! before and saving the new one after. The host library has two stores of
//! one session (`FileStore`, `MemoryStore`) and `condense-sessions` stores of
//! many (in memory, redb, Redis); anything else is the `CheckpointStore`
//! trait: here a directory with a JSON file per session, named by an id your
//! agent already has.
//!
//! ```sh
//! cargo run -p condense-host --example checkpoint_store -- \
//!     compressor.wasm summarizer.wasm /tmp/checkpoints
//! ```

use condense_host::store::StoreError;
use condense_host::{
    BodyConfig, CheckpointStore, ComponentSource, Limits, Middleware, Runtime, SessionCheckpoint,
    compress_body,
};
use condense_model::{CoreConfig, Message};
use std::path::PathBuf;

/// One session's checkpoint in `dir/<session>.json`.
struct JsonDir {
    dir: PathBuf,
    session: String,
}

impl JsonDir {
    fn file(&self) -> PathBuf {
        self.dir.join(format!("{}.json", self.session))
    }
}

impl CheckpointStore for JsonDir {
    fn load(&mut self, _history: &[Message]) -> Result<Option<SessionCheckpoint>, StoreError> {
        match std::fs::read(self.file()) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|e| StoreError::Unreadable {
                        path: self.file(),
                        reason: e.to_string(),
                    })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StoreError::Read {
                path: self.file(),
                source,
            }),
        }
    }

    fn save(
        &mut self,
        _history: &[Message],
        checkpoint: &SessionCheckpoint,
    ) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec(checkpoint).expect("a checkpoint serialises");
        // Written whole or not at all: a crash leaves the previous one.
        condense_host::store::write_atomically(&self.file(), &bytes).map_err(|source| {
            StoreError::Write {
                path: self.file(),
                source,
            }
        })
    }

    fn clear(&mut self) -> Result<(), StoreError> {
        match std::fs::remove_file(self.file()) {
            Err(source) if source.kind() != std::io::ErrorKind::NotFound => {
                Err(StoreError::Write {
                    path: self.file(),
                    source,
                })
            }
            _ => Ok(()),
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [compressor, summarizer, dir] = &args[..] else {
        return Err("usage: checkpoint_store <compressor.wasm> <summarizer.wasm> <dir>".into());
    };
    std::fs::create_dir_all(dir)?;
    let middleware = Middleware::new(Runtime::new(
        Limits::default(),
        ComponentSource::Path(compressor.into()),
        ComponentSource::Path(summarizer.into()),
    )?);
    // A small threshold and a short verbatim tail (the last two user
    // turns), so that this short conversation is compacted.
    let config = BodyConfig {
        core: CoreConfig {
            recent_turns: 2,
            ..CoreConfig::for_threshold(2_000)
        },
        settings: "{}".into(),
        cold: None,
        recall: None,
    };
    let mut store = JsonDir {
        dir: dir.into(),
        session: "ticket-4711".into(),
    };

    // An OpenAI Chat Completions body that grows by a turn per call.
    let mut messages = vec![serde_json::json!({"role": "system", "content": "You fix bugs."})];
    for turn in 0..12 {
        messages.push(serde_json::json!({
            "role": "user",
            "content": format!("Step {turn}: the parser drops the last field of line {turn}. {}", "Details follow. ".repeat(60)),
        }));
        let body = serde_json::json!({"model": "any", "messages": messages});
        let sent = compress_body(
            &middleware,
            &config,
            body.to_string().as_bytes(),
            None,
            &mut store,
        )?;
        let sent: serde_json::Value = serde_json::from_slice(&sent.body)?;
        println!(
            "call {turn}: {} messages sent of {}; a checkpoint stored: {}",
            sent["messages"].as_array().map_or(0, Vec::len),
            messages.len(),
            store.file().exists(),
        );
        messages.push(
            serde_json::json!({"role": "assistant", "content": format!("Fixed step {turn}.")}),
        );
    }
    Ok(())
}
