//! Builds guest crates of this workspace as wasm32-wasip2 components from a build
//! script, the way wasmtime's `crates/test-programs/artifacts/build.rs` does:
//!
//! - a nested `cargo build` with its own target dir (`<target>/guests`): the outer
//!   cargo holds the lock on its own target dir, so sharing it would deadlock;
//! - `CARGO_ENCODED_RUSTFLAGS`, `RUSTC_WRAPPER` and friends removed, since they are
//!   meant for the host build (coverage, sanitizers) and break wasm builds;
//! - `rerun-if-changed` on the guest sources and `wit/`, so edits rebuild guests;
//! - the caller gets each artifact's path to embed or to export as a `const`.

use std::path::{Path, PathBuf};
use std::process::Command;

pub const TARGET: &str = "wasm32-wasip2";
/// Cargo profile for guests (defined in the workspace Cargo.toml).
pub const PROFILE: &str = "guest";

/// What the outer cargo sets for the host build that a wasm build of guests
/// must not inherit (coverage and sanitizer flags, wrappers, the outer
/// target dir and target).
pub const HOST_BUILD_VARS: &[&str] = &[
    "CARGO_ENCODED_RUSTFLAGS",
    "RUSTFLAGS",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_BUILD_RUSTFLAGS",
    "CARGO_MAKEFLAGS",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET",
];

/// One built component.
pub struct Artifact {
    /// Cargo package name, e.g. `condense-compressor`.
    pub package: String,
    /// `SCREAMING_SNAKE` form of the package name, for generated consts.
    pub const_name: String,
    pub path: PathBuf,
}

/// Builds `packages` (cargo package names of this workspace) for wasm32-wasip2 and
/// returns their component paths. Panics with an actionable message on failure:
/// it runs in build scripts, where a panic is how errors are reported.
pub fn build(packages: &[&str]) -> Vec<Artifact> {
    let manifest_dir =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("run from a build script"));
    let workspace = workspace_root(&manifest_dir);
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("run from a build script"));
    let target_dir = guest_target_dir(&out_dir);

    println!("cargo:rerun-if-changed={}", workspace.join("wit").display());
    println!(
        "cargo:rerun-if-changed={}",
        workspace.join("Cargo.toml").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        workspace.join("Cargo.lock").display()
    );
    for dir in ["guest", "tests/guests"] {
        watch_sources(&workspace.join(dir));
    }

    ensure_target_installed();

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&workspace)
        .arg("build")
        .arg("--target")
        .arg(TARGET)
        .arg("--profile")
        .arg(PROFILE)
        .arg("--target-dir")
        .arg(&target_dir);
    for p in packages {
        cmd.arg("-p").arg(p);
    }
    for var in HOST_BUILD_VARS {
        cmd.env_remove(var);
    }
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run cargo to build the guests: {e}"));
    assert!(
        status.success(),
        "building the guest components failed (see the cargo output above)"
    );

    packages
        .iter()
        .map(|p| {
            let file = format!("{}.wasm", p.replace('-', "_"));
            let path = target_dir.join(TARGET).join(PROFILE).join(file);
            assert!(
                path.exists(),
                "guest build did not produce {}",
                path.display()
            );
            Artifact {
                package: p.to_string(),
                const_name: p.replace('-', "_").to_uppercase(),
                path,
            }
        })
        .collect()
}

/// Rust source for `pub const NAME: &str = "path";` per artifact.
pub fn path_consts(artifacts: &[Artifact]) -> String {
    artifacts
        .iter()
        .map(|a| {
            format!(
                "/// Path of the `{}` component.\npub const {}: &str = {:?};\n",
                a.package,
                a.const_name,
                a.path.display().to_string()
            )
        })
        .collect()
}

fn workspace_root(manifest_dir: &Path) -> PathBuf {
    manifest_dir
        .ancestors()
        .find(|d| d.join("wit").is_dir() && d.join("guest").is_dir())
        .expect("the workspace root holds wit/ and guest/")
        .to_path_buf()
}

/// `<target>/guests`, next to the outer build's profile dirs. OUT_DIR is
/// `<target>[/<triple>]/<profile>/build/<pkg>-<hash>/out`.
fn guest_target_dir(out_dir: &Path) -> PathBuf {
    let profile_dir = out_dir
        .ancestors()
        .nth(3)
        .expect("OUT_DIR has the usual layout");
    profile_dir
        .parent()
        .expect("profile dir has a parent")
        .join("guests")
}

fn watch_sources(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" {
                watch_sources(&path);
            }
        } else if path.extension().is_some_and(|e| e == "rs" || e == "wit") || name == "Cargo.toml"
        {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}

/// Installs the wasm32-wasip2 standard library if rustup is there and it is
/// missing; otherwise says exactly what to run.
fn ensure_target_installed() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok());
    if sysroot.is_some_and(|root| {
        Path::new(root.trim())
            .join("lib/rustlib")
            .join(TARGET)
            .is_dir()
    }) {
        return;
    }
    let installed = Command::new("rustup")
        .args(["target", "add", TARGET])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        installed,
        "the {TARGET} target is missing: run `rustup target add {TARGET}` and build again"
    );
}
