//! A summarizer component's exports as the host calls them: `summarizer`,
//! and `summarizer-settings` where the component has it.
//!
//! The bindings' world type (`LlmSummarizerWorldPre`) would require every
//! export of the world, so a component built before `summarizer-settings`
//! was added to the contract would no longer load. The host looks the two
//! interfaces up one by one instead: `summarizer` is required,
//! `summarizer-settings` is used when present (and then must be whole).

use crate::component::CONTRACT_VERSION;
use crate::convert::summarizer_world::exports::condense::middleware::{
    summarizer, summarizer_settings,
};
use wasmtime::AsContextMut;
use wasmtime::component::InstancePre;

/// A summarizer compiled and linked, its exports looked up once.
pub(crate) struct SummarizerPre<T: 'static> {
    pre: InstancePre<T>,
    summarizer: summarizer::GuestIndices,
    settings: Option<summarizer_settings::GuestIndices>,
}

/// One instance of a summarizer: its exports, bound to the store it lives in.
pub(crate) struct SummarizerInstance {
    pub(crate) summarizer: summarizer::Guest,
    /// `None`: the component predates the `summarizer-settings` interface.
    pub(crate) settings: Option<summarizer_settings::Guest>,
}

impl<T: Send + 'static> SummarizerPre<T> {
    /// Checks that the component exports `summarizer` (and, if it exports
    /// `summarizer-settings`, all of it).
    pub(crate) fn new(pre: InstancePre<T>) -> wasmtime::Result<SummarizerPre<T>> {
        let settings_export = format!("condense:middleware/summarizer-settings@{CONTRACT_VERSION}");
        let settings = match pre.component().get_export_index(None, &settings_export) {
            Some(_) => Some(summarizer_settings::GuestIndices::new(&pre)?),
            None => None,
        };
        Ok(SummarizerPre {
            summarizer: summarizer::GuestIndices::new(&pre)?,
            settings,
            pre,
        })
    }

    pub(crate) fn instantiate(
        &self,
        mut store: impl AsContextMut<Data = T>,
    ) -> wasmtime::Result<SummarizerInstance> {
        let instance = self.pre.instantiate(&mut store)?;
        let settings = match &self.settings {
            Some(indices) => Some(indices.load(&mut store, &instance)?),
            None => None,
        };
        Ok(SummarizerInstance {
            summarizer: self.summarizer.load(&mut store, &instance)?,
            settings,
        })
    }
}

/// Whether a settings JSON text gives no settings (empty, or `{}`): what a
/// summarizer is handed when the host has none for it.
pub(crate) fn no_settings(settings: &str) -> bool {
    matches!(settings.trim(), "" | "{}")
}
