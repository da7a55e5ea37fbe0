//! Code in the conversation: what a write changed (the lines an edit added,
//! a new file's declarations), what each file is known to hold within a
//! fold (so a file written whole after a read is an edit of it), and the
//! names the assistant set in code font. `extract` calls these as it reads
//! the messages.

use crate::digest::FixedState;
use std::collections::HashMap;

/// A code span short enough to be a name.
const NAME_CHARS: std::ops::RangeInclusive<usize> = 2..=60;

/// The `code spans` of prose (not of fenced blocks) that hold a name: what
/// a writer set in code font is what it refers to by its exact spelling.
pub(crate) fn code_spans(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut pieces = line.split('`');
        pieces.next();
        // Every other piece is inside a span; an unclosed one is not.
        while let (Some(inside), Some(_)) = (pieces.next(), pieces.next()) {
            if NAME_CHARS.contains(&inside.chars().count())
                && inside.trim() == inside
                && inside.chars().any(char::is_alphanumeric)
                && !out.contains(&inside)
            {
                out.push(inside);
            }
        }
    }
    out
}

/// What each file is known to hold within one fold: the text a read showed
/// (line numbers aside) or a write put there, edits applied. A new write
/// to a file known this way is an edit of it: what it changed is the lines
/// it added, not every line of the file.
#[derive(Default)]
pub(crate) struct FileTexts {
    /// Path → the lines known.
    text: HashMap<String, String, FixedState>,
    /// Call id → the path a read asked for, until its result arrives.
    reading: HashMap<String, String, FixedState>,
}

impl FileTexts {
    /// Notes that call `call_id` reads `path`: its result shows the file.
    pub(crate) fn reading(&mut self, call_id: &str, path: String) {
        self.reading.insert(call_id.to_owned(), path);
    }

    pub(crate) fn result(&mut self, call_id: &str, content: &str, is_error: bool) {
        let Some(path) = self.reading.remove(call_id) else {
            return;
        };
        if is_error {
            return;
        }
        let lines = content.lines().map(without_line_number);
        let known = self.text.entry(path).or_default();
        for line in lines {
            known.push_str(line);
            known.push('\n');
        }
    }

    /// Records a write of `written` over `replaced` (nothing replaced: the
    /// whole file); returns what the file held before a whole-file write.
    pub(crate) fn write(
        &mut self,
        path: &str,
        written: &[&str],
        replaced: &[&str],
    ) -> Option<String> {
        if replaced.is_empty() {
            return self.text.insert(path.to_owned(), written.concat());
        }
        if let Some(known) = self.text.get_mut(path) {
            for (old, new) in replaced.iter().zip(written) {
                *known = known.replacen(old, new, 1);
            }
        }
        None
    }
}

/// A line of a file as a read tool shows it, without the line number in
/// front (`   12→`, `12\t`).
fn without_line_number(line: &str) -> &str {
    let rest = line.trim_start();
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return line;
    }
    let after = &rest[digits..];
    after
        .strip_prefix('→')
        .or_else(|| after.strip_prefix('\t'))
        .unwrap_or(line)
}

/// A written line worth keeping is short enough to quote.
const CODE_LINE_CHARS: std::ops::RangeInclusive<usize> = 6..=100;

/// Words that open a declaration, an import or a setting in the common
/// languages: the lines that name what a change added (a function, a
/// module attribute, a dependency, a config key), not the statements in
/// between.
#[rustfmt::skip]
const DECLARES: &[&str] = &[
    "def", "defp", "defmodule", "defmacro", "defstruct", "defimpl", "defprotocol", "fn",
    "func", "function", "class", "struct", "enum", "trait", "impl", "interface", "type",
    "module", "mod", "const", "static", "let", "var", "val", "import", "from", "require",
    "alias", "use", "include", "config", "package", "create", "alter", "add",
    "attribute", "field", "schema", "table", "macro_rules!",
];

/// Words that may stand before a declaration's keyword.
const MODIFIERS: &[&str] = &[
    "pub",
    "pub(crate)",
    "async",
    "export",
    "default",
    "public",
    "private",
    "protected",
    "abstract",
    "final",
    "override",
    "unsafe",
    "extern",
];

/// Whether `line` declares, imports or sets something: it opens with one of
/// [`DECLARES`] (after modifiers), with a module attribute or decorator
/// (`@name`), with a Rust attribute (`#[…]`), or with a word and a symbol
/// (`has_many :comments`, `field :name, :string`: how Ruby's and Elixir's
/// DSLs declare), or it opens a shell function.
fn declares(line: &str) -> bool {
    // A shell function: `name() {`.
    let shell_function = line.strip_suffix("() {").is_some_and(|name| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || "_-.:".contains(c))
    });
    // A DSL declaration: `word :symbol`.
    let dsl = line.split_once(' ').is_some_and(|(word, rest)| {
        word.chars().all(|c| c.is_ascii_lowercase() || c == '_')
            && rest
                .strip_prefix(':')
                .is_some_and(|symbol| symbol.starts_with(|c: char| c.is_ascii_lowercase()))
    });
    if line.starts_with('@') && line.chars().nth(1).is_some_and(char::is_alphabetic)
        || line.starts_with("#[")
        || shell_function
        || dsl
    {
        return true;
    }
    line.split(|c: char| c.is_whitespace() || c == '(' || c == '{')
        .filter(|w| !w.is_empty())
        .find(|w| !MODIFIERS.contains(w))
        .is_some_and(|w| DECLARES.contains(&w.to_ascii_lowercase().as_str()))
}

/// The lines an edit added that say something: not blank, not bare syntax
/// (`end`, `} else {`, `</div>`) — at least two words, or a word and an
/// operator or literal — and not a sentence of a doc comment (the code says
/// what it does; the summary keeps the code).
fn substantive(line: &str) -> bool {
    let sentence = line.ends_with('.')
        && line.split_whitespace().count() >= 4
        && !line.contains(['(', '=', '{', '_', '"']);
    if sentence {
        return false;
    }
    let words = line
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().any(char::is_alphabetic))
        .count();
    let other = line
        .chars()
        .any(|c| c.is_ascii_digit() || "=:\"'|&+*%<>".contains(c));
    words >= 2 || (words == 1 && other)
}

/// The most lines one edit contributes: a large rewrite is summarized by
/// its declarations, not quoted.
const LINES_PER_EDIT: usize = 10;

/// What a write changed, trimmed, each line once, in order, without the
/// lines `replaced` already had (the context an edit must repeat). A new
/// file (nothing replaced) is summarized by its declarations ([`declares`]),
/// not every statement; an edit by the lines it added ([`substantive`]) —
/// the call it now makes, the option it sets, the clause it adds — its
/// declarations first when it added more than [`LINES_PER_EDIT`].
pub(crate) fn code_lines(written: &[&str], replaced: &[&str]) -> Vec<String> {
    let before: std::collections::HashSet<&str> = replaced
        .iter()
        .flat_map(|text| text.lines())
        .map(str::trim)
        .collect();
    // Each new line, trimmed, with its indentation.
    let mut added: Vec<(&str, usize)> = Vec::new();
    for raw in written.iter().flat_map(|text| text.lines()) {
        let line = raw.trim();
        if CODE_LINE_CHARS.contains(&line.chars().count())
            && !before.contains(line)
            && !added.iter().any(|(l, _)| *l == line)
        {
            added.push((line, raw.len() - raw.trim_start().len()));
        }
    }
    let edit = !before.is_empty();
    if !edit {
        added.retain(|(line, _)| declares(line));
    } else {
        added.retain(|(line, _)| substantive(line));
        // Where the change is: the declaration the edit's own text opens
        // with, kept though unchanged, when it added none of its own
        // (`def handle_event("toggle", …)` around a changed body).
        let locus = written
            .iter()
            .flat_map(|text| text.lines())
            .map(str::trim)
            .find(|line| declares(line) && CODE_LINE_CHARS.contains(&line.chars().count()));
        if let Some(locus) = locus
            && !added.iter().any(|(line, _)| declares(line))
        {
            added.insert(0, (locus, 0));
        }
        if added.len() > LINES_PER_EDIT {
            // Declarations first, then the outermost lines (a map's name
            // before its entries, a call before its arguments), each in
            // order; shown in order.
            let mut ranked: Vec<usize> = (0..added.len()).collect();
            ranked.sort_by_key(|&i| (!declares(added[i].0), added[i].1, i));
            let mut chosen: Vec<usize> = ranked.into_iter().take(LINES_PER_EDIT).collect();
            chosen.sort_unstable();
            added = chosen.into_iter().map(|i| added[i]).collect();
        }
    }
    added.into_iter().map(|(line, _)| line.to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_code_spans_of_prose() {
        let text = "Call `fetch_all/2` from `<.grid>`, not `fetch`.\n```\nlet `x` = 1\n```\nAn unclosed `tick and ` spaced ` and ``.";
        assert_eq!(code_spans(text), ["fetch_all/2", "<.grid>", "fetch"]);
    }

    #[test]
    fn an_edit_is_placed_by_its_declaration_and_keeps_its_outermost_lines() {
        let body = |n: usize| {
            (0..n)
                .map(|i| format!("    \"k{i}\" => \"v{i}\","))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let lines = code_lines(
            &[&format!(
                "def lookup(key) do\n  names = %{{\n{}\n  }}\n  Map.get(names, key)\nend",
                body(12)
            )],
            &["def lookup(key) do\n  nil\nend"],
        );
        // The unchanged head says where; the map's opening and the call
        // outrank its entries.
        assert_eq!(lines.len(), LINES_PER_EDIT);
        assert_eq!(lines[0], "def lookup(key) do");
        assert_eq!(lines[1], "names = %{");
        assert!(
            lines.contains(&"Map.get(names, key)".to_owned()),
            "{lines:?}"
        );
        assert!(
            !lines.contains(&"\"k11\" => \"v11\",".to_owned()),
            "{lines:?}"
        );
    }

    #[test]
    fn line_numbers_of_a_read_are_not_part_of_the_line() {
        assert_eq!(without_line_number("  12→  x = 1"), "  x = 1");
        assert_eq!(without_line_number("7\tlet y"), "let y");
        assert_eq!(without_line_number("2024 was a year"), "2024 was a year");
    }
}
