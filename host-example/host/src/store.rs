//! Where one session's checkpoint is kept between calls: a file
//! ([`FileStore`], replaced atomically) or memory ([`MemoryStore`]); the
//! stores of many sessions (an embedded database, Redis) are in
//! `condense-sessions`, behind the same [`CheckpointStore`].

use crate::middleware::SessionCheckpoint;
use condense_model::Message;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Where one session's checkpoint is kept between calls.
///
/// Each call hands the store the history it compresses: a store of one
/// session ([`FileStore`], [`MemoryStore`]) ignores it, a store of many
/// (`condense_sessions::Lookup`) finds the session's checkpoint from it.
pub trait CheckpointStore {
    /// The checkpoint stored for the session `history` belongs to;
    /// `Ok(None)` when there is none yet.
    fn load(&mut self, history: &[Message]) -> Result<Option<SessionCheckpoint>, StoreError>;
    /// Stores `checkpoint`, made for `history`, as the session's latest.
    fn save(
        &mut self,
        history: &[Message],
        checkpoint: &SessionCheckpoint,
    ) -> Result<(), StoreError>;
    /// Removes the stored checkpoint (one that could not be read, when the
    /// call made none to replace it).
    fn clear(&mut self) -> Result<(), StoreError>;
    /// Records that the session of `history` was sent a request at `now_ms`
    /// (ms since the Unix epoch), and returns when its previous one was, if
    /// this store keeps that: a store shared by many sessions and hosts
    /// (the proxy's) does. One session's store keeps nothing by default: its
    /// host knows its own calls.
    fn touch(&mut self, _history: &[Message], _now_ms: u64) -> Result<Option<u64>, StoreError> {
        Ok(None)
    }
    /// The session the history [`load`](CheckpointStore::load) was last
    /// handed belongs to, in a store of many sessions: what is kept for a
    /// session apart from its checkpoint (summaries prepared ahead) is kept
    /// for it alone. A store of one session names none.
    fn owner(&self) -> Option<&str> {
        None
    }
    /// Whose requests the store's are, when a host serves several tenants:
    /// what condense remembers of the messages it has read (so as not to
    /// read them again) is remembered per scope, so that how quickly a
    /// request is read says nothing of what another tenant sent. Known
    /// before any request is read; 0: one scope.
    fn scope(&self) -> u64 {
        0
    }
}

/// A checkpoint store that failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot read checkpoint file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("checkpoint file {path} is not a checkpoint this condense reads ({reason})")]
    Unreadable { path: PathBuf, reason: String },
    #[error("cannot write checkpoint file {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A store of many sessions (`condense-sessions`) failed: it is down,
    /// not merely missing this session (a caller does not recompute a fold
    /// it could not store; see [`crate::BodyError::Store`]).
    #[error("checkpoint store ({store}): {reason}")]
    Backend { store: &'static str, reason: String },
}

/// The checkpoint in memory, for hosts that keep sessions themselves.
#[derive(Clone, Debug, Default)]
pub struct MemoryStore(pub Option<SessionCheckpoint>);

impl CheckpointStore for MemoryStore {
    fn load(&mut self, _: &[Message]) -> Result<Option<SessionCheckpoint>, StoreError> {
        Ok(self.0.clone())
    }

    fn save(&mut self, _: &[Message], checkpoint: &SessionCheckpoint) -> Result<(), StoreError> {
        self.0 = Some(checkpoint.clone());
        Ok(())
    }

    fn clear(&mut self) -> Result<(), StoreError> {
        self.0 = None;
        Ok(())
    }
}

/// One file per session, JSON. A missing file is a session without a
/// checkpoint yet; a new checkpoint is written to a temporary file beside
/// it, flushed to disk and renamed over it, so a reader (or a crash) never
/// sees half a file.
#[derive(Clone, Debug)]
pub struct FileStore {
    path: PathBuf,
}

impl FileStore {
    pub fn new(path: impl Into<PathBuf>) -> FileStore {
        FileStore { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl CheckpointStore for FileStore {
    fn load(&mut self, _: &[Message]) -> Result<Option<SessionCheckpoint>, StoreError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|e| StoreError::Unreadable {
                        path: self.path.clone(),
                        reason: e.to_string(),
                    })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StoreError::Read {
                path: self.path.clone(),
                source,
            }),
        }
    }

    fn save(&mut self, _: &[Message], checkpoint: &SessionCheckpoint) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec_pretty(checkpoint).expect("a checkpoint serialises");
        write_atomically(&self.path, &bytes).map_err(|source| StoreError::Write {
            path: self.path.clone(),
            source,
        })
    }

    fn clear(&mut self) -> Result<(), StoreError> {
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(StoreError::Write {
                path: self.path.clone(),
                source: e,
            }),
            _ => Ok(()),
        }
    }
}

/// Writes `bytes` to a temporary file beside `path`, flushes it to disk and
/// renames it over `path`. Errors are about `path`, never the temporary name.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_and_file_stores_keep_what_they_are_given() {
        let checkpoint = SessionCheckpoint {
            summary: None,
            checkpoint: condense_model::Checkpoint {
                version: 1,
                boundary: 4,
                state: b"{}".to_vec(),
            },
            prefix_hash: "ab".into(),
        };
        let mut memory = MemoryStore::default();
        assert!(memory.load(&[]).unwrap().is_none());
        memory.save(&[], &checkpoint).unwrap();
        assert_eq!(memory.load(&[]).unwrap(), Some(checkpoint.clone()));

        let dir = tempfile::tempdir().unwrap();
        let mut file = FileStore::new(dir.path().join("session.ckpt"));
        assert!(file.load(&[]).unwrap().is_none());
        file.save(&[], &checkpoint).unwrap();
        assert_eq!(file.load(&[]).unwrap(), Some(checkpoint));
        // Nothing but the file itself is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        std::fs::write(file.path(), "{\"checkpoint\": 3}").unwrap();
        let e = file.load(&[]).unwrap_err().to_string();
        assert!(e.contains("is not a checkpoint this condense reads"), "{e}");
    }

    #[test]
    fn an_unwritable_store_is_named_by_its_own_path() {
        let mut file = FileStore::new("/nonexistent-dir/session.ckpt");
        let checkpoint = SessionCheckpoint {
            summary: None,
            checkpoint: condense_model::Checkpoint {
                version: 1,
                boundary: 0,
                state: Vec::new(),
            },
            prefix_hash: String::new(),
        };
        let e = file.save(&[], &checkpoint).unwrap_err().to_string();
        assert!(
            e.starts_with("cannot write checkpoint file /nonexistent-dir/session.ckpt"),
            "{e}"
        );
    }
}
