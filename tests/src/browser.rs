//! A real browser for the tests that look at a page as a person would:
//! Debian's `chromium`, headless, each run with a profile of its own. It
//! loads the page as any browser does — parses it, applies its headers
//! (the content security policy among them), lays it out — and gives back
//! the DOM it built, or a picture of it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A headless Chromium.
pub struct Chromium {
    binary: PathBuf,
}

impl Chromium {
    /// `CONDENSE_CHROMIUM`, else `chromium` on the PATH; `None` (the test
    /// then passes saying so) when there is none, unless
    /// `CONDENSE_REQUIRE_CHROMIUM=1` (CI).
    pub fn find() -> Option<Chromium> {
        let binary = std::env::var_os("CONDENSE_CHROMIUM")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("chromium"));
        let found = Command::new(&binary).arg("--version").output();
        if !found.is_ok_and(|o| o.status.success()) {
            assert!(
                std::env::var("CONDENSE_REQUIRE_CHROMIUM").as_deref() != Ok("1"),
                "CONDENSE_REQUIRE_CHROMIUM=1, but there is no {}",
                binary.display()
            );
            crate::skipped("no chromium (apt-get install chromium)");
            return None;
        }
        Some(Chromium { binary })
    }

    /// Runs it on `url` with `args`, a fresh profile each time; its
    /// standard output.
    fn run(&self, url: &str, args: &[String]) -> String {
        let profile = tempfile::tempdir().unwrap();
        let out = Command::new(&self.binary)
            .args([
                "--headless",
                // Root in a container has no user namespace to sandbox in.
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--hide-scrollbars",
                "--virtual-time-budget=5000",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(args)
            .arg(url)
            .output()
            .expect("chromium runs");
        assert!(
            out.status.success(),
            "chromium {url}: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("the DOM is UTF-8")
    }

    /// The DOM Chromium built of the page at `url`, serialised.
    pub fn dom(&self, url: &str) -> String {
        self.run(url, &["--dump-dom".to_owned()])
    }

    /// A PNG of the page at `url` in a window `width` × `height`, at `path`.
    pub fn screenshot(&self, url: &str, path: &Path, width: u32, height: u32) {
        self.run(
            url,
            &[
                format!("--screenshot={}", path.display()),
                format!("--window-size={width},{height}"),
            ],
        );
        let png = std::fs::read(path).expect("chromium wrote the screenshot");
        assert!(
            png.starts_with(b"\x89PNG\r\n\x1a\n"),
            "{}: not a PNG",
            path.display()
        );
    }
}
