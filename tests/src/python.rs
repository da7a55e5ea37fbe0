//! The Python summarizer (`guest/summarizer-python`) built with
//! componentize-py, for the tests that load it (`python_summarizer.rs`,
//! and the CLI's `condense summarize`).
//!
//! componentize-py is not a cargo dependency. It is found through
//! `COMPONENTIZE_PY` (the path of the executable) or on PATH; without it the
//! tests print why they are skipped and pass, unless
//! `CONDENSE_REQUIRE_PYTHON=1` (CI sets it), where a missing componentize-py
//! fails them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;

/// The first line of every summary the Python summarizer writes.
pub const HEADER: &str = "Summary (python):";

/// The Python summarizer component, built once per test binary into `tmp`
/// (the binary's `CARGO_TARGET_TMPDIR`, which every test binary of the
/// workspace shares), or why the tests are skipped.
pub fn component(tmp: &Path) -> Result<&'static Path, &'static str> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let tool = match componentize_py() {
            Ok(tool) => tool,
            Err(why) if std::env::var("CONDENSE_REQUIRE_PYTHON").as_deref() == Ok("1") => {
                panic!("CONDENSE_REQUIRE_PYTHON=1, but {why}")
            }
            Err(why) => return Err(why),
        };
        Ok(build(&tool, tmp))
    });
    built.as_deref().map_err(String::as_str)
}

/// `$COMPONENTIZE_PY`, or `componentize-py` on PATH.
fn componentize_py() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("COMPONENTIZE_PY") {
        let path = PathBuf::from(path);
        // Named but not there is a broken setup, not a reason to skip.
        assert!(
            path.is_file(),
            "COMPONENTIZE_PY={} is not a file (cargo runs the tests in tests/: give an absolute path)",
            path.display()
        );
        return Ok(path);
    }
    let dirs = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&dirs)
        .map(|dir| dir.join("componentize-py"))
        .find(|path| path.is_file())
        .ok_or_else(|| "componentize-py is neither in COMPONENTIZE_PY nor on PATH".to_owned())
}

/// Builds `guest/summarizer-python` into `tmp`, and returns the
/// component's path.
///
/// A build is reused while its inputs are unchanged: componentize-py's output
/// differs from one build to the next, so a rebuild would also miss
/// wasmtime's code cache and compile the component again (about 30 s).
fn build(tool: &Path, tmp: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root");
    let dir = tmp.join("summarizer-python");
    let (wasm, stamp) = (dir.join("summarizer-python.wasm"), dir.join("inputs"));
    let app = read(&root.join("guest/summarizer-python/app.py"));
    let mut wit: Vec<PathBuf> = std::fs::read_dir(root.join("wit"))
        .expect("the wit directory")
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "wit"))
        .collect();
    wit.sort();
    let mut inputs = vec![
        run(Command::new(tool).arg("--version")),
        tool.display().to_string().into_bytes(),
        app.clone(),
    ];
    inputs.extend(wit.iter().map(|path| read(path)));
    let inputs = inputs.join(&b"\n--\n"[..]);
    if wasm.is_file() && std::fs::read(&stamp).is_ok_and(|built| built == inputs) {
        println!("reusing {} (its inputs are unchanged)", wasm.display());
        return wasm;
    }
    let _ = std::fs::remove_file(&stamp);
    // componentize-py writes `__pycache__` beside the app it imports at build
    // time: build from a fresh copy, so the source tree stays clean.
    let src = dir.join("src");
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    write(&src.join("app.py"), &app);
    let started = Instant::now();
    run(Command::new(tool)
        .arg("-d")
        .arg(root.join("wit"))
        .args(["-w", "summarizer-world", "componentize", "-p"])
        .arg(&src)
        .args(["app", "-o"])
        .arg(&wasm));
    let size = std::fs::metadata(&wasm).map_or(0, |m| m.len());
    println!(
        "built {} ({:.1} MiB) in {:.1?}",
        wasm.display(),
        size as f64 / f64::from(1 << 20),
        started.elapsed()
    );
    write(&stamp, &inputs);
    wasm
}

/// The stdout of `command`, which must succeed.
fn run(command: &mut Command) -> Vec<u8> {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        out.status.success(),
        "{command:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}
