//! The file tools: reading, listing, searching, writing and editing files
//! inside a [`Workspace`].

use super::args::{self, Args, Param};
use super::{Tool, ToolClass, ToolError, ToolOutput, ToolSpec, Workspace};
use serde_json::Value;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// The most text `read_file` returns in one call; the model reads on with
/// `offset`.
const READ_CAP_BYTES: usize = 256 * 1024;
/// The most entries `list_dir` shows.
const LIST_CAP_ENTRIES: usize = 1000;
/// How many matches `search_text` returns unless told otherwise.
const DEFAULT_SEARCH_RESULTS: usize = 200;
/// Longer files are not searched (they are data or generated, not code).
const SEARCH_FILE_CAP_BYTES: u64 = 8 * 1024 * 1024;
/// A matching line is shown up to this many bytes (minified code has lines
/// of megabytes).
const SEARCH_LINE_CAP_BYTES: usize = 400;
/// Directories `search_text` never enters: history and build output.
const SEARCH_SKIPPED_DIRS: &[&str] = &[".git", "target"];

const PATH: Param = Param::string(
    "path",
    "The file's path, relative to the working directory (or absolute inside it).",
);
const DIR: Param = Param::string(
    "path",
    "The directory, relative to the working directory; default \".\".",
)
.optional();

/// Each tool struct is its spec, its workspace and a `run` returning a
/// `Result`; this gives it the [`Tool`] impl that checks the arguments
/// against its `PARAMS` and turns errors into outputs.
macro_rules! file_tool {
    ($tool:ty) => {
        impl Tool for $tool {
            fn spec(&self) -> &ToolSpec {
                &self.spec
            }

            fn call(&self, arguments: &Value) -> ToolOutput {
                args::invoke(&self.spec, Self::PARAMS, arguments, |args| {
                    self.run(args).map(ToolOutput::ok)
                })
            }
        }
    };
}

/// `read_file`: a text file with line numbers, a window of it with
/// `offset`/`limit`.
#[derive(Debug)]
pub struct ReadFile {
    spec: ToolSpec,
    workspace: Workspace,
}

impl ReadFile {
    const OFFSET: Param = Param::count("offset", 1, "The first line to show (1-based); default 1.");
    const LIMIT: Param = Param::count("limit", 1, "How many lines to show at most; default all.");
    const PARAMS: &[Param] = &[PATH, Self::OFFSET, Self::LIMIT];

    pub fn new(workspace: Workspace) -> ReadFile {
        let description = format!(
            "Read a UTF-8 text file. Lines are numbered like `cat -n` (the number, a tab, \
             the line); the numbers are not part of the file. Output stops at {} KiB: \
             read on with `offset`.",
            READ_CAP_BYTES / 1024
        );
        ReadFile {
            spec: args::spec("read_file", &description, ToolClass::ReadOnly, Self::PARAMS),
            workspace,
        }
    }

    fn run(&self, args: &Args<'_>) -> Result<String, ToolError> {
        let path = args.string(&PATH)?;
        let offset = args.opt_count(&Self::OFFSET)?.unwrap_or(1);
        let limit = args.opt_count(&Self::LIMIT)?;
        let file =
            fs::File::open(self.workspace.resolve(path)?).map_err(ToolError::io("read", path))?;
        let mut lines = BufReader::new(file).split(b'\n');
        let mut out = String::new();
        let (mut number, mut shown) = (0, 0);
        while limit.is_none_or(|limit| shown < limit) {
            let Some(line) = lines.next() else { break };
            let line = line.map_err(ToolError::io("read", path))?;
            number += 1;
            if number < offset {
                continue;
            }
            let text = std::str::from_utf8(&line).map_err(|_| not_text(path, Some(number)))?;
            let entry = format!("{number:>6}\t{text}\n");
            if out.len() + entry.len() > READ_CAP_BYTES {
                let cap = READ_CAP_BYTES / 1024;
                if shown == 0 {
                    // One line longer than the cap: show what fits of it,
                    // or the model could never get past it.
                    out.push_str(&entry[..entry.floor_char_boundary(READ_CAP_BYTES)]);
                    out.push_str(&format!(
                        "\n[line {number} is longer than {cap} KiB and was cut; read on with offset {}]",
                        number + 1
                    ));
                } else {
                    out.push_str(&format!(
                        "[output cut at {cap} KiB; read on with offset {number}]"
                    ));
                }
                return Ok(out);
            }
            out.push_str(&entry);
            shown += 1;
        }
        if shown == 0 {
            return Ok(match number {
                0 => "(empty file)".to_string(),
                lines => format!(
                    "(offset {offset} is past the end: the file has {})",
                    count_of(lines, "line")
                ),
            });
        }
        Ok(out)
    }
}

file_tool!(ReadFile);

/// `list_dir`: the entries of a directory.
#[derive(Debug)]
pub struct ListDir {
    spec: ToolSpec,
    workspace: Workspace,
}

impl ListDir {
    const PARAMS: &[Param] = &[DIR];

    pub fn new(workspace: Workspace) -> ListDir {
        let description = "List a directory's entries, sorted; directories end with `/`.";
        ListDir {
            spec: args::spec("list_dir", description, ToolClass::ReadOnly, Self::PARAMS),
            workspace,
        }
    }

    fn run(&self, args: &Args<'_>) -> Result<String, ToolError> {
        let path = args.opt_string(&DIR)?.unwrap_or(".");
        let dir = self.workspace.resolve(path)?;
        let mut entries = Vec::new();
        for entry in fs::read_dir(&dir).map_err(ToolError::io("list", path))? {
            let entry = entry.map_err(ToolError::io("list", path))?;
            // `is_dir` follows symlinks: a link to a directory lists as one.
            entries.push((entry.file_name(), entry.path().is_dir()));
        }
        if entries.is_empty() {
            return Ok("(empty directory)".to_string());
        }
        entries.sort_unstable();
        let total = entries.len();
        let shown: Vec<String> = entries
            .iter()
            .take(LIST_CAP_ENTRIES)
            .map(|(name, is_dir)| {
                let slash = if *is_dir { "/" } else { "" };
                format!("{}{slash}", name.to_string_lossy())
            })
            .collect();
        let mut out = shown.join("\n");
        if total > LIST_CAP_ENTRIES {
            out.push_str(&format!(
                "\n[showing the first {LIST_CAP_ENTRIES} of {total} entries]"
            ));
        }
        Ok(out)
    }
}

file_tool!(ListDir);

/// `search_text`: the lines containing a literal string, in the files under
/// a directory.
#[derive(Debug)]
pub struct SearchText {
    spec: ToolSpec,
    workspace: Workspace,
}

impl SearchText {
    const PATTERN: Param = Param::string("pattern", "The text to find (literal, case-sensitive).");
    const PATH: Param = Param::string(
        "path",
        "The directory (searched recursively) or file to search, relative to the working \
         directory; default \".\".",
    )
    .optional();
    const MAX_RESULTS: Param = Param::count(
        "max_results",
        1,
        "The most matching lines to return; default 200.",
    );
    const PARAMS: &[Param] = &[Self::PATTERN, Self::PATH, Self::MAX_RESULTS];

    pub fn new(workspace: Workspace) -> SearchText {
        let description = "Find the lines containing a literal string, in a file or in every \
            text file under a directory (`.git` and `target` are skipped, as are binary files and \
            symlinks). Returns `path:line: text` lines, paths relative to the working directory, \
            in path order.";
        SearchText {
            spec: args::spec(
                "search_text",
                description,
                ToolClass::ReadOnly,
                Self::PARAMS,
            ),
            workspace,
        }
    }

    fn run(&self, args: &Args<'_>) -> Result<String, ToolError> {
        let pattern = args.string(&Self::PATTERN)?;
        if pattern.is_empty() {
            return Err(args::invalid(&Self::PATTERN, "must not be empty"));
        }
        let path = args.opt_string(&Self::PATH)?.unwrap_or(".");
        let max_results = args
            .opt_count(&Self::MAX_RESULTS)?
            .unwrap_or(DEFAULT_SEARCH_RESULTS);
        let start = self.workspace.resolve(path)?;
        let metadata = fs::metadata(&start).map_err(ToolError::io("search", path))?;
        let mut files = Vec::new();
        if metadata.is_dir() {
            collect_files(&start, &mut files);
        } else {
            files.push(start);
        }

        let mut matches = Vec::new();
        'files: for file in &files {
            let Some(text) = read_searchable(file) else {
                continue;
            };
            let shown = self.workspace.relative(file);
            for (index, line) in text.lines().enumerate() {
                if line.contains(pattern) {
                    if matches.len() == max_results {
                        matches.push(format!(
                            "[stopped at {max_results} results; narrow `path` or `pattern`, \
                             or raise `max_results`]"
                        ));
                        break 'files;
                    }
                    matches.push(format!("{shown}:{}: {}", index + 1, clip(line)));
                }
            }
        }
        if matches.is_empty() {
            return Ok(format!("no matches for `{pattern}` in `{path}`"));
        }
        Ok(matches.join("\n"))
    }
}

file_tool!(SearchText);

/// Appends the regular files under `dir` to `files`, in sorted path order,
/// skipping [`SEARCH_SKIPPED_DIRS`], symlinks (which could lead outside or
/// round in circles) and whatever cannot be read.
fn collect_files(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| Some((entry.file_name(), entry.file_type().ok()?)))
        .collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (name, kind) in entries {
        let path = dir.join(&name);
        if kind.is_dir() {
            if !SEARCH_SKIPPED_DIRS.iter().any(|skipped| name == *skipped) {
                collect_files(&path, files);
            }
        } else if kind.is_file() {
            files.push(path);
        }
    }
}

/// The text of `file`, unless it is too big, binary (a NUL byte) or not
/// UTF-8.
fn read_searchable(file: &Path) -> Option<String> {
    let size = fs::metadata(file).ok()?.len();
    if size > SEARCH_FILE_CAP_BYTES {
        return None;
    }
    let bytes = fs::read(file).ok()?;
    if bytes.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// `line`, cut to [`SEARCH_LINE_CAP_BYTES`] with an ellipsis.
fn clip(line: &str) -> String {
    if line.len() <= SEARCH_LINE_CAP_BYTES {
        return line.to_string();
    }
    format!(
        "{}…",
        &line[..line.floor_char_boundary(SEARCH_LINE_CAP_BYTES)]
    )
}

/// `write_file`: a file's whole content, creating it and its directories.
#[derive(Debug)]
pub struct WriteFile {
    spec: ToolSpec,
    workspace: Workspace,
}

impl WriteFile {
    const CONTENT: Param = Param::string("content", "The file's new content, in full.");
    const PARAMS: &[Param] = &[PATH, Self::CONTENT];

    pub fn new(workspace: Workspace) -> WriteFile {
        let description = "Write a file's whole content, replacing the file if it exists and \
            creating it and its missing directories if not. To change part of a file, use \
            edit_file.";
        WriteFile {
            spec: args::spec("write_file", description, ToolClass::Mutating, Self::PARAMS),
            workspace,
        }
    }

    fn run(&self, args: &Args<'_>) -> Result<String, ToolError> {
        let path = args.string(&PATH)?;
        let content = args.string(&Self::CONTENT)?;
        let target = self.workspace.resolve(path)?;
        let created = !target.exists();
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(ToolError::io("create the directory of", path))?;
        }
        fs::write(&target, content).map_err(ToolError::io("write", path))?;
        let new = if created { " (a new file)" } else { "" };
        Ok(format!("wrote {} bytes to {path}{new}", content.len()))
    }
}

file_tool!(WriteFile);

/// `edit_file`: replaces one exact, unique piece of a file's text.
#[derive(Debug)]
pub struct EditFile {
    spec: ToolSpec,
    workspace: Workspace,
}

impl EditFile {
    const OLD_TEXT: Param = Param::string(
        "old_text",
        "The exact text to replace (whitespace included); it must occur exactly once in the file.",
    );
    const NEW_TEXT: Param = Param::string("new_text", "The text to put in its place.");
    const PARAMS: &[Param] = &[PATH, Self::OLD_TEXT, Self::NEW_TEXT];

    pub fn new(workspace: Workspace) -> EditFile {
        let description = "Replace a piece of a text file: `old_text`, which must occur exactly \
            once (include surrounding lines to make it unique), becomes `new_text`. Copy \
            `old_text` from the file itself, without read_file's line numbers.";
        EditFile {
            spec: args::spec("edit_file", description, ToolClass::Mutating, Self::PARAMS),
            workspace,
        }
    }

    fn run(&self, args: &Args<'_>) -> Result<String, ToolError> {
        let path = args.string(&PATH)?;
        let old_text = args.string(&Self::OLD_TEXT)?;
        let new_text = args.string(&Self::NEW_TEXT)?;
        if old_text.is_empty() {
            return Err(args::invalid(&Self::OLD_TEXT, "must not be empty"));
        }
        let target = self.workspace.resolve(path)?;
        let bytes = fs::read(&target).map_err(ToolError::io("read", path))?;
        let text = String::from_utf8(bytes).map_err(|_| not_text(path, None))?;
        match occurrences(&text, old_text) {
            0 => {
                return Err(ToolError::NoMatch {
                    path: path.to_string(),
                });
            }
            1 => {}
            count => {
                return Err(ToolError::AmbiguousMatch {
                    path: path.to_string(),
                    count,
                });
            }
        }
        fs::write(&target, text.replacen(old_text, new_text, 1))
            .map_err(ToolError::io("write", path))?;
        Ok(format!(
            "edited {path}: {} replaced by {}",
            count_of(old_text.lines().count(), "line"),
            count_of(new_text.lines().count(), "line")
        ))
    }
}

file_tool!(EditFile);

/// How many times `needle` (not empty) occurs in `haystack`, overlapping
/// occurrences included: in `aaa`, `aa` is not unique.
fn occurrences(haystack: &str, needle: &str) -> usize {
    let step = needle.chars().next().map_or(1, char::len_utf8);
    let mut count = 0;
    let mut from = 0;
    while let Some(at) = haystack[from..].find(needle) {
        count += 1;
        from += at + step;
    }
    count
}

/// `count` `noun`s, in English: "1 line", "3 lines".
fn count_of(count: usize, noun: &str) -> String {
    let plural = if count == 1 { "" } else { "s" };
    format!("{count} {noun}{plural}")
}

/// The error for a file that is not UTF-8 text.
fn not_text(path: &str, line: Option<usize>) -> ToolError {
    let at = line
        .map(|line| format!(" (line {line})"))
        .unwrap_or_default();
    ToolError::BadPath {
        path: path.to_string(),
        problem: format!("is not UTF-8 text{at}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{ToolRegistry, coding_tools};

    /// A registry of the file tools in a fresh workspace, its directory
    /// kept alive alongside.
    struct Fixture {
        dir: tempfile::TempDir,
        tools: ToolRegistry,
    }

    impl Fixture {
        fn new() -> Fixture {
            let dir = tempfile::tempdir().unwrap();
            let tools = coding_tools(Workspace::new(dir.path()).unwrap(), None);
            Fixture { dir, tools }
        }

        fn write(&self, path: &str, content: impl AsRef<[u8]>) {
            let path = self.dir.path().join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, content).unwrap();
        }

        fn read(&self, path: &str) -> String {
            fs::read_to_string(self.dir.path().join(path)).unwrap()
        }

        /// The output of a successful call.
        fn ok(&self, tool: &str, arguments: &str) -> String {
            let out = self.tools.call(tool, arguments);
            assert!(!out.is_error, "{tool} {arguments}: {}", out.content);
            out.content
        }

        /// The output of a failed call.
        fn err(&self, tool: &str, arguments: &str) -> String {
            let out = self.tools.call(tool, arguments);
            assert!(
                out.is_error,
                "{tool} {arguments} should fail: {}",
                out.content
            );
            out.content
        }
    }

    #[test]
    fn read_file_numbers_lines() {
        let f = Fixture::new();
        f.write("src/a.rs", "first line\nsecond\n\nfourth");
        assert_eq!(
            f.ok("read_file", r#"{"path": "src/a.rs"}"#),
            "     1\tfirst line\n     2\tsecond\n     3\t\n     4\tfourth\n"
        );
        assert_eq!(
            f.ok(
                "read_file",
                r#"{"path": "src/a.rs", "offset": 2, "limit": 2}"#
            ),
            "     2\tsecond\n     3\t\n"
        );
        assert_eq!(
            f.ok(
                "read_file",
                r#"{"path": "src/a.rs", "offset": 4, "limit": null}"#
            ),
            "     4\tfourth\n"
        );
        assert_eq!(
            f.ok("read_file", r#"{"path": "src/a.rs", "offset": 9}"#),
            "(offset 9 is past the end: the file has 4 lines)"
        );
        f.write("one", "x");
        assert_eq!(
            f.ok("read_file", r#"{"path": "one", "offset": 2}"#),
            "(offset 2 is past the end: the file has 1 line)"
        );
        f.write("empty", "");
        assert_eq!(f.ok("read_file", r#"{"path": "empty"}"#), "(empty file)");
    }

    #[test]
    fn read_file_names_bad_arguments() {
        let f = Fixture::new();
        f.write("a.txt", "a\n");
        assert_eq!(
            f.err("read_file", "{}"),
            "read_file: missing argument `path`"
        );
        assert_eq!(
            f.err("read_file", r#"{"path": ["a.txt"]}"#),
            "read_file: argument `path` must be a string, got an array"
        );
        assert_eq!(
            f.err("read_file", r#"{"path": "a.txt", "offset": 0}"#),
            "read_file: argument `offset` must be a whole number of at least 1, got 0"
        );
        assert_eq!(
            f.err("read_file", r#"{"file_path": "a.txt"}"#),
            "read_file: unknown argument `file_path` (the arguments are: path, offset, limit)"
        );
        assert_eq!(
            f.err("read_file", r#""a.txt""#),
            "read_file: arguments must be a JSON object, got a string"
        );
    }

    #[test]
    fn read_file_refuses_missing_binary_and_outside_files() {
        let f = Fixture::new();
        f.write("bin", b"ok\n\xff\xfe\n");
        assert_eq!(
            f.err("read_file", r#"{"path": "bin"}"#),
            "read_file: path `bin` is not UTF-8 text (line 2)"
        );
        let missing = f.err("read_file", r#"{"path": "nope.txt"}"#);
        assert!(
            missing.starts_with("read_file: cannot read `nope.txt`: "),
            "{missing}"
        );
        let outside = f.err("read_file", r#"{"path": "../x"}"#);
        assert!(
            outside.starts_with("read_file: path `../x` is outside the working directory "),
            "{outside}"
        );
        f.write("dir/x", "");
        let dir = f.err("read_file", r#"{"path": "dir"}"#);
        assert!(dir.starts_with("read_file: cannot read `dir`: "), "{dir}");
    }

    #[test]
    fn read_file_cuts_long_output() {
        let f = Fixture::new();
        let line = "x".repeat(99);
        let lines = READ_CAP_BYTES / 100 + 10;
        f.write("big.txt", format!("{line}\n").repeat(lines));
        let out = f.ok("read_file", r#"{"path": "big.txt"}"#);
        assert!(out.len() <= READ_CAP_BYTES + 100, "{}", out.len());
        let (body, note) = out.rsplit_once('\n').unwrap();
        let last: usize = body
            .lines()
            .last()
            .unwrap()
            .split('\t')
            .next()
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(last < lines);
        assert_eq!(
            note,
            format!("[output cut at 256 KiB; read on with offset {}]", last + 1)
        );
        // One line longer than the cap is shown in part.
        f.write(
            "long.txt",
            format!("{}\nnext\n", "é".repeat(READ_CAP_BYTES)),
        );
        let out = f.ok("read_file", r#"{"path": "long.txt"}"#);
        assert!(out.starts_with("     1\téé"));
        assert!(
            out.ends_with("\n[line 1 is longer than 256 KiB and was cut; read on with offset 2]")
        );
        assert_eq!(
            f.ok("read_file", r#"{"path": "long.txt", "offset": 2}"#),
            "     2\tnext\n"
        );
    }

    #[test]
    fn list_dir_sorts_and_marks_directories() {
        let f = Fixture::new();
        f.write("b.txt", "");
        f.write("a/inner.txt", "");
        f.write("C.md", "");
        assert_eq!(f.ok("list_dir", "{}"), "C.md\na/\nb.txt");
        assert_eq!(f.ok("list_dir", r#"{"path": "a"}"#), "inner.txt");
        fs::create_dir(f.dir.path().join("empty")).unwrap();
        assert_eq!(
            f.ok("list_dir", r#"{"path": "empty"}"#),
            "(empty directory)"
        );
        let missing = f.err("list_dir", r#"{"path": "nope"}"#);
        assert!(
            missing.starts_with("list_dir: cannot list `nope`: "),
            "{missing}"
        );
        let file = f.err("list_dir", r#"{"path": "b.txt"}"#);
        assert!(
            file.starts_with("list_dir: cannot list `b.txt`: "),
            "{file}"
        );
        assert!(
            f.err("list_dir", r#"{"path": ".."}"#)
                .contains("is outside the working directory")
        );
    }

    #[test]
    fn search_text_finds_lines_in_path_order() {
        let f = Fixture::new();
        f.write("src/b.rs", "fn main() {\n    needle();\n}\n");
        f.write("src/a/deep.rs", "// needle here\n");
        f.write("README.md", "no match\nneedle at line 2\n");
        f.write(".git/HEAD", "needle\n");
        f.write("target/debug/out.rs", "needle\n");
        f.write("image.png", b"needle\0\x89PNG");
        f.write("latin1.txt", b"needle \xe9\n");
        assert_eq!(
            f.ok("search_text", r#"{"pattern": "needle"}"#),
            "README.md:2: needle at line 2\nsrc/a/deep.rs:1: // needle here\nsrc/b.rs:2:     needle();"
        );
        assert_eq!(
            f.ok(
                "search_text",
                r#"{"pattern": "needle", "path": "src/b.rs"}"#
            ),
            "src/b.rs:2:     needle();"
        );
        assert_eq!(
            f.ok("search_text", r#"{"pattern": "Needle", "path": "src"}"#),
            "no matches for `Needle` in `src`"
        );
    }

    #[test]
    fn search_text_stops_at_max_results() {
        let f = Fixture::new();
        f.write("many.txt", "hit\n".repeat(5));
        let out = f.ok("search_text", r#"{"pattern": "hit", "max_results": 3}"#);
        assert_eq!(
            out,
            "many.txt:1: hit\nmany.txt:2: hit\nmany.txt:3: hit\n[stopped at 3 results; narrow \
             `path` or `pattern`, or raise `max_results`]"
        );
        let schema = &f.tools.get("search_text").unwrap().spec().parameters;
        let described = schema["properties"]["max_results"]["description"]
            .as_str()
            .unwrap();
        assert!(described.contains(&format!("default {DEFAULT_SEARCH_RESULTS}.")));
        // Exactly max_results matches: no note.
        let out = f.ok("search_text", r#"{"pattern": "hit", "max_results": 5}"#);
        assert_eq!(out.lines().count(), 5);
        f.write("many.txt", "hit\n".repeat(DEFAULT_SEARCH_RESULTS + 1));
        let out = f.ok("search_text", r#"{"pattern": "hit"}"#);
        assert_eq!(out.lines().count(), DEFAULT_SEARCH_RESULTS + 1);
        assert!(out.ends_with("or raise `max_results`]"));
    }

    #[test]
    fn search_text_clips_long_lines_and_names_bad_arguments() {
        let f = Fixture::new();
        f.write(
            "min.js",
            format!("{}needle{}", "a".repeat(10), "é".repeat(1000)),
        );
        let out = f.ok("search_text", r#"{"pattern": "needle"}"#);
        assert!(out.starts_with("min.js:1: aaaaaaaaaaneedleé"));
        assert!(out.ends_with('…'));
        assert!(out.len() < SEARCH_LINE_CAP_BYTES + 20);
        assert_eq!(
            f.err("search_text", r#"{"pattern": ""}"#),
            "search_text: argument `pattern` must not be empty"
        );
        assert_eq!(
            f.err("search_text", "{}"),
            "search_text: missing argument `pattern`"
        );
        let missing = f.err("search_text", r#"{"pattern": "x", "path": "nope"}"#);
        assert!(
            missing.starts_with("search_text: cannot search `nope`: "),
            "{missing}"
        );
    }

    #[test]
    fn write_file_creates_directories() {
        let f = Fixture::new();
        assert_eq!(
            f.ok(
                "write_file",
                r#"{"path": "src/new/x.rs", "content": "fn x() {}\n"}"#
            ),
            "wrote 10 bytes to src/new/x.rs (a new file)"
        );
        assert_eq!(f.read("src/new/x.rs"), "fn x() {}\n");
        assert_eq!(
            f.ok("write_file", r#"{"path": "src/new/x.rs", "content": "é"}"#),
            "wrote 2 bytes to src/new/x.rs"
        );
        assert_eq!(f.read("src/new/x.rs"), "é");
    }

    #[test]
    fn write_file_refuses_outside_paths_and_bad_arguments() {
        let f = Fixture::new();
        let outside = f.err(
            "write_file",
            r#"{"path": "../escaped.txt", "content": "x"}"#,
        );
        assert!(
            outside.contains("is outside the working directory"),
            "{outside}"
        );
        assert!(!f.dir.path().parent().unwrap().join("escaped.txt").exists());
        assert_eq!(
            f.err("write_file", r#"{"path": "a.txt"}"#),
            "write_file: missing argument `content`"
        );
        assert_eq!(
            f.err("write_file", r#"{"path": "a.txt", "content": 5}"#),
            "write_file: argument `content` must be a string, got 5"
        );
        f.write("dir/x", "");
        let dir = f.err("write_file", r#"{"path": "dir", "content": "x"}"#);
        assert!(dir.starts_with("write_file: cannot write `dir`: "), "{dir}");
    }

    #[test]
    fn edit_file_replaces_a_unique_match() {
        let f = Fixture::new();
        f.write("a.rs", "fn a() {\n    1\n}\n");
        assert_eq!(
            f.ok(
                "edit_file",
                r#"{"path": "a.rs", "old_text": "    1\n", "new_text": "    let x = 1;\n    x\n"}"#
            ),
            "edited a.rs: 1 line replaced by 2 lines"
        );
        assert_eq!(f.read("a.rs"), "fn a() {\n    let x = 1;\n    x\n}\n");
        assert_eq!(
            f.ok(
                "edit_file",
                r#"{"path": "a.rs", "old_text": "    x\n", "new_text": ""}"#
            ),
            "edited a.rs: 1 line replaced by 0 lines"
        );
        assert_eq!(f.read("a.rs"), "fn a() {\n    let x = 1;\n}\n");
    }

    #[test]
    fn edit_file_needs_exactly_one_match() {
        let f = Fixture::new();
        f.write("a.txt", "one two one aaa");
        assert_eq!(
            f.err(
                "edit_file",
                r#"{"path": "a.txt", "old_text": "three", "new_text": "3"}"#
            ),
            "edit_file: `old_text` was not found in `a.txt`"
        );
        assert_eq!(
            f.err(
                "edit_file",
                r#"{"path": "a.txt", "old_text": "one", "new_text": "1"}"#
            ),
            "edit_file: `old_text` occurs 2 times in `a.txt`; include more of the surrounding \
             text so that it occurs exactly once"
        );
        let overlapping = f.err(
            "edit_file",
            r#"{"path": "a.txt", "old_text": "aa", "new_text": "b"}"#,
        );
        assert!(overlapping.contains("occurs 2 times"), "{overlapping}");
        assert_eq!(
            f.err(
                "edit_file",
                r#"{"path": "a.txt", "old_text": "", "new_text": "x"}"#
            ),
            "edit_file: argument `old_text` must not be empty"
        );
        assert_eq!(
            f.err("edit_file", r#"{"path": "a.txt", "old_text": "two"}"#),
            "edit_file: missing argument `new_text`"
        );
        assert_eq!(f.read("a.txt"), "one two one aaa");
        let missing = f.err(
            "edit_file",
            r#"{"path": "b.txt", "old_text": "x", "new_text": "y"}"#,
        );
        assert!(
            missing.starts_with("edit_file: cannot read `b.txt`: "),
            "{missing}"
        );
    }

    #[test]
    fn occurrences_count_overlaps() {
        assert_eq!(occurrences("aaa", "aa"), 2);
        assert_eq!(occurrences("éé", "é"), 2);
        assert_eq!(occurrences("abc", "d"), 0);
        assert_eq!(occurrences("abab", "ab"), 2);
    }
}
