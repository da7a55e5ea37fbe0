//! The working directory the file tools are confined to.

use super::ToolError;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

/// A working directory, canonical (absolute, no symlinks), that the file
/// tools may not leave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// The workspace at `dir`, which must be an existing directory.
    pub fn new(dir: impl AsRef<Path>) -> io::Result<Workspace> {
        let root = fs::canonicalize(dir.as_ref())?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", root.display()),
            ));
        }
        Ok(Workspace { root })
    }

    /// The working directory, canonical.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where `path` (relative to the working directory, or absolute) leads,
    /// if that is inside the working directory.
    ///
    /// The deepest ancestor of the path that exists is canonicalised (the
    /// whole path, when it exists), so `..` and symlinks are resolved before
    /// the check; the components after it name things that do not exist yet
    /// (a file to write, its new directories) and may not be `..`, since
    /// what that means depends on directories not yet made. A dangling
    /// symlink is refused too: writing through it could land anywhere.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, ToolError> {
        // Joining an absolute path replaces the root: absolute paths are
        // checked like any other.
        let joined = self.root.join(path);
        let components: Vec<Component<'_>> = joined.components().collect();
        let mut existing = None;
        for depth in (1..=components.len()).rev() {
            let prefix: PathBuf = components[..depth].iter().collect();
            match fs::canonicalize(&prefix) {
                Ok(canonical) => {
                    existing = Some((canonical, &components[depth..]));
                    break;
                }
                Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
                Err(error) => return Err(ToolError::io("resolve", path)(error)),
            }
        }
        // The root directory always exists, so only a vanished workspace
        // leaves nothing.
        let (mut resolved, missing) = existing.ok_or_else(|| {
            ToolError::io("resolve", path)(io::Error::from(io::ErrorKind::NotFound))
        })?;
        if !resolved.starts_with(&self.root) {
            return Err(ToolError::OutsideWorkdir {
                path: path.to_string(),
                root: self.root.clone(),
            });
        }
        for component in missing {
            match component {
                Component::Normal(name) => {
                    resolved.push(name);
                    if fs::symlink_metadata(&resolved).is_ok() {
                        return Err(ToolError::BadPath {
                            path: path.to_string(),
                            problem: format!(
                                "goes through the symlink `{}`, whose target does not exist",
                                self.relative(&resolved)
                            ),
                        });
                    }
                }
                Component::ParentDir => {
                    return Err(ToolError::BadPath {
                        path: path.to_string(),
                        problem: "has a `..` after a directory that does not exist".to_string(),
                    });
                }
                // `components()` keeps `.` only at the start, and the root
                // or a prefix only there too: neither follows an ancestor.
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            }
        }
        Ok(resolved)
    }

    /// `path` (inside the working directory) relative to it, as the model
    /// would write it.
    pub(crate) fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workspace `work/` next to an outside directory `outside/` holding
    /// `secret`; `work/` holds `a.txt` and `sub/b.txt`.
    struct Fixture {
        _dir: tempfile::TempDir,
        workspace: Workspace,
        outside: PathBuf,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        let outside = dir.path().join("outside");
        fs::create_dir_all(work.join("sub")).unwrap();
        fs::create_dir(&outside).unwrap();
        fs::write(work.join("a.txt"), "a").unwrap();
        fs::write(work.join("sub/b.txt"), "b").unwrap();
        fs::write(outside.join("secret"), "s").unwrap();
        let workspace = Workspace::new(&work).unwrap();
        let outside = fs::canonicalize(outside).unwrap();
        Fixture {
            _dir: dir,
            workspace,
            outside,
        }
    }

    fn is_outside(result: Result<PathBuf, ToolError>) -> bool {
        matches!(result, Err(ToolError::OutsideWorkdir { .. }))
    }

    #[test]
    fn relative_paths_resolve_inside() {
        let f = fixture();
        let root = f.workspace.root();
        assert_eq!(f.workspace.resolve("a.txt").unwrap(), root.join("a.txt"));
        assert_eq!(
            f.workspace.resolve("./sub/b.txt").unwrap(),
            root.join("sub/b.txt")
        );
        assert_eq!(
            f.workspace.resolve("sub/../a.txt").unwrap(),
            root.join("a.txt")
        );
        assert_eq!(f.workspace.resolve(".").unwrap(), root);
        assert_eq!(f.workspace.resolve("").unwrap(), root);
    }

    #[test]
    fn dot_dot_cannot_escape() {
        let f = fixture();
        let error = f.workspace.resolve("../outside/secret").unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "path `../outside/secret` is outside the working directory {}",
                f.workspace.root().display()
            )
        );
        assert!(is_outside(f.workspace.resolve("..")));
        assert!(is_outside(f.workspace.resolve("sub/../../outside/new.txt")));
        assert!(is_outside(
            f.workspace.resolve("../../../../../../../etc/passwd")
        ));
    }

    #[test]
    fn absolute_paths_must_be_inside() {
        let f = fixture();
        let secret = f.outside.join("secret");
        assert!(is_outside(f.workspace.resolve(secret.to_str().unwrap())));
        assert!(is_outside(f.workspace.resolve("/")));
        let inside = f.workspace.root().join("sub/b.txt");
        assert_eq!(
            f.workspace.resolve(inside.to_str().unwrap()).unwrap(),
            inside
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_pointing_outside_are_refused() {
        use std::os::unix::fs::symlink;
        let f = fixture();
        let root = f.workspace.root();
        symlink(&f.outside, root.join("out")).unwrap();
        symlink(f.outside.join("secret"), root.join("secret-link")).unwrap();
        symlink(root.join("sub"), root.join("sub-link")).unwrap();
        assert!(is_outside(f.workspace.resolve("out")));
        assert!(is_outside(f.workspace.resolve("out/secret")));
        assert!(is_outside(f.workspace.resolve("out/new-file")));
        assert!(is_outside(f.workspace.resolve("secret-link")));
        // A symlink staying inside is fine, and resolved.
        assert_eq!(
            f.workspace.resolve("sub-link/b.txt").unwrap(),
            root.join("sub/b.txt")
        );
    }

    #[cfg(unix)]
    #[test]
    fn dangling_symlinks_are_refused() {
        use std::os::unix::fs::symlink;
        let f = fixture();
        symlink(
            f.outside.join("not-yet"),
            f.workspace.root().join("dangling"),
        )
        .unwrap();
        let error = f.workspace.resolve("dangling").unwrap_err();
        assert_eq!(
            error.to_string(),
            "path `dangling` goes through the symlink `dangling`, whose target does not exist"
        );
        assert!(f.workspace.resolve("dangling/x").is_err());
    }

    #[test]
    fn new_files_in_new_directories_resolve_inside() {
        let f = fixture();
        let root = f.workspace.root();
        assert_eq!(
            f.workspace.resolve("new/deeper/file.rs").unwrap(),
            root.join("new/deeper/file.rs")
        );
        assert_eq!(
            f.workspace.resolve("sub/new.txt").unwrap(),
            root.join("sub/new.txt")
        );
        let error = f.workspace.resolve("new/../a.txt").unwrap_err();
        assert_eq!(
            error.to_string(),
            "path `new/../a.txt` has a `..` after a directory that does not exist"
        );
    }

    #[test]
    fn the_workspace_must_be_a_directory() {
        let f = fixture();
        assert!(Workspace::new(f.workspace.root().join("a.txt")).is_err());
        assert!(Workspace::new(f.workspace.root().join("missing")).is_err());
    }
}
