//! Components: where their bytes come from, what they are called in
//! reports, and loading one (its contract version read before it is
//! compiled, then compiled and linked against its world).

use crate::failure::{ComponentLabel, ComponentRole, FailureKind, GuestFailure, failure};
use crate::sandbox::{Sandbox, StoreData};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use wasmparser::Payload;
use wasmtime::component::{InstancePre, Linker};

/// The version of `wit/condense.wit` this host speaks.
pub const CONTRACT_VERSION: &str = "0.2.0";

/// Where a component's bytes come from. Paths let a host swap components
/// without being rebuilt.
#[derive(Clone, Debug)]
pub enum ComponentSource {
    /// Bytes the host already holds (e.g. built into its binary).
    Embedded(&'static [u8]),
    /// Bytes the host holds, under a name that tells them from another
    /// embedded component of the same role (the `llm` summarizer beside the
    /// heuristic one): reports call it "summarizer `llm`".
    Named(&'static str, &'static [u8]),
    /// A component file, read once when the runtime is built.
    Path(PathBuf),
}

/// The default components a program carries as bytes, used where its
/// configuration names no file: the compressor, the heuristic summarizer and
/// the LLM summarizer. The `condense` binary's are `condense-embedded`'s.
#[derive(Clone, Copy, Debug)]
pub struct Embedded {
    pub compressor: &'static [u8],
    pub summarizer: &'static [u8],
    pub llm_summarizer: &'static [u8],
}

/// A compiled, linked component and its name.
#[derive(Clone)]
pub(crate) struct Loaded<P> {
    pub(crate) label: ComponentLabel,
    pub(crate) pre: P,
}

pub(crate) fn label(role: ComponentRole, source: &ComponentSource) -> ComponentLabel {
    let file = match source {
        ComponentSource::Embedded(_) => None,
        ComponentSource::Named(name, _) => Some((*name).to_owned()),
        ComponentSource::Path(path) => Some(path.file_name().map_or_else(
            || path.display().to_string(),
            |f| f.to_string_lossy().into_owned(),
        )),
    };
    ComponentLabel { role, file }
}

/// Reads, compiles and links one component: `add_imports` adds what its world
/// imports to the linker, `typed` checks its exports (the world's `…Pre::new`).
pub(crate) fn load<T: Send + 'static, P>(
    sandbox: &Sandbox,
    role: ComponentRole,
    source: &ComponentSource,
    world: &str,
    add_imports: impl FnOnce(&mut Linker<StoreData<T>>) -> wasmtime::Result<()>,
    typed: impl FnOnce(InstancePre<StoreData<T>>) -> wasmtime::Result<P>,
) -> Result<Loaded<P>, GuestFailure> {
    let label = label(role, source);
    let fail = |detail: String| failure(&label, FailureKind::Load, detail);
    let bytes = match source {
        ComponentSource::Embedded(bytes) | ComponentSource::Named(_, bytes) => {
            Cow::Borrowed(*bytes)
        }
        ComponentSource::Path(path) => Cow::Owned(read(path).map_err(fail)?),
    };
    // Another contract version fails to link with a message about a missing
    // interface; say instead what it was built for, and before compiling it
    // (which takes the better part of a second).
    let interface = format!("condense:middleware/{role}@");
    if let Some(version) = exported_version(&bytes, &interface).filter(|v| v != CONTRACT_VERSION) {
        return Err(fail(format!(
            "was built for condense:middleware@{version}; this host speaks {CONTRACT_VERSION}"
        )));
    }
    let component = sandbox
        .compile(&bytes)
        .map_err(|e| fail(format!("not a valid component: {e:#}")))?;
    let mut linker = sandbox
        .linker::<T>()
        .map_err(|e| fail(format!("cannot link WASI: {e:#}")))?;
    add_imports(&mut linker)
        .map_err(|e| fail(format!("cannot link the `{world}` imports: {e:#}")))?;
    // Missing imports fail `instantiate_pre`, missing exports `typed`: either
    // way the component is not a `world`.
    let pre = linker
        .instantiate_pre(&component)
        .and_then(typed)
        .map_err(|e| {
            fail(format!(
                "does not implement `{world}` of wit/condense.wit: {e:#}"
            ))
        })?;
    Ok(Loaded { label, pre })
}

/// The version after `interface` (`condense:middleware/compressor@`) of the
/// component's own export of it, read from the binary's top-level export
/// section. `None` for bytes that are not a component or export no version
/// of it: compiling and linking then say what is wrong.
fn exported_version(bytes: &[u8], interface: &str) -> Option<String> {
    // The parser also walks the nested modules and components, whose
    // exports are not the component's.
    let mut depth = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        match payload.ok()? {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.checked_sub(1)?,
            Payload::ComponentExportSection(exports) if depth == 0 => {
                for export in exports {
                    if let Some(version) = export.ok()?.name.name.strip_prefix(interface) {
                        return Some(version.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    None
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_the_file_or_say_embedded() {
        let path = ComponentSource::Path("/x/my_summ.wasm".into());
        assert_eq!(
            label(ComponentRole::Summarizer, &path).to_string(),
            "summarizer `my_summ.wasm`"
        );
        assert_eq!(
            label(ComponentRole::Compressor, &ComponentSource::Embedded(b"")).to_string(),
            "embedded compressor"
        );
    }
}
