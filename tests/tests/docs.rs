//! The documentation a person reads: the README stays short, and every
//! relative link in it, in `ARCHITECTURE.md`, in the pages under `docs/` and
//! in the SDK's guide (`guest/sdk/README.md`) leads to a file or directory
//! that exists. (The key tables of `docs/configuration.md` are checked
//! against the schema by `condense-config`'s own test.)
//!
//! A link is a markdown inline link or image, `[text](target)` or
//! `![alt](target)`, or a reference definition, `[label]: target`, outside
//! code (fenced blocks and code spans). Web addresses (`http:`, `https:`,
//! `mailto:`) and links within a page (`#anchor`) are not checked; a
//! target's `#fragment` is dropped, and the rest is resolved relative to the
//! file that links it.

use std::fs;
use std::path::{Path, PathBuf};

/// The README is the front door, not the manual: at most this many lines.
const README_MAX_LINES: usize = 200;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The files whose links are checked, relative to the repository root.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![
        PathBuf::from("README.md"),
        PathBuf::from("ARCHITECTURE.md"),
        PathBuf::from("guest/sdk/README.md"),
    ];
    let mut pages: Vec<PathBuf> = fs::read_dir(root.join("docs"))
        .expect("a docs/ directory")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .map(|path| path.strip_prefix(root).unwrap().to_owned())
        .collect();
    pages.sort();
    files.extend(pages);
    files
}

/// `text` with fenced code blocks and code spans blanked out, so that what
/// code holds is never read as a link.
fn without_code(text: &str) -> String {
    let mut out = String::new();
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(open), Some(m)) if open == m => fence = None,
            (None, None) => out.push_str(&without_spans(line)),
            _ => {}
        }
        out.push('\n');
    }
    out
}

/// `line` without its code spans (a run of backticks to the next run of
/// the same length).
fn without_spans(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let ticks = rest[start..].chars().take_while(|&c| c == '`').count();
        let after = &rest[start + ticks..];
        let close = "`".repeat(ticks);
        match after.find(&close) {
            Some(end) => rest = &after[end + ticks..],
            None => {
                // An unclosed run is literal text.
                out.push_str(&rest[start..start + ticks]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Every link target of `text`, as written (inline links and images, and
/// reference definitions).
fn link_targets(text: &str) -> Vec<String> {
    let text = without_code(text);
    let mut targets = Vec::new();
    for line in text.lines() {
        // A reference definition: `[label]: target`.
        if let Some(rest) = line.trim_start().strip_prefix('[')
            && let Some((label, target)) = rest.split_once("]:")
            && !label.contains(']')
        {
            targets.extend(target_of(target));
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let inside = &rest[at + 2..];
            let Some(end) = inside.find(')') else { break };
            targets.extend(target_of(&inside[..end]));
            rest = &inside[end + 1..];
        }
    }
    targets
}

/// The target in what follows a link's text: `<a b.md>` whole, else the
/// first word (`a.md "title"`).
fn target_of(destination: &str) -> Option<String> {
    let destination = destination.trim_start();
    let target = match destination.strip_prefix('<') {
        Some(rest) => rest.split_once('>')?.0,
        None => destination.split_whitespace().next()?,
    };
    Some(target.to_owned())
}

/// The path a relative target names, without its `#fragment`; `None` for a
/// web address or a link within the page.
fn local_path(target: &str) -> Option<&str> {
    let external = ["http://", "https://", "mailto:"];
    if target.starts_with('#') || external.iter().any(|p| target.starts_with(p)) {
        return None;
    }
    let path = target.split('#').next().unwrap_or(target);
    (!path.is_empty()).then_some(path)
}

#[test]
fn every_relative_link_resolves() {
    let root = root();
    let mut broken = Vec::new();
    let mut checked = 0;
    for document in documents(&root) {
        let text = fs::read_to_string(root.join(&document))
            .unwrap_or_else(|e| panic!("{}: {e}", document.display()));
        let dir = root.join(&document).parent().unwrap().to_owned();
        for target in link_targets(&text) {
            let Some(path) = local_path(&target) else {
                continue;
            };
            checked += 1;
            if !dir.join(path).exists() {
                broken.push(format!("{}: {target}", document.display()));
            }
        }
    }
    assert!(
        checked > 0,
        "no relative links found: is the extraction broken?"
    );
    assert!(
        broken.is_empty(),
        "links to files that do not exist (relative to the file that links them):\n  {}",
        broken.join("\n  ")
    );
}

#[test]
fn the_readme_is_short() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, at most {README_MAX_LINES}: move the detail to a page \
         under docs/ and link it"
    );
}

#[test]
fn links_are_read_outside_code_only() {
    let text = "See [a](docs/a.md#x), ![chart](img/c.svg \"title\") and [b](<b c.md>).\n\
                `[not](code.md)` and ``[nor](this.md)``; [web](https://x.example), [here](#y).\n\
                ```sh\n[no](fenced.md)\n```\n\
                [ref]: ref/target.md\n";
    let targets = link_targets(text);
    assert_eq!(
        targets,
        [
            "docs/a.md#x",
            "img/c.svg",
            "b c.md",
            "https://x.example",
            "#y",
            "ref/target.md"
        ]
    );
    let local: Vec<&str> = targets.iter().filter_map(|t| local_path(t)).collect();
    assert_eq!(local, ["docs/a.md", "img/c.svg", "b c.md", "ref/target.md"]);
}
