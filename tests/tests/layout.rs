//! The source tree's layout: rules about how the crates are arranged that the
//! compiler does not enforce. Rust lets two modules of a crate import each
//! other, but a circle of imports means neither can be read, tested or moved
//! on its own, so every crate under `guest/` and `host-example/` is checked
//! for one.
//!
//! The crates themselves are in layers, each depending only on the layers
//! below it ([`LAYERS`]): the CLI at the top, so nothing else (the tests
//! included) needs it to build, and the runtime and the proxy side by side.
//!
//! The import checker uses only `std`: it reads the source as text (no parser crate), which
//! is enough for the paths it looks for.
//!
//! Module A imports module B when a file of A names `crate::B…` (in a `use`,
//! a `use crate::{B, …}` group or an expression) or `super::B…` where `B` is a
//! sibling of A. A path names the longest module it reaches (`crate::passes::
//! Kept` is `passes`; `crate::Settings` is the crate root). Comments and
//! strings do not count, nor does test code (`#[cfg(test)] mod … { … }` blocks
//! and files named `tests.rs`): tests may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Where the crates are, relative to the repository root.
const CRATE_TREES: [&str; 2] = ["guest", "host-example"];

/// A module: its path below the crate root (`["passes", "loops"]`), empty for
/// the root itself.
type Module = Vec<String>;

/// What `crate::` names in the cycles this reports.
const ROOT: &str = "crate";

/// The host side's crates, lowest layer first. A crate depends (for its
/// code, its build script or its tests) only on crates of the layers below
/// its own; crates not named here (the guests, the builder, the scripted
/// server) are not checked.
const LAYERS: [&[&str]; 9] = [
    &["condense-model"],
    &["condense-contract", "condense-formats"],
    &["condense-host"],
    &["condense-replay", "condense-sessions"],
    &["condense-embedded"],
    &["condense-config"],
    &["condense-runtime", "condense-proxy"],
    &["condense-tests"],
    &["condense-cli"],
];

#[test]
fn each_crate_depends_only_on_the_layers_below_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let layer = |name: &str| LAYERS.iter().position(|l| l.contains(&name));
    let mut manifests: Vec<PathBuf> = crates_under(&root);
    manifests.push(root.join("tests"));
    let mut wrong = Vec::new();
    let mut checked = 0;
    for dir in manifests {
        let name = crate_name(&dir);
        let Some(own) = layer(&name) else { continue };
        checked += 1;
        let manifest = fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        for dependency in dependencies(&manifest) {
            if layer(&dependency).is_some_and(|theirs| theirs >= own) {
                wrong.push(format!("{name} -> {dependency}"));
            }
        }
    }
    assert_eq!(
        checked,
        LAYERS.concat().len(),
        "a crate of LAYERS not found"
    );
    assert!(
        wrong.is_empty(),
        "dependencies on a crate of the same or a higher layer (move what \
         both need down a layer):\n  {}",
        wrong.join("\n  ")
    );
}

/// The guest side's crates: the components, what they are written with and
/// what builds them. `condense-model` and `condense-contract` are both
/// sides' (in [`LAYERS`] too).
const GUEST_CRATES: [&str; 8] = [
    "condense-compressor",
    "condense-summarizer-heuristic",
    "condense-summarizer-heuristic-component",
    "condense-summarizer-llm",
    "condense-guest-sdk",
    "condense-guest-builder",
    "summarizer-minimal",
    "condense-workspace-hack",
];

/// What the tests build besides `condense-tests`: hostile and custom
/// guests, the scripted model server, the fuzz targets.
const TEST_CRATES: [&str; 6] = [
    "test-compressor-hostile",
    "test-summarizer-custom",
    "test-summarizer-hostile",
    "test-summarizer-pre-settings",
    "condense-scripted-server",
    "condense-fuzz",
];

/// The guests' implementations, which the host side runs as components
/// and never links: what it needs of the compressor (its settings and
/// their schema, tool classes, the summary-pair bound) is the contract's.
const IMPLEMENTATIONS: [&str; 4] = [
    "condense-compressor",
    "condense-summarizer-heuristic",
    "condense-summarizer-heuristic-component",
    "condense-summarizer-llm",
];

/// Every crate of the repository is named above, so a new one is placed
/// on a side (and in a layer) when it is added.
#[test]
fn every_crate_is_named() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut crates = crates_under(&root);
    crates.extend(crates_in(&root, &["tests"]));
    let named = |name: &str| {
        LAYERS.concat().contains(&name)
            || GUEST_CRATES.contains(&name)
            || TEST_CRATES.contains(&name)
    };
    let unnamed: Vec<String> = (crates.iter().map(|dir| crate_name(dir)))
        .filter(|name| !named(name))
        .collect();
    assert!(
        unnamed.is_empty(),
        "crates named nowhere in tests/tests/layout.rs: {unnamed:?}"
    );
}

/// No host-side crate links a guest's implementation ([`IMPLEMENTATIONS`]),
/// `condense-tests` aside: it tests the compressor and the summarizer
/// natively too.
#[test]
fn no_host_side_crate_links_a_guest_implementation() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut linked = Vec::new();
    for dir in crates_under(&root) {
        let name = crate_name(&dir);
        if !LAYERS.concat().contains(&name.as_str()) || name == "condense-tests" {
            continue;
        }
        let manifest = fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        for dependency in dependencies(&manifest) {
            if IMPLEMENTATIONS.contains(&dependency.as_str()) {
                linked.push(format!("{name} -> {dependency}"));
            }
        }
    }
    assert!(
        linked.is_empty(),
        "host-side crates linking a guest implementation (use condense-contract):\n  {}",
        linked.join("\n  ")
    );
}

#[test]
fn dependencies_are_read_from_every_table() {
    let manifest = "[package]\nname = \"a\"\n[dependencies]\nb.workspace = true\n\
                    c = { path = \"c\" }\n[dev-dependencies]\nd = \"1\"\n\
                    [target.'cfg(unix)'.build-dependencies]\ne.workspace = true\n\
                    [features]\nf = []\n";
    assert_eq!(dependencies(manifest), ["b", "c", "d", "e"]);
}

/// The names of every dependency in a manifest: `[dependencies]`,
/// `[dev-dependencies]`, `[build-dependencies]`, and their `[target.…]`
/// forms.
fn dependencies(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_table = false;
    for line in manifest.lines().map(str::trim) {
        if let Some(table) = line.strip_prefix('[') {
            in_table = table.trim_end_matches(']').ends_with("dependencies");
        } else if in_table && !line.is_empty() && !line.starts_with('#') {
            let key = line.split(['=', '.', ' ']).next().unwrap_or("");
            out.push(key.trim_matches('"').to_owned());
        }
    }
    out
}

#[test]
fn no_module_imports_a_module_that_imports_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let crates = crates_under(&root);
    assert!(
        crates.iter().any(|c| c.ends_with("guest/compressor")),
        "no crates found under {} (looked in {CRATE_TREES:?})",
        root.display()
    );
    let mut cycles = Vec::new();
    for dir in &crates {
        let name = crate_name(dir);
        let sources = sources_of(&dir.join("src"));
        for cycle in import_cycles(&sources) {
            cycles.push(format!("{name}: {}", cycle.join(" -> ")));
        }
    }
    assert!(
        cycles.is_empty(),
        "modules that import each other (one job per module: move what both \
         need into a module of its own, or to where it belongs):\n  {}",
        cycles.join("\n  ")
    );
}

#[test]
fn a_path_imports_the_longest_module_it_reaches() {
    let sources = [
        ("lib.rs", ""),
        ("passes/mod.rs", "pub struct Kept;"),
        ("passes/loops.rs", "use crate::fold::Sizes;"),
        ("fold.rs", "fn f(k: crate::passes::Kept) {}"),
        ("assemble.rs", "use crate::Settings;"),
    ];
    let imports = imports_of(&modules(&sources));
    assert_eq!(imports["passes::loops"], set(&["fold"]));
    assert_eq!(imports["fold"], set(&["passes"]));
    assert_eq!(imports["assemble"], set(&[ROOT]));
}

#[test]
fn each_module_of_a_use_group_is_imported() {
    let sources = [
        ("a.rs", "use crate::{b::X, c::{self, d::Y as Z}, *};"),
        ("b.rs", ""),
        ("c.rs", ""),
        ("c/d.rs", ""),
    ];
    let imports = imports_of(&modules(&sources));
    assert_eq!(imports["a"], set(&[ROOT, "b", "c", "c::d"]));
}

#[test]
fn super_imports_a_sibling_but_not_the_parent() {
    let sources = [
        ("passes/mod.rs", "pub struct Kept;"),
        (
            "passes/loops.rs",
            "use super::Kept; use super::clearing::run;",
        ),
        ("passes/clearing.rs", "use super::{Kept, loops};"),
    ];
    let imports = imports_of(&modules(&sources));
    assert_eq!(imports["passes::loops"], set(&["passes::clearing"]));
    assert_eq!(imports["passes::clearing"], set(&["passes::loops"]));
}

#[test]
fn comments_strings_and_tests_import_nothing() {
    let text = r##"
        // use crate::b;
        /// See `crate::b::X`.
        /* crate::b /* nested */ crate::b */
        const S: &str = "crate::b::X";
        const R: &str = r#"crate::b"#;
        const C: char = '"'; fn f<'a>(x: &'a str) {}
        #[cfg(test)]
        mod tests {
            use crate::b::X;
            fn g() { let s = "}"; }
        }
        #[cfg(all(test, unix))]
        #[allow(dead_code)]
        pub(crate) mod unix_tests { use crate::b; }
        #[cfg(not(test))]
        mod shipped { use crate::d; }
        use crate::c;
    "##;
    let sources = [
        ("a.rs", text),
        ("b.rs", ""),
        ("c.rs", ""),
        ("d.rs", ""),
        ("tests.rs", "use crate::a;"),
    ];
    let modules = modules(&sources);
    assert!(!modules.contains_key(&module("tests")));
    assert_eq!(imports_of(&modules)["a"], set(&["c", "d"]));
}

#[test]
fn every_circle_is_found_not_only_pairs() {
    let sources = [
        ("lib.rs", ""),
        ("a.rs", "use crate::b;"),
        ("b.rs", "use crate::{a, c};"),
        ("c.rs", "fn f() { crate::d::g() }"),
        ("d.rs", "use crate::b::X;"),
        ("e.rs", "use crate::a;"),
    ];
    let sources: Vec<_> = sources
        .iter()
        .map(|&(p, t)| (PathBuf::from(p), t.to_owned()))
        .collect();
    assert_eq!(
        import_cycles(&sources),
        [vec!["a", "b", "a"], vec!["b", "c", "d", "b"]]
    );
}

/// The crates of the repository: every directory under [`CRATE_TREES`] with
/// a `Cargo.toml` and a `src/`, build output (`target`) aside.
fn crates_under(root: &Path) -> Vec<PathBuf> {
    crates_in(root, &CRATE_TREES)
}

/// The crates under each of `trees` (see [`crates_under`]).
fn crates_in(root: &Path, trees: &[&str]) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        if dir.join("Cargo.toml").is_file() && dir.join("src").is_dir() {
            out.push(dir.to_owned());
        }
        for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() && name != "target" && !name.starts_with('.') {
                walk(&path, out);
            }
        }
    }
    let mut out = Vec::new();
    for tree in trees {
        walk(&root.join(tree), &mut out);
    }
    out.sort();
    out
}

/// The package name in `dir/Cargo.toml`, or the directory's when it has none.
fn crate_name(dir: &Path) -> String {
    let manifest = fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
    let mut in_package = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package
            && let Some(value) = line.strip_prefix("name").map(str::trim_start)
            && let Some(value) = value.strip_prefix('=')
        {
            return value.trim().trim_matches('"').to_owned();
        }
    }
    dir.display().to_string()
}

/// Every `.rs` file under `src`, by its path relative to `src`, with its text.
fn sources_of(src: &Path) -> Vec<(PathBuf, String)> {
    fn walk(src: &Path, dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        for entry in fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(src, &path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text =
                    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let relative = path.strip_prefix(src).expect("under src").to_owned();
                out.push((relative, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(src, src, &mut out);
    out.sort();
    out
}

/// The import circles among the modules of one crate's `sources` (paths
/// relative to its `src/`), each as the names of its modules from the first
/// in name order back to that one.
fn import_cycles(sources: &[(PathBuf, String)]) -> Vec<Vec<String>> {
    let borrowed: Vec<(&str, &str)> = sources
        .iter()
        .filter_map(|(p, t)| Some((p.to_str()?, t.as_str())))
        .collect();
    let imports = imports_of(&modules(&borrowed));
    let names: Vec<String> = imports.keys().cloned().collect();
    let index = |name: &str| names.iter().position(|n| n == name);
    let edges: Vec<Vec<usize>> = names
        .iter()
        .map(|n| imports[n].iter().filter_map(|m| index(m)).collect())
        .collect();
    simple_cycles(&edges)
        .into_iter()
        .map(|cycle| cycle.into_iter().map(|i| names[i].clone()).collect())
        .collect()
}

/// Every elementary cycle of the graph `edges` (node `i` points to each of
/// `edges[i]`, ascending), each once: found by a depth-first search from its
/// lowest node through higher nodes only, and written from that node back to
/// it. A circle of three is a cycle as much as a pair is.
fn simple_cycles(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    fn extend(edges: &[Vec<usize>], path: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        let (start, last) = (path[0], *path.last().expect("a path"));
        for &next in &edges[last] {
            if next == start {
                out.push(path.iter().copied().chain([start]).collect());
            } else if next > start && !path.contains(&next) {
                path.push(next);
                extend(edges, path, out);
                path.pop();
            }
        }
    }
    let mut out = Vec::new();
    for start in 0..edges.len() {
        extend(edges, &mut vec![start], &mut out);
    }
    out
}

/// The modules of a crate, each with the code of its file that is not test
/// code, by module. `lib.rs` and `main.rs` are the root, `x/mod.rs` is `x`;
/// files named `tests.rs` are test code and left out.
fn modules(sources: &[(&str, &str)]) -> BTreeMap<Module, Vec<Token>> {
    let mut out = BTreeMap::new();
    for &(path, text) in sources {
        let mut parts: Vec<String> = path
            .trim_end_matches(".rs")
            .split(['/', '\\'])
            .map(str::to_owned)
            .collect();
        if parts.last().is_some_and(|p| p == "tests") {
            continue;
        }
        if parts.last().is_some_and(|p| p == "mod")
            || (parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main"))
        {
            parts.pop();
        }
        out.entry(parts)
            .or_insert_with(Vec::new)
            .extend(without_tests(tokens(text)));
    }
    out
}

/// What each module imports (see the module doc), by name, itself left out.
fn imports_of(modules: &BTreeMap<Module, Vec<Token>>) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for (module, tokens) in modules {
        let mut imported = BTreeSet::new();
        for (base, path) in paths(module, tokens) {
            let target = longest_module(modules, &path);
            // `super::Kept` is the parent's own item, not a sibling's.
            let reached = base.is_none_or(|base| target.len() > base);
            if reached && target != *module {
                imported.insert(name(&target));
            }
        }
        out.insert(name(module), imported);
    }
    out
}

/// The longest module that `path` (from the crate root) reaches.
fn longest_module(modules: &BTreeMap<Module, Vec<Token>>, path: &[String]) -> Module {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|m| modules.contains_key(m))
        .unwrap_or_default()
}

fn name(module: &Module) -> String {
    if module.is_empty() {
        ROOT.to_owned()
    } else {
        module.join("::")
    }
}

/// A lexical token of Rust source, comments and literals dropped: a word, or
/// one punctuation mark (`::` is one).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Word(String),
    Punct(&'static str),
}

fn is_word(t: Option<&Token>, word: &str) -> bool {
    matches!(t, Some(Token::Word(w)) if w == word)
}

fn is_punct(t: Option<&Token>, punct: &str) -> bool {
    matches!(t, Some(Token::Punct(p)) if *p == punct)
}

/// The words and punctuation of `text`, without its comments (doc comments
/// included), strings and character literals, so a path quoted or explained
/// there is not taken for an import.
fn tokens(text: &str) -> Vec<Token> {
    const PUNCTS: [&str; 12] = ["::", ":", "{", "}", "(", ")", "[", "]", ",", ";", "#", "$"];
    let c: Vec<char> = text.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            loop {
                if i >= c.len() {
                    break;
                } else if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if ch == '"' {
            i = after_string(&c, i + 1);
        } else if ch == '\'' {
            // A character literal (`'x'`, `'\n'`), or a lifetime (`'a`),
            // which is skipped as a word.
            if at(i + 1) == '\\' {
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
        } else if ch.is_alphanumeric() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let raw_hashes = c[i..].iter().take_while(|&&h| h == '#').count();
            if matches!(word.as_str(), "r" | "br" | "cr") && at(i + raw_hashes) == '"' {
                i = after_raw_string(&c, i + raw_hashes + 1, raw_hashes);
            } else if matches!(word.as_str(), "b" | "c") && at(i) == '"' {
                i = after_string(&c, i + 1);
            } else {
                out.push(Token::Word(word));
            }
        } else if ch.is_whitespace() {
            i += 1;
        } else {
            let rest: String = c[i..(i + 2).min(c.len())].iter().collect();
            let punct = PUNCTS.iter().find(|p| rest.starts_with(**p));
            match punct {
                Some(p) => {
                    out.push(Token::Punct(p));
                    i += p.len();
                }
                None => {
                    out.push(Token::Punct("?"));
                    i += 1;
                }
            }
        }
    }
    out
}

/// The index after the string whose body starts at `i`.
fn after_string(c: &[char], mut i: usize) -> usize {
    while i < c.len() && c[i] != '"' {
        i += if c[i] == '\\' { 2 } else { 1 };
    }
    i + 1
}

/// The index after the raw string with `hashes` `#`s whose body starts at `i`.
fn after_raw_string(c: &[char], mut i: usize, hashes: usize) -> usize {
    while i < c.len() {
        if c[i] == '"'
            && c[i + 1..]
                .iter()
                .take(hashes)
                .filter(|&&h| h == '#')
                .count()
                == hashes
        {
            return i + 1 + hashes;
        }
        i += 1;
    }
    i
}

/// `tokens` without the inline modules compiled for tests only (`#[cfg(test)]
/// mod tests { … }`, `#[cfg(all(test, unix))]`, other attributes beside).
fn without_tests(tokens: Vec<Token>) -> Vec<Token> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        let mut j = i;
        let mut for_tests = false;
        while let Some(next) = after_attribute(&tokens, j) {
            let words = || {
                tokens[j..next].iter().filter_map(|t| match t {
                    Token::Word(w) => Some(w.as_str()),
                    Token::Punct(_) => None,
                })
            };
            // `cfg(not(test))` is the code that is *not* a test's.
            for_tests |= words().next() == Some("cfg")
                && words().any(|w| w == "test")
                && !words().any(|w| w == "not");
            j = next;
        }
        if for_tests {
            if is_word(tokens.get(j), "pub") {
                j += 1;
                if is_punct(tokens.get(j), "(") {
                    j = after_group(&tokens, j, "(", ")");
                }
            }
            if is_word(tokens.get(j), "mod") && is_punct(tokens.get(j + 2), "{") {
                i = after_group(&tokens, j + 2, "{", "}");
                continue;
            }
        }
        out.push(tokens[i].clone());
        i += 1;
    }
    out
}

/// The index after the attribute (`#[…]`) at `i`, if one starts there.
fn after_attribute(tokens: &[Token], i: usize) -> Option<usize> {
    (is_punct(tokens.get(i), "#") && is_punct(tokens.get(i + 1), "["))
        .then(|| after_group(tokens, i + 1, "[", "]"))
}

/// The index after the group whose `open` is at `at`, to its `close`.
fn after_group(tokens: &[Token], at: usize, open: &str, close: &str) -> usize {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(at) {
        if is_punct(Some(t), open) {
            depth += 1;
        } else if is_punct(Some(t), close) {
            depth -= 1;
            if depth == 0 {
                return i + 1;
            }
        }
    }
    tokens.len()
}

/// The paths from the crate root that the code of `module` names through
/// `crate::` or `super::`, each with the length of the module `super::`
/// names (`None` for `crate::`).
fn paths(module: &Module, tokens: &[Token]) -> Vec<(Option<usize>, Vec<String>)> {
    let mut out = Vec::new();
    // The inline modules (`mod component { … }`) open at each point, by the
    // depth of their `{`: `super::` inside one is the file's own module.
    let mut inline: Vec<(usize, String)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        let before = i.checked_sub(1).and_then(|b| tokens.get(b));
        if is_punct(Some(t), "{") {
            depth += 1;
            if is_word(i.checked_sub(2).and_then(|b| tokens.get(b)), "mod")
                && let Some(Token::Word(name)) = before
            {
                inline.push((depth, name.clone()));
            }
        } else if is_punct(Some(t), "}") {
            if inline.last().is_some_and(|&(d, _)| d == depth) {
                inline.pop();
            }
            depth = depth.saturating_sub(1);
        }
        // `$crate` is a macro's crate; `in crate::x` a visibility, not a use.
        let starts_path =
            !is_punct(before, "::") && !is_punct(before, "$") && !is_word(before, "in");
        if starts_path && is_word(Some(t), "crate") && is_punct(tokens.get(i + 1), "::") {
            let mut found = Vec::new();
            i = use_tree(tokens, i + 2, Vec::new(), &mut found);
            out.extend(found.into_iter().map(|p| (None, p)));
            continue;
        }
        if starts_path && is_word(Some(t), "super") {
            let mut scope: Vec<String> = module.clone();
            scope.extend(inline.iter().map(|(_, n)| n.clone()));
            let mut j = i;
            while is_word(tokens.get(j), "super") && is_punct(tokens.get(j + 1), "::") {
                scope.pop();
                j += 2;
            }
            if j > i {
                let base = scope.len();
                let mut found = Vec::new();
                i = use_tree(tokens, j, scope, &mut found);
                out.extend(found.into_iter().map(|p| (Some(base), p)));
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Reads the path or `use` tree at `i` (after a `::`), each path it names
/// pushed onto `found` after `prefix`; returns the index after it.
fn use_tree(
    tokens: &[Token],
    mut i: usize,
    mut prefix: Vec<String>,
    found: &mut Vec<Module>,
) -> usize {
    loop {
        match tokens.get(i) {
            Some(Token::Punct("{")) => {
                i += 1;
                while i < tokens.len() && !is_punct(tokens.get(i), "}") {
                    i = use_tree(tokens, i, prefix.clone(), found);
                    // Past `as name` to the next `,` or the group's end.
                    while i < tokens.len()
                        && !is_punct(tokens.get(i), ",")
                        && !is_punct(tokens.get(i), "}")
                    {
                        i += 1;
                    }
                    if is_punct(tokens.get(i), ",") {
                        i += 1;
                    }
                }
                return i + 1;
            }
            Some(Token::Word(w)) => {
                if w != "self" {
                    prefix.push(w.clone());
                }
                i += 1;
                if !is_punct(tokens.get(i), "::") {
                    break;
                }
                i += 1;
            }
            _ => break,
        }
    }
    found.push(prefix);
    i
}

/// The module written `name` (as in a cycle), for the checker's own tests.
fn module(name: &str) -> Module {
    if name == ROOT {
        Vec::new()
    } else {
        name.split("::").map(str::to_owned).collect()
    }
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|&n| n.to_owned()).collect()
}

/// The README's two commands build the dependencies they share once: every
/// unit `cargo run -p condense-cli` (the demo) compiles is one `cargo test`
/// reuses — same package, same features, same profile, so the same file.
/// What keeps it so is `host-example/workspace-hack`; a dependency that
/// turns on a feature only the tests use breaks it, and this names it.
#[test]
fn the_demo_and_the_tests_build_shared_dependencies_once() {
    let units = |args: &[&str]| -> BTreeMap<String, BTreeSet<String>> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let out = std::process::Command::new(env!("CARGO"))
            .args(args)
            .args(["--message-format=json", "--quiet"])
            .current_dir(&root)
            .output()
            .expect("cargo runs");
        assert!(
            out.status.success(),
            "cargo {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut units: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if message["reason"] != "compiler-artifact" {
                continue;
            }
            let package = message["package_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let files = message["filenames"].as_array().into_iter().flatten();
            units
                .entry(package)
                .or_default()
                .extend(files.filter_map(|f| f.as_str().map(str::to_owned)));
        }
        units
    };
    let demo = units(&["build", "-p", "condense-cli"]);
    let tests = units(&["test", "--no-run"]);
    assert!(
        demo.len() > 100,
        "{} packages in the demo's build",
        demo.len()
    );
    let twice: Vec<&String> = demo
        .iter()
        .filter(|(package, files)| tests.get(*package).is_some_and(|t| t.is_disjoint(files)))
        .map(|(package, _)| package)
        .collect();
    assert!(
        twice.is_empty(),
        "compiled again by the test command after the demo (a feature or profile \
         differs: add it to host-example/workspace-hack):\n  {}",
        twice
            .iter()
            .map(|p| p.as_str())
            .collect::<Vec<_>>()
            .join("\n  ")
    );
}
