//! What a summary remembers, independent of how it is written down: `format`
//! reads it from the previous summary and writes it back, `extract` adds the
//! newly folded messages to it.
//!
//! The digest holds the facts and keeps its ledgers in order; what an entry
//! means (which request is the person's, which one a harness wrote) is
//! `extract`'s to say, as it wrote them, so this module imports neither of
//! the two that use it.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, DefaultHasher, Hash};

/// Entries ordered by their latest mention: mentioning an entry again moves it to
/// the end, so the front holds what was least recently relevant and the budget
/// drops from there. Lookups are hashed so n mentions cost O(n).
pub struct Recent<K, V> {
    /// Slots vacated by re-mentions become `None`; a digest lives for one call, so
    /// these tombstones are never compacted.
    slots: Vec<Option<(K, V)>>,
    index: HashMap<K, usize, FixedState>,
}

/// A hasher without random keys: the guest needs no entropy source, and
/// nothing iterates these maps, so order never leaks into the output.
pub type FixedState = BuildHasherDefault<DefaultHasher>;

impl<K, V> Default for Recent<K, V> {
    fn default() -> Self {
        Recent {
            slots: Vec::new(),
            index: HashMap::default(),
        }
    }
}

impl<K: Clone + Eq + Hash, V: Default> Recent<K, V> {
    /// Moves `key` to the end (inserting a default value if new) and returns its value.
    pub fn touch(&mut self, key: K) -> &mut V {
        let value = match self.index.get(&key) {
            Some(&slot) => self.slots[slot].take().map(|(_, v)| v).unwrap_or_default(),
            None => V::default(),
        };
        self.index.insert(key.clone(), self.slots.len());
        self.slots.push(Some((key, value)));
        let (_, value) = self
            .slots
            .last_mut()
            .and_then(Option::as_mut)
            .expect("just pushed");
        value
    }

    /// Takes `key` out, returning its value.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        let slot = self.index.remove(key)?;
        self.slots[slot].take().map(|(_, v)| v)
    }

    /// Renames `key` to `new` where it stands (the order is unchanged); if
    /// `new` is already there, `key` is taken out and `new` keeps its place
    /// and value.
    pub fn rekey(&mut self, key: &K, new: K) {
        let Some(slot) = self.index.remove(key) else {
            return;
        };
        if self.index.contains_key(&new) {
            self.slots[slot] = None;
            return;
        }
        if let Some((k, _)) = self.slots[slot].as_mut() {
            *k = new.clone();
        }
        self.index.insert(new, slot);
    }

    /// Oldest mention first.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.slots.iter().flatten().map(|(k, v)| (k, v))
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Every value, in place (the order is unchanged).
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.slots.iter_mut().flatten().map(|(_, v)| v)
    }

    /// Every entry, its value in place (the order is unchanged).
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&K, &mut V)> {
        self.slots.iter_mut().flatten().map(|(k, v)| (&*k, v))
    }
}

/// A todo item's state; `format` writes it as a checkbox mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Pending,
    Active,
    Done,
    Cancelled,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Todo {
    pub status: Status,
    pub text: String,
}

/// Between a command's status and what its output said (`ok: 3 passed`).
pub const STATUS_SEPARATOR: &str = ": ";

/// What a summary knows of one error line beyond its text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorNote {
    pub count: u32,
    /// The command whose output showed it (`None`: another tool's result).
    pub source: Option<String>,
    /// A later run of `source` no longer showed it: the error is behind
    /// the agent.
    pub fixed: bool,
}

#[derive(Default)]
pub struct Digest {
    /// What the person said that binds the session (rules, limits, values,
    /// the goal), verbatim, oldest first, the latest of each subject only.
    pub binding: Vec<crate::statements::Statement>,
    /// User requests verbatim (bounded), with repeat counts; the last is the current task.
    pub requests: Recent<String, u32>,
    /// What the assistant last said it does next.
    pub next: Option<String>,
    /// The latest todo list an agent wrote; each new list replaces the previous one.
    pub todos: Vec<Todo>,
    /// Path → the tools that touched it, in first-use order, with counts.
    pub files: Recent<String, Vec<(String, u32)>>,
    /// (command, outcome) → runs.
    pub commands: Recent<(String, String), u32>,
    /// Error line → how often, which command showed it, whether fixed.
    pub errors: Recent<String, ErrorNote>,
    pub decisions: Recent<String, u32>,
    /// Path → lines of code the assistant wrote into it (the short lines an
    /// edit added: declarations, settings, calls), latest write last.
    pub code: Recent<String, Vec<String>>,
    /// The directory the previous summary wrote its paths relative to.
    pub root: Option<String>,
    /// What the assistant put in code font in its own text (`load_user/1`,
    /// `<.panel>`): the names it worked with, latest mention last.
    pub names: Recent<String, u32>,
}

/// The most lines of written code a summary keeps per file.
pub const CODE_LINES_PER_FILE: usize = 24;

impl Digest {
    /// Records `lines` as written into `path`: a line already listed moves
    /// to the end, and past [`CODE_LINES_PER_FILE`] the oldest go.
    pub fn add_code(&mut self, path: String, lines: impl IntoIterator<Item = String>) {
        let kept = self.code.touch(path);
        for line in lines {
            kept.retain(|l| *l != line);
            kept.push(line);
        }
        let over = kept.len().saturating_sub(CODE_LINES_PER_FILE);
        kept.drain(..over);
    }

    /// Records `count` uses of `path` by `tool`. A relative path and the one
    /// absolute path it ends are one file (an agent reads
    /// `/home/me/app/src/x.rs` and runs `cargo fmt -- src/x.rs`): it is
    /// listed once, under the absolute path.
    pub fn add_file(&mut self, path: String, tool: &str, count: u32) {
        let ends = |long: &str, short: &str| {
            long.len() > short.len()
                && long.ends_with(short)
                && long[..long.len() - short.len()].ends_with('/')
        };
        let mut tools = Vec::new();
        let path = if is_absolute(&path) {
            let relatives: Vec<String> = self
                .files
                .iter()
                .map(|(k, _)| k)
                .filter(|k| !is_absolute(k) && ends(&path, k))
                .cloned()
                .collect();
            for relative in relatives {
                tools.extend(self.files.remove(&relative).unwrap_or_default());
            }
            path
        } else {
            let mut absolutes = self
                .files
                .iter()
                .map(|(k, _)| k)
                .filter(|k| is_absolute(k) && ends(k, &path));
            match (absolutes.next(), absolutes.next()) {
                (Some(absolute), None) => absolute.clone(),
                _ => path,
            }
        };
        tools.push((tool.to_owned(), count));
        let entry = self.files.touch(path);
        for (tool, count) in tools {
            match entry.iter_mut().find(|(t, _)| *t == tool) {
                Some((_, n)) => *n += count,
                None => entry.push((tool, count)),
            }
        }
    }
}

pub(crate) fn is_absolute(path: &str) -> bool {
    path.starts_with(['/', '~'])
}

impl Digest {
    /// Records one sighting of `error`, shown by `source` (a command, or
    /// `None`): an error seen again is open again.
    pub fn add_error(&mut self, error: String, source: Option<String>, count: u32) {
        let note = self.errors.touch(error);
        note.count += count;
        note.fixed = false;
        if source.is_some() {
            note.source = source;
        }
    }

    /// A run of `command` showed its output: the errors its earlier runs
    /// showed are fixed, but those it shows again ([`Digest::add_error`]
    /// opens them again).
    pub fn fixed_by(&mut self, command: &str) {
        for note in self.errors.values_mut() {
            if note.source.as_deref() == Some(command) {
                note.fixed = true;
            }
        }
    }
}

/// Adds `count` mentions of `key`, moving it to the end.
pub fn add<K: Clone + Eq + Hash>(ledger: &mut Recent<K, u32>, key: K, count: u32) {
    *ledger.touch(key) += count;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn re_mention_moves_to_end_and_counts() {
        let mut r: Recent<&str, u32> = Recent::default();
        add(&mut r, "a", 1);
        add(&mut r, "b", 1);
        add(&mut r, "a", 2);
        let order: Vec<_> = r.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(order, [("b", 1), ("a", 3)]);
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn a_relative_path_is_the_absolute_path_it_ends() {
        let mut digest = Digest::default();
        digest.add_file("/w/app/src/x.rs".into(), "Read", 1);
        digest.add_file("src/x.rs".into(), "Bash", 1);
        digest.add_file("lib/y.rs".into(), "Bash", 2);
        digest.add_file("/w/app/lib/y.rs".into(), "Edit", 1);
        // Not a path it ends: a different file of the same name.
        digest.add_file("rc/x.rs".into(), "Bash", 1);
        // Two absolute paths end with it: which file is meant is unknown.
        digest.add_file("/w/other/src/x.rs".into(), "Read", 1);
        digest.add_file("src/x.rs".into(), "Bash", 1);
        let files: Vec<_> = digest
            .files
            .iter()
            .map(|(p, t)| (p.as_str(), t.clone()))
            .collect();
        let tools = |t: &[(&str, u32)]| {
            t.iter()
                .map(|&(n, c)| (n.to_owned(), c))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            files,
            [
                ("/w/app/src/x.rs", tools(&[("Read", 1), ("Bash", 1)])),
                ("/w/app/lib/y.rs", tools(&[("Bash", 2), ("Edit", 1)])),
                ("rc/x.rs", tools(&[("Bash", 1)])),
                ("/w/other/src/x.rs", tools(&[("Read", 1)])),
                ("src/x.rs", tools(&[("Bash", 1)])),
            ]
        );
    }
}
